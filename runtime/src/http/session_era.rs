//! The 2025-11-25 session era at the HTTP edge: a POST that belongs to a session (or
//! opens one with `initialize`), a client's notification or answer on one, and the
//! session's GET stream and DELETE. A stateless 2026-07-28 request never comes here.

use axum::response::Response;
use http::header::ACCEPT;
use http::{HeaderValue, StatusCode};
use serde_json::Value;

use super::Shared;
use super::authn::admit;
use super::headers::PROTOCOL_VERSION;
use super::reply::{Reply, json_body, rpc_error, status_only};
use super::run::run;
use super::sessions::{Lookup, SESSION, SESSION_HEADER, Sessions};
use super::streams::Caller;
use crate::jsonrpc::{self, RpcError};
use crate::protocol::SESSION_PROTOCOL_VERSION;
use crate::protocol::era::is_session_version;
use crate::server::{Accepted, OnSession};
use crate::transport::http::fields::Fields;
use crate::transport::http::visible;
use crate::types::v2026_07_28::RequestId;

/// Whether a request without the 2026-07-28 `_meta` belongs to a 2025-11-25 session:
/// its `MCP-Protocol-Version` header, if any, names an older version (a modern header
/// on a body without `_meta` is a malformed modern request).
pub(super) fn session_header(headers: &impl Fields) -> bool {
    match headers.get(&PROTOCOL_VERSION) {
        None => true,
        Some(version) => visible(version).is_some_and(is_session_version),
    }
}

/// A request of the 2025-11-25 era: `initialize` opens a session, anything else runs on
/// the session its `Mcp-Session-Id` names.
pub(super) async fn session_request(
    shared: &Shared,
    sessions: &Sessions,
    headers: &impl Fields,
    accepted: Accepted,
) -> Reply {
    if let Some(params) = accepted.opens_session() {
        return open_session(shared, sessions, accepted, params).await;
    }
    let id = accepted.id();
    let session = match sessions
        .find(&shared.server, headers, accepted.auth())
        .await
    {
        Ok(session) => session,
        Err(missing) => return missing.refusal(Some(id)).into(),
    };
    if let Some(other) = headers
        .text(&PROTOCOL_VERSION)
        .filter(|v| *v != SESSION_PROTOCOL_VERSION)
    {
        let error = RpcError::invalid_request(format!(
            "Bad Request: unsupported MCP-Protocol-Version {other}; the session speaks {SESSION_PROTOCOL_VERSION}"
        ));
        return rpc_error(StatusCode::BAD_REQUEST, Some(id), error).into();
    }
    match session.session.route(accepted) {
        OnSession::Own(id, own) => {
            // A choice made (a level, a subscription) goes to the session's record.
            let name = headers.text(&SESSION).unwrap_or_default();
            if own.changed && sessions.save(name, &session).await.is_err() {
                return Lookup::Unavailable.refusal(Some(&id)).into();
            }
            Reply::Json(StatusCode::OK, jsonrpc::response(Some(&id), &own.answer))
        }
        OnSession::Serve(accepted) => run(shared, headers, accepted, Some(session), None).await,
    }
}

/// `initialize`: a new session, named in `Mcp-Session-Id` on the answer, or the refusal
/// (too many sessions open, the store failed).
async fn open_session(
    shared: &Shared,
    sessions: &Sessions,
    accepted: Accepted,
    params: Option<Value>,
) -> Reply {
    let id = accepted.id();
    let (session, result) = match shared.server.open_session(params.as_ref()) {
        Ok(opened) => opened,
        Err(error) => return rpc_error(StatusCode::BAD_REQUEST, Some(id), error).into(),
    };
    let auth = accepted.auth();
    let events = shared.server.events();
    let name = match sessions.open(session, params.as_ref(), auth, events).await {
        Ok(Some(name)) => name,
        Ok(None) => {
            tracing::warn!("refused a 2025-11-25 session: too many are open");
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(id),
                RpcError::internal("Too many open sessions; try again later"),
            )
            .into();
        }
        Err(e) => {
            tracing::warn!(error = %e, "refused a 2025-11-25 session: the store failed");
            return Lookup::Unavailable.refusal(Some(id)).into();
        }
    };
    let mut response = json_body(StatusCode::OK, jsonrpc::response(Some(id), &Ok(result)));
    if let Ok(value) = HeaderValue::from_str(&name) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response.into()
}

/// A client notification: on a 2025-11-25 session, `notifications/cancelled` stops the
/// request it names; everything else (and every notification outside a session, which
/// 2026-07-28 does not define over HTTP) is accepted and ignored.
pub(super) async fn notification(
    shared: &Shared,
    headers: &impl Fields,
    auth: Option<&crate::auth::AuthInfo>,
    method: &str,
    params: Option<Value>,
) -> Response {
    let Some(sessions) = &shared.sessions else {
        tracing::trace!(method, "ignoring a client notification");
        return status_only(StatusCode::ACCEPTED);
    };
    if !headers.contains(&SESSION) {
        tracing::trace!(method, "ignoring a client notification outside a session");
        return status_only(StatusCode::ACCEPTED);
    }
    let session = match sessions.find(&shared.server, headers, auth).await {
        Ok(session) => session,
        Err(missing) => return missing.refusal(None),
    };
    if crate::protocol::says(method, |m| m.cancels_request) {
        session.in_flight.cancel(params.as_ref());
    } else {
        tracing::trace!(method, "a session notification");
    }
    status_only(StatusCode::ACCEPTED)
}

/// The client's answer to a request the server sent on a 2025-11-25 session.
pub(super) async fn answer(
    shared: &Shared,
    headers: &impl Fields,
    auth: Option<&crate::auth::AuthInfo>,
    id: RequestId,
    result: Result<Value, RpcError>,
) -> Response {
    let Some(sessions) = shared
        .sessions
        .as_ref()
        .filter(|_| headers.contains(&SESSION))
    else {
        let error = RpcError::invalid_request("Invalid Request: clients send no responses");
        return rpc_error(StatusCode::BAD_REQUEST, Some(&id), error);
    };
    let session = match sessions.find(&shared.server, headers, auth).await {
        Ok(session) => session,
        Err(missing) => return missing.refusal(None),
    };
    match sessions.answer(headers, &session, id, result).await {
        Ok(true) => status_only(StatusCode::ACCEPTED),
        Ok(false) => rpc_error(
            StatusCode::NOT_FOUND,
            None,
            RpcError::invalid_request(
                "Not Found: the instance that sent the request this answers has gone; \
                 the session goes on",
            ),
        ),
        Err(missing) => missing.refusal(None),
    }
}

/// GET on a dual-era endpoint: the standalone stream of the session it names, from
/// where its `Last-Event-ID` left off (406 unless it accepts `text/event-stream`).
pub(crate) async fn handle_get(
    shared: &Shared,
    headers: &impl Fields,
    peer: Option<std::net::IpAddr>,
) -> Response {
    let auth = match admit(shared, "GET", headers).await {
        Ok(auth) => auth,
        Err(refused) => return *refused,
    };
    let Some(sessions) = &shared.sessions else {
        return status_only(StatusCode::METHOD_NOT_ALLOWED);
    };
    let takes_sse = headers
        .text(&ACCEPT)
        .is_some_and(|accept| accept.contains("text/event-stream"));
    if !takes_sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            RpcError::invalid_request("Not Acceptable: the GET stream is text/event-stream"),
        );
    }
    let session = match sessions.find(&shared.server, headers, auth.as_ref()).await {
        Ok(session) => session,
        Err(missing) => return missing.refusal(None),
    };
    match shared.streams.take(Caller::of(auth.as_ref(), peer), None) {
        Ok(slot) => match session.streams.resume(headers, &shared.closing, slot).await {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, "could not resume a session's stream: the event store failed");
                Lookup::Unavailable.refusal(None)
            }
        },
        Err(refused) => *refused,
    }
}

/// DELETE on a dual-era endpoint: ends the session it names.
pub(crate) async fn handle_delete(shared: &Shared, headers: &impl Fields) -> Response {
    let auth = match admit(shared, "DELETE", headers).await {
        Ok(auth) => auth,
        Err(refused) => return *refused,
    };
    let Some(sessions) = &shared.sessions else {
        // Not routed when sessions are off; kept total all the same.
        return status_only(StatusCode::METHOD_NOT_ALLOWED);
    };
    match sessions.end(&shared.server, headers, auth.as_ref()).await {
        Ok(()) => status_only(StatusCode::OK),
        Err(missing) => missing.refusal(None),
    }
}
