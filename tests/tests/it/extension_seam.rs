//! The extension seams: a toy extension with one method of its own, declared and served
//! by an `McpServer` and declared and called by tern's `Client` (its half of the seam)
//! as a typed request, in both eras; a result of the extension's own type, followed by
//! its client half; and the tasks extension on the same seam (declared only where it
//! is served).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tern_mcp::client::{Client, ClientExtension, Deferred, EraMode, Step};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::mcp::{McpExtension, McpServer};
use tern_mcp::server::{ProtocolExtension, RequestContext, ServerBuilder};
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::memory;
use tern_mcp::types::rpc::{Answer, ClientRequestMethod, IntoAnswer, Never, Request};
use tern_mcp::types::v2026_07_28::method::ClientRequestParams;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, GetPromptRequestParams, RequestMetaObject, RequestParams, method,
};

const ECHO: &str = "com.example/echo";

/// `echo/reverse`: the toy extension's one method.
#[derive(Debug)]
enum Reverse {}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReverseParams {
    text: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    meta: Option<Box<RequestMetaObject>>,
}

impl ClientRequestParams for ReverseParams {
    fn request_meta(&self) -> Option<&RequestMetaObject> {
        self.meta.as_deref()
    }
    fn request_meta_slot(&mut self) -> Option<&mut Option<Box<RequestMetaObject>>> {
        Some(&mut self.meta)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReverseResult {
    reversed: String,
    /// Whether this request's capabilities declared the extension.
    declared: bool,
}

/// A result of the test's own, always complete.
macro_rules! complete {
    ($result:ty) => {
        impl IntoAnswer for $result {
            type Complete = Self;
            type InputRequired = Never;
            fn into_answer(self) -> Answer<Self, Never> {
                Answer::Complete(self)
            }
        }
    };
}

/// A method marker of the test's own: `$method`, asking nothing.
macro_rules! marker {
    ($marker:ident, $method:expr, $params:ty, $result:ty) => {
        impl Request for $marker {
            const METHOD: &'static str = $method;
            const MAY_REQUIRE_INPUT: bool = false;
            const CACHEABLE: bool = false;
            const TARGET: Option<&'static str> = None;
            const CAPABILITY: Option<&'static str> = None;
            type Params = $params;
            type Result = $result;
        }

        impl ClientRequestMethod for $marker {}
    };
}

complete!(ReverseResult);
marker!(Reverse, "echo/reverse", ReverseParams, ReverseResult);

/// The toy extension: declared with a setting, serving `echo/reverse`.
struct Echo;

impl ProtocolExtension for Echo {
    fn id(&self) -> &'static str {
        ECHO
    }

    fn settings(&self) -> Map<String, Value> {
        let mut settings = Map::new();
        settings.insert("maxLength".into(), json!(64));
        settings
    }

    fn routes(&self, server: ServerBuilder) -> ServerBuilder {
        server.handle::<Reverse, _, _>(|ctx: RequestContext, params: ReverseParams| async move {
            if params.text.len() > 64 {
                return Err(RpcError::invalid_params("text longer than maxLength"));
            }
            let declared = ctx
                .meta()
                .client_capabilities
                .extensions
                .as_ref()
                .is_some_and(|x| x.contains_key(ECHO));
            Ok(ReverseResult {
                reversed: params.text.chars().rev().collect(),
                declared,
            })
        })
    }
}

/// It takes no part in the high-level server's tools or listen streams: every hook keeps
/// its default.
impl McpExtension for Echo {}

fn echo_server() -> McpServer {
    McpServer::new("echo", "1").extension(Echo)
}

/// The toy extension's client half: declared, and the follower of a tool call's
/// `resultType: "echo/later"` result, which holds a ticket to send to `echo/reverse`.
struct EchoClient;

impl ClientExtension for EchoClient {
    fn id(&self) -> &'static str {
        ECHO
    }

    fn result_type(&self) -> Option<&'static str> {
        Some(LATER)
    }

    fn follow(&self, deferred: Deferred) -> BoxFuture<'static, tern_mcp::Result<Value>> {
        Box::pin(async move {
            let later: Later = serde_json::from_str(deferred.result()).unwrap();
            let answer = deferred
                .client()
                .request::<Reverse>(reverse(&later.ticket))
                .await?;
            Ok(json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": answer.reversed}]
            }))
        })
    }
}

async fn client_of(mcp: McpServer, era: EraMode, declare: bool) -> Client {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { mcp.serve(server_end).await });
    let builder = Client::builder("c", "1").era(era);
    let builder = if declare {
        builder.extension(EchoClient)
    } else {
        builder
    };
    builder.connect(client_end).await.unwrap()
}

/// The extensions the server declares in `server/discover`, by identifier.
async fn declared_extensions(client: &Client) -> BTreeMap<String, Map<String, Value>> {
    let discovered = client
        .request::<method::Discover>(RequestParams::default())
        .await
        .unwrap();
    discovered.capabilities.extensions.unwrap_or_default()
}

fn reverse(text: &str) -> ReverseParams {
    ReverseParams {
        text: text.into(),
        meta: None,
    }
}

#[tokio::test]
async fn a_toy_extension_is_declared_with_its_settings_and_its_method_answers_a_typed_call() {
    let client = client_of(echo_server(), EraMode::Stateless, true).await;
    let declared = declared_extensions(&client).await;
    assert_eq!(
        declared.get(ECHO),
        Some(&json!({"maxLength": 64}).as_object().cloned().unwrap())
    );
    // Served only where it is registered: no tasks extension on this server.
    assert!(!declared.contains_key(tern_mcp::types::ext_tasks::EXTENSION_ID));

    let answer = client
        .request::<Reverse>(reverse("stressed"))
        .await
        .unwrap();
    assert_eq!(
        answer,
        ReverseResult {
            reversed: "desserts".into(),
            declared: true
        }
    );
    let refused = client
        .request::<Reverse>(reverse(&"x".repeat(65)))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, tern_mcp::Error::Rpc(ref e) if e.code == -32602),
        "{refused:?}"
    );
}

#[tokio::test]
async fn the_extension_sees_each_requests_own_declaration() {
    let client = client_of(echo_server(), EraMode::Stateless, false).await;
    let answer = client.request::<Reverse>(reverse("ab")).await.unwrap();
    assert_eq!(answer.reversed, "ba");
    assert!(!answer.declared, "this client withdrew the extension");
}

#[tokio::test]
async fn the_toy_method_is_served_on_a_2025_11_25_session_too() {
    let client = client_of(echo_server(), EraMode::Session, true).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    let answer = client.request::<Reverse>(reverse("drawer")).await.unwrap();
    // A session's capabilities were said once, at `initialize`: the extension among them.
    assert_eq!(
        answer,
        ReverseResult {
            reversed: "reward".into(),
            declared: true
        }
    );
    let withdrawn = client_of(echo_server(), EraMode::Session, false).await;
    let answer = withdrawn.request::<Reverse>(reverse("ab")).await.unwrap();
    assert!(!answer.declared);
}

#[tokio::test]
async fn an_extension_on_the_low_level_builder_is_declared_beside_given_capabilities() {
    let server = tern_mcp::server::Server::builder("low", "1")
        .capabilities(Default::default())
        .extension(Echo)
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let client = Client::builder("c", "1")
        .era(EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    assert!(declared_extensions(&client).await.contains_key(ECHO));
    let answer = client.request::<Reverse>(reverse("ab")).await.unwrap();
    assert_eq!(answer.reversed, "ba");
}

#[tokio::test]
async fn the_tasks_extension_is_declared_where_it_is_served() {
    let mcp = McpServer::new("t", "1").extension(tern_mcp::tasks::Tasks::default());
    let client = client_of(mcp, EraMode::Stateless, false).await;
    let declared = declared_extensions(&client).await;
    assert!(declared.contains_key(tern_mcp::types::ext_tasks::EXTENSION_ID));
}

/// The toy extension's own result type for a tool call.
const LATER: &str = "echo/later";

/// `tools/call` as a server of the toy extension answers it: a ticket, not the result.
#[derive(Debug)]
enum CallLater {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Later {
    result_type: String,
    ticket: String,
}

complete!(Later);
marker!(
    CallLater,
    method::CallTool::METHOD,
    CallToolRequestParams,
    Later
);

/// `prompts/get` as the same server answers it: a ticket too, where no extension's
/// type may stand (its marker says it may not become anything else).
#[derive(Debug)]
enum PromptLater {}

marker!(
    PromptLater,
    method::GetPrompt::METHOD,
    GetPromptRequestParams,
    Later
);

/// A ticket for `echo/reverse`.
fn ticket(name: String) -> Later {
    Later {
        result_type: LATER.into(),
        ticket: name,
    }
}

/// A low-level server of the toy extension whose tool calls and prompts are all
/// answered later: with a ticket (the tool's or prompt's name), for `echo/reverse`.
fn later_server() -> tern_mcp::server::Server {
    tern_mcp::server::Server::builder("later", "1")
        .extension(Echo)
        .handle::<CallLater, _, _>(|_: RequestContext, p: CallToolRequestParams| async move {
            Ok(ticket(p.name))
        })
        .handle::<PromptLater, _, _>(|_: RequestContext, p: GetPromptRequestParams| async move {
            Ok(ticket(p.name))
        })
        .build()
        .unwrap()
}

async fn later_client(declare: bool) -> Client {
    let (client_end, server_end) = memory::pair();
    let server = later_server();
    tokio::spawn(async move { server.serve(server_end).await });
    let builder = Client::builder("c", "1").era(EraMode::Stateless);
    let builder = if declare {
        builder.extension(EchoClient)
    } else {
        builder
    };
    builder.connect(client_end).await.unwrap()
}

#[tokio::test]
async fn a_result_of_the_extensions_own_type_is_followed_by_its_client_half() {
    let client = later_client(true).await;
    let result = client.call_tool("stressed", json!({})).await.unwrap();
    assert_eq!(tern_tests::text_of(&result), "desserts");
}

#[tokio::test]
async fn the_manual_loop_hands_the_extensions_result_over_unfollowed() {
    let client = later_client(true).await;
    let params = CallToolRequestParams::new("drawer");
    let step = client.start::<method::CallTool>(params).await.unwrap();
    let Step::Deferred(deferred) = step else {
        panic!("not handed over: {step:?}");
    };
    assert_eq!(deferred.extension(), ECHO);
    assert_eq!(deferred.method(), "tools/call");
    let later: Later = serde_json::from_str(deferred.result()).unwrap();
    assert_eq!(later.ticket, "drawer");
    let followed = deferred.follow().await.unwrap();
    assert_eq!(followed["content"][0]["text"], "reward");
}

#[tokio::test]
async fn a_client_that_does_not_speak_the_extension_refuses_its_result_type() {
    let client = later_client(false).await;
    let refused = client.call_tool("stressed", json!({})).await.unwrap_err();
    assert!(
        matches!(
            refused,
            tern_mcp::Error::Protocol(tern_mcp::ProtocolError::UnknownResultType(ref t)) if t == LATER
        ),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_result_type_is_read_only_for_a_method_whose_marker_says_it_may_be_answered_so() {
    let client = later_client(true).await;
    let refused = client.get_prompt("stressed", None).await.unwrap_err();
    assert!(
        matches!(
            refused,
            tern_mcp::Error::Protocol(tern_mcp::ProtocolError::UnknownResultType(ref t)) if t == LATER
        ),
        "{refused:?}"
    );
}
