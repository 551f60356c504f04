//! The two protocol eras tern speaks: which era a version names, and results crossing
//! between them.
//!
//! The eras share their payloads (tool results, elicitation forms, sampling messages),
//! so a result crosses through JSON: checked against its own era's type and handed on
//! as the other era's.

use serde_json::Value;

use super::{PROTOCOL_VERSION, SESSION_PROTOCOL_VERSION};
use crate::types::rpc::{Request, RequestVisitor};
use crate::types::v2025_11_25 as session_era;

/// A protocol era, named by its model rather than by its age: how a client and a
/// server agree on what they speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// Stateless requests, each carrying its `_meta` (2026-07-28): input-required
    /// results, no server-to-client requests.
    Stateless,
    /// A session opened by `initialize` (2025-11-25), in which the server asks the
    /// client with requests of its own (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`).
    Session,
}

impl Era {
    /// The era of a request served on a session, or not.
    pub(crate) fn on_session(on_session: bool) -> Self {
        if on_session {
            Self::Session
        } else {
            Self::Stateless
        }
    }

    /// The protocol version tern speaks in this era.
    pub fn protocol_version(self) -> &'static str {
        match self {
            Self::Stateless => PROTOCOL_VERSION,
            Self::Session => SESSION_PROTOCOL_VERSION,
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.protocol_version())
    }
}

/// Whether the 2025-11-25 method table says `fact` of `method`: [`super::says`] for a
/// session's methods.
pub(crate) fn session_says(method: &str, fact: fn(&crate::types::rpc::MethodInfo) -> bool) -> bool {
    session_era::method::info(method).is_some_and(fact)
}

/// Whether `version` names a session-era protocol version (2025-11-25 or an earlier
/// date): a request stamped with one belongs to a session, not to 2026-07-28.
#[cfg(feature = "http-server")]
pub(crate) fn is_session_version(version: &str) -> bool {
    let dated = version.len() == 10
        && version.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    dated && version < PROTOCOL_VERSION
}

/// Checks a result from a 2025-11-25 server against that era's result type for
/// `method` (found in that version's method table) and returns it as JSON for the
/// 2026-07-28 decoder (which reads a missing `resultType` as `"complete"`). Methods
/// without a 2025-11-25 counterpart pass through unchanged.
pub(crate) fn from_session_result(method: &str, value: Value) -> Result<Value, serde_json::Error> {
    if !session_era::method::info(method).is_some_and(|m| m.is_request) {
        return Ok(value);
    }
    session_era::method::visit_request(method, Recode(value)).unwrap_or_else(|| Ok(Value::Null))
}

/// Decodes a value as a request's result type and encodes it again.
struct Recode(Value);

impl RequestVisitor for Recode {
    type Output = Result<Value, serde_json::Error>;

    fn visit<M: Request>(self) -> Self::Output {
        let typed: M::Result = serde_json::from_value(self.0)?;
        serde_json::to_value(typed)
    }
}

/// Members only 2026-07-28 results carry; a 2025-11-25 client has no use for them.
const STATELESS_ONLY: &[&str] = &["resultType", "ttlMs", "cacheScope"];

/// A handler's (2026-07-28 shaped) result as a 2025-11-25 session receives it.
pub(crate) fn to_session_result(mut value: Value) -> Value {
    if let Value::Object(obj) = &mut value {
        for key in STATELESS_ONLY {
            obj.remove(*key);
        }
    }
    value
}

#[cfg(all(test, feature = "http-server"))]
mod tests {
    #[test]
    fn session_era_versions_are_dates_before_2026_07_28() {
        for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
            assert!(super::is_session_version(v), "{v}");
        }
        for v in [
            "2026-07-28",
            "2027-01-01",
            "",
            "draft",
            "2025-11-2x",
            "2025/11/25",
        ] {
            assert!(!super::is_session_version(v), "{v}");
        }
    }
}
