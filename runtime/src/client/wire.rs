//! A request's params written straight from the typed value, and its result read
//! straight into the type: no `serde_json::Value` tree on the hot path.
//!
//! The `_meta` a 2026-07-28 client puts on every request is the same each time (the
//! version, the client's capabilities and info), so it is rendered once, when the client
//! is built, and spliced into each request's params as text. Params that carry a `_meta`
//! of their own take the general path instead, which merges the two (the client's keys
//! win) exactly as before.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Client;
use crate::protocol::{META_PROTOCOL_VERSION, RequestMeta};
use crate::types::rpc::ClientRequestMethod;
use crate::{Error, jsonrpc};

/// `_meta` key: the token that asks for progress notifications on this request.
const META_PROGRESS_TOKEN: &str = "progressToken";

/// The members of the `_meta` a 2026-07-28 client sends on every request, as JSON text
/// without the braces: rendered once per client.
pub(super) fn static_meta(
    capabilities: &Value,
    info: &Value,
    log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
) -> String {
    let meta = Value::Object(stateless_meta(capabilities, info, None, log_level)).to_string();
    meta.strip_prefix('{')
        .and_then(|m| m.strip_suffix('}'))
        .unwrap_or_default()
        .to_owned()
}

/// The `_meta` of a 2026-07-28 request: version, capabilities, client info, the
/// progress token and the client-wide log level when there are.
fn stateless_meta(
    capabilities: &Value,
    info: &Value,
    progress_token: Option<&Value>,
    log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
) -> Map<String, Value> {
    let mut meta = RequestMeta::to_value(capabilities, info, progress_token);
    if let Some(level) = log_level.and_then(|l| serde_json::to_value(l).ok()) {
        meta.insert(crate::protocol::META_LOG_LEVEL.into(), level);
    }
    meta
}

/// Params written out, with the protocol version their `_meta` names.
pub(super) struct EncodedParams {
    pub(super) text: String,
    pub(super) protocol_version: Option<Cow<'static, str>>,
}

/// Writes `params` (any serializable value) as the params of a request, the
/// client's `_meta` added, `progress_token` in it when given.
#[cfg(test)]
pub(super) fn encode_params(
    client: &Client,
    params: &impl Serialize,
    progress_token: Option<&str>,
) -> crate::Result<EncodedParams> {
    encode_params_as(
        client,
        params,
        Added {
            progress_token,
            ..Added::default()
        },
    )
}

/// What the client writes into a request's params beside their own members.
#[derive(Default, Clone, Copy)]
pub(super) struct Added<'a> {
    /// The token that asks for progress notifications, into `_meta`.
    pub(super) progress_token: Option<&'a str>,
    /// `_meta` members (rendered as [`static_meta`] renders them) in place of the
    /// client's own, on a 2026-07-28 client: what a gateway relays for the client it
    /// serves. A session's requests carry no such `_meta`, whatever is given.
    pub(super) meta: Option<&'a str>,
    /// The `requestState` a retry echoes, for params that carry none of their own.
    /// Written here, an opaque token is copied as it came rather than looked at byte
    /// by byte for escapes.
    pub(super) state: Option<&'a str>,
}

/// [`encode_params`] with everything [`Added`] says.
pub(super) fn encode_params_as(
    client: &Client,
    params: &impl Serialize,
    added: Added<'_>,
) -> crate::Result<EncodedParams> {
    let dialect = &client.inner.dialect;
    let meta = match added.meta {
        Some(meta) if dialect.version.is_some() => meta,
        _ => dialect.meta.as_str(),
    };
    let trace = crate::protocol::current_trace();
    let has_meta = !meta.is_empty() || added.progress_token.is_some() || trace.is_some();
    let state_len = added.state.map_or(0, |s| s.len() + 20);
    // One buffer: what the client adds, then the params' own members written after it.
    let mut text = Vec::with_capacity(meta.len() + state_len + 48 + 256);
    if has_meta {
        push_meta(&mut text, meta, added.progress_token, trace.as_ref());
    }
    if let Some(state) = added.state {
        text.extend_from_slice(if has_meta { b"," } else { b"{" });
        text.extend_from_slice(br#""requestState":"#);
        jsonrpc::push_quoted(&mut text, state);
    }
    let at = text.len();
    serde_json::to_writer(&mut text, params).map_err(Error::Encode)?;
    let mut text =
        String::from_utf8(text).map_err(|e| Error::Encode(serde::ser::Error::custom(e)))?;
    let own = &text[at..];
    // The key `_meta` written anywhere in the params (most likely their own `_meta`)
    // sends them the general way, which merges it; so does a `requestState` of their
    // own beside the one added, which replaces it.
    let plain = own.len() >= 2
        && own.starts_with('{')
        && own.ends_with('}')
        && !written(own, &OWN_META)
        && !(added.state.is_some() && written(own, &OWN_STATE));
    if !plain {
        return encode_merging(meta, params, added);
    }
    if at > 0 {
        // The params' own members after the added ones: their `{` gives way to a
        // comma, or (no members) to nothing, their `}` closing the whole.
        let joint = if own.len() > 2 { "," } else { "" };
        text.replace_range(at..at + 1, joint);
    }
    Ok(EncodedParams {
        text,
        protocol_version: dialect.version.map(Cow::Borrowed),
    })
}

/// Writes `{"_meta":{` with `meta`'s members, the progress token and the trace
/// context, and its closing `}`. `_meta` goes first: a server finds it without passing
/// over the params' own members (tern's keeps the `_meta` of each client it has read).
#[inline]
fn push_meta(
    text: &mut Vec<u8>,
    meta: &str,
    progress_token: Option<&str>,
    trace: Option<&crate::protocol::TraceContext>,
) {
    text.extend_from_slice(br#"{"_meta":{"#);
    text.extend_from_slice(meta.as_bytes());
    let mut empty = meta.is_empty();
    let mut member = |key: &str, value: &str| {
        if !empty {
            text.push(b',');
        }
        empty = false;
        jsonrpc::push_quoted(text, key);
        text.push(b':');
        jsonrpc::push_quoted(text, value);
    };
    if let Some(token) = progress_token {
        member(META_PROGRESS_TOKEN, token);
    }
    for (key, value) in trace.into_iter().flat_map(|t| t.members()) {
        member(key, value);
    }
    text.push(b'}');
}

/// Finders for the members the client adds, built once: a search set up for each
/// request would cost more than the search.
static OWN_META: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(r#""_meta":"#));
static OWN_STATE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(r#""requestState":"#));

/// Whether the member `finder` looks for is written in `text`.
fn written(text: &str, finder: &Finder<'_>) -> bool {
    finder.find(text.as_bytes()).is_some()
}

/// The general path: params (of any shape) and the client's `_meta` merged as
/// `Value`s, the client's keys winning over the params' own; the added state, if any,
/// in place of theirs.
fn encode_merging(
    client_meta: &str,
    params: &impl Serialize,
    added: Added<'_>,
) -> crate::Result<EncodedParams> {
    let mut params = match serde_json::to_value(params).map_err(Error::Encode)? {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => {
            return Err(Error::Encode(serde::ser::Error::custom(format!(
                "params must be an object, not {other}"
            ))));
        }
    };
    // What every request of the dialect carries, then the progress token.
    let mut meta: Map<String, Value> =
        serde_json::from_str(&format!("{{{client_meta}}}")).map_err(Error::Encode)?;
    if let Some(token) = added.progress_token {
        meta.insert(META_PROGRESS_TOKEN.to_owned(), token.into());
    }
    for (key, value) in crate::protocol::current_trace()
        .iter()
        .flat_map(|t| t.members())
    {
        meta.insert(key.to_owned(), value.into());
    }
    if let Some(Value::Object(user)) = params.remove("_meta") {
        for (k, v) in user {
            meta.entry(k).or_insert(v);
        }
    }
    let protocol_version = meta
        .get(META_PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .map(|v| Cow::Owned(v.to_owned()));
    // First, as the fast path writes them.
    if let Some(state) = added.state {
        params.shift_remove("requestState");
        params.shift_insert(0, "requestState".into(), state.into());
    }
    if !meta.is_empty() {
        params.shift_insert(0, "_meta".into(), Value::Object(meta));
    }
    Ok(EncodedParams {
        text: Value::Object(params).to_string(),
        protocol_version,
    })
}

/// Reads the result of a request for `M`. A 2026-07-28 result that may be
/// input-required is parsed straight into its type, whose own reading settles the
/// `resultType`; the others go through [`decode_result`](super::decode_result)
/// (after the 2025-11-25 conversion, in a session).
pub(super) fn decode<M: ClientRequestMethod>(
    client: &Client,
    result: &crate::jsonrpc::RawResult,
) -> crate::Result<M::Result> {
    let recode = client.inner.dialect.recode;
    if recode.is_none() && M::MAY_REQUIRE_INPUT {
        return result.decode().map_err(|e| {
            super::decode_error::<M>(super::result_type_in(result.get()).as_deref(), e)
        });
    }
    let mut value: Value = result.decode().map_err(|source| {
        Error::Protocol(crate::ProtocolError::Decode {
            method: M::METHOD,
            source,
        })
    })?;
    if let Some(recode) = recode {
        value = recode(M::METHOD, value).map_err(|source| {
            Error::Protocol(crate::ProtocolError::Decode {
                method: M::METHOD,
                source,
            })
        })?;
    }
    super::decode_result::<M>(value)
}

/// The `field` member of params written as `text`, when it is a string: what a
/// request targets, for a caller that did not say.
pub(super) fn target_in(text: &str, field: &str) -> Option<String> {
    let params: Value = serde_json::from_str(text).ok()?;
    params.get(field)?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Era;
    use crate::protocol::PROTOCOL_VERSION;
    use crate::transport::memory;
    use crate::types::v2026_07_28::{CallToolRequestParams, RequestMetaObject};

    fn client(era: Era) -> Client {
        let (end, _server) = memory::pair();
        let mut client = Client::builder("wire", "1.0")
            .on_elicitation(|_ctx, _p| async { Ok(crate::ask::accept([("a", "b")])) })
            .stateless(std::sync::Arc::new(super::super::Connection::new(end)));
        let inner = std::sync::Arc::get_mut(&mut client.inner).expect("the only handle");
        let meta = std::mem::take(&mut inner.dialect.meta);
        inner.dialect = super::super::dialect::Dialect::of(era, meta);
        client
    }

    fn call() -> CallToolRequestParams {
        let mut params = CallToolRequestParams::new("sql");
        params.arguments = json!({"q": "select 1", "n": 1.5})
            .as_object()
            .map(Into::into);
        params.request_state = Some("state \"quoted\"".into());
        params
    }

    #[tokio::test]
    async fn spliced_meta_writes_the_bytes_the_merging_path_writes() {
        for era in [Era::Stateless, Era::Session] {
            let client = client(era);
            for token in [None, Some("7")] {
                for params in [json!(call()), json!({})] {
                    let fast = encode_params(&client, &params, token).unwrap();
                    let general =
                        encode_merging(&client.inner.dialect.meta, &params, added(token)).unwrap();
                    assert_eq!(fast.text, general.text, "{era:?} {token:?}");
                    assert_eq!(fast.protocol_version, general.protocol_version);
                }
                let typed = encode_params(&client, &call(), token).unwrap();
                let general =
                    encode_merging(&client.inner.dialect.meta, &call(), added(token)).unwrap();
                assert_eq!(typed.text, general.text);
            }
        }
    }

    fn added(progress_token: Option<&str>) -> Added<'_> {
        Added {
            progress_token,
            ..Added::default()
        }
    }

    #[tokio::test]
    async fn an_added_state_is_written_as_the_merging_path_writes_it_and_read_back_as_sent() {
        let long = "t1.".to_owned() + &"Az09_-".repeat(40);
        for era in [Era::Stateless, Era::Session] {
            let client = client(era);
            for state in [long.as_str(), "state \"quoted\"\n", ""] {
                let mut own = call();
                own.request_state = None;
                for params in [json!(own), json!({}), json!(call())] {
                    let added = Added {
                        state: Some(state),
                        ..added(Some("7"))
                    };
                    let fast = encode_params_as(&client, &params, added).unwrap();
                    let general =
                        encode_merging(&client.inner.dialect.meta, &params, added).unwrap();
                    assert_eq!(fast.text, general.text, "{era:?} {state:?}");
                    // Read back, the state is the one added, its own (if any) gone.
                    let value: Value = serde_json::from_str(&fast.text).unwrap();
                    assert_eq!(value["requestState"], state, "{}", fast.text);
                    assert_eq!(fast.text.matches("requestState").count(), 1);
                }
            }
        }
    }

    #[tokio::test]
    async fn params_with_their_own_meta_keep_its_other_keys_and_lose_to_the_clients() {
        let client = client(Era::Stateless);
        let mut params = call();
        let mut meta = RequestMetaObject::new(Default::default(), "1999-01-01");
        meta.extra.insert("trace".into(), json!("abc"));
        params.meta = Some(Box::new(meta));
        let encoded = encode_params(&client, &params, None).unwrap();
        let written: Value = serde_json::from_str(&encoded.text).unwrap();
        assert_eq!(written["_meta"][META_PROTOCOL_VERSION], PROTOCOL_VERSION);
        assert_eq!(written["_meta"]["trace"], "abc");
        assert_eq!(encoded.protocol_version.as_deref(), Some(PROTOCOL_VERSION));
    }

    #[tokio::test]
    async fn params_that_are_not_an_object_are_refused() {
        let client = client(Era::Stateless);
        assert!(encode_params(&client, &json!([1]), None).is_err());
        let empty = encode_params(&client, &Value::Null, None).unwrap();
        assert!(empty.text.starts_with(r#"{"_meta":{"#), "{}", empty.text);
    }
}
