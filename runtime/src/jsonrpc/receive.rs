//! Reading what a client receives: a well-formed response in one pass, its result left
//! as text (a [`RawResult`]: taken as closing the message when it seems to, and read
//! again if not); anything else through the general reader.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use serde_json::value::RawValue;

use super::read::{long_text, raw_id};
use super::split::{Found, is_json, split};
use super::{Incoming, Rejected, RpcError};
use crate::types::v2026_07_28::RequestId;
use serde_json::Value;

/// A response's result, as the JSON text the peer sent, for the client to read into its
/// method's result type.
///
/// A transport that reads a response finds its result by its extent and does not check
/// it as JSON: reading it into its type does, so a well-formed response is parsed once.
/// Text that turns out not to be JSON fails that read, as a result of the wrong shape
/// does ([`ProtocolError::Decode`](crate::ProtocolError::Decode)). A result that closes
/// its message (where most servers write it) is not even scanned for its end: the client
/// reads it as closing the message, and reads the message again only if it is not.
#[derive(Clone)]
pub struct RawResult {
    text: Box<str>,
    /// For a result taken as closing its message: `text` is the whole message.
    guess: Option<Guess>,
}

/// Where a result taken as closing its message lies, and what reading the message again
/// found, once something asked.
#[derive(Clone)]
struct Guess {
    at: Range<usize>,
    /// `None`: the result is where it was taken to be.
    settled: OnceLock<Option<Box<str>>>,
}

impl RawResult {
    /// The result's JSON text.
    pub fn get(&self) -> &str {
        let Some(guess) = &self.guess else {
            return &self.text;
        };
        match guess.settled.get_or_init(|| settle(&self.text, &guess.at)) {
            Some(text) => text,
            None => self.guessed_text(guess),
        }
    }

    /// The result read into `T`. A result taken as closing its message is read as taken
    /// first: text that reads whole as one JSON value there can only be the result.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        if let Some(text) = self.unsettled() {
            if let Ok(value) = serde_json::from_str(text) {
                return Ok(value);
            }
        }
        serde_json::from_str(self.get())
    }

    /// The text taken for the result, read again or not: all of the result, and for a
    /// result taken as closing its message perhaps more (for a quick look, not a read).
    #[cfg(feature = "http-client")]
    pub(crate) fn taken(&self) -> &str {
        self.unsettled().unwrap_or_else(|| self.get())
    }

    /// A result found on the wire by its extent, not checked as JSON.
    pub(crate) fn unchecked(text: Box<str>) -> Self {
        Self { text, guess: None }
    }

    /// The result taken to lie at `at` of `message`, as closing it, unscanned.
    pub(crate) fn closing(message: Box<str>, at: Range<usize>) -> Self {
        Self {
            text: message,
            guess: Some(Guess {
                at,
                settled: OnceLock::new(),
            }),
        }
    }

    fn guessed_text(&self, guess: &Guess) -> &str {
        self.text.get(guess.at.clone()).unwrap_or_default()
    }

    /// The text a guess took, while the message has not been read again.
    fn unsettled(&self) -> Option<&str> {
        let guess = self.guess.as_ref().filter(|g| g.settled.get().is_none())?;
        Some(self.guessed_text(guess))
    }
}

impl From<Box<RawValue>> for RawResult {
    fn from(raw: Box<RawValue>) -> Self {
        Self::unchecked(raw.into())
    }
}

impl From<&Value> for RawResult {
    fn from(value: &Value) -> Self {
        Self::unchecked(value.to_string().into_boxed_str())
    }
}

impl PartialEq for RawResult {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawResult {}

impl fmt::Debug for RawResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawResult").field(&self.get()).finish()
    }
}

/// A response whose result is left as JSON text, for the receiver to parse into its
/// type.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub(crate) id: RequestId,
    pub(crate) result: Result<RawResult, RpcError>,
}

/// Reads `text` as a well-formed response in one pass ([`split`]), its result found by
/// its extent and left for the receiver to read into its type (which checks it): nothing
/// is built and the result is not parsed here. `None` for anything else (a request, a
/// notification, a malformed message, an odd id): [`Incoming::parse`] classifies those,
/// and says what is wrong.
pub(crate) fn parse_response(text: &[u8], found: Found) -> Option<RawResponse> {
    let Answer {
        id,
        result,
        guessed,
    } = response_members(text, found)?;
    let result = match result {
        // Taken as closing the message: nothing after it was looked at.
        Ok(result) if guessed => {
            let start = result.as_ptr() as usize - text.as_ptr() as usize;
            let message = long_text(text)?.into();
            Ok(RawResult::closing(message, start..start + result.len()))
        }
        Ok(result) => Ok(RawResult::unchecked(long_text(result)?.into())),
        Err(error) => Err(error),
    };
    Some(RawResponse { id, result })
}

/// A response's members as [`response_members`] finds them.
struct Answer<'a> {
    id: RequestId,
    /// The result's bytes, or the error.
    result: Result<&'a [u8], RpcError>,
    /// Whether the result was taken as closing the message.
    guessed: bool,
}

/// The members of the response `text` is; `None` as for [`parse_response`].
fn response_members(text: &[u8], found: Found) -> Option<Answer<'_>> {
    let members = split(text, found)?;
    if members.jsonrpc != Some(br#""2.0""#) || members.method.is_some() || members.params.is_some()
    {
        return None;
    }
    let id = raw_id(members.id?)?;
    let result = match (members.result, members.error) {
        // With both, the result counts, as the general reader has it; the error must
        // still be JSON.
        (Some(result), error) if error.is_none_or(is_json) => Ok(result),
        (None, Some(error)) => Err(serde_json::from_slice(error).ok()?),
        _ => return None,
    };
    Some(Answer {
        id,
        result,
        guessed: members.guessed,
    })
}

/// A message as a client receives it: a response with its result left as text, or a
/// request or notification of the server's.
#[derive(Debug)]
pub(crate) enum Received {
    Response(RawResponse),
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
}

/// Reads one message a client received: a well-formed response in one pass
/// ([`parse_response`]), anything else through [`Incoming::parse`] (bytes that are not
/// UTF-8 read lossily, as before).
pub(crate) fn receive(text: &[u8]) -> Result<Received, Box<Rejected>> {
    if let Some(response) = parse_response(text, Found::Closing) {
        return Ok(Received::Response(response));
    }
    Ok(match Incoming::parse(&String::from_utf8_lossy(text))? {
        Incoming::Response { id, result } => Received::Response(RawResponse {
            id,
            result: result.map(|r| RawResult::from(&r)),
        }),
        Incoming::Request { id, method, params } => Received::Request {
            id,
            method: method.into_owned(),
            params: match params {
                None => None,
                Some(p) => {
                    Some(serde_json::from_str(p.get()).map_err(|_| Incoming::rejection(text))?)
                }
            },
        },
        Incoming::Notification { method, params } => Received::Notification { method, params },
    })
}

/// The result of `message` as [`receive`] reads it with nothing taken on trust, for a
/// result that was taken as closing it at `at` ([`RawResult::closing`]): `None` when that
/// is where it lies. A message that is no response (its members after the result said
/// otherwise, or it is not JSON) keeps the text taken, which its reader then refuses.
pub(super) fn settle(message: &str, at: &std::ops::Range<usize>) -> Option<Box<str>> {
    let taken = message.get(at.clone())?;
    let strict = response_members(message.as_bytes(), Found::Scanned);
    if let Some(Answer {
        result: Ok(result), ..
    }) = strict
    {
        // Where it was taken to be: nothing is copied.
        if std::ptr::eq(result, taken.as_bytes()) {
            return None;
        }
        return Some(long_text(result)?.into());
    }
    match Incoming::parse(message) {
        Ok(Incoming::Response {
            result: Ok(value), ..
        }) => Some(value.to_string().into()),
        _ => Some(taken.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the general reader makes of `text`, its result written out.
    fn general(text: &str) -> Option<(RequestId, Result<String, RpcError>)> {
        match Incoming::parse(text) {
            Ok(Incoming::Response { id, result }) => Some((id, result.map(|r| r.to_string()))),
            _ => None,
        }
    }

    #[test]
    fn a_response_read_in_one_pass_is_what_the_general_reader_reads() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"b":[1,2.5,"x"],"a":null}}"#,
            r#" {"result":{},"id":"abc","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":-3,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no","data":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"both"}}"#,
        ] {
            let fast = parse_response(text.as_bytes(), Found::Scanned).expect(text);
            let result = fast.result.map(|r| {
                serde_json::from_str::<Value>(r.get())
                    .expect("JSON")
                    .to_string()
            });
            assert_eq!(Some((fast.id, result)), general(text), "{text}");
        }
    }

    #[test]
    fn a_result_taken_as_closing_its_response_reads_as_the_general_reader_reads_it() {
        let result = r#"{"content":[{"type":"text","text":"}}"}],"a":{"b":{}}}"#;
        for text in [
            // Last, where servers write it: taken as closing, and it does.
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#),
            format!("{{\"id\":1,\"jsonrpc\":\"2.0\",\"result\" : {result} \n}}\n"),
            // Another object after it: the text taken is no JSON value; read again.
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result},"x":{{"y":{{}}}}}}"#),
            // Repeated: the last one counts, as in a tree.
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":1}},"result":{result}}}"#),
            // An error after it: the result still counts.
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{result},"error":{{"code":1,"message":"m"}}}}"#
            ),
        ] {
            let Ok(Received::Response(RawResponse {
                id,
                result: Ok(raw),
            })) = receive(text.as_bytes())
            else {
                panic!("not a response: {text}");
            };
            let read: Value = raw.decode().expect("decodes");
            let expected = general(&text).expect("a response");
            assert_eq!(
                Some((id, Ok(read.to_string()))),
                Some(expected.clone()),
                "{text}"
            );
            assert_eq!(
                Ok(raw.get().to_owned()),
                expected.1.map(|_| result.to_owned()),
                "{text}"
            );
        }
        // Not JSON where it was taken to be, nor anywhere: the read refuses it.
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"a":tru}}"#;
        let Ok(Received::Response(RawResponse {
            result: Ok(raw), ..
        })) = receive(text.as_bytes())
        else {
            panic!("not read as a response");
        };
        assert!(raw.decode::<Value>().is_err());
        assert_eq!(raw.get(), r#"{"a":tru}"#);
        // An error before it that is not JSON: no response, taken or not.
        let text = r#"{"jsonrpc":"2.0","id":1,"error":tru,"result":{}}"#;
        assert!(parse_response(text.as_bytes(), Found::Closing).is_none());
        assert!(receive(text.as_bytes()).is_err());
    }

    #[test]
    fn anything_but_a_plain_response_is_left_to_the_general_reader() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"example/notice","params":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            r#"["2.0",1,null,{},null]"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":tru}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":[}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"params":{}}"#,
            "not json",
        ] {
            assert!(
                parse_response(text.as_bytes(), Found::Scanned).is_none(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_result_is_found_by_its_extent_and_checked_only_when_read_into_its_type() {
        let text = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a}]"}],"x":tru}}"#;
        let response = parse_response(text, Found::Scanned).expect("a response");
        assert_eq!(response.id, RequestId::Integer(7));
        let result = response.result.expect("a result");
        assert_eq!(
            result.get(),
            r#"{"content":[{"type":"text","text":"a}]"}],"x":tru}"#
        );
        assert!(serde_json::from_str::<Value>(result.get()).is_err());
    }
}
