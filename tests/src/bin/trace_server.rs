//! A tern server whose spans go to OpenTelemetry (an in-memory exporter), for the Python
//! client's trace-context interop: `traced` does nothing inside its request span;
//! `last_traced_parent` answers `<trace id>-<parent span id>` of the last finished
//! `traced` span, as the exporter recorded it.
//!
//! Usage: trace_server [--addr ADDR]   (prints `listening on URL`)

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tracing_subscriber::layer::SubscriberExt as _;

type Failure = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("trace_server"))),
    )?;
    let mcp = McpServer::new("trace-server", "1");
    mcp.tool("traced")
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("traced") });
    mcp.tool("last_traced_parent")
        .run(move |_: NoArgs, _ctx: ToolContext| {
            let exporter = exporter.clone();
            async move {
                let spans = exporter
                    .get_finished_spans()
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let traced = spans.iter().rev().find(|s| {
                    s.name == "mcp.request"
                        && s.attributes.iter().any(|kv| {
                            kv.key.as_str() == "mcp.target" && kv.value.as_str() == "traced"
                        })
                });
                let span = traced.ok_or_else(|| ToolError::new("no traced span yet"))?;
                Ok(format!(
                    "{}-{}",
                    span.span_context.trace_id(),
                    span.parent_span_id
                ))
            }
        });
    let addr = std::env::args()
        .skip_while(|a| a != "--addr")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    tern_tests::announce_and_serve(&addr, mcp.server()?).await
}
