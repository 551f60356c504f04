//! One POST: who may send it, its body read within its budget, its message read and
//! accepted, its era (a 2025-11-25 session's goes to `session_era`), its headers held to
//! its body, then run (`run`).

use axum::body::Bytes;
use axum::response::Response;
use http::StatusCode;
use http::header::CONTENT_LENGTH;
use http_body_util::BodyExt as _;

use super::authn::admit;
use super::conn::Conn;
use super::reply::{Reply, rpc_error};
use super::run::run;
use super::session_era::{answer, notification, session_header, session_request};
use super::sessions::SESSION;
use super::streams::Caller;
use super::{Shared, headers, protected};
use crate::jsonrpc::{Incoming, RpcError};
use crate::server::{Accepted, IncomingRequest};
use crate::transport::http::body::Joined;
use crate::transport::http::fields::Fields;

/// One POST. `conn`, when the endpoint's own accept loop serves it, learns when the
/// body is in (the body budget ends, the whole-request budget starts).
pub(crate) async fn handle_post<B>(
    shared: &Shared,
    headers: &impl Fields,
    body: B,
    conn: Option<&Conn>,
) -> Reply
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let (auth, bytes, incoming) = match read_message(shared, headers, body, conn).await {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    let (id, method, params) = match incoming {
        Incoming::Notification { method, params } => {
            // Boxed: the rare paths stay out of every request's future.
            return Box::pin(notification(
                shared,
                headers,
                auth.as_ref(),
                &method,
                params,
            ))
            .await
            .into();
        }
        Incoming::Response { id, result } => {
            return Box::pin(answer(shared, headers, auth.as_ref(), id, result))
                .await
                .into();
        }
        Incoming::Request { id, method, params } => (id, method, params),
    };
    // The caller set in place: the request (a couple hundred bytes) is not moved for it.
    let mut request = IncomingRequest::from_raw(id, method, params);
    request.auth = auth;
    request.peer = conn.and_then(|c| c.peer);
    let accepted = match shared.server.accept_read(request, &bytes) {
        Ok(accepted) => accepted,
        Err(rejected) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                rejected.id.as_ref(),
                rejected.error,
            )
            .into();
        }
    };
    serve(shared, headers, accepted, conn).await
}

/// An accepted request: its scopes checked, then served on its 2025-11-25 session, or
/// stateless once its headers repeat its body.
async fn serve(
    shared: &Shared,
    headers: &impl Fields,
    accepted: Accepted,
    conn: Option<&Conn>,
) -> Reply {
    if let Some(refused) = scopes_refused(shared, &accepted) {
        return refused.into();
    }
    if let Some(sessions) = &shared.sessions {
        // A session's requests belong to it whatever their `_meta` says; only a
        // request outside one is stateless by its 2026-07-28 `_meta`.
        let stateless = accepted.is_stateless(headers.contains(&SESSION));
        if !stateless && session_header(headers) {
            return session_request(shared, sessions, headers, accepted).await;
        }
    }
    // A stateless request's headers must repeat its body; a body without a string
    // version has nothing to compare, and the server's own checks say what is wrong.
    if let Some(body_version) = accepted.protocol_version() {
        if let Err(error) = headers::check_headers(shared, headers, body_version, &accepted) {
            return rpc_error(StatusCode::BAD_REQUEST, Some(accepted.id()), error).into();
        }
    }
    // A stream that never ends on its own takes one of its caller's stream places.
    let slot = if accepted.never_ends() {
        let caller = Caller::of(accepted.auth(), conn.and_then(|c| c.peer));
        match shared.streams.take(caller, Some(accepted.id())) {
            Ok(slot) => Some(slot),
            Err(refused) => return (*refused).into(),
        }
    } else {
        None
    };
    run(shared, headers, accepted, None, slot).await
}

/// The POST's message: its caller admitted, its body read within its budgets, its JSON
/// read within the server's limits and its headers single-valued; or the refusal.
async fn read_message<B>(
    shared: &Shared,
    headers: &impl Fields,
    body: B,
    conn: Option<&Conn>,
) -> Result<(Option<crate::auth::AuthInfo>, Bytes, Incoming), Reply>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let auth = admit(shared, "POST", headers)
        .await
        .map_err(|refused| Reply::from(*refused))?;
    let bytes = read_body(shared, headers, body)
        .await
        .map_err(|refused| Reply::from(*refused))?;
    if let Some(conn) = conn {
        conn.serving();
    }
    let incoming =
        Incoming::read_within(&bytes, shared.server.json_limits()).map_err(|rejected| {
            Reply::from(rpc_error(
                StatusCode::BAD_REQUEST,
                rejected.id.as_ref(),
                rejected.error,
            ))
        })?;
    if let Err(error) = headers::single_valued(headers) {
        let id = match &incoming {
            Incoming::Request { id, .. } => Some(id),
            _ => None,
        };
        return Err(rpc_error(StatusCode::BAD_REQUEST, id, error).into());
    }
    Ok((auth, bytes, incoming))
}

/// 403 for a request whose token lacks a scope its tool, prompt or resource requires.
fn scopes_refused(shared: &Shared, accepted: &Accepted) -> Option<Response> {
    shared.verifier.as_ref()?;
    let required = (shared.required_scopes.as_ref()?)(accepted.method(), accepted.target())?;
    if protected::missing_scopes(&required, accepted.auth()).is_empty() {
        return None;
    }
    tracing::debug!(method = accepted.method(), "a token lacks a required scope");
    Some(protected::insufficient_scope(
        shared.resource_metadata.as_deref(),
        &required,
    ))
}

async fn read_body<B>(
    shared: &Shared,
    headers: &impl Fields,
    body: B,
) -> Result<Bytes, Box<Response>>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let too_large = || {
        Box::new(rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            RpcError::invalid_request(format!(
                "Request body larger than {} bytes",
                shared.max_body_bytes
            )),
        ))
    };
    let declared = headers
        .text(&CONTENT_LENGTH)
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > shared.max_body_bytes as u64) {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    let mut joined = Joined::new(shared.max_body_bytes);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            tracing::debug!(error = %e, "could not read a request body");
            Box::new(rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                RpcError::invalid_request("Could not read the request body"),
            ))
        })?;
        if let Ok(data) = frame.into_data() {
            joined.push(data).map_err(|_| too_large())?;
        }
    }
    Ok(joined.finish())
}
