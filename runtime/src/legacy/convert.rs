//! Results crossing between the eras.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::types::v2025_11_25 as old;

/// Checks a result from a 2025-11-25 server against that era's type for `method` and
/// returns it as JSON for the 2026-07-28 decoder (which reads a missing `resultType` as
/// `"complete"`). Methods without a 2025-11-25 counterpart pass through unchanged.
pub(crate) fn from_legacy_result(method: &str, value: Value) -> Result<Value, serde_json::Error> {
    match method {
        "tools/call" => recode::<old::CallToolResult>(value),
        "tools/list" => recode::<old::ListToolsResult>(value),
        "prompts/get" => recode::<old::GetPromptResult>(value),
        "prompts/list" => recode::<old::ListPromptsResult>(value),
        "resources/read" => recode::<old::ReadResourceResult>(value),
        "resources/list" => recode::<old::ListResourcesResult>(value),
        "resources/templates/list" => recode::<old::ListResourceTemplatesResult>(value),
        "completion/complete" => recode::<old::CompleteResult>(value),
        _ => Ok(value),
    }
}

fn recode<T: DeserializeOwned + Serialize>(value: Value) -> Result<Value, serde_json::Error> {
    let typed: T = serde_json::from_value(value)?;
    serde_json::to_value(typed)
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
