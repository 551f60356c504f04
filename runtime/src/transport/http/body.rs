//! A body's frames joined into one buffer under a byte cap, for both ends of HTTP: one
//! frame (the usual case) is kept as it came, without a copy; more are joined.

use bytes::Bytes;

/// The frames of one body so far.
pub(crate) struct Joined {
    first: Option<Bytes>,
    rest: Vec<u8>,
    len: usize,
    max: usize,
    /// The length the body said it has (its `Content-Length`), room for which is taken at
    /// once when frames are joined: a body grown by doubling holds its old room and its
    /// new one at once, near twice its size.
    expected: usize,
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
            expected: 0,
        }
    }

    /// An empty body that says it holds `expected` bytes: refused at once past the cap,
    /// else room for all of it taken when its frames are first joined.
    pub(crate) fn expecting(max: usize, expected: Option<u64>) -> Result<Self, TooLarge> {
        let mut joined = Self::new(max);
        if let Some(expected) = expected {
            joined.expected = usize::try_from(expected)
                .ok()
                .filter(|n| *n <= max)
                .ok_or(TooLarge)?;
        }
        Ok(joined)
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
                self.rest.reserve_exact(self.len.max(self.expected));
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

    #[test]
    fn a_body_that_says_its_length_is_refused_past_the_cap_or_given_its_room_at_once() {
        assert!(Joined::expecting(4, Some(5)).is_err());
        assert!(Joined::expecting(4, Some(u64::MAX)).is_err());
        let mut said = Joined::expecting(1 << 20, Some(1000)).unwrap();
        said.push(Bytes::from(vec![1u8; 10])).unwrap();
        said.push(Bytes::from(vec![2u8; 10])).unwrap();
        assert_eq!(said.rest.capacity(), 1000);
        assert_eq!(said.finish().len(), 20);
    }
}
