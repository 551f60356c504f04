//! The lines of a chunked body, read strictly (RFC 9112 §7.1): a chunk-size line is its
//! size in hex, any extensions, and CRLF; a trailer line is a field line and CRLF.
//! Anything else is refused, not read some other way: two readers that disagree about
//! where a body ends are how requests are smuggled (`fuzz/fuzz_targets/h1_*.rs` hold
//! both sides to hyper's reading).

/// The most hex digits a chunk size may have: 16 fill a u64.
const MAX_SIZE_DIGITS: usize = 16;

/// The chunk-size line that opens `buf`: its length with its CRLF and the size, `None`
/// while its end has not arrived, or why it is refused.
pub(super) fn size_line(buf: &[u8]) -> Result<Option<(usize, u64)>, &'static str> {
    let digits = buf.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == buf.len() {
        return if digits > MAX_SIZE_DIGITS {
            Err("a chunk size too large")
        } else {
            Ok(None)
        };
    }
    if digits == 0 {
        return Err("a chunk-size line without a size");
    }
    if digits > MAX_SIZE_DIGITS {
        return Err("a chunk size too large");
    }
    let Some(lf) = buf.iter().position(|&b| b == b'\n') else {
        return Ok(None);
    };
    let line = match lf.checked_sub(1) {
        Some(cr) if buf[cr] == b'\r' => &buf[..cr],
        _ => return Err("a chunk-size line not ended by CRLF"),
    };
    if !extensions(&line[digits..]) {
        return Err("a chunk extension");
    }
    let hex = std::str::from_utf8(&line[..digits]).map_err(|_| "a chunk size")?;
    let size = u64::from_str_radix(hex, 16).map_err(|_| "a chunk size too large")?;
    Ok(Some((lf + 1, size)))
}

/// Whether `rest` is `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`.
fn extensions(mut rest: &[u8]) -> bool {
    loop {
        rest = blank(rest);
        let Some(after) = rest.strip_prefix(b";") else {
            return rest.is_empty();
        };
        let (name, after) = token(blank(after));
        if name == 0 {
            return false;
        }
        rest = blank(after);
        if let Some(value) = rest.strip_prefix(b"=") {
            let value = blank(value);
            rest = if value.first() == Some(&b'"') {
                match quoted(value) {
                    Some(after) => after,
                    None => return false,
                }
            } else {
                let (len, after) = token(value);
                if len == 0 {
                    return false;
                }
                after
            };
        }
    }
}

fn blank(bytes: &[u8]) -> &[u8] {
    let n = bytes
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    &bytes[n..]
}

/// A token character (RFC 9110 §5.6.2).
pub(super) fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The token that opens `bytes` (its length, and what follows it).
fn token(bytes: &[u8]) -> (usize, &[u8]) {
    let n = bytes.iter().take_while(|&&b| tchar(b)).count();
    (n, &bytes[n..])
}

/// What follows the quoted string that opens `bytes`, if it is one.
fn quoted(bytes: &[u8]) -> Option<&[u8]> {
    let mut at = 1;
    loop {
        match *bytes.get(at)? {
            b'"' => return Some(&bytes[at + 1..]),
            b'\\' => {
                let escaped = *bytes.get(at + 1)?;
                if !(escaped == b'\t' || escaped == b' ' || (escaped >= 0x21 && escaped != 0x7f)) {
                    return None;
                }
                at += 2;
            }
            b if b == b'\t' || b == b' ' || (b >= 0x21 && b != 0x7f) => at += 1,
            _ => return None,
        }
    }
}

/// Whether `line` (without its CRLF) is a field line: a token, a colon, and a value of
/// visible characters, spaces and tabs (RFC 9110 §5.5). A trailer is skipped, but one
/// that is not a field is refused.
pub(super) fn trailer_field(line: &[u8]) -> bool {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return false;
    };
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    !name.is_empty()
        && name.iter().all(|&b| tchar(b))
        && value
            .iter()
            .all(|&b| b == b'\t' || b == b' ' || (b >= 0x21 && b != 0x7f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_line_is_hex_then_extensions_then_crlf() {
        assert_eq!(size_line(b"1a\r\nrest"), Ok(Some((4, 26))));
        assert_eq!(
            size_line(b"0;a=1; b ; c=\"x;\\\"y\"\r\n"),
            Ok(Some((22, 0)))
        );
        assert_eq!(size_line(b"ffffffffffffffff\r\n"), Ok(Some((18, u64::MAX))));
        assert_eq!(size_line(b"1a"), Ok(None));
        assert_eq!(size_line(b"1a;x"), Ok(None));
    }

    #[test]
    fn anything_else_is_refused() {
        for line in [
            &b";ext\r\n"[..],
            b" 1\r\n",
            b"1\n",
            b"1;\r\n",
            b"1;a=\r\n",
            b"1;$<\x9a: \t\n",
            b"1;a=\"open\r\n",
            b"1 x\r\n",
            b"10000000000000000\r\n",
            b"10000000000000000",
        ] {
            assert!(
                size_line(line).is_err(),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
