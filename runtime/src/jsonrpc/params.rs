//! A request's params as the JSON text the peer sent.

use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

/// A request's params, as the JSON text the peer sent: an object, kept as text for the
/// handler to read into its method's type.
///
/// A transport that reads a request finds its params by their extent and leaves
/// checking them as JSON to that read, so a well-formed request is parsed once; the
/// server refuses a request whose params turn out not to be JSON, with the same -32700
/// the transport gives any other malformed message, before anything acts on it. A
/// server's transport does not even find the extent of params that close their message
/// (where most clients write them): it takes them as such, and a server that finds them
/// not to be JSON splits the message again before it calls the message malformed. Params
/// made from a [`Value`] or a [`RawValue`] are JSON already.
#[derive(Clone)]
pub struct RawParams {
    text: Box<str>,
    /// What is known of `text`.
    known: Known,
}

/// What is known of a [`RawParams`]' text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// It is JSON: it came from a value, or has been checked.
    Json,
    /// It was found on the wire by its extent, and is JSON if reading it succeeds.
    Extent,
    /// It was taken as closing the message, unscanned: if it is not JSON, the message
    /// must be split again to find its params (they were not last).
    Guessed,
}

impl RawParams {
    /// The params' JSON text.
    pub fn get(&self) -> &str {
        &self.text
    }

    /// Params found on the wire by their extent, not yet checked as JSON.
    pub(crate) fn unchecked(text: Box<str>) -> Self {
        Self {
            text,
            known: Known::Extent,
        }
    }

    /// Params taken on the wire as what closes their message, unscanned: right if they
    /// are JSON, and otherwise a sign to read the message again, not that it is malformed.
    pub(crate) fn guessed(text: Box<str>) -> Self {
        Self {
            text,
            known: Known::Guessed,
        }
    }

    /// Whether the text is known to be JSON without reading it again.
    pub(crate) fn is_checked(&self) -> bool {
        self.known == Known::Json
    }

    /// Whether the text was taken as closing its message ([`guessed`](Self::guessed)).
    pub(crate) fn is_guessed(&self) -> bool {
        self.known == Known::Guessed
    }
}

impl From<Box<RawValue>> for RawParams {
    fn from(raw: Box<RawValue>) -> Self {
        Self {
            text: raw.into(),
            known: Known::Json,
        }
    }
}

impl From<&Value> for RawParams {
    fn from(value: &Value) -> Self {
        Self {
            text: value.to_string().into_boxed_str(),
            known: Known::Json,
        }
    }
}

impl PartialEq for RawParams {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl fmt::Debug for RawParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawParams").field(&&*self.text).finish()
    }
}
