//! A client's side of a connection: one request at a time, written whole, its response
//! head read here and its body by the [`Body`] the response carries.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, Method, Request, StatusCode, Version};

use super::body::State;
use super::{Body, Conn, Error, MAX_HEAD, MAX_HEADERS, Recycle, fill, poll_fill};
use crate::transport::http::fields::{Fields as _, HeadFields};
use crate::transport::http::visible;

impl Conn {
    /// Whether the connection can no longer carry a request: the server closed it, or
    /// sent something unasked, while it sat idle. Looks without waiting.
    pub(crate) fn is_closed(&mut self) -> bool {
        if !self.buf.is_empty() {
            return true;
        }
        let mut cx = Context::from_waker(Waker::noop());
        !matches!(
            poll_fill(&mut *self.io, &mut cx, &mut self.buf),
            Poll::Pending
        )
    }

    /// Sends `request` (its URI aside: `target` is the request target) and reads the
    /// response's head. The response's body reads the rest, and gives the connection to
    /// `recycle` once it is read to its end, if the connection may carry more.
    pub(crate) async fn send(
        mut self,
        request: &Outgoing,
        target: &str,
        recycle: Arc<dyn Recycle>,
    ) -> Result<Answer, Error> {
        let wire = encode(request, target);
        super::write_all(&mut *self.io, &wire).await?;
        drop(wire);
        loop {
            let Some(head) = parse(&mut self.buf)? else {
                if self.buf.len() >= MAX_HEAD {
                    return Err(Error::TooLarge("the response head"));
                }
                fill(&mut *self.io, &mut self.buf).await?;
                continue;
            };
            if head.status.is_informational() {
                if head.status == StatusCode::SWITCHING_PROTOCOLS {
                    return Err(Error::Malformed("a switch of protocols nobody asked for"));
                }
                // 100 Continue and the like: the final answer follows.
                continue;
            }
            // A response framed two ways may be a smuggling attempt (RFC 9112 §6.3: to be
            // handled as an error), and readers disagree on which way wins: refused.
            if head.fields.contains(&TRANSFER_ENCODING) && head.fields.contains(&CONTENT_LENGTH) {
                return Err(Error::Malformed(
                    "a response framed by length and by coding",
                ));
            }
            let state = framing(&head, &request.method)?;
            let reusable = super::keeps_alive(head.version, &head.fields);
            let recycle = reusable.then_some(recycle);
            return Ok(Answer {
                status: head.status,
                fields: head.fields,
                body: Body::new(self, state, recycle),
            });
        }
    }
}

/// A response as this client reads it: its status, its header fields where they came
/// in the head's bytes (no map is built: a response is asked about a few of them), and
/// its body.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) fields: HeadFields,
    pub(crate) body: Body,
}

/// A response head, parsed.
struct Head {
    status: StatusCode,
    version: Version,
    fields: HeadFields,
}

/// The response head at the start of `buf`, taken from it, if it is all there.
fn parse(buf: &mut BytesMut) -> Result<Option<Head>, Error> {
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buf,
        &mut fields,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Error::TooLarge("more than 100 header fields"));
        }
        Err(_) => return Err(Error::Malformed("the response head")),
    };
    let status = response
        .code
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or(Error::Malformed("the status code"))?;
    let version = match response.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let located = HeadFields::locate(buf, response.headers, Vec::new());
    let fields = HeadFields::new(buf.split_to(len).freeze(), located);
    Ok(Some(Head {
        status,
        version,
        fields,
    }))
}

/// How the body of a response to `method` is framed (RFC 9112, section 6.3).
fn framing(head: &Head, method: &Method) -> Result<State, Error> {
    if super::bodiless(method, head.status) {
        return Ok(State::Done);
    }
    if head.fields.contains(&TRANSFER_ENCODING) {
        // HTTP/1.0 has no transfer codings: framing said two ways is refused (RFC 9112
        // §6.1), and a coding other than chunked last is one this client cannot undo.
        if head.version == Version::HTTP_10 {
            return Err(Error::Malformed(
                "Transfer-Encoding in an HTTP/1.0 response",
            ));
        }
        // A value that is not visible ASCII is refused, not passed over: hyper reads the
        // last field's value, whatever it holds, so a `chunked` before an unreadable
        // value is not chunked to it (h1_responses found the two reading two bodies).
        let values = head
            .fields
            .values(&TRANSFER_ENCODING)
            .map(visible)
            .collect::<Option<Vec<_>>>()
            .ok_or(Error::Malformed("a transfer coding that is not text"))?;
        let last = values
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            // The last element as written: hyper reads `chunked,` (an empty element
            // last) as not chunked, and framed by the close.
            .next_back();
        return match last {
            Some(coding) if coding.eq_ignore_ascii_case("chunked") => Ok(State::ChunkSize),
            _ => Err(Error::Malformed(
                "a transfer coding other than chunked, last",
            )),
        };
    }
    let length = super::content_length(&head.fields).map_err(Error::Malformed)?;
    Ok(length.map_or(State::Close, State::of_length))
}

/// A request as this client writes it: its method, its header fields already in their
/// wire form (`name: value` lines, the framing aside, which the writer says), and its
/// body. The fields every request to an endpoint carries are rendered once and shared
/// (`common`); each request adds its own (`fields`). No header map is built to be
/// taken apart again.
#[derive(Debug)]
pub(crate) struct Outgoing {
    method: Method,
    /// Lines shared by many requests, written first.
    common: Bytes,
    /// This request's own lines.
    fields: Vec<u8>,
    body: Bytes,
}

impl Outgoing {
    /// A request with `method` and `body`, its fields starting with the lines `common`.
    pub(crate) fn new(method: Method, common: Bytes, body: Bytes) -> Self {
        Self {
            method,
            common,
            // Room for the routing fields a request adds, without growing.
            fields: Vec::with_capacity(128),
            body,
        }
    }

    /// Adds the field `name: value`, both already valid as a field's name and value
    /// (a `HeaderName`'s and a `HeaderValue`'s bytes, or text made only of them).
    pub(crate) fn field(&mut self, name: &[u8], value: &[u8]) {
        push_field(&mut self.fields, name, value);
    }
}

impl From<Request<Bytes>> for Outgoing {
    fn from(request: Request<Bytes>) -> Self {
        let (head, body) = request.into_parts();
        let mut outgoing = Outgoing::new(head.method, Bytes::new(), body);
        push_fields(&mut outgoing.fields, &head.headers);
        outgoing
    }
}

/// Appends the line `name: value` to `lines`.
pub(crate) fn push_field(lines: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    lines.reserve(name.len() + value.len() + 4);
    lines.extend_from_slice(name);
    lines.extend_from_slice(b": ");
    lines.extend_from_slice(value);
    lines.extend_from_slice(b"\r\n");
}

/// Appends each field of `headers` to `lines` but the framing, which is the writer's
/// to say.
pub(crate) fn push_fields(lines: &mut Vec<u8>, headers: &HeaderMap) {
    for (name, value) in headers {
        if name != CONTENT_LENGTH && name != TRANSFER_ENCODING {
            push_field(lines, name.as_str().as_bytes(), value.as_bytes());
        }
    }
}

/// `request` on the wire: its head (with `target` as the request target, and the
/// body's length) and its body.
fn encode(request: &Outgoing, target: &str) -> Vec<u8> {
    let body = &request.body;
    let method = request.method.as_str();
    let fields = request.common.len() + request.fields.len();
    let mut out = Vec::with_capacity(method.len() + target.len() + fields + 48 + body.len());
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    out.extend_from_slice(&request.common);
    out.extend_from_slice(&request.fields);
    if !body.is_empty() || request.method == Method::POST {
        out.extend_from_slice(b"content-length: ");
        super::push_decimal(&mut out, body.len() as u64);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}
