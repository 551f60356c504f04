//! The client's extension seam, the twin of the server's: what an extension declares
//! under `capabilities.extensions` of every request, and the result of a type of its
//! own a server may give a request instead of the method's (the tasks extension's
//! `resultType: "task"`), which the extension follows to the method's result. The
//! methods an extension adds are called with [`Client::request`], each a
//! [`Request`](crate::types::rpc::Request) marker, generated from the extension's
//! schema or written by its author. The client knows no extension: each plugs in from
//! above ([`tasks::ClientTasks`](crate::tasks::ClientTasks) is one).
//!
//! ```
//! use serde_json::{Map, Value};
//! use tern_mcp::client::{Client, ClientExtension};
//!
//! /// An extension a client only says it speaks.
//! struct Beacon;
//!
//! impl ClientExtension for Beacon {
//!     fn id(&self) -> &'static str {
//!         "com.example/beacon"
//!     }
//! }
//!
//! let builder = Client::builder("host", "1.0.0").extension(Beacon);
//! # let _ = builder;
//! ```

use std::sync::Arc;

use serde_json::{Map, Value};

use super::Client;
use crate::Error;
use crate::jsonrpc::RawResult;
use crate::transport::BoxFuture;

/// An extension a client speaks. Declared once, on
/// [`ClientBuilder::extension`](super::ClientBuilder::extension); every
/// method but [`id`](Self::id) has a default that does nothing.
pub trait ClientExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &'static str;

    /// The settings declared under the identifier (an empty object by default).
    fn settings(&self) -> Map<String, Value> {
        Map::new()
    }

    /// The `resultType` this extension lets a server answer with instead of the
    /// method's result (for a method whose marker says it may be:
    /// [`MayRequireInput::MAY_BECOME_TASK`](crate::types::rpc::MayRequireInput::MAY_BECOME_TASK)),
    /// if any.
    fn result_type(&self) -> Option<&'static str> {
        None
    }

    /// Follows such a result to the method's result, as JSON: what
    /// [`Client::call_tool`] returns once the extension's work is done. Called only for
    /// a result of [`result_type`](Self::result_type).
    fn follow(&self, deferred: Deferred) -> BoxFuture<'static, crate::Result<Value>> {
        Box::pin(async move { Err(deferred.unknown()) })
    }
}

/// A result of an extension's own type, given for a request instead of its method's
/// result (see [`ClientExtension::result_type`]): followed by the extension through the
/// automatic loop, or handed over as it is by the manual one
/// ([`Step::Deferred`](super::Step::Deferred)).
pub struct Deferred {
    client: Client,
    method: &'static str,
    result: RawResult,
    extension: Arc<dyn ClientExtension>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("method", &self.method)
            .field("extension", &self.extension.id())
            .field("result", &self.result.get())
            .finish()
    }
}

impl Deferred {
    /// The client the result came to.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The method of the request it answers.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The extension whose type it is.
    pub fn extension(&self) -> &'static str {
        self.extension.id()
    }

    /// The result, as the server wrote it.
    pub fn result(&self) -> &str {
        self.result.get()
    }

    /// Has the extension follow it to the method's result, as JSON.
    pub async fn follow(self) -> crate::Result<Value> {
        let extension = self.extension.clone();
        extension.follow(self).await
    }

    /// The refusal of a result the client cannot read.
    pub(crate) fn unknown(&self) -> Error {
        let result_type = super::result_type_in(self.result.get()).unwrap_or_default();
        Error::Protocol(crate::ProtocolError::UnknownResultType(result_type))
    }

    /// `result`, a result of `result_type` for `method`, as the client's extension of
    /// that type has it; `None` when no extension declared gives that type.
    pub(super) fn of(
        client: &Client,
        method: &'static str,
        result_type: &str,
        result: RawResult,
    ) -> Option<Self> {
        let extension = client
            .inner
            .extensions
            .iter()
            .find(|e| e.result_type() == Some(result_type))?;
        Some(Self {
            client: client.clone(),
            method,
            result,
            extension: extension.clone(),
        })
    }
}

/// `value`, the result an extension followed a request of `method` to, read as the
/// method's complete result: a `resultType` other than `complete` is refused (a
/// question or another deferral is not an end), and one left out is taken for
/// `complete`, as a direct result's is.
pub(crate) fn read_followed<T: serde::de::DeserializeOwned>(
    method: &'static str,
    mut value: Value,
) -> crate::Result<T> {
    match value.get("resultType") {
        None => {}
        Some(Value::String(t)) if t == "complete" => {}
        Some(other) => {
            let t = other
                .as_str()
                .map_or_else(|| other.to_string(), str::to_owned);
            return Err(Error::Protocol(crate::ProtocolError::UnknownResultType(t)));
        }
    }
    super::complete_when_unsaid(&mut value);
    serde_json::from_value(value)
        .map_err(|source| Error::Protocol(crate::ProtocolError::Decode { method, source }))
}
