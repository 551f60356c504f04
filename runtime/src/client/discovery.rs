//! Era discovery: which protocol era a server speaks, found once when a client
//! connects (the era is a property of the server process, so the client keeps it).
//!
//! In [`EraMode::Auto`] the client probes with a modern request (`server/discover`):
//! a result, or a recognised modern error, means 2026-07-28; any other answer, or none
//! within the discovery timeout, means a 2025-11-25 server, and the client opens a
//! session with `initialize`. What counts as "any other answer" depends on the
//! transport: on a message transport it is a JSON-RPC error,
//! over HTTP a 400, 404 or 405 whose body is not a modern error.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use super::callbacks::Callbacks;
use crate::Era;
use crate::Error;
use crate::jsonrpc::{RpcError, code};
use crate::protocol::{PROTOCOL_VERSION, RequestMeta, SESSION_PROTOCOL_VERSION};
use crate::transport::{CallError, ClientTransport, OutgoingRequest};
use crate::types::rpc::{Notification as _, Request as _};
use crate::types::v2025_11_25 as old;
use crate::types::v2026_07_28::method;

/// How long [`EraMode::Auto`] waits for the answer to its probe before deciding the
/// server is a 2025-11-25 one that ignores unknown requests.
pub(crate) const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How a client picks the protocol era of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EraMode {
    /// Probe the server and speak 2026-07-28 if it does, 2025-11-25 otherwise.
    #[default]
    Auto,
    /// Speak 2026-07-28's stateless requests without probing.
    Stateless,
    /// Open a 2025-11-25 session (`initialize`) without probing.
    Session,
}

/// What the client says about itself while negotiating.
pub(crate) struct Hello<'a> {
    pub(crate) info: &'a Value,
    pub(crate) capabilities: &'a Value,
    pub(crate) callbacks: &'a Callbacks,
    pub(crate) timeout: Duration,
}

/// What negotiating settled: the era, and the server's name when it said it.
pub(crate) struct Negotiated {
    pub(crate) era: Era,
    pub(crate) server_name: Option<String>,
    /// Whether a 2025-11-25 server declared `logging` in its `initialize` answer (so
    /// takes `logging/setLevel`).
    pub(crate) session_logging: bool,
}

/// Settles the era of `transport` under `mode`, opening a 2025-11-25 session when that
/// is the answer.
pub(crate) async fn negotiate<T: ClientTransport + ?Sized>(
    transport: &T,
    mode: EraMode,
    hello: &Hello<'_>,
) -> crate::Result<Negotiated> {
    let mut server_name = None;
    let mut session_logging = false;
    let era = match mode {
        EraMode::Stateless => Era::Stateless,
        EraMode::Session => Era::Session,
        EraMode::Auto => match transport.known_era() {
            Some(era) => era,
            None => {
                let (era, name) = probe(transport, hello).await?;
                transport.discovered(era);
                server_name = name;
                era
            }
        },
    };
    tracing::debug!(%era, "protocol era settled");
    transport.negotiated(era);
    if era == Era::Session {
        // The server may ask (ping, even elicit) as soon as it has answered.
        let named = Arc::new(OnceLock::new());
        transport.route_server_requests(super::session::server_request_handler(
            hello.callbacks.clone(),
            Arc::clone(&named),
        ));
        (server_name, session_logging) = initialize(transport, hello).await?;
        if let Some(name) = &server_name {
            let _ = named.set(Arc::from(name.as_str()));
        }
    }
    Ok(Negotiated {
        era,
        server_name,
        session_logging,
    })
}

/// The era a probe found, and the name the server gave in its `serverInfo` (a
/// 2026-07-28 server's `server/discover` result carries it in `_meta`).
async fn probe<T: ClientTransport + ?Sized>(
    transport: &T,
    hello: &Hello<'_>,
) -> crate::Result<(Era, Option<String>)> {
    let meta = RequestMeta::to_value(hello.capabilities, hello.info, None);
    let request = OutgoingRequest {
        id: transport.next_id(),
        method: method::Discover::METHOD.into(),
        params: json!({ "_meta": meta }),
        notifications: None,
    };
    // A probe that may wait on the user signing in is given the time that takes.
    let sent = transport.request(request);
    let answered = if transport.may_wait_on_user() {
        Ok(sent.await)
    } else {
        tokio::time::timeout(hello.timeout, sent).await
    };
    let answer = match answered {
        Ok(answer) => answer,
        Err(_) => {
            tracing::debug!("no answer to server/discover in time: a 2025-11-25 server");
            return Ok((Era::Session, None));
        }
    };
    match answer {
        Ok(result) => discovered(&result),
        Err(e) if modern_error(&e).is_some() => match modern_error(&e)
            .and_then(|e| e.data.as_ref())
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
        {
            Some(versions) => pick(versions, "the -32022 error").map(|era| (era, None)),
            None => Ok((Era::Stateless, None)),
        },
        Err(e) if shows_session_server(&e) => {
            tracing::debug!(error = %e, "server/discover failed without a modern error: a 2025-11-25 server");
            Ok((Era::Session, None))
        }
        Err(CallError::Rpc(e)) => Err(Error::Rpc(Box::new(e))),
        Err(CallError::Transport(e)) => Err(Error::Transport(e)),
    }
}

/// The era a `server/discover` result names, and the server's name.
fn discovered(result: &Value) -> crate::Result<(Era, Option<String>)> {
    // The same resultType rule as every typed result.
    super::check_result_type::<method::Discover>(result)?;
    let name = result
        .get(crate::protocol::META)
        .and_then(|meta| meta.get(crate::protocol::META_SERVER_INFO))
        .and_then(|info| info.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match result.get("supportedVersions").and_then(Value::as_array) {
        Some(versions) => pick(versions, method::Discover::METHOD).map(|era| (era, name)),
        // A 2026-07-28 server names its versions; a result without them is an older
        // server answering a method it does not know with an empty one.
        None => {
            tracing::debug!(
                "server/discover answered without supportedVersions: a 2025-11-25 server"
            );
            Ok((Era::Session, None))
        }
    }
}

/// The modern error a failed probe carries: as the JSON-RPC answer, or in the body of an
/// HTTP refusal.
fn modern_error(error: &CallError) -> Option<&RpcError> {
    error.rpc_error().filter(|e| is_stateless_error(e))
}

/// Whether a failed probe shows a 2025-11-25 server, from the facts its transport
/// reported: a JSON-RPC error no 2026-07-28 server sends, or an HTTP 400, 404 or 405
/// without one in its body (what a session server answers a request outside a session).
fn shows_session_server(error: &CallError) -> bool {
    match error {
        CallError::Rpc(e) => !is_stateless_error(e),
        CallError::Transport(t) => {
            matches!(t.http_status(), Some(400 | 404 | 405))
                && !t.rpc_error().is_some_and(is_stateless_error)
        }
    }
}

/// Whether a JSON-RPC error is one only a 2026-07-28 server sends: -32022 with the
/// supported versions, or -32020 (HTTP headers disagree with the body).
fn is_stateless_error(error: &RpcError) -> bool {
    match error.code {
        code::UNSUPPORTED_PROTOCOL_VERSION => error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .is_some_and(Value::is_array),
        code::HEADER_MISMATCH => true,
        _ => false,
    }
}

/// The era to speak given the versions a modern server listed.
fn pick(versions: &[Value], source: &str) -> crate::Result<Era> {
    let lists = |v: &str| versions.iter().any(|x| x.as_str() == Some(v));
    if lists(PROTOCOL_VERSION) {
        Ok(Era::Stateless)
    } else if lists(SESSION_PROTOCOL_VERSION) {
        Ok(Era::Session)
    } else {
        Err(Error::Protocol(crate::ProtocolError::NoCommonVersion {
            detail: format!("{source} listed {}", Value::from(versions.to_vec())),
        }))
    }
}

/// The 2025-11-25 handshake: `initialize`, then `notifications/initialized`. Returns
/// the server's name, and whether it declared `logging`.
async fn initialize<T: ClientTransport + ?Sized>(
    transport: &T,
    hello: &Hello<'_>,
) -> crate::Result<(Option<String>, bool)> {
    let request = OutgoingRequest {
        id: transport.next_id(),
        method: old::method::Initialize::METHOD.into(),
        params: json!({
            "protocolVersion": SESSION_PROTOCOL_VERSION,
            "capabilities": hello.capabilities,
            "clientInfo": hello.info,
        }),
        notifications: None,
    };
    // Within the discovery timeout, as the probe: a peer that prints no answer (a
    // server started for another transport, writing log lines) is not waited on.
    let sent = transport.request(request);
    let result = if transport.may_wait_on_user() {
        sent.await
    } else {
        tokio::time::timeout(hello.timeout, sent)
            .await
            .unwrap_or_else(|_| {
                Err(crate::transport::TransportError::new(format!(
                    "the server sent no answer to initialize within {} s \
                     (ClientLimits::discovery_timeout)",
                    hello.timeout.as_secs_f64()
                ))
                .into())
            })
    };
    let result = result.map_err(Error::from)?;
    let result: old::InitializeResult = serde_json::from_value(result).map_err(|source| {
        Error::Protocol(crate::ProtocolError::Decode {
            method: old::method::Initialize::METHOD,
            source,
        })
    })?;
    if result.protocol_version != SESSION_PROTOCOL_VERSION {
        return Err(Error::Protocol(crate::ProtocolError::NoCommonVersion {
            detail: format!("initialize answered {}", result.protocol_version),
        }));
    }
    transport
        .notify(old::method::Initialized::METHOD, None)
        .await?;
    Ok((
        Some(result.server_info.name),
        result.capabilities.logging.is_some(),
    ))
}
