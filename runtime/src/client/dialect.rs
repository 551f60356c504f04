//! How the client speaks to its server, settled once when it is built: on 2026-07-28
//! every request carries the client's `_meta` and names the protocol version, and
//! results are read as they come; on a 2025-11-25 session the client said who it is in
//! `initialize`, so a request carries only its progress token and trace, and results
//! are converted from that era's shapes first. The wire writes what the dialect says;
//! it does not ask which era it speaks.

use serde_json::Value;

use crate::Era;
use crate::protocol::PROTOCOL_VERSION;

/// Converts a result of a method from the server's era into 2026-07-28's shape.
pub(crate) type Recode = fn(&str, Value) -> Result<Value, serde_json::Error>;

/// What the client writes on, and reads off, every request.
#[derive(Debug)]
pub(crate) struct Dialect {
    era: Era,
    /// The `_meta` members every request carries, rendered once (see `wire`).
    pub(crate) meta: String,
    /// The protocol version requests name in their `_meta`, when they name one.
    pub(crate) version: Option<&'static str>,
    /// How results are converted, when the server's era shapes them otherwise.
    pub(crate) recode: Option<Recode>,
    /// Whether the client holds a session, which the server may lose (and which then
    /// answers 404).
    pub(crate) holds_session: bool,
}

impl Dialect {
    /// 2026-07-28's: `meta` on every request (the client's unit tests).
    #[cfg(test)]
    pub(crate) fn stateless(meta: String) -> Self {
        Self::of(Era::Stateless, meta)
    }

    /// The dialect of `era`; `meta` is what a stateless request carries.
    pub(crate) fn of(era: Era, meta: String) -> Self {
        match era {
            Era::Stateless => Self {
                era,
                meta,
                version: Some(PROTOCOL_VERSION),
                recode: None,
                holds_session: false,
            },
            Era::Session => Self {
                era,
                meta: String::new(),
                version: None,
                recode: Some(crate::protocol::era::from_session_result),
                holds_session: true,
            },
        }
    }

    /// The era it speaks.
    pub(crate) fn era(&self) -> Era {
        self.era
    }
}
