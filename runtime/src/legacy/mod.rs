//! The 2025-11-25 era, spoken beside 2026-07-28: which era a peer speaks, the
//! conversions between the two eras' results, and the server's side of a legacy
//! session (the `initialize` handshake and server-to-client requests).
//!
//! The two eras share their payloads (tool results, elicitation forms, sampling
//! messages), so conversions go through JSON: each result is checked against its own
//! era's type and handed on as the other era's.

mod convert;
mod session;

pub(crate) use convert::{from_legacy_result, to_legacy_result};
pub(crate) use session::{LegacySession, Offers, session_result};

use crate::protocol::{LEGACY_PROTOCOL_VERSION, PROTOCOL_VERSION};

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
    /// The protocol version tern speaks in this era.
    pub fn protocol_version(self) -> &'static str {
        match self {
            Self::Stateless => PROTOCOL_VERSION,
            Self::Session => LEGACY_PROTOCOL_VERSION,
        }
    }
}

/// Whether `version` names a session-era protocol version (2025-11-25 or an earlier
/// date): a request stamped with one belongs to a session, not to 2026-07-28.
#[cfg(feature = "http-server")]
pub(crate) fn is_legacy_version(version: &str) -> bool {
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

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.protocol_version())
    }
}

#[cfg(all(test, feature = "http-server"))]
mod tests {
    #[test]
    fn session_era_versions_are_dates_before_2026_07_28() {
        for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
            assert!(super::is_legacy_version(v), "{v}");
        }
        for v in [
            "2026-07-28",
            "2027-01-01",
            "",
            "draft",
            "2025-11-2x",
            "2025/11/25",
        ] {
            assert!(!super::is_legacy_version(v), "{v}");
        }
    }
}
