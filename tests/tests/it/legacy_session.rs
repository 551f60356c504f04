//! 2025-11-25 sessions on a tern server, and one set of client callbacks answering
//! both eras.

use std::sync::{Arc, Mutex};
use tern_tests::text_of;

use serde_json::{Value, json};
use tern_mcp::ask;
use tern_mcp::client::{Client, EraMode, InputContext};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitRequestParams, ElicitResult,
    ElicitValue, InputResponse, ListToolsResult, Tool, method,
};
use tern_mcp::{Era, Error};
use tern_tests::wire::RawPeer;

fn region_form() -> tern_mcp::types::v2026_07_28::InputRequest {
    ask::elicit_form(
        "Which region?",
        json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}),
    )
    .unwrap()
}

fn region_in(answer: &ElicitResult) -> Option<String> {
    match answer.content.as_ref()?.get("region")? {
        ElicitValue::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// One tool for both eras: in 2026-07-28 it returns an `InputRequiredResult` and reads
/// the retry's answer; on a 2025-11-25 session it asks the client with a request of
/// its own.
async fn provision(
    ctx: RequestContext,
    params: CallToolRequestParams,
) -> Result<CallToolOutcome, RpcError> {
    let region = match ctx.era() {
        Era::Stateless => {
            let answer = params
                .input_responses
                .as_ref()
                .and_then(|r| r.get::<method::Elicit>("region"))
                .and_then(Result::ok);
            match answer.as_ref().and_then(region_in) {
                Some(r) => r,
                None => return Ok(ask::input_required([("region", region_form())], None).into()),
            }
        }
        Era::Session => match ctx.request_input(&region_form()).await? {
            InputResponse::Elicit(answer) => region_in(&answer)
                .ok_or_else(|| RpcError::invalid_params("the client gave no region"))?,
            other => return Err(RpcError::internal(format!("unexpected answer {other:?}"))),
        },
    };
    let text = format!(
        "provisioned in {region} over {}",
        ctx.meta().protocol_version
    );
    Ok(CallToolResult::new(vec![ask::text(text)]).into())
}

fn provisioner() -> Server {
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let tool = Tool::new(schema, "provision");
    Server::builder("Provisioner", "1.0")
        .instructions("Provisions databases.")
        .handle::<method::ListTools, _, _>(move |_ctx, _params| {
            let tool = tool.clone();
            async move { Ok(ListToolsResult::new(vec![tool])) }
        })
        .handle::<method::CallTool, _, _>(provision)
        .build()
        .unwrap()
}

fn serve(server: Server) -> memory::MemoryTransport {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    client_end
}

#[tokio::test]
async fn one_elicitation_callback_answers_both_eras() {
    let keys: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = Arc::clone(&keys);
    // The one callback, shared by a client of each era.
    let callback = move |ctx: InputContext, params: ElicitRequestParams| {
        let log = Arc::clone(&log);
        async move {
            assert!(matches!(params, ElicitRequestParams::Form(_)));
            log.lock().unwrap().push(ctx.key);
            Ok(ask::accept([("region", "eu-west-1")]))
        }
    };
    let modern = Client::builder("c", "1")
        .on_elicitation(callback.clone())
        .connect(serve(provisioner()))
        .await
        .unwrap();
    let legacy = Client::builder("c", "1")
        .on_elicitation(callback)
        .era(EraMode::Session)
        .connect(serve(provisioner()))
        .await
        .unwrap();
    assert_eq!(modern.protocol_version(), "2026-07-28");
    assert_eq!(legacy.protocol_version(), "2025-11-25");

    let done = modern.call_tool("provision", json!({})).await.unwrap();
    assert_eq!(text_of(&done), "provisioned in eu-west-1 over 2026-07-28");
    let done = legacy.call_tool("provision", json!({})).await.unwrap();
    assert_eq!(text_of(&done), "provisioned in eu-west-1 over 2025-11-25");

    // The input request's key in 2026-07-28; none for a server-to-client request.
    assert_eq!(*keys.lock().unwrap(), vec![Some("region".to_owned()), None]);
}

/// Opens a 2025-11-25 session as a raw client: `initialize`, then `initialized`.
async fn initialize(peer: &mut RawPeer, capabilities: Value) -> Value {
    let answer = peer
        .call(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "0"}
            }}),
        )
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    answer
}

#[tokio::test]
async fn a_legacy_session_end_to_end_with_a_server_to_client_elicitation() {
    let mut peer = RawPeer::new(serve(provisioner()));
    let init = initialize(&mut peer, json!({"elicitation": {}})).await;
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(result["serverInfo"]["name"], "Provisioner");
    assert_eq!(result["instructions"], "Provisions databases.");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");

    let pong = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(pong["result"], json!({}));

    let list = peer
        .call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(list["result"]["tools"][0]["name"], "provision", "{list}");
    assert!(
        list["result"].get("resultType").is_none() && list["result"].get("ttlMs").is_none(),
        "a 2025-11-25 result carries no 2026-07-28 members: {list}"
    );

    peer.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "provision", "arguments": {}}}))
        .await;
    let ask = peer.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Which region?");
    assert!(ask.get("id").is_some_and(|id| !id.is_null()), "{ask}");
    peer.send(json!({"jsonrpc": "2.0", "id": ask["id"],
        "result": {"action": "accept", "content": {"region": "us-east-2"}}}))
        .await;
    let done = peer.recv().await;
    assert_eq!(done["id"], 3, "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "provisioned in us-east-2 over 2025-11-25"
    );
    assert!(done["result"].get("resultType").is_none(), "{done}");
}

#[tokio::test]
async fn input_required_to_a_legacy_session_is_an_internal_error() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|_ctx, _params| async {
            Ok(ask::input_required([("region", region_form())], Some("v1")).into())
        })
        .build()
        .unwrap();
    let mut peer = RawPeer::new(serve(server));
    initialize(&mut peer, json!({"elicitation": {}})).await;
    let answer = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "arguments": {}}}))
        .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(answer.get("result").is_none());
}

#[tokio::test]
async fn a_legacy_request_for_an_undeclared_capability_is_refused_before_it_is_sent() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|ctx, _params| async move {
            let err = ctx.request_input(&ask::list_roots()).await.unwrap_err();
            Ok(CallToolResult::new(vec![ask::text(err.code.to_string())]).into())
        })
        .build()
        .unwrap();
    let mut peer = RawPeer::new(serve(server));
    initialize(&mut peer, json!({})).await;
    let answer = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "arguments": {}}}))
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "-32021", "{answer}");
}

#[tokio::test]
async fn request_client_outside_a_legacy_session_is_method_not_found() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|ctx, _params| async move {
            assert_eq!(ctx.era(), Era::Stateless);
            let err = ctx
                .request_client::<method::ListRoots>(None)
                .await
                .unwrap_err();
            Ok(CallToolResult::new(vec![ask::text(err.code.to_string())]).into())
        })
        .build()
        .unwrap();
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(serve(server))
        .await
        .unwrap();
    let done = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(text_of(&done), "-32601");
}

#[tokio::test]
async fn a_second_initialize_is_refused() {
    let mut peer = RawPeer::new(serve(provisioner()));
    initialize(&mut peer, json!({})).await;
    let again = initialize(&mut peer, json!({})).await;
    assert_eq!(again["error"]["code"], -32600, "{again}");
}

#[tokio::test]
async fn a_stateless_request_before_initialize_is_served_statelessly() {
    let mut peer = RawPeer::new(serve(provisioner()));
    let answer = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": tern_tests::wire::meta(json!({}))}}))
        .await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
}

#[tokio::test]
async fn once_a_session_is_open_no_meta_makes_a_request_stateless() {
    let mut peer = RawPeer::new(serve(provisioner()));
    initialize(&mut peer, json!({})).await;
    // The 2026-07-28 `_meta` on a session's connection: still the session's request,
    // answered in the session's form (no resultType).
    let answer = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": tern_tests::wire::meta(json!({}))}}))
        .await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    assert_eq!(answer["result"].get("resultType"), None, "{answer}");
    // And `_meta` with only a progress token is read as the session's, not refused.
    let answer = peer
        .call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {"progressToken": "t"}}}))
        .await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
}

#[tokio::test]
async fn a_client_refusing_a_legacy_elicitation_fails_the_tool() {
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _params| async {
            Err(RpcError::new(-32000, "the user walked away"))
        })
        .era(EraMode::Session)
        .connect(serve(provisioner()))
        .await
        .unwrap();
    let err = client.call_tool("provision", json!({})).await.unwrap_err();
    let Error::Rpc(rpc) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        rpc.code, -32000,
        "the callback's error reached the tool: {err}"
    );
}
