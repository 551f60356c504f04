//! A request's params and a response's result as the JSON text the peer sent.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

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
        match guess
            .settled
            .get_or_init(|| super::receive::settle(&self.text, &guess.at))
        {
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
