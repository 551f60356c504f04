//! A request's `params._meta`, read once per request through the generated
//! [`RequestMetaObject`]. The precise diagnostics (which key is missing, which one is
//! malformed) are worked out only when that typed read fails.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
};
use crate::jsonrpc::RpcError;
use crate::types::v2026_07_28::{
    ClientCapabilities, Implementation, LoggingLevel, ProgressToken, RequestMetaObject,
};

/// `_meta` key: the token that asks for progress notifications on this request.
const META_PROGRESS_TOKEN: &str = "progressToken";

/// The params member that carries a request's metadata.
pub(crate) const META: &str = "_meta";

/// What a client request says about its client, read from `params._meta`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestMeta {
    /// The protocol version of this request (borrowed when it is one tern knows).
    pub protocol_version: Cow<'static, str>,
    /// The client's capabilities for this request (never inferred from earlier ones).
    /// Shared: a 2025-11-25 session's requests all see the one copy `initialize` sent.
    pub client_capabilities: Arc<ClientCapabilities>,
    /// The client software, if it said.
    pub client_info: Option<Arc<Implementation>>,
    /// Where progress notifications for this request go, if the client asked for them.
    pub progress_token: Option<ProgressToken>,
    /// The least severe log level the client wants on this request's stream; `None`
    /// means no log messages at all (2026-07-28 logging is opt-in per request).
    pub log_level: Option<LoggingLevel>,
    /// The W3C trace context of the span that sent the request, when `_meta` carried a
    /// valid `traceparent`.
    pub(crate) trace: Option<super::TraceContext>,
}

/// One reading of a request's `_meta`: what a transport needs before serving (the era
/// and the version the headers must repeat) and what the handler will see.
#[derive(Debug, Clone)]
pub(crate) struct MetaRead {
    /// The `_meta` protocol version, when `_meta` names one as a string, even if the
    /// rest of `_meta` is malformed: present exactly on stateless requests.
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(crate) version: Option<Cow<'static, str>>,
    /// Whether `_meta` has the protocol version key at all (whatever its value): the
    /// mark of a stateless request, which a session never sends.
    pub(crate) stateless: bool,
    /// The progress token, read leniently (a session's requests carry only this).
    pub(crate) progress_token: Option<ProgressToken>,
    /// The trace context, read leniently in either era.
    pub(crate) trace: Option<super::TraceContext>,
    /// The whole `_meta`, or the precise reason it cannot serve a stateless request.
    pub(crate) meta: Result<RequestMeta, RpcError>,
}

#[cfg(test)]
thread_local! {
    /// How many times this thread read a request's `_meta` (the parse-once test).
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl MetaRead {
    /// Reads a request's `_meta`, written as `meta` (found in its params as text), once,
    /// accepting only the `supported` versions.
    pub(crate) fn of(meta: Option<&str>, supported: &[&str]) -> Self {
        #[cfg(test)]
        READS.with(|n| n.set(n.get() + 1));
        let Some(meta) = meta else {
            return Self::refused(None, None, missing_meta());
        };
        match serde_json::from_str::<RequestMetaObject>(meta) {
            Ok(typed) => {
                let trace = super::TraceContext::from_meta(&typed.extra);
                Self::from_typed(typed, trace, supported)
            }
            // The typed read failed: only now is `_meta` read as a tree, to say why.
            Err(_) => match serde_json::from_str::<Value>(meta) {
                Ok(tree) => Self::diagnose(&tree, supported),
                Err(_) => Self::refused(None, None, missing_meta()),
            },
        }
    }

    /// Takes a request's `_meta` from the params `slot` it was read into, as
    /// [`typed`](Self::typed) does. The params keep what is left only when it carries
    /// members beyond the protocol's own (a vendor's key, a trace context): the version,
    /// progress token and log level are all in the context, and a `_meta` of those alone
    /// leaves `None`.
    pub(crate) fn take(
        slot: Option<&mut Option<Box<RequestMetaObject>>>,
        supported: &[&str],
    ) -> Self {
        let Some(slot) = slot else {
            return Self::typed(None, supported);
        };
        let read = Self::typed(slot.as_deref_mut(), supported);
        if slot.as_ref().is_some_and(|left| left.extra.is_empty()) {
            *slot = None;
        }
        read
    }

    /// Takes a request's `_meta` from its params, already read into their type: the
    /// client's capabilities and info are moved out of them (into the handler's
    /// context, `RequestContext::meta`), the rest copied.
    fn typed(meta: Option<&mut RequestMetaObject>, supported: &[&str]) -> Self {
        #[cfg(test)]
        READS.with(|n| n.set(n.get() + 1));
        match meta {
            Some(typed) => {
                let trace = super::TraceContext::from_meta(&typed.extra);
                let version = super::version_text(&typed.protocol_version);
                let taken = RequestMetaObject {
                    client_capabilities: std::mem::take(&mut typed.client_capabilities),
                    client_info: typed.client_info.take(),
                    log_level: typed.log_level,
                    // Given apart, as `version`: not copied.
                    protocol_version: String::new(),
                    progress_token: typed.progress_token.clone(),
                    extra: Map::new(),
                };
                Self::from_parts(taken, version, trace, supported)
            }
            None => Self::refused(None, None, missing_meta()),
        }
    }

    /// A typed `_meta` read, with the trace context its members carried.
    fn from_typed(
        typed: RequestMetaObject,
        trace: Option<super::TraceContext>,
        supported: &[&str],
    ) -> Self {
        let version = super::version_text(&typed.protocol_version);
        Self::from_parts(typed, version, trace, supported)
    }

    /// [`from_typed`](Self::from_typed) with the version already read (the one in
    /// `typed` is not looked at).
    fn from_parts(
        typed: RequestMetaObject,
        version: Cow<'static, str>,
        trace: Option<super::TraceContext>,
        supported: &[&str],
    ) -> Self {
        let progress_token = typed.progress_token.clone();
        let meta = if supported.contains(&&*version) {
            Ok(RequestMeta {
                protocol_version: version.clone(),
                client_capabilities: Arc::new(typed.client_capabilities),
                client_info: typed.client_info.map(Arc::new),
                progress_token: typed.progress_token,
                log_level: typed.log_level,
                trace: trace.clone(),
            })
        } else {
            Err(RpcError::unsupported_version(&version, supported))
        };
        Self {
            version: Some(version),
            stateless: true,
            progress_token,
            trace,
            meta,
        }
    }

    /// Reads `params._meta` from params already parsed.
    #[cfg(test)]
    pub(crate) fn of_params(params: Option<&Value>, supported: &[&str]) -> Self {
        let meta = params.and_then(|p| p.get(META)).map(crate::util::raw_json);
        Self::of(
            meta.as_deref().map(serde_json::value::RawValue::get),
            supported,
        )
    }

    fn refused(
        version: Option<Cow<'static, str>>,
        progress_token: Option<ProgressToken>,
        error: RpcError,
    ) -> Self {
        Self {
            stateless: version.is_some(),
            version,
            progress_token,
            trace: None,
            meta: Err(error),
        }
    }

    /// The typed read failed: say exactly why, or, when only the lenient members were
    /// at fault (an unknown log level, an odd progress token), read it without them.
    fn diagnose(meta: &Value, supported: &[&str]) -> Self {
        let Some(object) = meta.as_object() else {
            return Self::refused(None, None, missing_meta());
        };
        let stateless = object.contains_key(META_PROTOCOL_VERSION);
        let version = object
            .get(META_PROTOCOL_VERSION)
            .and_then(Value::as_str)
            .map(super::version_text);
        let progress_token = object
            .get(META_PROGRESS_TOKEN)
            .and_then(|t| ProgressToken::deserialize(t).ok());
        let trace = super::TraceContext::from_meta(object);
        let error = match check_required(object, supported) {
            Err(error) => error,
            Ok(()) => {
                // Lenient like before: an unknown level asks for no logs, an odd progress
                // token for no progress, rather than failing the request.
                let mut strict = object.clone();
                strict.remove(META_LOG_LEVEL);
                strict.remove(META_PROGRESS_TOKEN);
                match RequestMetaObject::deserialize(&Value::Object(strict)) {
                    Ok(mut typed) => {
                        typed.progress_token = progress_token.clone();
                        typed.log_level = object
                            .get(META_LOG_LEVEL)
                            .and_then(|l| LoggingLevel::deserialize(l).ok());
                        return Self {
                            version,
                            stateless,
                            progress_token,
                            meta: Ok(RequestMeta {
                                trace: trace.clone(),
                                ..RequestMeta::from(typed)
                            }),
                            trace,
                        };
                    }
                    Err(e) => RpcError::invalid_params(format!("params._meta is malformed: {e}")),
                }
            }
        };
        Self {
            stateless,
            trace,
            ..Self::refused(version, progress_token, error)
        }
    }
}

/// The precise error for the required members of a `_meta` object, checked in the order
/// a reader would: the version is there and a string, the capabilities are there, the
/// version is supported, the capabilities and client info are well formed.
fn check_required(meta: &Map<String, Value>, supported: &[&str]) -> Result<(), RpcError> {
    let version = meta
        .get(META_PROTOCOL_VERSION)
        .ok_or_else(|| {
            RpcError::invalid_params(format!("Missing params._meta[\"{META_PROTOCOL_VERSION}\"]"))
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
    ClientCapabilities::deserialize(caps).map_err(|e| {
        RpcError::invalid_params(format!(
            "params._meta[\"{META_CLIENT_CAPABILITIES}\"] is malformed: {e}"
        ))
    })?;
    if let Some(info) = meta.get(META_CLIENT_INFO) {
        Implementation::deserialize(info).map_err(|e| {
            RpcError::invalid_params(format!(
                "params._meta[\"{META_CLIENT_INFO}\"] is malformed: {e}"
            ))
        })?;
    }
    Ok(())
}

fn missing_meta() -> RpcError {
    RpcError::invalid_params(format!(
        "Missing params._meta: every 2026-07-28 request carries \
         {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
    ))
}

impl From<RequestMetaObject> for RequestMeta {
    fn from(meta: RequestMetaObject) -> Self {
        Self {
            protocol_version: super::version_text(&meta.protocol_version),
            client_capabilities: Arc::new(meta.client_capabilities),
            client_info: meta.client_info.map(Arc::new),
            progress_token: meta.progress_token,
            log_level: meta.log_level,
            // Read by the callers, which have the members at hand.
            trace: None,
        }
    }
}

impl RequestMeta {
    /// What a handler sees of a request on a 2025-11-25 session: the session's version,
    /// capabilities and client, and the request's own progress token.
    pub(crate) fn on_session(
        protocol_version: &str,
        client_capabilities: Arc<ClientCapabilities>,
        client_info: Option<Arc<Implementation>>,
        progress_token: Option<ProgressToken>,
    ) -> Self {
        Self {
            protocol_version: super::version_text(protocol_version),
            client_capabilities,
            client_info,
            progress_token,
            // A session's logs are filtered by logging/setLevel, not per request.
            log_level: None,
            trace: None,
        }
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
            meta.insert(META_PROGRESS_TOKEN.into(), t.clone());
        }
        meta
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(meta: Value) -> MetaRead {
        MetaRead::of_params(Some(&json!({ "_meta": meta })), &[PROTOCOL_VERSION])
    }

    #[test]
    fn a_well_formed_meta_is_read_whole() {
        let r = read(json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"elicitation": {}},
            META_LOG_LEVEL: "warning",
            "progressToken": 7,
        }));
        assert_eq!(r.version.as_deref(), Some(PROTOCOL_VERSION));
        let meta = r.meta.unwrap();
        assert!(meta.client_capabilities.elicitation.is_some());
        assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
        assert!(matches!(
            meta.progress_token,
            Some(ProgressToken::Integer(7))
        ));
    }

    #[test]
    fn an_unknown_log_level_asks_for_no_logs_instead_of_failing() {
        let r = read(json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {},
            META_LOG_LEVEL: "loud",
        }));
        assert_eq!(r.meta.unwrap().log_level, None);
    }

    #[test]
    fn each_missing_or_malformed_key_is_named() {
        let cases = [
            (
                json!({}),
                "Missing params._meta[\"io.modelcontextprotocol/protocolVersion\"]",
            ),
            (
                json!({ META_PROTOCOL_VERSION: 1 }),
                "params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string",
            ),
            (
                json!({ META_PROTOCOL_VERSION: PROTOCOL_VERSION }),
                "Missing params._meta[\"io.modelcontextprotocol/clientCapabilities\"]",
            ),
            (
                json!({ META_PROTOCOL_VERSION: PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: 3 }),
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is malformed",
            ),
            (
                json!({ META_PROTOCOL_VERSION: PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: 3 }),
                "params._meta[\"io.modelcontextprotocol/clientInfo\"] is malformed",
            ),
        ];
        for (meta, message) in cases {
            let error = read(meta).meta.unwrap_err();
            assert!(error.message.starts_with(message), "{}", error.message);
        }
    }

    #[test]
    fn an_unsupported_version_is_32022_and_still_names_the_version() {
        let r = read(json!({ META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_CAPABILITIES: {} }));
        assert_eq!(r.version.as_deref(), Some("2099-01-01"));
        assert_eq!(
            r.meta.unwrap_err().code,
            crate::jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION
        );
    }

    #[test]
    fn no_meta_at_all_has_no_version() {
        let r = MetaRead::of_params(Some(&json!({"name": "x"})), &[PROTOCOL_VERSION]);
        assert!(r.version.is_none());
        assert!(
            r.meta
                .unwrap_err()
                .message
                .starts_with("Missing params._meta")
        );
    }
}
