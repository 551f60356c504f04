//! Reading incoming messages: a well-formed request or response in one pass, its
//! params or result left as text; anything else through a JSON tree, which says exactly
//! what is wrong with it.

use std::borrow::Cow;

use serde_json::Value;

use super::split::{Found, id_text, split};
use super::{JsonLimits, RawParams, RpcError};
use crate::types::rpc::as_str;
use crate::types::v2026_07_28::RequestId;

/// A message as it arrives, classified by its members.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request: its params left as text, for the handler to read into its type.
    Request {
        id: RequestId,
        /// The method: the protocol's own name (not a copy) when it is one.
        method: Cow<'static, str>,
        params: Option<RawParams>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: RequestId,
        result: Result<Value, RpcError>,
    },
}

/// Why an incoming message was not accepted, with the id to answer to, if one was found.
#[derive(Debug)]
pub(crate) struct Rejected {
    pub(crate) id: Option<RequestId>,
    pub(crate) error: RpcError,
}

fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Integer),
        _ => None,
    }
}

impl Incoming {
    /// Parses and classifies one message. Batches are not part of 2026-07-28.
    pub(crate) fn parse(text: &str) -> Result<Self, Box<Rejected>> {
        Self::read(text.as_bytes())
    }

    /// Reads one message whose bytes `limits` judge first, as a server does: a request's
    /// params that close the message taken as such, unscanned
    /// ([`RawParams::is_guessed`]; the server reads them and, if they are not JSON, the
    /// message again with [`read`](Self::read)). A message the limits refuse is answered
    /// to its id when a cheap scan finds one, so that a client waiting on that id learns
    /// why (a refusal to `null` reaches no caller).
    pub(crate) fn read_within(bytes: &[u8], limits: &JsonLimits) -> Result<Self, Box<Rejected>> {
        if let Err(error) = limits.check(bytes) {
            let id = Self::id_of(bytes);
            return Err(Box::new(Rejected { id, error }));
        }
        if let Some(request) = parse_request(bytes, Found::Closing) {
            return Ok(request);
        }
        Self::read_tree(bytes)
    }

    /// The id of the message in `bytes`, found by a scan of its top-level members that
    /// checks nothing else: for answering a message that will not be parsed.
    pub(crate) fn id_of(bytes: &[u8]) -> Option<RequestId> {
        id_text(bytes).and_then(raw_id)
    }

    /// Parses and classifies one message from its bytes: a well-formed request in one
    /// pass ([`parse_request`]), anything else through a JSON tree, which says exactly
    /// what is wrong with it.
    pub(crate) fn read(bytes: &[u8]) -> Result<Self, Box<Rejected>> {
        if let Some(request) = parse_request(bytes, Found::Scanned) {
            return Ok(request);
        }
        Self::read_tree(bytes)
    }

    /// Why `bytes` are not a message, for a request whose params turned out not to be
    /// JSON: the general reader's answer (-32700, with where the JSON breaks).
    pub(crate) fn rejection(bytes: &[u8]) -> Box<Rejected> {
        match Self::read_tree(bytes) {
            Err(rejected) => rejected,
            Ok(_) => Box::new(Rejected {
                id: None,
                error: RpcError::parse_error("Parse error: the params are not JSON"),
            }),
        }
    }

    /// Reads `bytes` through a JSON tree.
    fn read_tree(bytes: &[u8]) -> Result<Self, Box<Rejected>> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            Box::new(Rejected {
                id: None,
                error: RpcError::parse_error(format!("Parse error: {e}")),
            })
        })?;
        Self::classify(value)
    }

    pub(crate) fn classify(value: Value) -> Result<Self, Box<Rejected>> {
        let Value::Object(mut obj) = value else {
            return Err(rejected(
                None,
                "Invalid Request: a message must be a JSON object",
            ));
        };
        let id = obj.get("id").and_then(request_id);
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(rejected(id, "Invalid Request: \"jsonrpc\" must be \"2.0\""));
        }
        if let Some(method) = obj.get("method") {
            let Some(method) = method.as_str().map(str::to_owned) else {
                return Err(rejected(id, "Invalid Request: \"method\" must be a string"));
            };
            return Self::classify_call(method, id, &mut obj);
        }
        let Some(id) = id else {
            return Err(rejected(
                None,
                "Invalid Request: a response needs an \"id\"",
            ));
        };
        if let Some(result) = obj.remove("result") {
            return Ok(Self::Response {
                id,
                result: Ok(result),
            });
        }
        if let Some(error) = obj.remove("error") {
            let error = serde_json::from_value::<RpcError>(error)
                .unwrap_or_else(|e| RpcError::internal(format!("malformed error response: {e}")));
            return Ok(Self::Response {
                id,
                result: Err(error),
            });
        }
        Err(rejected(
            Some(id),
            "Invalid Request: no method, result or error",
        ))
    }

    /// A request (with an `id`) or a notification (without), its `method` read.
    fn classify_call(
        method: String,
        id: Option<RequestId>,
        obj: &mut serde_json::Map<String, Value>,
    ) -> Result<Self, Box<Rejected>> {
        let params = obj.remove("params");
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(Box::new(Rejected {
                id,
                error: RpcError::invalid_params("\"params\" must be an object"),
            }));
        }
        match (obj.contains_key("id"), id) {
            (false, _) => Ok(Self::Notification { method, params }),
            (true, Some(id)) => Ok(Self::Request {
                id,
                method: Cow::Owned(method),
                params: params.as_ref().map(RawParams::from),
            }),
            (true, None) => Err(rejected(
                None,
                "Invalid Request: \"id\" must be a string or an integer",
            )),
        }
    }
}

/// A message refused as an invalid request, answered to `id` when it had one.
fn rejected(id: Option<RequestId>, why: &'static str) -> Box<Rejected> {
    Box::new(Rejected {
        id,
        error: RpcError::invalid_request(why),
    })
}

/// Reads `bytes` as a well-formed request in one pass ([`split`]), its params left as
/// text to be read into their type: nothing is built, and the params are not parsed
/// here. `None` for anything else (a notification, a response, a malformed message, an
/// odd id, a repeated member): [`Incoming::classify`] reads those and says what is
/// wrong.
fn parse_request(bytes: &[u8], found: Found) -> Option<Incoming> {
    let members = split(bytes, found)?;
    if members.jsonrpc != Some(br#""2.0""#) || members.result.is_some() || members.error.is_some() {
        return None;
    }
    let id = raw_id(members.id?)?;
    let method = method_name(members.method?)?;
    let params = match members.params {
        None => None,
        Some(p) if p.first() == Some(&b'{') => {
            let text = long_text(p)?.into();
            Some(match members.guessed {
                true => RawParams::guessed(text),
                false => RawParams::unchecked(text),
            })
        }
        Some(_) => return None,
    };
    Some(Incoming::Request { id, method, params })
}

/// `bytes` as text when they are UTF-8: for a message's params or result, the one long
/// text it brings, checked a vector at a time (`simdutf8`; std's check goes byte by byte
/// past its ASCII words).
pub(super) fn long_text(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// A string or integer id read from its text; `None` for anything else.
pub(super) fn raw_id(raw: &[u8]) -> Option<RequestId> {
    if raw.starts_with(b"\"") {
        string_text(raw).map(RequestId::String)
    } else if let Some(n) = plain_integer(raw) {
        Some(RequestId::Integer(n))
    } else {
        serde_json::from_slice(raw).ok().map(RequestId::Integer)
    }
}

/// The method named by the JSON string `raw` (with its quotes): the method table's own
/// name when `raw` spells one plainly (nearly every request), with nothing copied or
/// checked further; otherwise its text, as [`string_text`] reads it.
fn method_name(raw: &[u8]) -> Option<Cow<'static, str>> {
    let known = raw
        .strip_prefix(b"\"")
        .and_then(|inner| inner.strip_suffix(b"\""))
        .and_then(super::method_spelled);
    match known {
        Some(info) => Some(Cow::Borrowed(info.method)),
        None => string_text(raw).map(Cow::Owned),
    }
}

/// The text of the JSON string `raw` (with its quotes), read as the generated types read
/// one (`rpc::as_str`): as it stands when plain, through serde_json otherwise.
fn string_text(raw: &[u8]) -> Option<String> {
    as_str(std::str::from_utf8(raw).ok()?).map(std::borrow::Cow::into_owned)
}

/// `raw` as an integer when it is one as JSON writes it and `i64` surely holds it: `0`,
/// or an optional minus and a digit other than `0` followed by at most 17 more (read
/// exactly as serde_json reads it, and nothing it would refuse; serde_json reads `-0` as
/// a float, so that goes its way).
fn plain_integer(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, raw),
    };
    let plain = match digits {
        [b'0'] => !negative,
        [b'1'..=b'9', rest @ ..] => rest.len() <= 17 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !plain {
        return None;
    }
    // At most 18 digits: below `i64::MAX`, whatever they are.
    let value = digits
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{is_json, receive};
    use crate::types::rpc::Request as _;
    use crate::types::v2026_07_28::method;

    /// What the tree reader makes of a request, its params written out.
    fn through_a_tree(text: &str) -> Option<(RequestId, String, Option<String>)> {
        let value = serde_json::from_str(text).ok()?;
        match Incoming::classify(value) {
            Ok(Incoming::Request { id, method, params }) => {
                Some((id, method.into_owned(), params.map(|p| p.get().to_owned())))
            }
            _ => None,
        }
    }

    #[test]
    fn a_request_read_in_one_pass_is_what_the_tree_reader_reads() {
        // A method of the table spelled plainly, with an escape, and nearly.
        let call = method::CallTool::METHOD;
        let spellings = [
            call.to_owned(),
            call.replace('/', "\\/"),
            call[..call.len() - 1].to_owned(),
            format!("{call} "),
        ];
        let with_table_methods = spellings
            .iter()
            .map(|m| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{}}}}"#));
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"example/call","params":{"name":"a","arguments":{"b":[1,2.5]}}}"#,
            r#" {"params":{},"method":"ping","id":"x\"y","jsonrpc":"2.0","extra":true}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"example/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\u002fb","params":{"k":null}}"#,
        ]
        .map(str::to_owned)
        .into_iter()
        .chain(with_table_methods)
        {
            let text = text.as_str();
            let Some(Incoming::Request { id, method, params }) =
                parse_request(text.as_bytes(), Found::Scanned)
            else {
                panic!("not read in one pass: {text}");
            };
            let one_pass = (id, method.into_owned(), params.map(|p| p.get().to_owned()));
            assert_eq!(Some(one_pass), through_a_tree(text), "{text}");
        }
    }

    #[test]
    fn params_are_taken_as_text_exactly_when_they_are_utf_8() {
        let odd: [&[u8]; 8] = [
            "é".as_bytes(),
            "€𝄞".as_bytes(),
            b"\xff",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xe2\x82",
            b"\xf4\x90\x80\x80",
            b"plain",
        ];
        for bytes in odd {
            // Short and long params, either side of where a vector's worth starts.
            for pad in [0, 100] {
                let mut text = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":""#.to_vec();
                text.extend(std::iter::repeat_n(b'x', pad));
                text.extend_from_slice(bytes);
                text.extend_from_slice(br#""}}"#);
                let read = parse_request(&text, Found::Closing).is_some();
                assert_eq!(
                    read,
                    std::str::from_utf8(&text).is_ok(),
                    "{bytes:?} after {pad}"
                );
            }
        }
    }

    #[test]
    fn a_method_the_table_names_is_its_name_not_a_copy() {
        let method_of = |raw: &str| method_name(raw.as_bytes());
        let call = method::CallTool::METHOD;
        assert!(matches!(method_of(&format!("\"{call}\"")), Some(Cow::Borrowed(m)) if m == call));
        // Spelled with an escape, or not a method of the table: read, and owned.
        let escaped = format!("\"{}\"", call.replace('/', "\\/"));
        for (raw, read) in [
            (escaped.as_str(), call),
            (r#""example/call""#, "example/call"),
            (r#""""#, ""),
        ] {
            assert!(
                matches!(method_of(raw), Some(Cow::Owned(m)) if m == read),
                "{raw}"
            );
        }
        assert_eq!(method_of(&format!("\"{call}")), None);
    }

    #[test]
    fn ids_and_methods_read_plainly_are_what_serde_json_reads() {
        let ids = [
            "0",
            "-0",
            "7",
            "-7",
            "01",
            "-01",
            "+1",
            "1.0",
            "1e2",
            "-",
            "",
            "00",
            "123456789012345678",
            "-123456789012345678",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "99999999999999999999",
            r#""x""#,
            r#""x\"y""#,
            r#""a\u002fb""#,
            "\"tab\there\"",
            r#""é""#,
            r#""""#,
        ];
        for text in ids {
            let reference = if text.starts_with('"') {
                serde_json::from_str(text).ok().map(RequestId::String)
            } else {
                serde_json::from_str(text).ok().map(RequestId::Integer)
            };
            assert_eq!(raw_id(text.as_bytes()), reference, "{text}");
        }
        let call = format!("\"{}\"", method::CallTool::METHOD);
        for text in [
            call.as_str(),
            r#""a\u002fb""#,
            r#""a\"b""#,
            "\"a\u{1}b\"",
            r#""ü""#,
            r#""""#,
            r#""unterminated"#,
            "\"a\\\"",
        ] {
            let reference: Option<String> = serde_json::from_str(text).ok();
            assert_eq!(string_text(text.as_bytes()), reference, "{text}");
        }
    }

    #[test]
    fn params_taken_as_closing_the_message_are_its_params_whenever_they_are_json() {
        let params = r#"{"name":"a","arguments":{"b":[1,{"c":"}}"}]}}"#;
        for (text, last) in [
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#),
                true,
            ),
            (
                format!(
                    "{{\"id\":1,\"method\":\"m\",\"jsonrpc\":\"2.0\",\"params\" :\n{params} \r\n}}\n"
                ),
                true,
            ),
            (
                format!(r#"{{"params":{params},"jsonrpc":"2.0","id":1,"method":"m","x":{{}}}}"#),
                false,
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params},"x":{{"y":1}}}}"#
                ),
                false,
            ),
        ] {
            let scanned = parse_request(text.as_bytes(), Found::Scanned);
            let Some(Incoming::Request {
                params: Some(found),
                ..
            }) = scanned
            else {
                panic!("not read in one pass: {text}");
            };
            assert_eq!(found.get(), params);
            match parse_request(text.as_bytes(), Found::Closing) {
                Some(Incoming::Request {
                    params: Some(guessed),
                    ..
                }) => {
                    assert!(guessed.is_guessed());
                    assert_eq!(is_json(guessed.get()), last, "{text}");
                    assert_eq!(guessed.get() == params, last, "{text}");
                }
                // Members after the params are not looked for: without them it is no request.
                other => assert!(!last && other.is_none(), "{text}: {other:?}"),
            }
        }
        // Where the message does not end `}}`, the params are found by their extent.
        let text = r#"{"params":{"a":1},"jsonrpc":"2.0","method":"m","id":1}"#;
        let Some(Incoming::Request {
            params: Some(found),
            ..
        }) = parse_request(text.as_bytes(), Found::Closing)
        else {
            panic!("not read in one pass");
        };
        assert!(!found.is_guessed() && found.get() == r#"{"a":1}"#);
    }

    #[test]
    fn odd_requests_are_left_to_the_tree_reader_which_says_what_is_wrong() {
        for (text, message) in [
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                "\"id\" must be",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                "\"id\" must be",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                "\"method\" must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
                "\"params\" must be an object",
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                "\"jsonrpc\" must be",
            ),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                "must be a JSON object",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
                "Parse error",
            ),
        ] {
            assert!(
                parse_request(text.as_bytes(), Found::Scanned).is_none(),
                "{text}"
            );
            match Incoming::read(text.as_bytes()) {
                Err(rejected) => assert!(
                    rejected.error.message.contains(message),
                    "{text}: {:?}",
                    rejected.error
                ),
                Ok(other) => panic!("{text} read as {other:?}"),
            }
        }
    }

    #[test]
    fn params_are_not_parsed_in_one_pass_and_the_general_reader_says_when_they_are_not_json() {
        let text = r#"{"jsonrpc":"2.0","id":3,"method":"example/call","params":{"a":tru}}"#;
        let Some(Incoming::Request {
            params: Some(params),
            ..
        }) = parse_request(text.as_bytes(), Found::Scanned)
        else {
            panic!("not read in one pass");
        };
        assert!(!params.is_checked());
        assert_eq!(params.get(), r#"{"a":tru}"#);
        let rejected = Incoming::rejection(text.as_bytes());
        assert_eq!(rejected.error.code, super::super::code::PARSE_ERROR);
        assert!(
            rejected.error.message.starts_with("Parse error"),
            "{rejected:?}"
        );
        // A client reads a server's request into a tree, so it refuses it there.
        assert!(receive(text.as_bytes()).is_err());
    }

    #[test]
    fn a_repeated_member_is_read_as_a_tree_reads_it_the_last_one_winning() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"example/first","method":"example/second","params":{}}"#;
        assert!(parse_request(text.as_bytes(), Found::Scanned).is_none());
        match Incoming::read(text.as_bytes()) {
            Ok(Incoming::Request { method, .. }) => assert_eq!(method, "example/second"),
            other => panic!("{other:?}"),
        }
    }
}
