//! A body's frames joined into one buffer under a byte cap, for both ends of HTTP: one
//! frame (the usual case) is kept as it came, without a copy; more are joined.

use bytes::Bytes;

/// The frames of one body so far.
pub(crate) struct Joined {
    first: Option<Bytes>,
    rest: Vec<u8>,
    len: usize,
    max: usize,
}

/// The body went past its cap.
#[derive(Debug)]
pub(crate) struct TooLarge;

impl Joined {
    /// An empty body that may grow to `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            first: None,
            rest: Vec::new(),
            len: 0,
            max,
        }
    }

    /// Adds a frame's data.
    pub(crate) fn push(&mut self, data: Bytes) -> Result<(), TooLarge> {
        self.len += data.len();
        if self.len > self.max {
            return Err(TooLarge);
        }
        match self.first.take() {
            None if self.rest.is_empty() => self.first = Some(data),
            None => self.rest.extend_from_slice(&data),
            Some(earlier) => {
                self.rest.reserve(self.len);
                self.rest.extend_from_slice(&earlier);
                self.rest.extend_from_slice(&data);
            }
        }
        Ok(())
    }

    /// How many bytes it holds.
    #[cfg(feature = "http-server")]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole body.
    pub(crate) fn finish(self) -> Bytes {
        self.first.unwrap_or_else(|| Bytes::from(self.rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_frame_is_kept_and_more_are_joined_up_to_the_cap() {
        let mut one = Joined::new(8);
        one.push(Bytes::from_static(b"abc")).unwrap();
        assert_eq!(one.finish(), Bytes::from_static(b"abc"));
        let mut three = Joined::new(8);
        for part in [&b"ab"[..], b"", b"cd", b"e"] {
            three.push(Bytes::copy_from_slice(part)).unwrap();
        }
        assert_eq!(three.finish(), Bytes::from_static(b"abcde"));
        let mut over = Joined::new(4);
        over.push(Bytes::from_static(b"abc")).unwrap();
        assert!(over.push(Bytes::from_static(b"de")).is_err());
    }
}
