//! JSON-RPC 2.0 framing: wire errors with the protocol's codes, writing messages, and
//! (in `read` and `receive`) reading and classifying incoming ones.

mod limits;
mod methods;
mod params;
mod read;
mod receive;
mod split;

pub(crate) use limits::JsonLimits;
pub(crate) use methods::{method_info, method_spelled, says};
pub use params::RawParams;
pub use receive::RawResult;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::types::v2026_07_28::{ClientCapabilities, RequestId};
pub(crate) use read::{Incoming, Rejected};
#[cfg(feature = "http-client")]
pub(crate) use receive::RawResponse;
pub(crate) use receive::{Received, receive};
pub(crate) use split::is_json;

/// The JSON-RPC and MCP error codes tern produces or recognises, read from the generated
/// protocol types (users compare against those: `tern_mcp::types::v2026_07_28::InvalidParamsCode::VALUE`).
pub(crate) mod code {
    use crate::types::v2026_07_28 as v;
    pub(crate) const PARSE_ERROR: i64 = v::ParseCode::VALUE;
    pub(crate) const INVALID_REQUEST: i64 = v::InvalidRequestCode::VALUE;
    pub(crate) const METHOD_NOT_FOUND: i64 = v::MethodNotFoundCode::VALUE;
    pub(crate) const INVALID_PARAMS: i64 = v::InvalidParamsCode::VALUE;
    pub(crate) const INTERNAL_ERROR: i64 = v::InternalCode::VALUE;
    pub(crate) const HEADER_MISMATCH: i64 = v::HeaderMismatchCode::VALUE;
    pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 =
        v::MissingRequiredClientCapabilityCode::VALUE;
    pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = v::UnsupportedProtocolVersionCode::VALUE;
    /// A request that ran out of time on the server's side (its budget, an upstream's
    /// deadline): a server error of tern's, in the range JSON-RPC leaves to servers.
    #[cfg(any(feature = "http-server", feature = "http-client"))]
    pub(crate) const REQUEST_TIMEOUT: i64 = -32001;
}

/// An error response's `error` object: what a peer answers when a request fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct RpcError {
    /// The error code: JSON-RPC's, or MCP's (the generated `…Code` types name them, as
    /// [`InvalidParamsCode::VALUE`](crate::types::v2026_07_28::InvalidParamsCode)).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Details defined by the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`. A message longer than
    /// 1 KiB is cut there: messages echo what
    /// a peer sent (a method name, a header), and a peer must not size the answer.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > Self::MAX_MESSAGE_BYTES {
            message = crate::util::clip(&message, Self::MAX_MESSAGE_BYTES).into_owned();
        }
        Self {
            code,
            message,
            data: None,
        }
    }

    /// The longest message [`new`](Self::new) keeps, in bytes.
    pub(crate) const MAX_MESSAGE_BYTES: usize = 1024;

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32602: the params are wrong.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// -32601: no such method.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// Whether it is a -32601: the peer does not serve the method.
    #[cfg(feature = "http-client")]
    pub(crate) fn is_method_not_found(&self) -> bool {
        self.code == code::METHOD_NOT_FOUND // an error code, not a method
    }

    /// -32603: the receiver failed. Say nothing the peer should not see.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }

    /// -32600: not a valid JSON-RPC message.
    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// -32700: not JSON.
    pub(crate) fn parse_error(message: impl Into<String>) -> Self {
        Self::new(code::PARSE_ERROR, message)
    }

    /// -32021: the request needs client capabilities the client did not declare.
    pub(crate) fn missing_capability(required: &ClientCapabilities) -> Self {
        Self::new(
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }

    /// -32022: the requested protocol version is not one the server speaks.
    pub(crate) fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(json!({
            "supported": supported,
            "requested": crate::util::clip(requested, 256),
        }))
    }

    /// -32020: HTTP headers disagree with the body.
    #[cfg(any(test, feature = "http-server"))]
    pub(crate) fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(code::HEADER_MISMATCH, message)
    }

    /// The fixed rejection of a `requestState` that failed verification.
    pub(crate) fn invalid_request_state() -> Self {
        Self::invalid_params(INVALID_REQUEST_STATE)
    }

    /// Whether this is that error: a `requestState` that did not open.
    pub(crate) fn is_invalid_request_state(&self) -> bool {
        self.code == code::INVALID_PARAMS && self.message == INVALID_REQUEST_STATE
    }
}

/// The one message every rejected `requestState` carries (with -32602, invalid params),
/// whatever the cause.
pub(crate) const INVALID_REQUEST_STATE: &str = "Invalid or expired requestState";

fn id_value(id: &RequestId) -> Value {
    match id {
        RequestId::String(s) => Value::String(s.clone()),
        RequestId::Integer(i) => Value::from(*i),
    }
}

/// `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`
pub(crate) fn request(id: &RequestId, method: &str, params: Option<Value>) -> String {
    let mut obj = Map::with_capacity(4);
    obj.insert("jsonrpc".into(), "2.0".into());
    obj.insert("id".into(), id_value(id));
    obj.insert("method".into(), method.into());
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    Value::Object(obj).to_string()
}

/// `{"jsonrpc":"2.0","method":..,"params":..}`
pub(crate) fn notification(method: &str, params: Option<Value>) -> String {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), "2.0".into());
    obj.insert("method".into(), method.into());
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    Value::Object(obj).to_string()
}

/// A result or error response for `id` (`null` when the request's id was unreadable).
pub(crate) fn response(id: Option<&RequestId>, result: &Result<Value, RpcError>) -> String {
    envelope(id, result.as_ref().ok(), result.as_ref().err())
}

/// The response envelope around a borrowed result or error, written straight to text.
fn envelope<T: Serialize>(
    id: Option<&RequestId>,
    result: Option<&T>,
    error: Option<&RpcError>,
) -> String {
    #[derive(Serialize)]
    struct Envelope<'a, T> {
        jsonrpc: &'static str,
        id: Option<&'a RequestId>,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<&'a T>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a RpcError>,
    }
    let envelope = Envelope {
        jsonrpc: "2.0",
        id,
        result,
        error,
    };
    serde_json::to_string(&envelope).unwrap_or_else(|e| {
        // A JSON value always serializes; say so on the wire rather than panic.
        tracing::error!(error = %e, "could not encode a response");
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#
            .to_owned()
    })
}

/// A response for `id` whose result is already written as JSON text: the result's
/// bytes go out as they are, with no tree or second serialization in between.
pub(crate) fn answer(id: &RequestId, result: &Result<String, RpcError>) -> String {
    let text = match result {
        Ok(text) => text,
        Err(error) => return envelope::<Value>(Some(id), None, Some(error)),
    };
    let mut room = IdRoom::default();
    let pieces = answer_pieces(id, [text, ""], &mut room);
    let mut out = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    pieces.iter().for_each(|piece| out.push_str(piece));
    out
}

/// Room for a request id written as JSON text: an integer's digits, a string quoted.
#[derive(Default)]
pub(crate) struct IdRoom {
    digits: itoa::Buffer,
    quoted: String,
}

/// The pieces of a response to `id` whose `result` is already JSON (given in two pieces
/// that go out one after the other), the id written in `room`: what [`answer`] joins,
/// and what a connection writes straight out instead.
pub(crate) fn answer_pieces<'a>(
    id: &'a RequestId,
    result: [&'a str; 2],
    room: &'a mut IdRoom,
) -> [&'a str; 6] {
    let id = match id {
        RequestId::Integer(i) => room.digits.format(*i),
        RequestId::String(s) => {
            // Writing a string into a String cannot fail.
            room.quoted = serde_json::to_string(s).unwrap_or_else(|_| "null".into());
            &room.quoted
        }
    };
    [
        r#"{"jsonrpc":"2.0","id":"#,
        id,
        r#","result":"#,
        result[0],
        result[1],
        "}",
    ]
}

/// `{"jsonrpc":"2.0","id":..,"method":..,"params":..}` around params already written as
/// JSON text: the same bytes [`request`] writes, with no `Value` tree in between. The
/// buffer is sized exactly, so it never grows and a `Bytes` takes it without another
/// allocation.
pub(crate) fn encode_request(id: &RequestId, method: &str, params: &str) -> Vec<u8> {
    const FRAME: [&[u8]; 4] = [
        br#"{"jsonrpc":"2.0","id":"#,
        br#","method":"#,
        br#","params":"#,
        b"}",
    ];
    let mut number = itoa::Buffer::new();
    let id = match id {
        RequestId::Integer(i) => Json::Bare(number.format(*i)),
        RequestId::String(s) => Json::string(s),
    };
    let method = Json::string(method);
    let frame = FRAME.iter().map(|f| f.len()).sum::<usize>();
    let mut out = Vec::with_capacity(frame + id.len() + method.len() + params.len());
    out.extend_from_slice(FRAME[0]);
    id.push(&mut out);
    out.extend_from_slice(FRAME[1]);
    method.push(&mut out);
    out.extend_from_slice(FRAME[2]);
    out.extend_from_slice(params.as_bytes());
    out.extend_from_slice(FRAME[3]);
    out
}

/// Appends `text` as a JSON string (see [`Json::string`]).
pub(crate) fn push_quoted(out: &mut Vec<u8>, text: &str) {
    Json::string(text).push(out);
}

/// A piece of JSON text about to be written, its length known first.
enum Json<'a> {
    /// Written as it is (a number).
    Bare(&'a str),
    /// A string written as itself between quotes.
    Quoted(&'a str),
    /// A string serde_json escaped, quotes included.
    Escaped(String),
}

impl<'a> Json<'a> {
    /// `text` as a JSON string. Text JSON writes as itself (no control character, quote
    /// or backslash: an opaque token, a name) is checked sixteen bytes at a time and
    /// copied as it is; serde_json's writer, which looks at each byte on its own,
    /// writes the rest.
    fn string(text: &'a str) -> Self {
        if writes_as_itself(text.as_bytes()) {
            Json::Quoted(text)
        } else {
            // A `str` always serializes.
            Json::Escaped(serde_json::to_string(text).unwrap_or_default())
        }
    }

    /// Its length as written.
    fn len(&self) -> usize {
        match self {
            Json::Bare(text) => text.len(),
            Json::Quoted(text) => text.len() + 2,
            Json::Escaped(text) => text.len(),
        }
    }

    /// Appends it to `out`.
    fn push(&self, out: &mut Vec<u8>) {
        match self {
            Json::Bare(text) => out.extend_from_slice(text.as_bytes()),
            Json::Escaped(text) => out.extend_from_slice(text.as_bytes()),
            Json::Quoted(text) => {
                out.reserve(text.len() + 2);
                out.push(b'"');
                out.extend_from_slice(text.as_bytes());
                out.push(b'"');
            }
        }
    }
}

/// Whether no byte of `bytes` is one a JSON string escapes.
fn writes_as_itself(bytes: &[u8]) -> bool {
    let plain = |b: u8| (b >= 0x20) & (b != b'"') & (b != b'\\');
    let mut blocks = bytes.chunks_exact(16);
    // A whole block at a time, no early exit inside it: vector instructions.
    blocks.by_ref().all(|block| {
        <[u8; 16]>::try_from(block)
            .is_ok_and(|block| block.iter().fold(true, |all, &b| all & plain(b)))
    }) && blocks.remainder().iter().all(|&b| plain(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_message_never_echoes_more_than_its_cap() {
        let huge = "é".repeat(1_000_000);
        let error = RpcError::method_not_found(&huge);
        assert!(
            error.message.len() <= RpcError::MAX_MESSAGE_BYTES + 32,
            "{}",
            error.message.len()
        );
        assert!(error.message.starts_with("Method not found: éé"));
        assert!(
            error.message.ends_with("(2000018 bytes)"),
            "{}",
            &error.message[1000..]
        );
        let short = RpcError::method_not_found("no/such/method");
        assert_eq!(short.message, "Method not found: no/such/method");
    }

    #[test]
    fn a_string_is_quoted_as_serde_json_quotes_it() {
        let long = "t1.".to_owned() + &"Az09_-".repeat(40);
        for text in [
            "",
            "plain",
            "a\"b",
            "back\\slash",
            "tab\there",
            "\u{1f}",
            "\u{7f}é",
            &long,
            &(long.clone() + "\""),
            &("\"".to_owned() + &long),
        ] {
            let mut out = b"[".to_vec();
            push_quoted(&mut out, text);
            let general = format!("[{}", serde_json::to_string(text).unwrap());
            assert_eq!(String::from_utf8(out).ok(), Some(general), "{text:?}");
        }
    }

    #[test]
    fn a_request_is_written_as_the_general_writer_writes_it() {
        use crate::types::rpc::Request as _;
        use crate::types::v2026_07_28::method::CallTool;
        let params = r#"{"name":"sql","_meta":{"k":"v"}}"#;
        let ids = [
            RequestId::Integer(42),
            RequestId::Integer(i64::MIN),
            RequestId::String("a\"b".into()),
        ];
        for (id, method) in ids
            .into_iter()
            .zip(["example/call", CallTool::METHOD, "odd\"one"])
        {
            let general = request(&id, method, serde_json::from_str(params).ok());
            let encoded = encode_request(&id, method, params);
            assert_eq!(encoded.len(), encoded.capacity(), "sized exactly");
            assert_eq!(String::from_utf8(encoded).ok(), Some(general));
        }
    }
}
