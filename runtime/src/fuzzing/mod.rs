//! Entry points for the fuzz targets in `tests/fuzz` (feature `fuzzing`, not for use):
//! the readers that a peer's bytes reach first. Each must be total: any input gets an
//! answer or an error, never a panic, and in time and memory bounded by the input.

use std::sync::OnceLock;

pub mod h1;
mod oracle;
mod replay;

use serde_json::value::RawValue;

use crate::jsonrpc::{Incoming, JsonLimits, RawResponse, Received, receive};
use crate::protocol::{MetaRead, PROTOCOL_VERSION};

/// A message as every transport reads it: the complexity limits, then the one-pass
/// request reader (as a server reads, and strictly) and the tree reader behind it, then
/// the client's response reader.
pub fn read_message(bytes: &[u8]) {
    let _ = JsonLimits::default().check(bytes);
    let _ = Incoming::read_within(bytes, &JsonLimits::default());
    let _ = Incoming::read(bytes);
    if let Ok(Received::Response(RawResponse {
        result: Ok(raw), ..
    })) = receive(bytes)
    {
        // A result taken as closing its message, read as taken and then again.
        let _ = raw.decode::<serde_json::Value>();
        let _ = raw.get();
    }
}

/// A request's `_meta`, as the serving pipeline reads it (from its text, and typed).
pub fn read_meta(text: &str) {
    if let Ok(raw) = serde_json::from_str::<&RawValue>(text) {
        let read = MetaRead::of(Some(raw.get()), &[PROTOCOL_VERSION]);
        let _ = read.meta.map(|meta| meta.protocol_version);
    }
}

/// An SSE body fed to the client's reader in the chunks given.
pub fn read_sse(chunks: &[&[u8]]) {
    let mut reader = crate::transport::http::sse::SseReader::new(1 << 20);
    for chunk in chunks {
        if reader.feed(chunk).is_err() {
            return;
        }
    }
}

/// One POST through the HTTP endpoint's checks (Host and Origin, the body, JSON-RPC,
/// repeated and mismatched routing headers, `Mcp-Param-*` against annotated arguments)
/// and, if they pass, the handler. Returns the HTTP status.
#[cfg(feature = "http-server")]
pub fn serve_post(headers: &[(&[u8], &[u8])], body: &[u8]) -> u16 {
    use http::{HeaderMap, HeaderName, HeaderValue};
    type Endpoint = (tokio::runtime::Runtime, crate::http::Fuzzed);
    static ENDPOINT: OnceLock<Option<Endpoint>> = OnceLock::new();
    let Some((runtime, endpoint)) = ENDPOINT.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        Some((runtime, crate::http::Fuzzed::new()?))
    }) else {
        return 0;
    };
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            map.append(name, value);
        }
    }
    runtime.block_on(endpoint.post(&map, body.to_vec()))
}
