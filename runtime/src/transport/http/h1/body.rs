//! A body read straight off its connection, by its framing: the step both sides take
//! ([`poll_data`]), and the client's response body, which gives its connection back to
//! the pool once read to its end.

#[cfg(feature = "http-client")]
use std::pin::Pin;
#[cfg(feature = "http-client")]
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Buf as _, Bytes, BytesMut};
#[cfg(feature = "http-client")]
use http_body::{Frame, SizeHint};

use super::{Conn, Error, poll_fill};

/// The longest chunk-size line (the size and any extensions) a chunked body may send.
const MAX_CHUNK_LINE: usize = 4 * 1024;

/// The most bytes the trailer fields of a chunked body may take, with their line ends.
/// Under hyper's 16 KiB, as [`MAX_TRAILERS`] is under its 100 lines: two readers of one
/// body must agree on where it ends (h1_responses found tern reading 150 trailer lines
/// that hyper refuses).
const MAX_TRAILER_BYTES: usize = 8 * 1024;

/// The most trailer fields a chunked body may send.
const MAX_TRAILERS: usize = 64;

#[cfg(feature = "http-client")]
/// Takes back connections whose last answer was read to its end.
pub(crate) trait Recycle: Send + Sync {
    /// Keeps `conn` for the next request.
    fn recycle(self: Arc<Self>, conn: Conn);
}

/// Where a body's reading stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Read to its end (or failed): nothing more comes.
    Done,
    /// Framed by `Content-Length`: this many bytes are left.
    Length(u64),
    /// Chunked: a chunk-size line comes next.
    ChunkSize,
    /// Chunked: this many bytes of the current chunk are left.
    ChunkData(u64),
    /// Chunked: the line end after a chunk's data comes next.
    ChunkEnd,
    /// Chunked: the trailer fields (checked, then skipped), this many bytes and lines of
    /// them so far.
    Trailers(usize, usize),
    /// Framed by the connection's close (responses only).
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    Close,
}

#[cfg(feature = "http-client")]
/// The body of a response, as `http_body` frames of the bytes that came.
pub(crate) struct Body {
    conn: Option<Conn>,
    state: State,
    /// Where the connection goes once the body is read, if it may carry more.
    recycle: Option<Arc<dyn Recycle>>,
}

#[cfg(feature = "http-client")]
impl Body {
    /// The body framed as `state` says; its connection goes to `recycle` (if any) once
    /// the body is read to its end. A body framed by the close keeps no connection.
    pub(super) fn new(conn: Conn, state: State, recycle: Option<Arc<dyn Recycle>>) -> Self {
        let mut body = Self {
            conn: Some(conn),
            state,
            recycle: recycle.filter(|_| state != State::Close),
        };
        if state == State::Done {
            body.finish();
        }
        body
    }

    /// The body is read to its end: its connection goes back, if it may carry more.
    fn finish(&mut self) {
        self.state = State::Done;
        let Some(conn) = self.conn.take() else { return };
        // Bytes after the end of an answer are not an answer to anything: the connection
        // is out of step, and goes.
        if let Some(recycle) = self.recycle.take().filter(|_| conn.buf.is_empty()) {
            recycle.recycle(conn);
        }
    }

    /// The body cannot be read further: its connection closes.
    fn fail(&mut self, error: Error) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        self.state = State::Done;
        self.conn = None;
        Poll::Ready(Some(Err(error)))
    }
}

impl State {
    /// A body of `n` bytes by its `Content-Length`.
    pub(super) fn of_length(n: u64) -> Self {
        match n {
            0 => Self::Done,
            n => Self::Length(n),
        }
    }
}

/// The next bytes of a body framed as `state` says, read off `conn`: `None` at its end.
/// `state` is left `Done` at the end of a framed body, `Close` at the connection's close.
pub(super) fn poll_data(
    state: &mut State,
    conn: &mut Conn,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Bytes, Error>>> {
    loop {
        let ready = match *state {
            State::Done => return Poll::Ready(None),
            State::Length(left) | State::ChunkData(left) if !conn.buf.is_empty() => {
                return Poll::Ready(Some(Ok(take_data(state, left, &mut conn.buf))));
            }
            State::Length(_) | State::ChunkData(_) => false,
            State::Close if !conn.buf.is_empty() => {
                return Poll::Ready(Some(Ok(conn.buf.split().freeze())));
            }
            State::Close => {
                // The close ends the body: not an error.
                match ready!(poll_fill(&mut *conn.io, cx, &mut conn.buf)) {
                    Ok(0) => return Poll::Ready(None),
                    Ok(_) => continue,
                    Err(e) => return Poll::Ready(Some(Err(Error::Io(e)))),
                }
            }
            State::ChunkSize | State::ChunkEnd => match chunk_framing(state, &mut conn.buf) {
                Ok(moved) => moved,
                Err(e) => return Poll::Ready(Some(Err(e))),
            },
            State::Trailers(seen, lines) => match trailer(&mut conn.buf, seen, lines) {
                Trailer::End => {
                    *state = State::Done;
                    return Poll::Ready(None);
                }
                Trailer::Next(next) => {
                    *state = next;
                    true
                }
                Trailer::More => false,
                Trailer::Failed(e) => return Poll::Ready(Some(Err(e))),
            },
        };
        if ready {
            continue;
        }
        // The buffer holds too little for the next step: read more.
        match ready!(poll_fill(&mut *conn.io, cx, &mut conn.buf)) {
            Ok(0) => return Poll::Ready(Some(Err(Error::Closed))),
            Ok(_) => {}
            Err(e) => return Poll::Ready(Some(Err(Error::Io(e)))),
        }
    }
}

/// One step through a chunked body's framing, from `buf`: a chunk's size line, or the
/// CRLF after its data. Whether it moved `state` on (false: `buf` holds too little).
#[inline]
fn chunk_framing(state: &mut State, buf: &mut BytesMut) -> Result<bool, Error> {
    match *state {
        State::ChunkSize => match super::chunk::size_line(buf) {
            Ok(Some((used, size))) => {
                buf.advance(used);
                *state = match size {
                    0 => State::Trailers(0, 0),
                    size => State::ChunkData(size),
                };
                Ok(true)
            }
            Ok(None) if buf.len() > MAX_CHUNK_LINE => Err(Error::TooLarge("a chunk-size line")),
            Ok(None) => Ok(false),
            Err(why) => Err(Error::Malformed(why)),
        },
        State::ChunkEnd if buf.len() >= 2 => {
            if &buf[..2] != b"\r\n" {
                return Err(Error::Malformed("a chunk not ended by CRLF"));
            }
            buf.advance(2);
            *state = State::ChunkSize;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Takes what `buf` holds of the `left` bytes a body (or a chunk) has still to come,
/// and moves `state` past them.
fn take_data(state: &mut State, left: u64, buf: &mut BytesMut) -> Bytes {
    let take = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
    let data = buf.split_to(take).freeze();
    let left = left - take as u64;
    *state = match (*state, left) {
        (State::Length(_), 0) => State::Done,
        (State::Length(_), left) => State::Length(left),
        (_, 0) => State::ChunkEnd,
        (_, left) => State::ChunkData(left),
    };
    data
}

/// What the next trailer line in `buf` came to.
enum Trailer {
    /// The blank line: the body has ended.
    End,
    /// A field, taken: the state that reads the next line.
    Next(State),
    /// The line is not all in `buf` yet.
    More,
    Failed(Error),
}

/// Reads one trailer line off `buf`, after `seen` bytes in `lines` lines of them.
fn trailer(buf: &mut BytesMut, seen: usize, lines: usize) -> Trailer {
    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
        if seen + buf.len() > MAX_TRAILER_BYTES {
            return Trailer::Failed(Error::TooLarge("the trailer fields"));
        }
        return Trailer::More;
    };
    // Each line ends in CRLF; a bare LF is refused, as in the head.
    let Some(line) = end
        .checked_sub(1)
        .and_then(|cr| (buf[cr] == b'\r').then(|| &buf[..cr]))
    else {
        return Trailer::Failed(Error::Malformed("a trailer line end"));
    };
    let blank = line.is_empty();
    if !blank && !super::chunk::trailer_field(line) {
        return Trailer::Failed(Error::Malformed("a trailer field"));
    }
    buf.advance(end + 1);
    if blank {
        return Trailer::End;
    }
    if seen + end + 1 > MAX_TRAILER_BYTES || lines + 1 > MAX_TRAILERS {
        return Trailer::Failed(Error::TooLarge("the trailer fields"));
    }
    Trailer::Next(State::Trailers(seen + end + 1, lines + 1))
}

#[cfg(feature = "http-client")]
impl http_body::Body for Body {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = self.get_mut();
        let Some(conn) = this.conn.as_mut() else {
            return Poll::Ready(None);
        };
        match ready!(poll_data(&mut this.state, conn, cx)) {
            Some(Ok(data)) => {
                if this.state == State::Done {
                    this.finish();
                }
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            Some(Err(e)) => this.fail(e),
            None if this.state == State::Close => {
                // Framed by the close: the body ended, and the connection with it.
                this.state = State::Done;
                this.conn = None;
                Poll::Ready(None)
            }
            None => {
                this.finish();
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.state == State::Done
    }

    fn size_hint(&self) -> SizeHint {
        match self.state {
            State::Done => SizeHint::with_exact(0),
            State::Length(left) => SizeHint::with_exact(left),
            _ => SizeHint::default(),
        }
    }
}
