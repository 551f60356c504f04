//! Writing a response on the server's side of a connection: its head (status line,
//! fields, framing), then its body as its size allows.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use http::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
use http::{HeaderMap, StatusCode, Version};

use super::server::RequestHead;
use super::{Conn, Error, push_decimal};

/// The most room a connection keeps between responses (a body larger than this was
/// written in room of its own, not kept).
const KEPT_ROOM: usize = 16 * 1024;

/// A body piece at least this large is written from where it lies, after what is held:
/// copied into the room first, each reader slow to take a large body shared among many
/// (a fixed resource's contents) would hold a copy of its own.
const STRAIGHT: usize = 64 * 1024;

/// How a response's body goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// No body at all (`HEAD`, 1xx, 204, 304).
    None,
    /// `Content-Length`.
    Length(u64),
    /// Chunked, as it comes.
    Chunked,
    /// As it comes, ended by the close (an HTTP/1.0 client's stream).
    Close,
}

impl Framing {
    /// The framing of the response with `status` to `request`, its length `exact` when
    /// known.
    #[inline]
    fn of(request: &RequestHead, status: StatusCode, exact: Option<u64>) -> Self {
        if super::bodiless(&request.method, status) {
            Self::None
        } else if let Some(len) = exact {
            Self::Length(len)
        } else if request.version == Version::HTTP_10 {
            Self::Close
        } else {
            Self::Chunked
        }
    }

    /// Writes the fields that say the framing and whether the connection stays open,
    /// to a client speaking `version`.
    #[inline]
    fn write_fields(self, out: &mut Vec<u8>, close: bool, version: Version) {
        match self {
            Self::Length(len) => {
                out.extend_from_slice(b"content-length: ");
                push_decimal(out, len);
                out.extend_from_slice(b"\r\n");
            }
            Self::Chunked => field(out, "transfer-encoding", b"chunked"),
            Self::None | Self::Close => {}
        }
        if close && version != Version::HTTP_10 {
            field(out, "connection", b"close");
        } else if !close && version == Version::HTTP_10 {
            field(out, "connection", b"keep-alive");
        }
    }
}

/// Writes one response: its head, then its body as the body's size allows.
pub(crate) struct ResponseWriter<'r> {
    framing: Framing,
    /// Whether the connection closes after this response.
    closes: bool,
    /// Where the response is written: the room a connection keeps for its responses,
    /// which the last one left empty.
    out: &'r mut Vec<u8>,
}

impl<'r> ResponseWriter<'r> {
    /// The head of a response to `request` with `status` and `headers`, whose body is
    /// `exact` bytes long when known. `close` says the connection closes after it (an
    /// HTTP/1.0 client's stream closes it too: see [`closes`](Self::closes)).
    pub(crate) fn new(
        room: &'r mut Vec<u8>,
        request: &RequestHead,
        status: StatusCode,
        headers: &HeaderMap,
        exact: Option<u64>,
        close: bool,
    ) -> Self {
        let fields = || {
            headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_bytes()))
        };
        Self::with_fields(room, request, status, fields, exact, close)
    }

    /// [`new`](Self::new) with the fields given as lower-case names and their values
    /// (each call of `headers` lists them all), for a response that has no header map.
    pub(crate) fn with_fields<'a, I>(
        room: &'r mut Vec<u8>,
        request: &RequestHead,
        status: StatusCode,
        headers: impl Fn() -> I,
        exact: Option<u64>,
        close: bool,
    ) -> Self
    where
        I: Iterator<Item = (&'a str, &'a [u8])>,
    {
        let framing = Framing::of(request, status, exact);
        let close = close || framing == Framing::Close;
        let fields: usize = headers()
            .map(|(name, value)| name.len() + value.len() + 4)
            .sum();
        let body = match framing {
            // A body too large for it is written straight: see `STRAIGHT`.
            Framing::Length(len) => usize::try_from(len).unwrap_or(0).min(STRAIGHT),
            _ => 0,
        };
        // Written in the room the connection's last response took.
        let out = room;
        out.clear();
        out.reserve(fields + 128 + body);
        status_line(out, status);
        let mut dated = false;
        for (name, value) in headers() {
            dated |= name == DATE.as_str();
            if name == CONTENT_LENGTH.as_str()
                || name == TRANSFER_ENCODING.as_str()
                || (close && name == CONNECTION.as_str())
            {
                continue;
            }
            field(out, name, value);
        }
        if !dated {
            DATE_NOW.with_borrow_mut(|date| field(out, "date", date.now()));
        }
        framing.write_fields(out, close, request.version);
        out.extend_from_slice(b"\r\n");
        Self {
            framing,
            closes: close,
            out,
        }
    }

    /// Whether the connection closes once this response is written.
    pub(crate) fn closes(&self) -> bool {
        self.closes
    }

    /// Adds a piece of the body. A body of known length is held until [`finish`], so
    /// the response goes out in one write; any other is written as it comes.
    ///
    /// [`finish`]: Self::finish
    pub(crate) async fn data(&mut self, conn: &mut Conn, data: &[u8]) -> Result<(), Error> {
        self.data_in_pieces(conn, &[data]).await
    }

    /// [`data`](Self::data) given in `pieces`, framed as one: each copied once into what
    /// goes out, or, one of [`STRAIGHT`]'s size or more, written from where it lies.
    pub(crate) async fn data_in_pieces(
        &mut self,
        conn: &mut Conn,
        pieces: &[&[u8]],
    ) -> Result<(), Error> {
        let len: usize = pieces.iter().map(|piece| piece.len()).sum();
        let chunked = self.framing == Framing::Chunked;
        if self.framing == Framing::None || (chunked && len == 0) {
            return Ok(());
        }
        if chunked {
            let mut size = [0u8; 16];
            self.out.extend_from_slice(hex(&mut size, len));
            self.out.extend_from_slice(b"\r\n");
        }
        for piece in pieces {
            if piece.len() < STRAIGHT {
                self.out.extend_from_slice(piece);
            } else {
                self.flush(conn).await?;
                conn.write(piece).await?;
            }
        }
        if chunked {
            self.out.extend_from_slice(b"\r\n");
        }
        match self.framing {
            // Held until `finish`: the head and the body go out in one write.
            Framing::Length(_) => Ok(()),
            _ => self.flush(conn).await,
        }
    }

    /// Writes what is held and ends the body; its room is kept for the connection's
    /// next response, unless a large body made it large.
    pub(crate) async fn finish(mut self, conn: &mut Conn) -> Result<(), Error> {
        if self.framing == Framing::Chunked {
            self.out.extend_from_slice(b"0\r\n\r\n");
        }
        self.flush(conn).await
    }

    /// Writes what is held. Room a large piece made large is let go of at once: a
    /// stream that lives on (SSE) keeps no more than its usual piece needs.
    async fn flush(&mut self, conn: &mut Conn) -> Result<(), Error> {
        if !self.out.is_empty() {
            conn.write(self.out).await?;
            self.out.clear();
            if self.out.capacity() > KEPT_ROOM {
                *self.out = Vec::new();
            }
        }
        Ok(())
    }
}

/// A response with no body but its status: what a refused head is answered with.
pub(crate) fn bare(status: StatusCode) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    status_line(&mut out, status);
    out.extend_from_slice(b"content-length: 0\r\nconnection: close\r\n\r\n");
    out
}

/// `HTTP/1.1 {code} {reason}` and its line end.
fn status_line(out: &mut Vec<u8>, status: StatusCode) {
    // Nearly every response's line, in one piece.
    if status == StatusCode::OK {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        return;
    }
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("Unknown").as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// `n` in hexadecimal, in `buf`.
fn hex(buf: &mut [u8; 16], mut n: usize) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b"0123456789abcdef"[n % 16];
        n /= 16;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

/// The `Date` of responses, formatted once a second per thread.
struct DateNow {
    second: u64,
    text: [u8; 29],
}

impl DateNow {
    fn now(&mut self) -> &[u8] {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second != self.second {
            self.second = second;
            let text = httpdate::fmt_http_date(now);
            if text.len() == self.text.len() {
                self.text.copy_from_slice(text.as_bytes());
            }
        }
        &self.text
    }
}

thread_local! {
    static DATE_NOW: RefCell<DateNow> = const {
        RefCell::new(DateNow { second: 0, text: *b"Thu, 01 Jan 1970 00:00:00 GMT" })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_names_the_code_and_its_reason() {
        for (status, line) in [
            (StatusCode::OK, "HTTP/1.1 200 OK\r\n"),
            (StatusCode::ACCEPTED, "HTTP/1.1 202 Accepted\r\n"),
            (StatusCode::NOT_FOUND, "HTTP/1.1 404 Not Found\r\n"),
            (
                StatusCode::from_u16(599).unwrap(),
                "HTTP/1.1 599 Unknown\r\n",
            ),
        ] {
            let mut out = Vec::new();
            status_line(&mut out, status);
            assert_eq!(String::from_utf8(out).unwrap(), line);
        }
    }

    #[tokio::test]
    async fn a_stream_that_wrote_a_large_piece_keeps_no_large_room() {
        let (mut client, server) = tokio::io::duplex(4 << 20);
        tokio::io::AsyncWriteExt::write_all(&mut client, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut conn = Conn::new(server);
        let super::super::ReadHead::Request(head) = conn.read_request(&mut Vec::new()).await else {
            panic!("a request head");
        };
        let mut room = Vec::new();
        let mut writer = ResponseWriter::new(
            &mut room,
            &head,
            StatusCode::OK,
            &HeaderMap::new(),
            None,
            false,
        );
        // An SSE stream's first event, large (a listen stream's acknowledgement).
        writer.data(&mut conn, &vec![b'x'; 1 << 20]).await.unwrap();
        writer.data(&mut conn, b"a small event").await.unwrap();
        assert!(
            room.capacity() <= KEPT_ROOM,
            "{} bytes kept",
            room.capacity()
        );
    }
}
