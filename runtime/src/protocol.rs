//! The stateless request model of 2026-07-28: what every request carries in `_meta`,
//! and which client capability each input request needs.

use serde_json::{Map, Value};

use crate::jsonrpc::RpcError;
use crate::types::v2026_07_28::{
    ClientCapabilities, ClientCapabilitiesElicitation, ClientCapabilitiesSampling, Implementation,
    InputRequest, InputRequests, LoggingLevel, ProgressToken,
};

/// The protocol version tern speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The previous protocol version (sessions with `initialize`).
pub const LEGACY_PROTOCOL_VERSION: &str = "2025-11-25";

/// Versions a tern server accepts on a stateless request.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// `_meta` key: the request's protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client software.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the server software, on results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the least severe log level the client wants on this request's stream.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// What a client request says about its client, read from `params._meta`.
#[derive(Debug, Clone)]
pub struct RequestMeta {
    /// The protocol version of this request.
    pub protocol_version: String,
    /// The client's capabilities for this request (never inferred from earlier ones).
    pub client_capabilities: ClientCapabilities,
    /// The client software, if it said.
    pub client_info: Option<Implementation>,
    /// Where progress notifications for this request go, if the client asked for them.
    pub progress_token: Option<ProgressToken>,
    /// The least severe log level the client wants on this request's stream; `None`
    /// means no log messages at all (2026-07-28 logging is opt-in per request).
    pub log_level: Option<LoggingLevel>,
}

impl RequestMeta {
    /// Reads and validates `_meta` from a request's params: -32602 when a required key is
    /// missing or malformed, -32022 when the version is not one of `supported`.
    pub fn from_params(params: Option<&Value>, supported: &[&str]) -> Result<Self, RpcError> {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Missing params._meta: every 2026-07-28 request carries \
                     {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
                ))
            })?;
        let version = meta
            .get(META_PROTOCOL_VERSION)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Missing params._meta[\"{META_PROTOCOL_VERSION}\"]"
                ))
            })?
            .as_str()
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                ))
            })?;
        let caps = meta.get(META_CLIENT_CAPABILITIES).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "Missing params._meta[\"{META_CLIENT_CAPABILITIES}\"]"
            ))
        })?;
        if !supported.contains(&version) {
            return Err(RpcError::unsupported_version(version, supported));
        }
        let client_capabilities: ClientCapabilities = serde_json::from_value(caps.clone())
            .map_err(|e| {
                RpcError::invalid_params(format!(
                    "params._meta[\"{META_CLIENT_CAPABILITIES}\"] is malformed: {e}"
                ))
            })?;
        let client_info = match meta.get(META_CLIENT_INFO) {
            None => None,
            Some(v) => Some(serde_json::from_value(v.clone()).map_err(|e| {
                RpcError::invalid_params(format!(
                    "params._meta[\"{META_CLIENT_INFO}\"] is malformed: {e}"
                ))
            })?),
        };
        let progress_token = meta
            .get("progressToken")
            .and_then(|t| serde_json::from_value(t.clone()).ok());
        // Lenient like progressToken: an unknown level asks for no logs rather than
        // failing the request.
        let log_level = meta
            .get(META_LOG_LEVEL)
            .and_then(|l| serde_json::from_value(l.clone()).ok());
        Ok(Self {
            protocol_version: version.to_owned(),
            client_capabilities,
            client_info,
            progress_token,
            log_level,
        })
    }

    /// The `_meta` a client puts on a request.
    pub(crate) fn to_value(
        capabilities: &Value,
        client_info: &Value,
        progress_token: Option<&Value>,
    ) -> Map<String, Value> {
        let mut meta = Map::with_capacity(4);
        meta.insert(META_PROTOCOL_VERSION.into(), PROTOCOL_VERSION.into());
        meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities.clone());
        meta.insert(META_CLIENT_INFO.into(), client_info.clone());
        if let Some(t) = progress_token {
            meta.insert("progressToken".into(), t.clone());
        }
        meta
    }
}

fn empty() -> Map<String, Value> {
    Map::new()
}

/// The capabilities `request` needs that `declared` lacks, or `None` when it may be sent.
///
/// Elicitation in form mode needs `elicitation` (an empty object counts as form support),
/// URL mode needs `elicitation.url`; sampling needs `sampling` (and `sampling.tools` when
/// the request offers tools); roots need `roots`.
pub fn missing_capability(
    request: &InputRequest,
    declared: &ClientCapabilities,
) -> Option<ClientCapabilities> {
    let mut need = ClientCapabilities::new();
    match request {
        InputRequest::Elicit(e) => {
            let url_mode = matches!(
                e.params,
                crate::types::v2026_07_28::ElicitRequestParams::Url(_)
            );
            match &declared.elicitation {
                None => {
                    let mut el = ClientCapabilitiesElicitation::new();
                    if url_mode {
                        el.url = Some(empty());
                    } else {
                        el.form = Some(empty());
                    }
                    need.elicitation = Some(el);
                }
                Some(el) if url_mode && el.url.is_none() => {
                    let mut el = ClientCapabilitiesElicitation::new();
                    el.url = Some(empty());
                    need.elicitation = Some(el);
                }
                Some(_) => return None,
            }
        }
        InputRequest::CreateMessage(m) => {
            let wants_tools = m.params.tools.as_ref().is_some_and(|t| !t.is_empty());
            match &declared.sampling {
                None => {
                    let mut s = ClientCapabilitiesSampling::new();
                    if wants_tools {
                        s.tools = Some(empty());
                    }
                    need.sampling = Some(s);
                }
                Some(s) if wants_tools && s.tools.is_none() => {
                    let mut s = ClientCapabilitiesSampling::new();
                    s.tools = Some(empty());
                    need.sampling = Some(s);
                }
                Some(_) => return None,
            }
        }
        InputRequest::ListRoots(_) => {
            if declared.roots.is_some() {
                return None;
            }
            need.roots = Some(empty());
        }
    }
    Some(need)
}

/// Every capability the requests need and the client did not declare, merged; `None`
/// when all of them may be sent.
pub fn missing_capabilities(
    requests: &InputRequests,
    declared: &ClientCapabilities,
) -> Option<ClientCapabilities> {
    let mut merged: Option<ClientCapabilities> = None;
    for request in requests.values() {
        if let Some(need) = missing_capability(request, declared) {
            let m = merged.get_or_insert_with(ClientCapabilities::new);
            if need.roots.is_some() {
                m.roots = need.roots;
            }
            if let Some(s) = need.sampling {
                let ms = m
                    .sampling
                    .get_or_insert_with(ClientCapabilitiesSampling::new);
                if s.tools.is_some() {
                    ms.tools = s.tools;
                }
            }
            if let Some(e) = need.elicitation {
                let me = m
                    .elicitation
                    .get_or_insert_with(ClientCapabilitiesElicitation::new);
                if e.form.is_some() {
                    me.form = e.form;
                }
                if e.url.is_some() {
                    me.url = e.url;
                }
            }
        }
    }
    merged
}

/// The `_meta` protocol version a request's params carry: present exactly on 2026-07-28
/// requests, so its presence tells the eras apart.
pub(crate) fn meta_protocol_version(params: Option<&Value>) -> Option<&Value> {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
}

/// How severe a log level is, least (`debug`, 0) to most (`emergency`, 7).
pub(crate) fn severity(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
