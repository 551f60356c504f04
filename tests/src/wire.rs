//! Looking at what crosses the wire: a transport that records every message, and a raw
//! peer for scripting a misbehaving server or client.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tern_mcp::transport::{
    BoxFuture, MessageSink, MessageSource, MessageTransport, TransportError,
};

/// Every message sent through a [`Tap`], in order, parsed.
#[derive(Clone, Default, Debug)]
pub struct Recording(Arc<Mutex<Vec<Value>>>);

impl Recording {
    /// The messages so far.
    pub fn messages(&self) -> Vec<Value> {
        self.0.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// The requests so far (messages with an id and a method).
    pub fn requests(&self) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m.get("method").is_some() && m.get("id").is_some())
            .collect()
    }

    fn push(&self, text: &str) {
        if let (Ok(v), Ok(mut m)) = (serde_json::from_str(text), self.0.lock()) {
            m.push(v);
        }
    }
}

/// Wraps a transport and records what it sends.
pub struct Tap<T> {
    inner: T,
    recording: Recording,
}

impl<T> Tap<T> {
    /// Records what `inner` sends into `recording`.
    pub fn new(inner: T, recording: Recording) -> Self {
        Self { inner, recording }
    }
}

struct TapSink {
    inner: Box<dyn MessageSink>,
    recording: Recording,
}

impl MessageSink for TapSink {
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>> {
        self.recording.push(&message);
        self.inner.send(message)
    }
}

impl<T: MessageTransport> MessageTransport for Tap<T> {
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        let (sink, source) = self.inner.split();
        (
            Box::new(TapSink {
                inner: sink,
                recording: self.recording,
            }),
            source,
        )
    }
}

/// A raw JSON-RPC peer: send JSON, receive JSON.
pub struct RawPeer {
    sink: Box<dyn MessageSink>,
    source: Box<dyn MessageSource>,
}

impl RawPeer {
    /// Uses `transport` raw.
    pub fn new<T: MessageTransport>(transport: T) -> Self {
        let (sink, source) = transport.split();
        Self { sink, source }
    }

    /// Sends a message.
    pub async fn send(&mut self, message: Value) {
        self.sink.send(message.to_string()).await.unwrap();
    }

    /// Sends `text` as one message, exactly as written (JSON or not).
    pub async fn send_text(&mut self, text: &str) {
        self.sink.send(text.to_owned()).await.unwrap();
    }

    /// The next message.
    pub async fn recv(&mut self) -> Value {
        let text = self.source.recv().await.unwrap().unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Sends a request and returns the next message that is its response, skipping
    /// notifications.
    pub async fn call(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(message).await;
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return m;
            }
        }
    }
}

/// The `_meta` of a well-formed 2026-07-28 request.
pub fn meta(capabilities: Value) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}
