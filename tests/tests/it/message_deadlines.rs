//! Every request over a message transport (in memory, stdio, one of the user's own) has
//! a deadline, as over HTTP: 60 s from the request or from the last progress the server
//! reported for it, 10 minutes at most. A request given up on fails saying so, and the
//! server is told it was cancelled. The deadlines are kept by one sweep a connection,
//! asleep while nothing is under way; these tests run on tokio's paused clock.

use std::time::Duration;

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode, Notice};
use tern_mcp::transport::{MessageSink, MessageSource, MessageTransport, memory};
use tern_mcp::types::v2026_07_28::CallToolRequestParams;
use tern_mcp::types::v2026_07_28::method::CallTool;
use tokio::time::Instant;

/// A client connected (2026-07-28, no probe) to a raw peer the test plays.
async fn client_and_peer() -> (Client, Box<dyn MessageSink>, Box<dyn MessageSource>) {
    let (client_end, server_end) = memory::pair();
    let client = Client::builder("deadlines", "1")
        .era(EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    let (sink, source) = server_end.split();
    (client, sink, source)
}

/// The error a call given up on fails with. A deadline that is never kept fails the
/// test (past the 10-minute cap, on the paused clock) rather than hang it.
async fn given_up<T: std::fmt::Debug>(
    call: tokio::task::JoinHandle<tern_mcp::Result<T>>,
) -> String {
    let ended = tokio::time::timeout(Duration::from_secs(700), call).await;
    let result = ended.expect("no deadline was kept").unwrap();
    result.unwrap_err().to_string()
}

async fn next(source: &mut Box<dyn MessageSource>) -> Value {
    let text = source.recv().await.unwrap().unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_request_the_server_never_answers_fails_after_60_s_and_is_cancelled() {
    let (client, _sink, mut source) = client_and_peer().await;
    let started = Instant::now();
    let call = tokio::spawn(async move { client.call_tool("slow", json!({})).await });
    let request = next(&mut source).await;
    assert_eq!(request["method"], "tools/call");
    let error = given_up(call).await;
    assert!(
        error.contains("no answer to tools/call within 60 s"),
        "{error}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(60) && waited <= Duration::from_secs(62),
        "{waited:?}"
    );
    let cancelled = next(&mut source).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

/// Answers the request `request` with progress every 30 s for `reports` reports, then
/// with a result (unless `answer` is false).
async fn report_progress(
    sink: Box<dyn MessageSink>,
    request: Value,
    reports: u32,
    answer: bool,
) -> Box<dyn MessageSink> {
    let token = request["params"]["_meta"]["progressToken"].clone();
    assert!(
        reports == 0 || !token.is_null(),
        "the request asked for no progress: {request}"
    );
    for n in 0..reports {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let progress = json!({
            "jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": n},
        });
        sink.send(progress.to_string()).await.unwrap();
    }
    if answer {
        let result = json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": "done"}], "resultType": "complete"},
        });
        sink.send(result.to_string()).await.unwrap();
    }
    sink
}

/// `tools/call` of `slow`, asking for progress (into `notices`).
async fn call_asking_progress(
    client: Client,
    notices: tokio::sync::mpsc::UnboundedSender<Notice>,
) -> tern_mcp::Result<tern_mcp::types::v2026_07_28::CallToolOutcome> {
    let mut params = CallToolRequestParams::new("slow");
    params.arguments = json!({}).as_object().map(Into::into);
    client
        .request_with_notices::<CallTool>(params, notices)
        .await
}

#[tokio::test(start_paused = true)]
async fn progress_pushes_the_deadline_back() {
    let (client, sink, mut source) = client_and_peer().await;
    let (tx, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let call = tokio::spawn(call_asking_progress(client, tx));
    let request = next(&mut source).await;
    // Four minutes of progress, 30 s apart: past 60 s four times over.
    let _sink = report_progress(sink, request, 8, true).await;
    assert!(call.await.unwrap().is_ok());
    let mut heard = 0;
    while let Ok(notice) = notices.try_recv() {
        if matches!(notice, Notice::Progress(_)) {
            heard += 1;
        }
    }
    assert_eq!(heard, 8);
}

#[tokio::test(start_paused = true)]
async fn progress_keeps_a_request_no_longer_than_ten_minutes() {
    let (client, sink, mut source) = client_and_peer().await;
    let (tx, _notices) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let call = tokio::spawn(call_asking_progress(client, tx));
    let request = next(&mut source).await;
    let reporter = tokio::spawn(report_progress(sink, request, 40, false));
    let error = given_up(call).await;
    assert!(error.contains("within 600 s"), "{error}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(600) && waited <= Duration::from_secs(602),
        "{waited:?}"
    );
    reporter.abort();
}

#[tokio::test(start_paused = true)]
async fn after_an_idle_hour_a_request_is_answered_and_the_next_still_has_its_deadline() {
    // The sweep sleeps while nothing is under way and must wake for what comes next.
    let (client, sink, mut source) = client_and_peer().await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let answered = client.clone();
    let call = tokio::spawn(async move { answered.call_tool("quick", json!({})).await });
    let request = next(&mut source).await;
    let _sink = report_progress(sink, request, 0, true).await;
    assert!(call.await.unwrap().is_ok());
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let started = Instant::now();
    let call = tokio::spawn(async move { client.call_tool("slow", json!({})).await });
    let _request = next(&mut source).await;
    let error = given_up(call).await;
    assert!(error.contains("within 60 s"), "{error}");
    assert!(
        started.elapsed() <= Duration::from_secs(62),
        "{:?}",
        started.elapsed()
    );
}
