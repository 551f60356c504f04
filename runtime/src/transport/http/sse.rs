//! An incremental reader of `text/event-stream` bodies: bytes in, event data out.

/// Collects an SSE stream's `data:` lines into events, whatever the chunking.
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    buffer: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseReader {
    /// Feeds a chunk; returns the data of every event it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[start..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
        {
            let end = start + offset;
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
        }
        self.buffer.drain(..start);
        events
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
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SseReader;

    #[test]
    fn events_survive_any_chunking_and_line_endings() {
        let stream =
            b"event: message\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\n";
        for split in 0..stream.len() {
            let mut reader = SseReader::default();
            let mut events = reader.feed(&stream[..split]);
            events.extend(reader.feed(&stream[split..]));
            assert_eq!(
                events,
                vec!["{\"a\":1}".to_owned(), "x\ny".to_owned()],
                "split at {split}"
            );
        }
    }
}
