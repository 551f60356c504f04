//! A client's side of a connection: one request at a time, written whole, its response
//! head read here and its body by the [`Body`] the response carries.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::{Buf as _, Bytes};
use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Version};

use super::body::State;
use super::{Body, Conn, Error, MAX_HEAD, MAX_HEADERS, Recycle, fill, poll_fill};

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
        request: &Request<Bytes>,
        target: &str,
        recycle: Arc<dyn Recycle>,
    ) -> Result<Response<Body>, Error> {
        let wire = encode(request, target);
        super::write_all(&mut *self.io, &wire).await?;
        drop(wire);
        loop {
            let Some(head) = parse(&self.buf)? else {
                if self.buf.len() >= MAX_HEAD {
                    return Err(Error::TooLarge("the response head"));
                }
                fill(&mut *self.io, &mut self.buf).await?;
                continue;
            };
            self.buf.advance(head.len);
            if head.status.is_informational() {
                if head.status == StatusCode::SWITCHING_PROTOCOLS {
                    return Err(Error::Malformed("a switch of protocols nobody asked for"));
                }
                // 100 Continue and the like: the final answer follows.
                continue;
            }
            // A response framed two ways may be a smuggling attempt (RFC 9112 §6.3: to be
            // handled as an error), and readers disagree on which way wins: refused.
            if head.headers.contains_key(TRANSFER_ENCODING)
                && head.headers.contains_key(CONTENT_LENGTH)
            {
                return Err(Error::Malformed(
                    "a response framed by length and by coding",
                ));
            }
            let state = framing(&head, request.method())?;
            let reusable = super::keeps_alive(head.version, &head.headers);
            let recycle = reusable.then_some(recycle);
            let mut response = Response::new(Body::new(self, state, recycle));
            *response.status_mut() = head.status;
            *response.version_mut() = head.version;
            *response.headers_mut() = head.headers;
            return Ok(response);
        }
    }
}

/// A response head, parsed.
struct Head {
    status: StatusCode,
    version: Version,
    headers: HeaderMap,
    /// Its length on the wire.
    len: usize,
}

/// The response head at the start of `buf`, if it is all there.
fn parse(buf: &[u8]) -> Result<Option<Head>, Error> {
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
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    for field in response.headers.iter() {
        let name = HeaderName::from_bytes(field.name.as_bytes())
            .map_err(|_| Error::Malformed("a header field name"))?;
        let value = HeaderValue::from_bytes(field.value)
            .map_err(|_| Error::Malformed("a header field value"))?;
        headers.append(name, value);
    }
    Ok(Some(Head {
        status,
        version,
        headers,
        len,
    }))
}

/// How the body of a response to `method` is framed (RFC 9112, section 6.3).
fn framing(head: &Head, method: &Method) -> Result<State, Error> {
    if super::bodiless(method, head.status) {
        return Ok(State::Done);
    }
    if head.headers.contains_key(TRANSFER_ENCODING) {
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
            .headers
            .get_all(TRANSFER_ENCODING)
            .iter()
            .map(|v| v.to_str())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| Error::Malformed("a transfer coding that is not text"))?;
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
    let length = super::content_length(&head.headers).map_err(Error::Malformed)?;
    Ok(length.map_or(State::Close, State::of_length))
}

/// `request` on the wire: its head (with `target` as the request target, and the
/// body's length) and its body.
fn encode(request: &Request<Bytes>, target: &str) -> Vec<u8> {
    let body = request.body();
    let method = request.method().as_str();
    let fields: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    let mut out = Vec::with_capacity(method.len() + target.len() + fields + 48 + body.len());
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in request.headers() {
        // The framing is this writer's to say.
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || request.method() == Method::POST {
        out.extend_from_slice(b"content-length: ");
        super::push_decimal(&mut out, body.len() as u64);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}
