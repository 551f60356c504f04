//! What the endpoint answers: a JSON-RPC answer kept as its status and text, which the
//! endpoint's own connection writes as it is, or any other `Response`.

use std::any::Any;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};

use crate::jsonrpc::{self, Incoming, RpcError, code};
use crate::server::caught_panic;
use crate::server::{Refusal, ResultText, SharedResult, Verdict};
use crate::types::v2026_07_28::RequestId;

/// The answer to one POST. A JSON body (the usual answer) stays its status and text: the
/// endpoint's accept loop writes it with no header map and no boxed body to build and
/// take apart for each request; a router gets it as a [`Response`].
#[derive(Debug)]
pub(crate) enum Reply {
    /// `application/json`, with this status.
    Json(StatusCode, String),
    /// `application/json`: the result (already JSON) answered to the request with this
    /// id, kept apart from its envelope so that the endpoint's connection writes both
    /// straight into its response, with no answer text joined first.
    Result(StatusCode, RequestId, ResultText),
    /// Anything else: an SSE stream, an answer with more headers, an empty one.
    Response(Response),
}

impl Reply {
    /// The JSON-RPC answer for `verdict` on request `id`.
    pub(super) fn answer(id: RequestId, verdict: Verdict, on_session: bool) -> Self {
        let status = status_for(&verdict, on_session);
        match verdict.into_result() {
            Ok(result) => Self::Result(status, id, result),
            Err(error) => Self::Json(status, jsonrpc::answer(&id, &Err(error))),
        }
    }

    /// The answer to a request whose task panicked (see `pipeline::caught_panic`): 500,
    /// -32603 to its id.
    pub(super) fn panicked(id: Option<&RequestId>, panic: &(dyn Any + Send)) -> Self {
        let error = caught_panic(panic);
        Self::Json(
            StatusCode::INTERNAL_SERVER_ERROR,
            jsonrpc::response(id, &Err(error)),
        )
    }

    /// [`panicked`](Self::panicked), for a POST whose message is `body`: its id read
    /// from it again, as the task that had read it is gone.
    pub(super) fn panicked_on(body: &[u8], panic: &(dyn Any + Send)) -> Self {
        let id = match Incoming::read(body) {
            Ok(Incoming::Request { id, .. }) => Some(id),
            _ => None,
        };
        Self::panicked(id.as_ref(), panic)
    }

    /// The answer as a [`Response`].
    pub(crate) fn into_response(self) -> Response {
        match self {
            Self::Json(status, text) => json_body(status, text),
            Self::Result(status, id, result) => match result.into_parts() {
                (text, None) => json_body(status, jsonrpc::answer(&id, &Ok(text))),
                (head, Some(shared)) => shared_body(status, &id, &head, shared),
            },
            Self::Response(response) => response,
        }
    }

    /// The answer's status.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Json(status, _) | Self::Result(status, ..) => *status,
            Self::Response(response) => response.status(),
        }
    }
}

impl From<Response> for Reply {
    fn from(response: Response) -> Self {
        Self::Response(response)
    }
}

/// The HTTP status of an answer, decided here alone: a protocol refusal is 400 (an
/// unknown method 404), and so is an error carrying one of 2026-07-28's protocol codes
/// whoever raised it; anything else a handler decided is a 200. On a 2025-11-25
/// session every JSON-RPC error is a 200: that era's clients take a 404 to mean the
/// session is gone.
fn status_for(verdict: &Verdict, on_session: bool) -> StatusCode {
    match verdict {
        _ if on_session => StatusCode::OK,
        Verdict::Refused { reason, .. } => match reason {
            Refusal::UnknownMethod => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        },
        Verdict::Answered(Err(e)) => match e.code {
            code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            code::HEADER_MISMATCH
            | code::MISSING_REQUIRED_CLIENT_CAPABILITY
            | code::UNSUPPORTED_PROTOCOL_VERSION
            | code::PARSE_ERROR
            | code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        },
        Verdict::Answered(Ok(_)) => StatusCode::OK,
    }
}

pub(super) fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: RpcError) -> Response {
    json_body(status, jsonrpc::response(id, &Err(error)))
}

pub(super) fn json_body(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The answer to `id` of a result `shared` by its readers, after this answer's `head`:
/// the body takes the shared text as it is, no copy of it made for this answer.
fn shared_body(
    status: StatusCode,
    id: &RequestId,
    head: &str,
    shared: Arc<SharedResult>,
) -> Response {
    /// The shared text a body holds.
    struct Members(Arc<SharedResult>);
    impl AsRef<[u8]> for Members {
        fn as_ref(&self) -> &[u8] {
            self.0.members().as_bytes()
        }
    }
    let mut room = jsonrpc::IdRoom::default();
    let [open, id, result, head, _, close] = jsonrpc::answer_pieces(id, [head, ""], &mut room);
    let pieces = [
        Bytes::from([open, id, result, head].concat()),
        Bytes::from_owner(Members(shared)),
        Bytes::copy_from_slice(close.as_bytes()),
    ];
    let body = Body::from_stream(futures_util::stream::iter(pieces.map(Ok::<_, Infallible>)));
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn status_only(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}
