//! The gateway reads its upstreams as inputs (#60): a list past an upstream's budget
//! (entries or bytes: 200,000 tools, 50 MB of schemas) is refused naming the upstream
//! and the budget while the other upstreams are still served; a round of more questions
//! than a tern server takes back, or a `requestState` too large to seal, is refused the
//! same way instead of relayed or failed as a bare "Internal error"; the HTTP client's
//! tool headers are replaced by each new list, never grown by renamed tools. Each
//! upstream is a raw socket server here, serving text no SDK would. The `#[ignore]`d
//! `peak_rss_*` tests measure the gateway's peak RSS growth for the issue's four
//! inputs (run one at a time, each in a process of its own).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::proxy::UpstreamBudgets;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::method::{CallTool, ListTools};
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, Outcome};

mod raw;

pub(crate) use raw::{
    Answers, Seen, gateway_client, lister, raw_upstream, round, tool_list, upstream,
};

/// The JSON-RPC error a failed request answered with.
fn rpc_error(error: Error) -> RpcError {
    match error {
        Error::Rpc(e) => *e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn budgets(change: impl FnOnce(&mut UpstreamBudgets)) -> UpstreamBudgets {
    tern_tests::tuned(change)
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name)
}

/// The names of the tools the gateway lists first.
async fn first_page(client: &Client) -> Result<Vec<String>, Error> {
    let page = client.list::<ListTools>(None).await?;
    Ok(page.tools.into_iter().map(|t| t.name).collect())
}

#[tokio::test]
async fn a_list_of_two_hundred_thousand_tools_is_refused_at_the_default_budget() {
    let big = lister("big", tool_list("t", 200_000, 0), None).await;
    let client = gateway_client(vec![upstream(&big, Some("big"), Default::default()).await]).await;
    let error = rpc_error(first_page(&client).await.unwrap_err());
    assert_eq!(error.code, -32603);
    assert!(
        error
            .message
            .starts_with(r#"upstream "big" answered tools/list with more than"#),
        "{error:?}"
    );
    assert!(error.message.ends_with("(its budget)"), "{error:?}");
    assert_eq!(error.data.as_ref().unwrap()["upstream"], "big");
}

#[tokio::test]
async fn a_list_past_its_entry_budget_is_refused_naming_it_and_the_others_are_still_served() {
    let big = lister("big", tool_list("t", 2_001, 0), None).await;
    let small = lister(
        "small",
        tool_list("s", 3, 0),
        Some(r#"{"content":[]}"#.into()),
    )
    .await;
    let tight = budgets(|b| b.list_entries = 2_000);
    let alone = gateway_client(vec![upstream(&big, Some("big"), tight).await]).await;
    let error = rpc_error(first_page(&alone).await.unwrap_err());
    assert_eq!(
        error.message,
        r#"upstream "big" answered tools/list with more than 2000 tools (its budget)"#
    );
    assert_eq!(error.data.unwrap()["budget"], "listEntries");

    let both = gateway_client(vec![
        upstream(&big, Some("big"), tight).await,
        upstream(&small, Some("small"), Default::default()).await,
    ])
    .await;
    assert_eq!(
        first_page(&both).await.unwrap(),
        ["small.s0", "small.s1", "small.s2"]
    );
    both.request::<CallTool>(call("small.s1")).await.unwrap();
}

#[tokio::test]
async fn a_list_of_large_schemas_past_its_byte_budget_is_refused_before_it_is_read() {
    // The issue's 50 MB list (25,000 tools of 80-property schemas), a tenth of it
    // against a tenth of the default byte budget.
    let text = tool_list("t", 2_500, 80);
    assert!(text.len() > 4_000_000, "{}", text.len());
    let heavy = lister("heavy", text, None).await;
    let tight = budgets(|b| b.list_bytes = 800 * 1024);
    let client = gateway_client(vec![upstream(&heavy, Some("heavy"), tight).await]).await;
    let error = rpc_error(first_page(&client).await.unwrap_err());
    assert_eq!(
        error.message,
        r#"upstream "heavy" answered tools/list with more than 819200 bytes (its budget)"#
    );
}

#[tokio::test]
async fn a_list_within_its_budgets_is_paged_from_the_kept_list() {
    let many = lister("many", tool_list("t", 250, 2), None).await;
    let client = gateway_client(vec![upstream(&many, None, Default::default()).await]).await;
    let mut names = Vec::new();
    let mut cursor = None;
    for _ in 0..10 {
        let page = client.list::<ListTools>(cursor.take()).await.unwrap();
        assert!(page.tools.len() <= 100);
        names.extend(page.tools.into_iter().map(|t| t.name));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let expected: Vec<String> = (0..250).map(|i| format!("t{i}")).collect();
    assert_eq!(names, expected);
}

#[tokio::test]
async fn a_round_of_more_questions_than_a_tern_server_takes_back_is_refused() {
    let greedy = lister("greedy", tool_list("ask", 1, 0), Some(round(1_001, 8))).await;
    // Configured past what a tern server takes back: held to it.
    let generous = budgets(|b| b.questions = 1_000_000);
    let client = gateway_client(vec![upstream(&greedy, Some("greedy"), generous).await]).await;
    let error = rpc_error(
        client
            .request::<CallTool>(call("greedy.ask0"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        error.message,
        r#"upstream "greedy" answered tools/call with 1001 questions in one round, more than 1000 (its budget)"#
    );
    assert_eq!(error.data.unwrap()["budget"], "questions");
}

#[tokio::test]
async fn a_round_within_a_configured_question_budget_is_relayed_and_past_it_refused() {
    let four = lister("four", tool_list("ask", 1, 0), Some(round(4, 8))).await;
    four_questions_relayed_under_4_and_refused_under_3(&four, "ask0").await;
}

#[tokio::test]
async fn a_round_whose_member_names_are_escaped_is_counted_all_the_same() {
    // `\u0052` is `R`: the same members to any JSON reader, but not to a search for
    // their plain spelling.
    let escaped = round(4, 8)
        .replace(r#""inputRequests""#, r#""input\u0052equests""#)
        .replace(r#""requestState""#, r#""request\u0053tate""#);
    let four = lister("escaped", tool_list("ask", 1, 0), Some(escaped)).await;
    four_questions_relayed_under_4_and_refused_under_3(&four, "ask0").await;
}

/// A gateway over the upstream at `four` (whose `tool` asks four questions in one
/// round) twice: `loose` (a budget of 4 questions) relays the round, `tight` (3)
/// refuses it naming the upstream and the budget.
async fn four_questions_relayed_under_4_and_refused_under_3(four: &str, tool: &str) {
    let client = gateway_client(vec![
        upstream(four, Some("loose"), budgets(|b| b.questions = 4)).await,
        upstream(four, Some("tight"), budgets(|b| b.questions = 3)).await,
    ])
    .await;
    let relayed = client
        .request::<CallTool>(call(&format!("loose.{tool}")))
        .await
        .unwrap();
    let Outcome::InputRequired(asked) = relayed else {
        panic!("expected the upstream's round, got {relayed:?}");
    };
    assert_eq!(asked.input_requests.unwrap().len(), 4);
    let error = rpc_error(
        client
            .request::<CallTool>(call(&format!("tight.{tool}")))
            .await
            .unwrap_err(),
    );
    assert!(
        error.message.starts_with(
            r#"upstream "tight" answered tools/call with 4 questions in one round, more than 3"#
        ),
        "{error:?}"
    );
    assert_eq!(error.data.unwrap()["budget"], "questions");
}

#[tokio::test]
async fn an_upstream_state_too_large_to_seal_is_refused_naming_the_upstream() {
    for (who, size) in [("hundred-k", 100 * 1024), ("ten-m", 10 * 1024 * 1024)] {
        let fat = lister(who, tool_list("ask", 1, 0), Some(round(1, size))).await;
        let client =
            gateway_client(vec![upstream(&fat, Some("fat"), Default::default()).await]).await;
        let error = rpc_error(
            client
                .request::<CallTool>(call("fat.ask0"))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            error.message,
            format!(
                r#"upstream "fat" answered tools/call with a requestState of {size} bytes, more than 16384 (its budget)"#
            )
        );
        assert_eq!(error.data.unwrap()["budget"], "stateBytes");
    }
}

/// A `tools/list` result of the tools called `names`, each with `region` annotated to
/// go as `Mcp-Param-Region`.
fn annotated_list(names: impl IntoIterator<Item = String>) -> String {
    let tools: Vec<Value> = names
        .into_iter()
        .map(|name| {
            json!({"name": name, "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}})
        })
        .collect();
    json!({ "tools": tools }).to_string()
}

/// A raw server whose `tools/list` answers each list in turn (the last one again after
/// them), recording every request; a client of it, and what it saw.
async fn listing_server(lists: Vec<String>) -> (Client, Arc<Mutex<Vec<Seen>>>) {
    let lists: Vec<Arc<str>> = lists.into_iter().map(Into::into).collect();
    let served = AtomicUsize::new(0);
    let answers: Answers = Arc::new(move |method, _| match method {
        "tools/list" => {
            let at = served.fetch_add(1, Ordering::SeqCst).min(lists.len() - 1);
            Some(Arc::clone(&lists[at]))
        }
        "tools/call" => Some(r#"{"content":[]}"#.into()),
        _ => None,
    });
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let url = raw_upstream("renamer", answers, Arc::clone(&seen)).await;
    let transport = HttpClientTransport::builder(url).build().unwrap();
    let client = Client::builder("test-client", "1.0")
        .era(EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    (client, seen)
}

/// The `Mcp-Param-*` headers of the last `tools/call` the raw server saw.
fn last_call_headers(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    let seen = seen.lock().unwrap();
    let call = seen
        .iter()
        .rev()
        .find(|s| s.method == "tools/call")
        .unwrap();
    call.param_headers.clone()
}

async fn call_with_region(client: &Client, tool: &str) {
    let mut params = call(tool);
    params.arguments = Some(
        tern_mcp::types::v2026_07_28::ToolArguments::from_value(&json!({"region": "eu"})).unwrap(),
    );
    client.request::<CallTool>(params).await.unwrap();
}

#[tokio::test]
async fn the_clients_tool_headers_are_replaced_by_each_new_list_never_grown() {
    let (client, seen) = listing_server(vec![
        annotated_list(["old".to_owned()]),
        annotated_list(["new".to_owned()]),
    ])
    .await;
    client.list::<ListTools>(None).await.unwrap();
    call_with_region(&client, "old").await;
    assert_eq!(last_call_headers(&seen), ["mcp-param-region: eu"]);
    // The next list renames the tool: what the first taught is gone.
    client.list::<ListTools>(None).await.unwrap();
    call_with_region(&client, "old").await;
    assert!(last_call_headers(&seen).is_empty());
    call_with_region(&client, "new").await;
    assert_eq!(last_call_headers(&seen), ["mcp-param-region: eu"]);
}

#[tokio::test]
async fn the_clients_tool_headers_keep_at_most_4096_tools() {
    let names = (0..4_097).map(|i| format!("t{i}"));
    let (client, seen) = listing_server(vec![annotated_list(names)]).await;
    client.list::<ListTools>(None).await.unwrap();
    call_with_region(&client, "t4095").await;
    assert_eq!(last_call_headers(&seen), ["mcp-param-region: eu"]);
    call_with_region(&client, "t4096").await;
    assert!(last_call_headers(&seen).is_empty());
}

// ---- Peak RSS growth (#[ignore]d: run each alone, in a process of its own) ----------

/// A line of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Runs `scenario` after `setup` (whose memory is not counted): the peak RSS growth in
/// MiB over the RSS before it (the peak reset first, where the kernel allows), printed.
async fn peak_growth<S, F>(what: &str, scenario: S) -> f64
where
    S: FnOnce() -> F,
    F: std::future::Future<Output = String>,
{
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmRSS:");
    let hwm_before = status_kib("VmHWM:");
    let outcome = scenario().await;
    let peak = status_kib("VmHWM:");
    let growth = peak.saturating_sub(before) as f64 / 1024.0;
    println!(
        "{what}: peak RSS growth {growth:.1} MiB (VmRSS before {before} kB, VmHWM before {hwm_before} kB, after {peak} kB): {outcome}"
    );
    growth
}

fn outcome<T>(result: Result<T, Error>) -> String {
    match result {
        Ok(_) => "served".to_owned(),
        Err(e) => format!("refused: {e}"),
    }
}

#[tokio::test]
#[ignore = "measures peak RSS: run alone"]
async fn peak_rss_a_list_of_two_hundred_thousand_tools() {
    let text = tool_list("t", 200_000, 0);
    let size = text.len();
    let big = lister("big", text, None).await;
    // Past the default byte budget: refused. Within raised ones: served, kept as text.
    let raised = budgets(|b| {
        b.list_entries = 250_000;
        b.list_bytes = 16 * 1024 * 1024;
    });
    for (label, b) in [
        ("default budgets", UpstreamBudgets::default()),
        ("budgets raised", raised),
    ] {
        let client = gateway_client(vec![upstream(&big, Some("big"), b).await]).await;
        peak_growth(
            &format!("200,000 tools ({size} bytes), {label}"),
            || async { outcome(first_page(&client).await) },
        )
        .await;
    }
}

#[tokio::test]
#[ignore = "measures peak RSS: run alone"]
async fn peak_rss_a_fifty_megabyte_list() {
    // The issue's list, and the largest of its kind within the default byte budget.
    for tools in [25_000, 4_100] {
        let text = tool_list("t", tools, 80);
        let size = text.len();
        let heavy = lister("heavy", text, None).await;
        let upstream = upstream(&heavy, Some("heavy"), Default::default()).await;
        let client = gateway_client(vec![upstream]).await;
        peak_growth(
            &format!("{tools} tools of 80 properties ({size} bytes)"),
            || async { outcome(first_page(&client).await) },
        )
        .await;
    }
}

#[tokio::test]
#[ignore = "measures peak RSS: run alone"]
async fn peak_rss_forty_thousand_renamed_tools_twenty_times() {
    let lists: Vec<Arc<str>> = (0..20)
        .map(|round| tool_list(&format!("r{round}_"), 40_000, 0).into())
        .collect();
    let served = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&served);
    let answers: Answers = Arc::new(move |method, _| {
        let at = counter.fetch_add(1, Ordering::SeqCst) % 20;
        (method == "tools/list").then(|| Arc::clone(&lists[at]))
    });
    let renamer = raw_upstream("renamer", answers, Arc::default()).await;
    // Past the default entry budget: each list is refused. Within a raised one: each
    // is served, then replaced by the next.
    for (label, b) in [
        ("default budgets", UpstreamBudgets::default()),
        (
            "list_entries raised to 50,000",
            budgets(|b| b.list_entries = 50_000),
        ),
    ] {
        let client = gateway_client(vec![upstream(&renamer, Some("renamer"), b).await]).await;
        peak_growth(
            &format!("40,000 renamed tools x 20 lists, {label}"),
            || async {
                let mut last = String::new();
                for _ in 0..20 {
                    last = outcome(first_page(&client).await);
                }
                last
            },
        )
        .await;
    }
}

#[tokio::test]
#[ignore = "measures peak RSS: run alone"]
async fn peak_rss_a_round_of_a_hundred_thousand_questions() {
    let text = round(100_000, 8);
    let size = text.len();
    let greedy = lister("greedy", tool_list("ask", 1, 0), Some(text)).await;
    let client = gateway_client(vec![
        upstream(&greedy, Some("greedy"), Default::default()).await,
    ])
    .await;
    peak_growth(&format!("100,000 questions ({size} bytes)"), || async {
        outcome(client.request::<CallTool>(call("greedy.ask0")).await)
    })
    .await;
}

/// A 2025-11-25 upstream, scripted: its `tools/call` asks `questions` questions at
/// once on the call's stream, then keeps the stream open without an answer.
async fn asking_session_upstream(questions: usize) -> String {
    use crate::gateway_holds::{Posted, accepted, in_session, json_response};
    use axum::body::Body;
    use axum::extract::{Request, State};
    use axum::response::Response;
    async fn post(State(state): State<(Arc<AtomicUsize>, usize)>, request: Request) -> Response {
        let (sessions, questions) = state;
        let Posted { method, id, .. } = match in_session(&sessions, request).await {
            Ok(posted) => posted,
            Err(answered) => return answered,
        };
        match method.as_str() {
            "tools/list" => json_response(
                200,
                &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "ask", "inputSchema": {"type": "object"}}]}}),
            ),
            "tools/call" => {
                let mut asks = String::new();
                for i in 0..questions {
                    let ask = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "elicitation/create",
                        "params": {"message": format!("Question {i}?"), "requestedSchema":
                            {"type": "object", "properties": {"a": {"type": "string"}}}}});
                    asks.push_str(&format!("event: message\ndata: {ask}\n\n"));
                }
                let stream =
                    futures_util::stream::once(
                        async move { Ok::<_, std::convert::Infallible>(asks) },
                    )
                    .chain(futures_util::stream::pending());
                Response::builder()
                    .status(200)
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(stream))
                    .unwrap()
            }
            _ => accepted(),
        }
    }
    use futures_util::StreamExt as _;
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post))
        .with_state((Arc::new(AtomicUsize::new(0)), questions));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    crate::http_support::url(addr)
}

#[tokio::test]
async fn a_session_upstreams_round_within_its_question_budget_is_relayed_and_past_it_refused() {
    let four = asking_session_upstream(4).await;
    four_questions_relayed_under_4_and_refused_under_3(&four, "ask").await;
}
