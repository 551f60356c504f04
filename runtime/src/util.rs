//! Small pieces the client and server share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

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

/// The requests a peer has in flight, by id, so `notifications/cancelled` can stop the
/// one it names and a closing connection or session can stop them all. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<Mutex<HashMap<IdKey, CancellationToken>>>);

impl InFlight {
    /// Registers request `id`, cancelled through `cancel`; the returned guard forgets it
    /// when the request is done.
    pub(crate) fn track(&self, id: &RequestId, cancel: CancellationToken) -> Tracked {
        let key = IdKey::from(id);
        lock(&self.0).insert(key.clone(), cancel);
        Tracked {
            in_flight: self.clone(),
            key,
        }
    }

    /// Cancels the request the peer withdrew (`params.requestId` of
    /// `notifications/cancelled`), if it is still running.
    pub(crate) fn cancel(&self, params: Option<&Value>) {
        let key = params
            .and_then(|p| p.get("requestId"))
            .and_then(IdKey::from_value);
        if let Some(token) = key.and_then(|k| lock(&self.0).remove(&k)) {
            token.cancel();
        }
    }

    /// Cancels every request in flight.
    pub(crate) fn cancel_all(&self) {
        for (_, token) in lock(&self.0).drain() {
            token.cancel();
        }
    }

    /// Whether no request is in flight.
    #[cfg(feature = "http-server")]
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.0).is_empty()
    }
}

/// Forgets a tracked request when dropped.
#[derive(Debug)]
pub(crate) struct Tracked {
    in_flight: InFlight,
    key: IdKey,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&self.in_flight.0).remove(&self.key);
    }
}
