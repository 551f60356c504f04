//! The files `tern` reads (a gateway's configuration, answers, a client key, a state
//! file), each read up to a bound on the bytes read, never on what its metadata says: a
//! device such as `/dev/zero` says it holds nothing and never ends, and a file may grow
//! while it is read.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The most any file `tern` reads may hold, unless its reader says less.
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of the file at `path`, as `std::fs::read_to_string` gives it, refused once
/// more than `limit` bytes came (at most `limit + 1` are read).
pub(crate) fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    read_text_from(std::fs::File::open(path)?, limit)
}

/// The text `reader` gives, refused once more than `limit` bytes came.
pub(crate) fn read_text_from(reader: impl Read, limit: u64) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("more than {limit} bytes, the most tern reads of this file"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_reader_is_refused_after_the_limit() {
        let endless = std::io::repeat(b'x');
        let refused = read_text_from(endless, 1024).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::InvalidData);
        assert!(
            refused.to_string().contains("more than 1024 bytes"),
            "{refused}"
        );
        assert_eq!(read_text_from(&b"{}"[..], 2).unwrap(), "{}");
    }
}
