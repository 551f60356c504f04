//! What stands around dispatch on the server, over real HTTP: layers that see every
//! round of a multi round-trip call (its round number, its outcome) and may answer in
//! the handler's place. (The server's spans are `tests/traces.rs`'.)

use std::sync::{Arc, Mutex};

use serde_json::json;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::mcp::McpServer;
use tern_mcp::server::middleware::{Dispatch, Dispatched, Downstream, Ending, Middleware};
use tern_mcp::transport::BoxFuture;
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, method};

use tern_tests::stepper;

use crate::client_surface::connect;
use crate::http_support::{serve, url};

/// What a layer saw of one request.
type Seen = Arc<Mutex<Vec<(String, Option<String>, Option<u32>, Ending)>>>;

/// Records each request it sees, after the rest of the chain answered.
struct Recorder(&'static str, Seen, Arc<Mutex<Vec<&'static str>>>);

impl Middleware for Recorder {
    fn handle<'a>(
        &'a self,
        request: &'a Dispatch<'a>,
        next: Downstream<'a>,
    ) -> BoxFuture<'a, Dispatched> {
        Box::pin(async move {
            self.2.lock().unwrap().push(self.0);
            let answered = next.run().await;
            self.1.lock().unwrap().push((
                request.method.to_owned(),
                request.target.map(str::to_owned),
                request.round,
                answered.ending(),
            ));
            answered
        })
    }
}

/// Refuses calls of the tool it guards, before the tool runs.
struct Guard(&'static str);

impl Middleware for Guard {
    fn handle<'a>(
        &'a self,
        request: &'a Dispatch<'a>,
        next: Downstream<'a>,
    ) -> BoxFuture<'a, Dispatched> {
        Box::pin(async move {
            if request.target == Some(self.0) {
                return Dispatched::error(RpcError::new(-32001, "this tool is switched off"));
            }
            next.run().await
        })
    }
}

fn answering() -> tern_mcp::client::ClientBuilder {
    Client::builder("layers", "1")
        .era(EraMode::Stateless)
        .on_elicitation(|_ctx, _p| async { Ok(tern_mcp::ask::accept([("go", true)])) })
}

#[tokio::test]
async fn a_layer_sees_every_round_of_a_call_with_its_round_number_and_outcome() {
    let seen: Seen = Arc::default();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mcp = stepper()
        .layer(Recorder("outer", Arc::clone(&seen), Arc::clone(&order)))
        .layer(Recorder("inner", Arc::default(), Arc::clone(&order)));
    let addr = serve(HttpServer::new(mcp.server().unwrap())).await;
    let c = connect(answering(), &url(addr)).await;
    c.call_tool("steps", json!({})).await.unwrap();

    let call = |round, outcome| {
        (
            "tools/call".to_owned(),
            Some("steps".to_owned()),
            Some(round),
            outcome,
        )
    };
    assert_eq!(
        *seen.lock().unwrap(),
        [
            call(1, Ending::InputRequired),
            call(2, Ending::InputRequired),
            call(3, Ending::Complete),
        ]
    );
    // Layers run in the order they were added, each round.
    assert_eq!(order.lock().unwrap()[..2], ["outer", "inner"]);

    // A forged state is refused before the tool runs, and the layer is told so.
    seen.lock().unwrap().clear();
    let mut params = CallToolRequestParams::new("steps");
    params.request_state = Some("t1.forged".into());
    let err = c.request::<method::CallTool>(params).await.unwrap_err();
    assert!(matches!(err, tern_mcp::Error::StateRejected(_)), "{err}");
    assert_eq!(
        seen.lock().unwrap()[0],
        (
            "tools/call".to_owned(),
            Some("steps".to_owned()),
            None,
            Ending::RejectedState
        )
    );
}

#[tokio::test]
async fn a_guard_answers_in_the_tools_place_and_the_tool_never_runs() {
    let ran = Arc::new(Mutex::new(0));
    let mcp = McpServer::new("guarded", "1").layer(Guard("danger"));
    for name in ["danger", "safe"] {
        let ran = Arc::clone(&ran);
        mcp.tool(name).run(
            move |_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| {
                *ran.lock().unwrap() += 1;
                async move { Ok("ran") }
            },
        );
    }
    let addr = serve(HttpServer::new(mcp.server().unwrap())).await;
    let c = connect(answering(), &url(addr)).await;
    let err = c.call_tool("danger", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("switched off"), "{err}");
    assert_eq!(*ran.lock().unwrap(), 0);
    c.call_tool("safe", json!({})).await.unwrap();
    assert_eq!(*ran.lock().unwrap(), 1);
}
