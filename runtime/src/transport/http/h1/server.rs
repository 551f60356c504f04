//! A server's side of a connection: request heads read and judged (framing, keep-alive,
//! `Expect`), bodies read whole under a cap, responses written with their framing.

use std::mem::MaybeUninit;

use bytes::{Buf as _, Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, EXPECT, TRANSFER_ENCODING};
use http::{Method, StatusCode, Version};

use super::body::{State, poll_data};
use super::{Conn, Error, MAX_HEAD, MAX_HEADERS, fill, poll_fill};
use crate::transport::http::body::Joined;
use crate::transport::http::fields::{Field, Fields as _, HeadFields};
use crate::transport::http::visible;

/// How long a closing connection waits for the client's close.
const LINGER: std::time::Duration = std::time::Duration::from_millis(200);
/// How much a closing connection reads (and drops) while it waits.
const LINGER_BYTES: usize = 256 * 1024;

/// A request head, read.
pub(crate) struct RequestHead {
    pub(crate) method: Method,
    /// The request target as sent (origin form, usually).
    pub(crate) target: Bytes,
    pub(crate) version: Version,
    pub(crate) headers: HeadFields,
    body: State,
    /// Whether the connection may carry another request after this one's response.
    pub(crate) keep_alive: bool,
    /// The client waits for `100 Continue` before it sends the body.
    expects_continue: bool,
}

impl RequestHead {
    /// The room its fields took, emptied, for the connection's next head.
    pub(crate) fn into_room(self) -> Vec<Field> {
        self.headers.into_room()
    }

    /// The target's path: the origin form's, or the absolute form's. Bytes, compared
    /// with the paths an endpoint serves as they are, not made text first.
    pub(crate) fn path(&self) -> &[u8] {
        let target = &self.target[..];
        // The origin form, as clients send it, has no scheme to look for.
        let absolute = if target.starts_with(b"/") {
            None
        } else {
            target.windows(3).position(|w| w == b"://")
        };
        let path = match absolute {
            Some(scheme_end) => {
                let rest = &target[scheme_end + 3..];
                rest.iter()
                    .position(|&b| b == b'/')
                    .map_or(&b"/"[..], |at| &rest[at..])
            }
            None => target,
        };
        let end = path.iter().position(|&b| matches!(b, b'?' | b'#'));
        &path[..end.unwrap_or(path.len())]
    }
}

/// Why a request head was refused: answered with its status, then the connection closes.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The head broke HTTP/1.1's grammar, or framed its body two ways.
    Malformed(&'static str),
    /// The head went past [`MAX_HEAD`] bytes or [`MAX_HEADERS`] fields.
    TooLarge,
    /// The body is coded in a way this server does not read.
    UnknownCoding,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed(what) => write!(f, "malformed: {what}"),
            Self::TooLarge => write!(f, "a head over {MAX_HEAD} bytes or {MAX_HEADERS} fields"),
            Self::UnknownCoding => f.write_str("a transfer coding other than chunked"),
        }
    }
}

impl Refusal {
    /// The status the refusal is answered with.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Malformed(_) => StatusCode::BAD_REQUEST,
            Self::TooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::UnknownCoding => StatusCode::NOT_IMPLEMENTED,
        }
    }
}

/// What reading a request head came to.
pub(crate) enum ReadHead {
    /// A request.
    Request(RequestHead),
    /// The client closed the connection between requests.
    Closed,
    /// The head was refused.
    Refused(Refusal),
    /// The connection failed, or closed in the middle of a head.
    Failed(Error),
}

/// A read buffer larger than this is let go once empty (see `Conn::shrink`).
const SHRINK_OVER: usize = 64 * 1024;

impl Conn {
    /// Reads the next request's head, its fields located in `room` (the last head's,
    /// [`RequestHead::into_room`]: a connection's heads take one allocation between
    /// them).
    pub(crate) async fn read_request(&mut self, room: &mut Vec<Field>) -> ReadHead {
        loop {
            match parse_request(&mut self.buf, room) {
                Ok(Some(head)) => return ReadHead::Request(head),
                Ok(None) => {}
                Err(refusal) => return ReadHead::Refused(refusal),
            }
            if self.buf.len() >= MAX_HEAD {
                return ReadHead::Refused(Refusal::TooLarge);
            }
            let empty = self.buf.is_empty();
            match fill(&mut *self.io, &mut self.buf).await {
                Ok(()) => {}
                Err(Error::Closed) if empty => return ReadHead::Closed,
                Err(e) => return ReadHead::Failed(e),
            }
        }
    }

    /// Reads the body of `head` whole, at most `cap + 1` bytes of it: a body longer
    /// than `cap` comes back cut at `cap + 1` bytes (or empty, when its declared length
    /// says so), with `false`: the rest is unread, so the connection cannot carry
    /// another request.
    pub(crate) async fn read_body(
        &mut self,
        head: &RequestHead,
        cap: usize,
    ) -> Result<(Bytes, bool), Error> {
        if let State::Length(declared) = head.body {
            if declared > cap as u64 {
                // Refused by its declared length, unread.
                return Ok((Bytes::new(), false));
            }
        }
        if head.expects_continue && head.body != State::Done {
            super::write_all(&mut *self.io, b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        // Read to one byte past the cap: enough to say the body is over it.
        let limit = cap.saturating_add(1);
        let mut joined = Joined::new(limit);
        let mut state = head.body;
        while let Some(data) = std::future::poll_fn(|cx| poll_data(&mut state, self, cx)).await {
            let mut data = data?;
            let room = limit - joined.len();
            let over = data.len() >= room;
            data.truncate(room);
            // Within the limit: cut to the room left.
            let _ = joined.push(data);
            if over {
                return Ok((joined.finish(), false));
            }
        }
        self.shrink();
        Ok((joined.finish(), true))
    }

    /// Lets go of a read buffer that a large body grew, so that a connection kept open
    /// (a stream, or keep-alive) holds a small one, not the largest body it ever read.
    fn shrink(&mut self) {
        if self.buf.is_empty() && self.buf.capacity() > SHRINK_OVER {
            self.buf = BytesMut::with_capacity(super::READ_CHUNK);
        }
    }

    /// Resolves when the client closes the connection (or it fails) while its request
    /// is served. What the client sends meanwhile stays read, up to a head's bound, for
    /// after the response.
    pub(crate) async fn closed(&mut self) {
        loop {
            if self.buf.len() >= MAX_HEAD {
                return std::future::pending().await;
            }
            match std::future::poll_fn(|cx| poll_fill(&mut *self.io, cx, &mut self.buf)).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    /// Writes `data` whole.
    pub(crate) async fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        super::write_all(&mut *self.io, data).await
    }

    /// Ends the connection politely: what was written goes out, the client's close is
    /// awaited a moment (reading what it still sends, within a bound), so that it reads
    /// the last response before the connection goes.
    pub(crate) async fn close(mut self) {
        let linger = async {
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut *self.io).poll_shutdown(cx))
                .await
                .ok()?;
            let mut discarded = 0;
            while discarded < LINGER_BYTES {
                self.buf.clear();
                match std::future::poll_fn(|cx| poll_fill(&mut *self.io, cx, &mut self.buf)).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => discarded += n,
                }
            }
            Some(())
        };
        let _ = tokio::time::timeout(LINGER, linger).await;
    }

    /// Whether nothing of a next request has arrived.
    pub(crate) fn nothing_read(&self) -> bool {
        self.buf.is_empty()
    }
}

/// The request head at the start of `buf`, taken from it, if it is all there.
fn parse_request(
    buf: &mut BytesMut,
    room: &mut Vec<Field>,
) -> Result<Option<RequestHead>, Refusal> {
    // Empty lines before a request are allowed (RFC 9112, section 2.2).
    while buf.starts_with(b"\r\n") {
        buf.advance(2);
    }
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let len = match request.parse_with_uninit_headers(buf, &mut fields) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal::TooLarge),
        Err(_) => return Err(Refusal::Malformed("the request head")),
    };
    let method = Method::from_bytes(request.method.unwrap_or_default().as_bytes())
        .map_err(|_| Refusal::Malformed("the method"))?;
    let version = match request.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let target = request
        .path
        .ok_or(Refusal::Malformed("the request target"))?
        .as_bytes();
    let (target_at, target_len) = (
        target.as_ptr() as usize - buf.as_ptr() as usize,
        target.len(),
    );
    let fields = HeadFields::locate(buf, request.headers, std::mem::take(room));
    // The head's bytes, shared by the target and the fields without a copy each.
    let head = buf.split_to(len).freeze();
    let target = head.slice(target_at..target_at + target_len);
    let headers = HeadFields::new(head, fields);
    let body = body_framing(&headers)?;
    let keep_alive = super::keeps_alive(version, &headers);
    let expects_continue = version != Version::HTTP_10
        && headers
            .get(&EXPECT)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"100-continue"));
    Ok(Some(RequestHead {
        method,
        target,
        version,
        headers,
        body,
        keep_alive,
        expects_continue,
    }))
}

/// How a request's body is framed (RFC 9112, section 6.3): by its chunks, its length,
/// or not at all. A body framed both ways is refused (it is how requests are smuggled).
fn body_framing(headers: &HeadFields) -> Result<State, Refusal> {
    if headers.contains(&TRANSFER_ENCODING) {
        if headers.contains(&CONTENT_LENGTH) {
            return Err(Refusal::Malformed(
                "a body framed by both length and chunks",
            ));
        }
        let codings: Vec<&str> = headers
            .values(&TRANSFER_ENCODING)
            .map(|v| visible(v).ok_or(Refusal::UnknownCoding))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        // An empty element ("chunked,") is refused, not skipped: hyper reads a list
        // whose last element is empty as not chunked.
        return match codings.as_slice() {
            [only] if only.eq_ignore_ascii_case("chunked") => Ok(State::ChunkSize),
            _ => Err(Refusal::UnknownCoding),
        };
    }
    let length = super::content_length(headers).map_err(Refusal::Malformed)?;
    Ok(length.map_or(State::Done, State::of_length))
}
