//! Streamable HTTP (2026-07-28): every request is its own POST to the MCP endpoint, and
//! the answer is one JSON object or an SSE stream scoped to that request.
//!
//! The server side (feature `http-server`) is `tern_mcp::http`, an axum router over a
//! `Server`; the client ([`client`], feature `http-client`) is a
//! [`ClientTransport`](crate::transport::ClientTransport) on its own pooled HTTP/1.1
//! connections (`h1`). Both sides share the request metadata headers defined here: the body's
//! protocol version, method and target are mirrored into headers so intermediaries can
//! route without parsing JSON, and the server rejects any disagreement.

#[cfg(any(feature = "http-client", feature = "http-server"))]
pub(crate) mod body;
#[cfg(feature = "http-client")]
pub mod client;
#[cfg(any(feature = "oauth", feature = "jwt", feature = "introspection"))]
pub(crate) mod fetch;
#[cfg(any(feature = "http-client", feature = "http-server"))]
pub(crate) mod fields;
#[cfg(any(feature = "http-client", feature = "http-server"))]
pub(crate) mod h1;
mod param_headers;
// The SSE reader is the client's (the server writes its streams, it never reads one).
#[cfg(feature = "http-client")]
pub(crate) mod sse;

pub use param_headers::{ParamHeader, param_headers};

/// `MCP-Protocol-Version`: the body's `_meta` protocol version.
pub(crate) const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// `Mcp-Method`: the body's `method`.
pub(crate) const METHOD_HEADER: &str = "mcp-method";
/// `Mcp-Name`: `params.name` (`tools/call`, `prompts/get`), `params.uri`
/// (`resources/read`) or `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`).
pub(crate) const NAME_HEADER: &str = "mcp-name";
/// The prefix of `Mcp-Param-{Name}` headers mirroring annotated tool arguments.
pub(crate) const PARAM_HEADER_PREFIX: &str = "mcp-param-";

pub(crate) const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// A header value for `value`: itself when it is plain visible ASCII with no leading or
/// trailing whitespace, else the base64 sentinel form `=?base64?...?=` (also used for a
/// plain value that looks like the sentinel, so decoding is never ambiguous).
pub fn encode_header_value(value: &str) -> String {
    encoded_header_value(value).into_owned()
}

/// [`encode_header_value`], borrowing a value that goes as it is.
pub(crate) fn encoded_header_value(value: &str) -> std::borrow::Cow<'_, str> {
    let visible = value
        .bytes()
        .all(|b| b == b' ' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    let plain = visible && !padded && !looks_encoded;
    if plain {
        value.into()
    } else {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{SENTINEL_START}{encoded}{SENTINEL_END}").into()
    }
}

/// `value` as text, when every byte is visible ASCII, a space or a tab: what
/// `HeaderValue::to_str` accepts.
#[inline]
pub(crate) fn visible(value: &[u8]) -> Option<&str> {
    if visible_bytes(value) {
        std::str::from_utf8(value).ok()
    } else {
        None
    }
}

/// Whether every byte of `value` is visible ASCII, a space or a tab (so [`visible`]
/// would read it), without making it text.
#[inline]
pub(crate) fn visible_bytes(value: &[u8]) -> bool {
    // Every byte looked at, without a branch for each (a value is nearly always all
    // visible): the compiler takes the bytes a vector at a time.
    value.iter().fold(true, |all, &b| {
        all & ((b' '..0x7f).contains(&b) | (b == b'\t'))
    })
}

/// The value a header carries, decoding the base64 sentinel form. `None` when the value
/// holds bytes a header may not, or the sentinel form does not decode to UTF-8.
#[cfg(test)]
pub(crate) fn decode_header_value(raw: &[u8]) -> Option<String> {
    header_value(raw).map(std::borrow::Cow::into_owned)
}

/// The value a header carries (see `decode_header_value`), borrowing a plain value instead of copying it.
#[cfg(any(test, feature = "http-server"))]
pub(crate) fn header_value(raw: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let text = visible(raw)?;
    match text
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    {
        Some(encoded) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok().map(std::borrow::Cow::Owned)
        }
        None => Some(std::borrow::Cow::Borrowed(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_name_mirrors_the_name_of_tools_and_prompts_and_the_uri_of_resources() {
        // `Mcp-Name` mirrors a request's target member, where it has one.
        use crate::types::rpc::Request as _;
        use crate::types::v2026_07_28::method;
        let named: Vec<_> = crate::types::v2026_07_28::method::ALL
            .iter()
            .filter_map(|m| m.target.map(|field| (m.method, field)))
            .collect();
        assert_eq!(
            named,
            [
                (method::ReadResource::METHOD, "uri"),
                (method::GetPrompt::METHOD, "name"),
                (method::CallTool::METHOD, "name")
            ]
        );
    }

    #[test]
    fn plain_values_stay_plain_and_others_use_the_sentinel() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn decoding_reverses_encoding() {
        for v in [
            "us-west1",
            "Hello, 世界",
            " padded ",
            "a\nb",
            "=?base64?x?=",
        ] {
            let encoded = encode_header_value(v);
            assert_eq!(decode_header_value(encoded.as_bytes()).as_deref(), Some(v));
        }
        assert_eq!(decode_header_value(b"=?base64?!!!?="), None);
        assert_eq!(decode_header_value(b"bad\x01"), None);
    }

    #[test]
    fn visible_bytes_are_what_a_header_value_reads_as_text() {
        // Each byte, alone and inside values long enough to be taken a vector at a time.
        for byte in 0..=u8::MAX {
            for len in [1, 7, 33, 100] {
                let mut value = vec![b'v'; len];
                value[len / 2] = byte;
                let as_text = http::HeaderValue::from_bytes(&value)
                    .is_ok_and(|header| header.to_str().is_ok());
                assert_eq!(visible_bytes(&value), as_text, "{byte:#04x} in {len}");
            }
        }
        assert!(visible_bytes(b""));
    }
}
