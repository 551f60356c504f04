//! A request's params written straight from the typed value, and its result read
//! straight into the type: no `serde_json::Value` tree on the hot path.
//!
//! The `_meta` a 2026-07-28 client puts on every request is the same each time (the
//! version, the client's capabilities and info), so it is rendered once, when the client
//! is built, and spliced into each request's params as text. Params that carry a `_meta`
//! of their own take the general path instead, which merges the two (the client's keys
//! win) exactly as before.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Client;
use crate::Error;
use crate::protocol::{META_PROTOCOL_VERSION, RequestMeta};
use crate::types::rpc::ClientRequestMethod;

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
    encode_params_as(client, params, progress_token, None)
}

/// [`encode_params`] with `meta` (members rendered as [`static_meta`] renders them)
/// in place of the client's own, on a 2026-07-28 client: what a gateway relays for
/// the client it serves. A session's requests carry no such `_meta`, whatever is given.
pub(super) fn encode_params_as(
    client: &Client,
    params: &impl Serialize,
    progress_token: Option<&str>,
    meta: Option<&str>,
) -> crate::Result<EncodedParams> {
    let dialect = &client.inner.dialect;
    let meta = match meta {
        Some(meta) if dialect.version.is_some() => meta,
        _ => dialect.meta.as_str(),
    };
    let text = serde_json::to_string(params).map_err(Error::Encode)?;
    // The key `_meta` written anywhere in the params (most likely their own `_meta`)
    // sends them the general way, which merges it.
    let plain = text.len() >= 2
        && text.starts_with('{')
        && text.ends_with('}')
        && !text.contains(r#""_meta":"#);
    if !plain {
        return encode_merging(meta, params, progress_token);
    }
    let protocol_version = dialect.version.map(Cow::Borrowed);
    let trace = crate::protocol::current_trace();
    if meta.is_empty() && progress_token.is_none() && trace.is_none() {
        return Ok(EncodedParams {
            text,
            protocol_version,
        });
    }
    // `_meta` goes first: a server finds it without passing over the params' own
    // members (tern's keeps the `_meta` of each client it has read).
    let own = text;
    let mut text = String::with_capacity(own.len() + meta.len() + 48);
    text.push_str(r#"{"_meta":{"#);
    text.push_str(meta);
    let mut empty = meta.is_empty();
    let mut member = |key: &str, value: &str| {
        if !empty {
            text.push(',');
        }
        empty = false;
        text.push('"');
        text.push_str(key);
        text.push_str(r#"":"#);
        text.push_str(&Value::from(value).to_string());
    };
    if let Some(token) = progress_token {
        member(META_PROGRESS_TOKEN, token);
    }
    for (key, value) in trace.iter().flat_map(|t| t.members()) {
        member(key, value);
    }
    text.push('}');
    // The params' own members after it: `{` dropped, `}` kept.
    if own.len() > 2 {
        text.push(',');
    }
    text.push_str(&own[1..]);
    Ok(EncodedParams {
        text,
        protocol_version,
    })
}

/// The general path: params (of any shape) and the client's `_meta` merged as
/// `Value`s, the client's keys winning over the params' own.
fn encode_merging(
    client_meta: &str,
    params: &impl Serialize,
    progress_token: Option<&str>,
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
    if let Some(token) = progress_token {
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
    if !meta.is_empty() {
        // First, as the fast path writes it.
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
                        encode_merging(&client.inner.dialect.meta, &params, token).unwrap();
                    assert_eq!(fast.text, general.text, "{era:?} {token:?}");
                    assert_eq!(fast.protocol_version, general.protocol_version);
                }
                let typed = encode_params(&client, &call(), token).unwrap();
                let general = encode_merging(&client.inner.dialect.meta, &call(), token).unwrap();
                assert_eq!(typed.text, general.text);
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
