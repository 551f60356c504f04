//! One POST, from the checks to a JSON or SSE answer.

use std::sync::Arc;

use axum::body::Bytes;
use axum::response::Response;
use http::header::{ACCEPT, CONTENT_LENGTH, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::Value;
use tokio_util::sync::DropGuard;

use http_body_util::BodyExt as _;

use super::conn::Conn;
use super::headers::PROTOCOL_VERSION;
use super::reply::{Reply, json_body, rpc_error, status_only};
use super::sessions::{HttpSession, Lookup, SESSION, SESSION_HEADER, Sessions};
use super::sse::{Outcome, SseState, accepts, session_sse, sse};
use super::streams::{Caller, Slot};
use super::{Shared, authn, headers, protected};
use crate::jsonrpc::{self, Incoming, RpcError};
use crate::protocol::SESSION_PROTOCOL_VERSION;
use crate::protocol::era::is_session_version;
use crate::server::{Accepted, Admitted, IncomingRequest, Verdict, outbound};
use crate::transport::http::body::Joined;
use crate::transport::http::fields::Fields;
use crate::transport::http::visible;
use crate::types::rpc::{Notification as _, Request as _};
use crate::types::v2025_11_25::method as session_method;
use crate::types::v2026_07_28::{self as v2026, RequestId};

/// Who may talk to the endpoint: the `Host`/`Origin` check (403), then the bearer token
/// (401). The identity of a verified token, if any.
async fn admit(
    shared: &Shared,
    method: &str,
    headers: &impl Fields,
) -> Result<Option<crate::auth::AuthInfo>, Box<Response>> {
    if let Err(why) = shared.hosts.check(headers) {
        tracing::warn!(
            reason = %why,
            "rejected a request (DNS-rebinding protection)"
        );
        return Err(Box::new(rpc_error(
            StatusCode::FORBIDDEN,
            None,
            RpcError::invalid_request(format!("Forbidden: {why}")),
        )));
    }
    if let Some(bus) = &shared.bus {
        if let Err(e) = bus.ensure_started(&shared.server).await {
            tracing::warn!(error = %e, "the fleet's event bus did not start yet");
        }
    }
    authn::authenticate(shared, method, headers)
        .await
        .map_err(|denied| Box::new(unauthorized(denied)))
}

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
    let request = IncomingRequest::from_raw(id, method, params).with_auth(auth);
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
    if let Some(refused) = scopes_refused(shared, &accepted) {
        return refused.into();
    }
    if let Some(sessions) = &shared.sessions {
        // A session's requests belong to it whatever their `_meta` says; only a
        // request outside one is stateless by its 2026-07-28 `_meta`.
        let in_session = headers.contains(&SESSION) || !accepted.names_protocol_version();
        if in_session && session_header(headers) {
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
    let slot = if accepted.method() == v2026::method::SubscriptionsListen::METHOD {
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

/// Whether a request without the 2026-07-28 `_meta` belongs to a 2025-11-25 session:
/// its `MCP-Protocol-Version` header, if any, names an older version (a modern header
/// on a body without `_meta` is a malformed modern request).
fn session_header(headers: &impl Fields) -> bool {
    match headers.get(&PROTOCOL_VERSION) {
        None => true,
        Some(version) => visible(version).is_some_and(is_session_version),
    }
}

/// A request of the 2025-11-25 era: `initialize` opens a session, anything else runs on
/// the session its `Mcp-Session-Id` names.
async fn session_request(
    shared: &Shared,
    sessions: &Sessions,
    headers: &impl Fields,
    accepted: Accepted,
) -> Reply {
    let id = accepted.id();
    if accepted.method() == session_method::Initialize::METHOD {
        let params = accepted
            .params()
            .and_then(|p| serde_json::from_str(p.get()).ok());
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
                return no_session(Some(id), &Lookup::Unavailable).into();
            }
        };
        let mut response = json_body(StatusCode::OK, jsonrpc::response(Some(id), &Ok(result)));
        if let Ok(value) = HeaderValue::from_str(&name) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        return response.into();
    }
    let session = match sessions
        .find(&shared.server, headers, accepted.auth())
        .await
    {
        Ok(session) => session,
        Err(missing) => return no_session(Some(id), &missing).into(),
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
    if let Some(own) = session
        .session
        .answer_own(accepted.method(), accepted.params())
    {
        // A choice made (a level, a subscription) goes to the session's record.
        let chose = own.is_ok() && accepted.method() != session_method::Ping::METHOD;
        let name = headers.text(&SESSION).unwrap_or_default();
        if chose && sessions.save(name, &session).await.is_err() {
            return no_session(Some(id), &Lookup::Unavailable).into();
        }
        return Reply::Json(StatusCode::OK, jsonrpc::response(Some(id), &own));
    }
    let accepted = accepted.on_session(&session.session);
    run(shared, headers, accepted, Some(session), None).await
}

/// A client notification: on a 2025-11-25 session, `notifications/cancelled` stops the
/// request it names; everything else (and every notification outside a session, which
/// 2026-07-28 does not define over HTTP) is accepted and ignored.
async fn notification(
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
        Err(missing) => return no_session(None, &missing),
    };
    if method == v2026::method::Cancelled::METHOD {
        session.in_flight.cancel(params.as_ref());
    } else {
        tracing::trace!(method, "a session notification");
    }
    status_only(StatusCode::ACCEPTED)
}

/// The client's answer to a request the server sent on a 2025-11-25 session.
async fn answer(
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
        Err(missing) => return no_session(None, &missing),
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
        Err(missing) => no_session(None, &missing),
    }
}

/// 400 without a session id, 404 for one that is not live (the client starts over).
fn no_session(id: Option<&RequestId>, missing: &Lookup) -> Response {
    match missing {
        Lookup::Missing => rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            RpcError::invalid_request(
                "Bad Request: no Mcp-Session-Id; send initialize first, or the 2026-07-28 _meta",
            ),
        ),
        Lookup::Unknown => rpc_error(
            StatusCode::NOT_FOUND,
            id,
            RpcError::invalid_request("Session not found; initialize a new one"),
        ),
        Lookup::Unavailable => rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            id,
            RpcError::internal("The session store is unavailable; try again shortly"),
        ),
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
        Err(missing) => return no_session(None, &missing),
    };
    match shared.streams.take(Caller::of(auth.as_ref(), peer), None) {
        Ok(slot) => match session.streams.resume(headers, &shared.closing, slot).await {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, "could not resume a session's stream: the event store failed");
                no_session(None, &Lookup::Unavailable)
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
        Err(missing) => no_session(None, &missing),
    }
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

/// Runs the handler: JSON when it returns without notifying, SSE from its first
/// notification on (see the module docs).
async fn run(
    shared: &Shared,
    headers: &impl Fields,
    accepted: Accepted,
    session: Option<Arc<HttpSession>>,
    slot: Option<Slot>,
) -> Reply {
    let id = accepted.id().clone();
    let on_session = session.is_some();
    let accepted_listen = accepted.method()
        == <crate::types::v2026_07_28::method::SubscriptionsListen as crate::types::rpc::Request>::METHOD;
    // Refusals are known before the handler runs: they are always plain JSON.
    let mut admitted = match accepted.admit() {
        Ok(admitted) => admitted,
        Err(refused) => return Reply::answer(&id, refused, on_session),
    };
    let (json_ok, sse_ok) = accepts(headers);
    // A listen stream never ends on its own: a draining endpoint ends it, as it ends the
    // sessions' GET streams (`Shared::closing`); any other request is let finish, on the
    // token it was made with (nothing else holds it yet).
    let cancel = if accepted_listen {
        let closing = shared.closing.child_token();
        admitted.set_cancel(closing.clone());
        closing
    } else {
        admitted.cancellation().clone()
    };
    let (tx, mut rx) = outbound::stream();
    // A client that takes no stream gets no notifications, and a 2025-11-25 handler that
    // would ask it something fails at once instead of waiting for an answer that cannot
    // come.
    admitted.set_outbound(sse_ok.then_some(tx));
    // A session's stream is kept for `Last-Event-ID` and outlives its connection.
    let streams = session.as_ref().map(|s| Arc::clone(&s.streams));
    let mut outcome = served(admitted, &id, session, slot, &cancel);
    // Dropping the guard (the client went away and its connection's task dropped us) cancels the token.
    let guard = cancel.drop_guard();
    let state = if !json_ok && sse_ok {
        SseState::new(id, outcome, rx, guard)
    } else {
        tokio::select! {
            biased;
            verdict = &mut outcome => {
                let mut state = SseState::new(id, outcome, rx, guard);
                state.finished = Some(verdict.into_result());
                // Notifications sent just before returning still make it a stream.
                state.drain();
                if state.pending.is_empty() || !sse_ok {
                    let _ = state.guard.take().map(DropGuard::disarm);
                    let result = state.finished.take().unwrap_or_else(|| Err(RpcError::internal("Internal error")));
                    return Reply::answer(&state.id, Verdict::Answered(result), on_session);
                }
                state
            }
            Some(first) = rx.recv(), if sse_ok => {
                let mut state = SseState::new(id, outcome, rx, guard);
                state.pending.push_back(first);
                state
            }
        }
    };
    let Some(streams) = &streams else {
        return sse(state).into();
    };
    let id = state.id.clone();
    match session_sse(state, streams).await {
        Ok(response) => response.into(),
        Err(e) => {
            tracing::warn!(error = %e, "could not open a session's stream: the event store failed");
            no_session(Some(&id), &Lookup::Unavailable).into()
        }
    }
}

/// The handler's run as the reply waits on it: holding the caller's stream place, if
/// it took one; on a session, ended early when the client withdraws the request
/// (`notifications/cancelled`) while keeping the stream open.
fn served(
    admitted: Admitted,
    id: &RequestId,
    session: Option<Arc<HttpSession>>,
    slot: Option<Slot>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Outcome {
    match (session, slot) {
        (None, None) => Box::pin(admitted.serve()),
        // The stream's place is held as long as its handler runs.
        (None, Some(slot)) => Box::pin(async move {
            let _slot = slot;
            admitted.serve().await
        }),
        (Some(session), _) => {
            // Only a session's request can be withdrawn while its stream stays open.
            let withdrawn = cancel.clone();
            let tracked = session.in_flight.track(id, withdrawn.clone());
            Box::pin(async move {
                let _tracked = tracked;
                tokio::select! {
                    verdict = admitted.serve() => verdict,
                    () = withdrawn.cancelled() => Verdict::Answered(Err(RpcError::internal("Request cancelled by the client"))),
                }
            })
        }
    }
}

fn unauthorized(denied: authn::Unauthorized) -> Response {
    let mut response = rpc_error(
        denied.status,
        None,
        RpcError::invalid_request(denied.message),
    );
    if let Ok(v) = HeaderValue::from_str(&denied.challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    if let Some(Ok(nonce)) = denied.dpop_nonce.map(HeaderValue::try_from) {
        response.headers_mut().insert("dpop-nonce", nonce);
    }
    response
}
