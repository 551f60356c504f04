//! Small pieces the client and server share.

use std::sync::Mutex;

use serde_json::Value;

use crate::types::v2026_07_28::RequestId;

/// Request ids as map keys (`1` and `"1"` are different ids).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    Int(i64),
    Str(String),
}

impl From<&RequestId> for IdKey {
    fn from(id: &RequestId) -> Self {
        match id {
            RequestId::Integer(i) => Self::Int(*i),
            RequestId::String(s) => Self::Str(s.clone()),
        }
    }
}

impl IdKey {
    pub(crate) fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Number(n) => n.as_i64().map(Self::Int),
            Value::String(s) => Some(Self::Str(s.clone())),
            _ => None,
        }
    }
}

/// Locks a mutex, recovering the data if a panicking holder poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
