//! The server's span per request, over real HTTP: its parent the `traceparent` the
//! client's span sent in `_meta` (W3C trace context, feature `otel`), its round and
//! target recorded, and the reason a state was refused recorded on it, never the token.
//!
//! A binary of its own: its one subscriber is the process's global one, set before any
//! span, so no test races another for the callsites' interest.

use std::sync::{Arc, OnceLock};

use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, Outcome as CallOutcome, method};
use tern_tests::stepper;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// The exporter every closed span of this process goes to.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("tern-tests")));
        tracing::subscriber::set_global_default(subscriber).unwrap();
        exporter
    })
}

/// A client of `steps` served over HTTP on a loopback port.
async fn client_of_steps(restart_on_rejected_state: bool) -> Client {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = HttpServer::new(stepper().server().unwrap());
    tokio::spawn(http.serve(listener, std::future::pending()));
    Client::builder("traces", "1")
        .era(EraMode::Stateless)
        .restart_on_rejected_state(restart_on_rejected_state)
        .on_elicitation(|_ctx, _p| async { Ok(tern_mcp::ask::accept([("go", true)])) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(
            HttpClientTransport::builder(&url).build().unwrap(),
        ))
        .await
        .unwrap()
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

#[tokio::test]
async fn the_servers_span_is_a_child_of_the_client_span_that_sent_the_traceparent() {
    let exporter = exporter();
    let c = client_of_steps(true).await;
    let outer = tracing::info_span!("host.turn");
    let trace_id = outer.context().span().span_context().trace_id();
    c.call_tool("steps", json!({}))
        .instrument(outer.clone())
        .await
        .unwrap();
    drop(outer);

    let spans = exporter.get_finished_spans().unwrap();
    // This test's trace only: the other test's spans share the exporter.
    let spans: Vec<SpanData> = spans
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace_id)
        .collect();
    let calls: Vec<&SpanData> = spans.iter().filter(|s| s.name == "mcp.call").collect();
    let [client_call] = calls.as_slice() else {
        panic!(
            "one client call span: {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
    };
    let served: Vec<&SpanData> = spans
        .iter()
        .filter(|s| {
            s.name == "mcp.request" && attribute(s, "rpc.method").as_deref() == Some("tools/call")
        })
        .collect();
    assert_eq!(served.len(), 3, "one server span per round");
    for (round, span) in served.iter().enumerate() {
        assert!(span.parent_span_is_remote);
        // Sent from inside the client's call span: the parent is that span.
        assert_eq!(span.parent_span_id, client_call.span_context.span_id());
        assert_eq!(attribute(span, "mcp.target").as_deref(), Some("steps"));
        assert_eq!(
            attribute(span, "mcp.round"),
            Some((round + 1).to_string()),
            "round {round}"
        );
    }
}

#[tokio::test]
async fn a_refused_state_is_recorded_on_the_span_with_its_reason_never_the_token() {
    let exporter = exporter();
    let strict = client_of_steps(false).await;
    let CallOutcome::InputRequired(asked) = strict
        .request::<method::CallTool>(CallToolRequestParams::new("steps"))
        .await
        .unwrap()
    else {
        panic!("steps asks first");
    };
    let mut params = CallToolRequestParams::new("steps");
    // Another tool's token: it opens, but was minted for another request.
    let token = asked.request_state.unwrap();
    params.request_state = Some(token.clone());
    params.name = "other".into();
    let _ = strict
        .request::<method::CallTool>(params)
        .await
        .unwrap_err();

    let spans = exporter.get_finished_spans().unwrap();
    let refused = spans
        .iter()
        .find(|s| s.name == "mcp.request" && attribute(s, "mcp.state_rejected").is_some())
        .unwrap_or_else(|| {
            panic!(
                "no span recording the refusal: {:#?}",
                spans
                    .iter()
                    .map(|s| (&s.name, &s.attributes))
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(
        attribute(refused, "mcp.outcome").as_deref(),
        Some("RejectedState")
    );
    let everything: String = spans
        .iter()
        .flat_map(|s| s.attributes.iter().map(|kv| kv.value.to_string()))
        .collect();
    assert!(!everything.contains(&token), "the token is never recorded");
}
