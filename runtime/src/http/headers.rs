//! The request metadata headers against the body: any disagreement is -32020.

use http::HeaderName;
use serde_json::Value;

use super::Shared;
use super::sessions::SESSION_HEADER;
use crate::jsonrpc::RpcError;
use crate::server::Accepted;
use crate::transport::http::fields::Fields;
use crate::transport::http::{
    METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, PROTOCOL_VERSION_HEADER, ParamHeader,
    header_value,
};
use crate::transport::http::{SENTINEL_START, visible_bytes};
use crate::types::rpc::members;

// The headers compared with every stateless request's body, named once (a `&str` key is
// parsed into a name again at each lookup).
pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
const METHOD: HeaderName = HeaderName::from_static(METHOD_HEADER);
const NAME: HeaderName = HeaderName::from_static(NAME_HEADER);

/// Refuses a request that repeats a header tern routes on (`MCP-Protocol-Version`,
/// `Mcp-Method`, `Mcp-Name`, `Mcp-Session-Id`, `Mcp-Param-*`): a gateway reading the last
/// value and tern reading the first would act on different requests.
pub(crate) fn single_valued(headers: &impl Fields) -> Result<(), RpcError> {
    let routing = |key: &str| {
        matches!(
            key,
            PROTOCOL_VERSION_HEADER | METHOD_HEADER | NAME_HEADER | SESSION_HEADER
        ) || key.starts_with(PARAM_HEADER_PREFIX)
    };
    match headers.repeated(routing) {
        Some(key) => Err(RpcError::header_mismatch(format!(
            "Header mismatch: the {key} header is sent more than once"
        ))),
        None => Ok(()),
    }
}

/// Checks `MCP-Protocol-Version` against `body_version`, `Mcp-Method`, `Mcp-Name` and
/// the `Mcp-Param-*` headers of an annotated tool.
pub(crate) fn check_headers(
    shared: &Shared,
    headers: &impl Fields,
    body_version: &str,
    request: &Accepted,
) -> Result<(), RpcError> {
    let method = request.method();
    // Compared as bytes: a value is made text only to say how it differs.
    let version = plain_header(headers, &PROTOCOL_VERSION, "MCP-Protocol-Version")?;
    if version != body_version.as_bytes() {
        return Err(RpcError::header_mismatch(format!(
            "Header mismatch: MCP-Protocol-Version header value '{}' does not match \
             body value '{body_version}'",
            String::from_utf8_lossy(version)
        )));
    }
    let header_method = plain_header(headers, &METHOD, "Mcp-Method")?;
    if header_method != method.as_bytes() {
        return Err(RpcError::header_mismatch(format!(
            "Header mismatch: Mcp-Method header value '{}' does not match body \
             value '{method}'",
            String::from_utf8_lossy(header_method)
        )));
    }
    let Some(info) = request.method_info().filter(|m| m.target.is_some()) else {
        return Ok(());
    };
    let name = request.target().unwrap_or_default();
    check_name(headers, name)?;
    if info.param_headers {
        if let Some(annotated) = shared.tool_headers.as_ref().and_then(|f| f(name)) {
            let [arguments] = match request.params() {
                Some(params) => members(params.get(), ["arguments"]),
                None => [None],
            };
            let arguments = arguments.and_then(|a| serde_json::from_str::<Value>(a).ok());
            check_param_headers(
                headers,
                &annotated,
                arguments.as_ref().and_then(Value::as_object),
            )?;
        }
    }
    Ok(())
}

/// Checks `Mcp-Name` against `body_name`, the body's target.
fn check_name(headers: &impl Fields, body_name: &str) -> Result<(), RpcError> {
    let raw = headers
        .get(&NAME)
        .ok_or_else(|| RpcError::header_mismatch("Header mismatch: missing Mcp-Name header"))?;
    // A name sent as it is (the usual case) is the body's byte for byte; any other is
    // read (the sentinel form decoded) to compare and to say what differs.
    let plain = raw == body_name.as_bytes()
        && visible_bytes(raw)
        && !raw.starts_with(SENTINEL_START.as_bytes());
    if !plain {
        let name = header_value(raw).ok_or_else(|| {
            RpcError::header_mismatch("Header mismatch: Mcp-Name header has invalid characters")
        })?;
        if name != body_name {
            return Err(RpcError::header_mismatch(format!(
                "Header mismatch: Mcp-Name header value '{name}' does not match body value \
                 '{body_name}'"
            )));
        }
    }
    Ok(())
}

/// The value of `key`, when it came and holds only visible ASCII (spaces and tabs
/// allowed), as `HeaderValue::to_str` has it.
fn plain_header<'a>(
    headers: &'a impl Fields,
    key: &HeaderName,
    name: &str,
) -> Result<&'a [u8], RpcError> {
    let value = headers.get(key).ok_or_else(|| {
        RpcError::header_mismatch(format!("Header mismatch: missing {name} header"))
    })?;
    if !visible_bytes(value) {
        return Err(RpcError::header_mismatch(format!(
            "Header mismatch: {name} header has invalid characters"
        )));
    }
    Ok(value)
}

fn check_param_headers(
    headers: &impl Fields,
    annotated: &[ParamHeader],
    arguments: Option<&serde_json::Map<String, Value>>,
) -> Result<(), RpcError> {
    for param in annotated {
        let header_name = param.header_name();
        let body = param.value_in(arguments).and_then(|_| {
            let (last, parents) = param.path.split_last()?;
            let mut obj = arguments?;
            for key in parents {
                obj = obj.get(key)?.as_object()?;
            }
            obj.get(last)
        });
        // A name that is no header name cannot have come.
        let sent = HeaderName::from_bytes(header_name.as_bytes())
            .ok()
            .and_then(|name| headers.get(&name));
        match (sent, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(RpcError::header_mismatch(format!(
                    "Header mismatch: missing Mcp-Param-{} header",
                    param.name
                )));
            }
            (Some(_), None) => {
                return Err(RpcError::header_mismatch(format!(
                    "Header mismatch: Mcp-Param-{} header sent for an argument the body does \
                     not have",
                    param.name
                )));
            }
            (Some(raw), Some(body)) => {
                let value = header_value(raw).ok_or_else(|| {
                    RpcError::header_mismatch(format!(
                        "Header mismatch: Mcp-Param-{} header has invalid characters",
                        param.name
                    ))
                })?;
                if !ParamHeader::matches(&value, body) {
                    return Err(RpcError::header_mismatch(format!(
                        "Header mismatch: Mcp-Param-{} header value '{value}' does not match \
                         body value '{body}'",
                        param.name
                    )));
                }
            }
        }
    }
    Ok(())
}
