//! Single-use state: a `transfer` tool whose side effect (a counter) must happen at most
//! once. It asks for an amount, then for a confirmation, then transfers. A replayed
//! round is refused with the fixed error; a retry of the last round after its response
//! was lost gets the same result, and the transfer is not made twice: in one process
//! with the default store, and across two instances sharing keys and one Redis.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::fleet::RedisReplayStore;
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{McpServer, ToolContext, ToolError};
use tern_mcp::seal::{RequestStateSecurity, parse_secret};
use tern_mcp::server::replay::ReplayStore;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitValue, InputResponse,
    InputResponses, Outcome, method,
};

const KEY: &str = "6b1f3c2a9d8e7f60112233445566778899aabbccddeeff00112233445566778a";
const FIXED: &str = "Invalid or expired requestState";

fn answered(ctx: &ToolContext, key: &str) -> Option<ElicitValue> {
    let result = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    result.content?.remove(key)
}

/// The `transfer` tool on a server that seals with the shared key, recording
/// redemptions in `store` (the default store when `None`).
fn transfer_server(transfers: Arc<AtomicUsize>, store: Option<Arc<dyn ReplayStore>>) -> McpServer {
    let mut mcp = McpServer::new("bank", "1.0")
        .seal(RequestStateSecurity::keys([parse_secret(KEY).unwrap()]).unwrap());
    if let Some(store) = store {
        mcp = mcp.replay_store(store);
    }
    mcp.tool("transfer").single_use().run(
        move |_args: serde_json::Map<String, serde_json::Value>, ctx: ToolContext| {
            let transfers = Arc::clone(&transfers);
            async move {
                let form = |message: &str, field: &str, kind: &str| {
                    ask::elicit_form(
                        message,
                        json!({"type": "object", "properties": {field: {"type": kind}}}),
                    )
                };
                let outcome: CallToolOutcome = match ctx.request_state() {
                    None => ask::input_required(
                        [("amount", form("How much?", "amount", "number")?)],
                        Some("asked=amount"),
                    )
                    .into(),
                    Some("asked=amount") => {
                        let Some(ElicitValue::Number(amount)) = answered(&ctx, "amount") else {
                            return Err(ToolError::new("no amount"));
                        };
                        let state = format!("amount={amount}");
                        ask::input_required(
                            [("confirm", form("Sure?", "confirm", "boolean")?)],
                            Some(&state),
                        )
                        .into()
                    }
                    Some(other) => {
                        let amount = other
                            .strip_prefix("amount=")
                            .ok_or_else(|| ToolError::new("bad state"))?;
                        // The side effect: at most once per flow.
                        let n = transfers.fetch_add(1, Ordering::SeqCst) + 1;
                        CallToolResult::new(vec![ask::text(format!("transfer #{n}: {amount}"))])
                            .into()
                    }
                };
                Ok(outcome)
            }
        },
    );
    mcp
}

async fn serve(mcp: &McpServer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(mcp.server().unwrap()).serve(listener, std::future::pending()));
    addr
}

async fn client(addr: SocketAddr) -> Client {
    let transport = HttpClientTransport::builder(format!("http://{addr}/mcp"))
        .build()
        .unwrap();
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    Client::builder("payer", "1")
        .capabilities(capabilities)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

/// The params of the round after `asked`, answering its one question with `value`.
fn next_round(
    mut params: CallToolRequestParams,
    outcome: Outcome<CallToolResult>,
    value: impl Into<ElicitValue>,
) -> CallToolRequestParams {
    let Outcome::InputRequired(asked) = outcome else {
        panic!("expected input_required");
    };
    let key = asked
        .input_requests
        .as_ref()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut responses = InputResponses::new();
    let answer = ask::accept([(key.clone(), value.into())]);
    responses
        .insert(key, InputResponse::Elicit(answer))
        .unwrap();
    params.input_responses = Some(responses);
    params.request_state = asked.request_state;
    params
}

fn text(outcome: Outcome<CallToolResult>) -> String {
    let Outcome::Complete(result) = outcome else {
        panic!("expected a complete result");
    };
    tern_tests::text_of(&result)
}

/// The flow, its rounds sent to `first`, `second`, then `first` and `second` again.
async fn flow_across(first: &Client, second: &Client, transfers: &AtomicUsize) {
    let start = CallToolRequestParams::new("transfer");
    let r1 = first
        .request::<method::CallTool>(start.clone())
        .await
        .unwrap();
    let round2 = next_round(start, r1, 25.0);
    let r2 = second
        .request::<method::CallTool>(round2.clone())
        .await
        .unwrap();
    // The second round's token, replayed: refused with the fixed error.
    let replayed = first.request::<method::CallTool>(round2).await.unwrap_err();
    assert!(replayed.to_string().contains(FIXED), "{replayed}");
    let round3 = next_round(CallToolRequestParams::new("transfer"), r2, true);
    let done = text(
        first
            .request::<method::CallTool>(round3.clone())
            .await
            .unwrap(),
    );
    assert_eq!(done, "transfer #1: 25");
    // The response was lost; the client sends the last round again, elsewhere.
    let again = text(second.request::<method::CallTool>(round3).await.unwrap());
    assert_eq!(again, done, "the stored result, not a second transfer");
    assert_eq!(transfers.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_single_use_tool_completes_once_refuses_a_replay_and_answers_a_lost_response_again() {
    let transfers = Arc::new(AtomicUsize::new(0));
    let server = transfer_server(Arc::clone(&transfers), None);
    let addr = serve(&server).await;
    let c = client(addr).await;
    flow_across(&c, &c, &transfers).await;
}

async fn connect(url: &str) -> RedisReplayStore {
    RedisReplayStore::connect(url)
        .await
        .expect("redis-server answers")
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn across_two_instances_on_one_redis_a_single_use_flow_completes_once() {
    let redis = crate::redis_support::redis("single-use").await;
    single_use_is_shared(&redis.url).await;
}

/// Two instances recording single-use state on the Redis (or Redis Cluster) at `url`.
pub(crate) async fn single_use_is_shared(url: &str) {
    let transfers = Arc::new(AtomicUsize::new(0));
    let store_a: Arc<dyn ReplayStore> = Arc::new(connect(url).await);
    let store_b: Arc<dyn ReplayStore> = Arc::new(connect(url).await);
    let a = transfer_server(Arc::clone(&transfers), Some(store_a));
    let b = transfer_server(Arc::clone(&transfers), Some(store_b));
    let (a, b) = (client(serve(&a).await).await, client(serve(&b).await).await);
    flow_across(&a, &b, &transfers).await;
    // And again: a fresh flow is not confused with the first.
    transfers.store(0, Ordering::SeqCst);
    flow_across(&b, &a, &transfers).await;
}
