//! What a body may cost to parse: a message within the byte limit can still hold a
//! million values, a hundred thousand `inputResponses`, or a batch of thousands of
//! requests. The server refuses those on their bytes, before building anything, and its
//! memory stays near the body's own size (measured on a child process's peak RSS).

use crate::http_support;

use std::time::{Duration, Instant};

use serde_json::json;

use http_support::{body, mcp_headers, post, serve_default};

fn fat_arguments(values: usize) -> String {
    // 1.3 M one-digit values make a 2.6 MB body: under the default 4 MiB limit.
    let list = vec!["0"; values].join(",");
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"provision","arguments":{{"name":"x","tags":[{list}]}},"_meta":{}}}}}"#,
        tern_tests::wire::meta(json!({"elicitation": {}}))
    )
}

fn assert_too_complex(raw: &http_support::Raw, what: &str) {
    assert_eq!(
        (raw.status, raw.error_code()),
        (400, Some(-32600)),
        "{raw:?}"
    );
    let message = raw.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(what), "{message}");
    assert!(
        message.len() < 200,
        "the error does not echo the body: {message}"
    );
}

#[tokio::test]
async fn a_body_of_a_million_tiny_values_is_refused_before_it_is_parsed() {
    let addr = serve_default(tern_tests::seed::provision_server().build().unwrap()).await;
    let text = fat_arguments(1_300_000);
    assert!(text.len() > 2_600_000 && text.len() < 4 * 1024 * 1024);
    let started = Instant::now();
    let raw = post(addr, &mcp_headers("tools/call", Some("provision")), &text).await;
    assert_too_complex(&raw, "more than 100000 values");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_hundred_thousand_input_responses_are_refused() {
    let addr = serve_default(tern_tests::seed::provision_server().build().unwrap()).await;
    let answers: serde_json::Map<String, serde_json::Value> = (0..100_000)
        .map(|i| (format!("q{i}"), json!({"action": "accept"})))
        .collect();
    let text = body(
        3,
        "tools/call",
        json!({"name": "provision", "arguments": {"name": "x"}, "inputResponses": answers, "requestState": "s"}),
    );
    let raw = post(addr, &mcp_headers("tools/call", Some("provision")), &text).await;
    assert_too_complex(&raw, "more than 1000 inputResponses");
    // Refused before it is parsed, and still answered to the request that sent it.
    assert_eq!(raw.json()["id"], 3, "{raw:?}");
}

#[tokio::test]
async fn a_batch_is_refused_without_parsing_its_requests() {
    let addr = serve_default(tern_tests::seed::provision_server().build().unwrap()).await;
    let one = body(1, "tools/list", json!({}));
    let batch = format!("[{}]", vec![one; 12_000].join(","));
    let raw = post(addr, &mcp_headers("tools/list", None), &batch).await;
    assert_too_complex_or_batch(&raw);
}

fn assert_too_complex_or_batch(raw: &http_support::Raw) {
    assert_eq!(
        (raw.status, raw.error_code()),
        (400, Some(-32600)),
        "{raw:?}"
    );
    assert!(
        raw.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batches")
    );
}

/// The peak resident memory of process `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    http_support::memory_kib(pid, "VmHWM")
}

#[tokio::test]
async fn refusing_a_fat_body_costs_about_its_own_size_in_memory() {
    let (server, addr) = http_support::provision_child().await;
    let pid = server.id().unwrap();
    // A request first, so the baseline includes a served flow's buffers.
    let warm = post(
        addr,
        &mcp_headers("tools/list", None),
        &body(1, "tools/list", json!({})),
    )
    .await;
    assert_eq!(warm.status, 200, "{warm:?}");
    let before = peak_kib(pid);
    let text = fat_arguments(1_300_000);
    for _ in 0..4 {
        let raw = post(addr, &mcp_headers("tools/call", Some("provision")), &text).await;
        assert_too_complex(&raw, "values");
    }
    let grew = peak_kib(pid).saturating_sub(before);
    let body_kib = text.len() as u64 / 1024;
    println!("a {body_kib} KiB body of 1.3 M values: peak RSS grew {grew} KiB");
    // The body's bytes, once or twice while its frames are joined: nothing more.
    assert!(
        grew < 3 * body_kib,
        "peak RSS grew {grew} KiB for a {body_kib} KiB body"
    );
}

#[tokio::test]
async fn errors_echo_at_most_a_clipped_prefix_of_what_the_peer_sent() {
    let addr = serve_default(tern_tests::seed::provision_server().build().unwrap()).await;
    let huge = "m".repeat(3_000_000);
    // A 3 MB method name in the body that the Mcp-Method header contradicts.
    let raw = post(
        addr,
        &mcp_headers("tools/list", None),
        &body(1, &huge, json!({})),
    )
    .await;
    assert_eq!(
        raw.error_code(),
        Some(-32020),
        "{}",
        &raw.body[..200.min(raw.body.len())]
    );
    assert!(raw.body.len() < 2_000, "a {} byte answer", raw.body.len());
    assert!(
        raw.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(" bytes)")
    );
    // A 3 MB tool name that the Mcp-Name header contradicts.
    let mut headers = mcp_headers("tools/call", Some("provision"));
    http_support::set(&mut headers, "Mcp-Name", Some("other"));
    let raw = post(
        addr,
        &headers,
        &body(2, "tools/call", json!({"name": huge, "arguments": {}})),
    )
    .await;
    assert_eq!(raw.error_code(), Some(-32020));
    assert!(raw.body.len() < 2_000, "a {} byte answer", raw.body.len());
}

/// An `McpServer` takes the same limits as the low-level builder: a server that allows
/// less refuses what the default would take.
#[tokio::test]
async fn an_mcp_server_holds_messages_to_the_limits_it_is_given() {
    let mut limits = tern_mcp::server::ServerLimits::default();
    limits.max_json_values = 50;
    let mcp = tern_mcp::mcp::McpServer::new("strict", "1").limits(limits);
    mcp.tool("provision")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("done") });
    let addr = serve_default(mcp.server().unwrap()).await;
    let headers = mcp_headers("tools/call", Some("provision"));
    let small = post(addr, &headers, &fat_arguments(10)).await;
    assert_eq!(small.status, 200, "{small:?}");
    let larger = post(addr, &headers, &fat_arguments(100)).await;
    assert_too_complex(&larger, "more than 50 values");
}
