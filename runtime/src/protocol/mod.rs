//! The stateless request model of 2026-07-28: what every request carries in `_meta`,
//! and which client capability each input request needs.

pub(crate) mod era;
pub(crate) mod meta;
pub(crate) mod rounds;
#[cfg(feature = "skills")]
pub(crate) mod skills;
pub(crate) mod tasks;
mod trace;

use serde_json::Map;

pub(crate) use meta::RequestMeta;
pub(crate) use meta::{META, MetaRead};
pub(crate) use trace::TraceContext;
// The method tables as the wire reads them live with the reading (`jsonrpc/methods.rs`).
pub(crate) use crate::jsonrpc::{method_info, says};
pub(crate) use trace::current as current_trace;

use crate::types::v2026_07_28::{
    ClientCapabilities, ClientCapabilitiesElicitation, ClientCapabilitiesSampling, InputRequest,
    InputRequests,
};

/// The protocol version tern speaks.
pub(crate) const PROTOCOL_VERSION: &str = "2026-07-28";

/// The previous protocol version (sessions with `initialize`).
pub(crate) const SESSION_PROTOCOL_VERSION: &str = "2025-11-25";

/// Versions a tern server accepts on a stateless request.
pub(crate) const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// `version` as a `'static` text when it is one tern knows (no copy per request),
/// else copied.
pub(crate) fn version_text(version: &str) -> std::borrow::Cow<'static, str> {
    match version {
        PROTOCOL_VERSION => std::borrow::Cow::Borrowed(PROTOCOL_VERSION),
        SESSION_PROTOCOL_VERSION => std::borrow::Cow::Borrowed(SESSION_PROTOCOL_VERSION),
        other => std::borrow::Cow::Owned(other.to_owned()),
    }
}

/// `_meta` key: the request's protocol version.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client software.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the server software, on results.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the least severe log level the client wants on this request's stream.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

fn empty() -> Map<String, serde_json::Value> {
    Map::new()
}

/// The capabilities `request` needs that `declared` lacks, or `None` when it may be sent.
///
/// Elicitation in form mode needs `elicitation` (an empty object counts as form support),
/// URL mode needs `elicitation.url`; sampling needs `sampling` (and `sampling.tools` when
/// the request offers tools); roots need `roots`.
pub(crate) fn missing_capability(
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
pub(crate) fn missing_capabilities(
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
