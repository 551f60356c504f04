//! An incremental reader of `text/event-stream` bodies: bytes in, event data out.

/// Collects an SSE stream's `data:` lines into events, whatever the chunking. Each
/// byte is looked at once however the stream is cut, and an event (its data and the
/// line being read) may hold at most `max_event_bytes`.
#[derive(Debug)]
pub(crate) struct SseReader {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line ending.
    scanned: usize,
    data: String,
    has_data: bool,
    max_event_bytes: usize,
    /// The last `id:` the stream gave: where a reconnection resumes.
    last_id: Option<String>,
    /// The last `retry:` the stream gave: how long to wait before reconnecting.
    retry: Option<std::time::Duration>,
}

/// An event larger than the reader's cap.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EventTooLarge(pub(crate) usize);

impl SseReader {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        Self {
            buffer: Vec::new(),
            scanned: 0,
            data: String::new(),
            has_data: false,
            max_event_bytes,
            last_id: None,
            retry: None,
        }
    }

    /// The last event id the stream gave, if any.
    pub(crate) fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the stream asked for, if any.
    pub(crate) fn retry(&self) -> Option<std::time::Duration> {
        self.retry
    }

    /// The bytes of an event begun and not yet whole.
    pub(crate) fn pending(&self) -> usize {
        self.buffer.len() + self.data.len()
    }

    /// Feeds a chunk; returns the data of every event it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, EventTooLarge> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(offset) = self.buffer[from..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
        {
            let end = from + offset;
            // A "\r\n" pair is one line ending; a "\r" at the chunk's end may be half of one.
            let mut next = end + 1;
            if self.buffer[end] == b'\r' {
                match self.buffer.get(next) {
                    Some(b'\n') => next += 1,
                    None => break,
                    Some(_) => {}
                }
            }
            let line = String::from_utf8_lossy(&self.buffer[start..end]).into_owned();
            self.line(&line, &mut events);
            start = next;
            from = next;
        }
        self.buffer.drain(..start);
        // What is left holds no complete line ending (a lone "\r" at the end may be half
        // of one: look at it again).
        self.scanned = self.buffer.len().saturating_sub(1);
        let pending = self.buffer.len() + self.data.len();
        if pending > self.max_event_bytes {
            return Err(EventTooLarge(self.max_event_bytes));
        }
        Ok(events)
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            if self.has_data {
                events.push(std::mem::take(&mut self.data));
                self.has_data = false;
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // An id with a NUL is ignored, as the SSE rules say; ids are short.
            "id" if !value.contains('\0') && value.len() <= 1024 => {
                self.last_id = Some(value.to_owned());
            }
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(std::time::Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EventTooLarge, SseReader};

    #[test]
    fn the_last_id_and_retry_are_kept_for_a_reconnection() {
        let mut reader = SseReader::new(1024);
        let events = reader
            .feed(b"id: r1.4\nretry: 500\ndata: \n\nevent: message\nid: r1.5\ndata: {}\n\n")
            .unwrap();
        assert_eq!(events, vec![String::new(), "{}".to_owned()]);
        assert_eq!(reader.last_id(), Some("r1.5"));
        assert_eq!(reader.retry(), Some(std::time::Duration::from_millis(500)));
    }

    #[test]
    fn events_survive_any_chunking_and_line_endings() {
        let stream =
            b"event: message\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\n";
        for split in 0..stream.len() {
            let mut reader = SseReader::new(1024);
            let mut events = reader.feed(&stream[..split]).unwrap();
            events.extend(reader.feed(&stream[split..]).unwrap());
            assert_eq!(
                events,
                vec!["{\"a\":1}".to_owned(), "x\ny".to_owned()],
                "split at {split}"
            );
        }
    }

    #[test]
    fn a_huge_event_in_small_chunks_is_read_in_linear_time_and_capped() {
        // 16 MiB of data in 4 KiB chunks: a reader that rescanned its buffer per chunk
        // would look at ~32 G bytes; this one looks at each once.
        let mut reader = SseReader::new(32 << 20);
        let mut events = reader.feed(b"data: ").unwrap();
        let chunk = vec![b'x'; 4096];
        for _ in 0..4096 {
            events.extend(reader.feed(&chunk).unwrap());
        }
        events.extend(reader.feed(b"\n\n").unwrap());
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].len(), 16 << 20);
        // Past the cap, the reader refuses instead of buffering on.
        let mut capped = SseReader::new(1 << 20);
        let refused = (0..1024).find_map(|_| capped.feed(&chunk).err());
        assert_eq!(refused, Some(EventTooLarge(1 << 20)));
    }

    #[test]
    fn a_carriage_return_split_from_its_line_feed_is_one_line_ending() {
        let mut reader = SseReader::new(1024);
        assert!(reader.feed(b"data: a\r").unwrap().is_empty());
        assert!(reader.feed(b"\n").unwrap().is_empty());
        assert_eq!(reader.feed(b"\r\n").unwrap(), vec!["a".to_owned()]);
    }
}
