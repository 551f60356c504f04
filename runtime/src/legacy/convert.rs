//! Results crossing between the eras.

use serde_json::Value;

use crate::types::rpc::{Request, RequestVisitor};
use crate::types::v2025_11_25 as old;

/// Checks a result from a 2025-11-25 server against that era's result type for
/// `method` (found in that version's method table) and returns it as JSON for the
/// 2026-07-28 decoder (which reads a missing `resultType` as `"complete"`). Methods
/// without a 2025-11-25 counterpart pass through unchanged.
pub(crate) fn from_legacy_result(method: &str, value: Value) -> Result<Value, serde_json::Error> {
    if !old::method::info(method).is_some_and(|m| m.is_request) {
        return Ok(value);
    }
    old::method::visit_request(method, Recode(value)).unwrap_or_else(|| Ok(Value::Null))
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
const MODERN_ONLY: &[&str] = &["resultType", "ttlMs", "cacheScope"];

/// A handler's (2026-07-28 shaped) result as a 2025-11-25 session receives it.
pub(crate) fn to_legacy_result(mut value: Value) -> Value {
    if let Value::Object(obj) = &mut value {
        for key in MODERN_ONLY {
            obj.remove(*key);
        }
    }
    value
}
