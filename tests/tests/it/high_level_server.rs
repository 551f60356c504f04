//! The high-level server: typed tools, sealing by default, and resolvers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tern_mcp::auth::AuthInfo;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::mcp::{
    Elicit, ListRoots, McpServer, NoArgs, Resolve, Sample, SamplePrompt, ToolError, form_content,
};
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::server::{IncomingRequest, Server};
use tern_mcp::types::v2026_07_28::{
    CreateMessageRequestParams, InputRequest, RequestId, Role, SamplingMessage,
    SamplingMessageContent, SamplingMessageContentBlock, TextContent,
};
use tern_tests::wire::meta;

const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
const OTHER_KEY: &[u8; 32] = b"fedcba9876543210fedcba9876543210";

#[derive(Deserialize, JsonSchema)]
struct Args {
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Debug, Deserialize, JsonSchema)]
struct Region {
    region: String,
}

/// How large should it be?
#[derive(Clone, Debug, Deserialize, JsonSchema)]
struct Size {
    gigabytes: i64,
}

struct Summary;
impl SamplePrompt<Args> for Summary {
    const KEY: &'static str = "summary";
    fn request(args: &Args) -> CreateMessageRequestParams {
        let text =
            SamplingMessageContentBlock::Text(TextContent::new(format!("Describe {}", args.name)));
        CreateMessageRequestParams::new(
            50,
            vec![SamplingMessage::new(
                SamplingMessageContent::One(text),
                Role::User,
            )],
        )
    }
}

/// A question that depends on the arguments and on another answer.
#[derive(Clone, Debug)]
struct Confirm(bool);

impl Resolve<Args> for Confirm {
    type Deps = (Elicit<Region>,);
    fn key() -> String {
        "confirm".into()
    }
    fn question(args: &Args, deps: &Self::Deps) -> Result<InputRequest, ToolError> {
        let region = match &deps.0 {
            Elicit::Accepted(r) => r.region.clone(),
            _ => "nowhere".into(),
        };
        Ok(tern_mcp::ask::elicit_form(
            format!("Create {} in {region}?", args.name),
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        )?)
    }
    fn from_response(response: &serde_json::value::RawValue, _deps: &Self::Deps) -> Option<Self> {
        form_content(response)?.get("ok")?.as_bool().map(Confirm)
    }
}

/// The last link of a three-level chain.
#[derive(Clone, Debug)]
struct Final(bool);

impl Resolve<Args> for Final {
    type Deps = (Confirm,);
    fn key() -> String {
        "final".into()
    }
    fn question(_args: &Args, deps: &Self::Deps) -> Result<InputRequest, ToolError> {
        Ok(tern_mcp::ask::elicit_form(
            format!("Really (confirmed: {})?", deps.0.0),
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        )?)
    }
    fn from_response(response: &serde_json::value::RawValue, _deps: &Self::Deps) -> Option<Self> {
        form_content(response)?.get("ok")?.as_bool().map(Final)
    }
}

fn server(mcp: &McpServer) -> Server {
    mcp.server().unwrap()
}

fn keyed(name: &str, key: &[u8]) -> McpServer {
    McpServer::new(name, "1").seal(RequestStateSecurity::keys([key]).unwrap())
}

/// One request straight into the server, as a transport would hand it over.
async fn handle(
    server: &Server,
    method: &str,
    params: Value,
    auth: Option<AuthInfo>,
) -> Result<Value, RpcError> {
    server
        .handle(IncomingRequest::new(RequestId::Integer(1), method, Some(params)).with_auth(auth))
        .await
}

/// One `tools/call` round straight into the server.
async fn call(
    server: &Server,
    tool: &str,
    args: Value,
    retry: Option<(&Value, Value)>,
    auth: Option<AuthInfo>,
) -> Result<Value, RpcError> {
    let caps = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});
    let mut params = json!({"_meta": meta(caps), "name": tool, "arguments": args});
    if let Some((previous, responses)) = retry {
        if let Some(state) = previous.get("requestState") {
            params["requestState"] = state.clone();
        }
        params["inputResponses"] = responses;
    }
    handle(server, "tools/call", params, auth).await
}

fn asked(result: &Value) -> Vec<String> {
    let mut keys: Vec<String> = result["inputRequests"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

fn accept(fields: Value) -> Value {
    json!({"action": "accept", "content": fields})
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// How often [`Audited`]'s question was rendered; only the test below uses it.
static AUDITED_RENDERS: AtomicUsize = AtomicUsize::new(0);

/// A dependent question that counts its renderings.
#[derive(Clone, Debug)]
struct Audited(bool);

impl Resolve<Args> for Audited {
    type Deps = (Elicit<Region>,);
    fn key() -> String {
        "confirm".into()
    }
    fn question(args: &Args, deps: &Self::Deps) -> Result<InputRequest, ToolError> {
        AUDITED_RENDERS.fetch_add(1, Ordering::SeqCst);
        Confirm::question(args, deps)
    }
    fn from_response(response: &serde_json::value::RawValue, deps: &Self::Deps) -> Option<Self> {
        Confirm::from_response(response, deps).map(|c| Audited(c.0))
    }
}

#[tokio::test]
async fn each_question_is_asked_once_while_resolver_bodies_rerun() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t").resolve(
        |args: Args, region: Elicit<Region>, confirm: Audited| async move {
            Ok(format!(
                "{} {:?} {}",
                args.name,
                region.accepted().map(|r| r.region),
                confirm.0
            ))
        },
    );
    let server = server(&mcp);
    let r1 = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    assert_eq!(asked(&r1), vec!["elicit_region"]);
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((
            &r1,
            json!({"elicit_region": accept(json!({"region": "eu"}))}),
        )),
        None,
    )
    .await
    .unwrap();
    assert_eq!(asked(&r2), vec!["confirm"], "region is not asked again");
    let r3 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r2, json!({"confirm": accept(json!({"ok": true}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(r3["resultType"], "complete", "{r3}");
    assert_eq!(text(&r3), "db Some(\"eu\") true");
    // The dependent question was rendered in round 2 (asked) and round 3 (to bind the
    // answer to it), and asked once; in round 1 its dependency was not yet answered.
    assert_eq!(AUDITED_RENDERS.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn independent_questions_of_mixed_kinds_share_one_round_and_dependents_follow() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t").resolve(
        |_args: Args,
         _region: Elicit<Region>,
         _size: Elicit<Size>,
         summary: Sample<Summary>,
         roots: ListRoots,
         confirm: Confirm| async move {
            Ok(format!(
                "{} {} {}",
                summary.text(),
                roots.0.len(),
                confirm.0
            ))
        },
    );
    let server = server(&mcp);
    let r1 = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    assert_eq!(
        asked(&r1),
        vec!["elicit_region", "elicit_size", "roots", "summary"]
    );
    let answers = json!({
        "elicit_region": accept(json!({"region": "eu"})),
        "elicit_size": accept(json!({"gigabytes": 5})),
        "summary": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "a db"}},
        "roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
    });
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r1, answers)),
        None,
    )
    .await
    .unwrap();
    assert_eq!(asked(&r2), vec!["confirm"]);
    let r3 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r2, json!({"confirm": accept(json!({"ok": false}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(text(&r3), "a db 2 false");
}

#[tokio::test]
async fn a_chain_of_dependent_questions_takes_one_round_per_level() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t")
        .resolve(|_args: Args, f: Final| async move { Ok(format!("final {}", f.0)) });
    let server = server(&mcp);
    let mut result = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    let mut rounds = Vec::new();
    while result["resultType"] == "input_required" {
        let keys = asked(&result);
        rounds.push(keys.clone());
        let mut responses = serde_json::Map::new();
        for k in keys {
            let answer = if k == "elicit_region" {
                accept(json!({"region": "eu"}))
            } else {
                accept(json!({"ok": true}))
            };
            responses.insert(k, answer);
        }
        result = call(
            &server,
            "t",
            json!({"name": "db"}),
            Some((&result, Value::Object(responses))),
            None,
        )
        .await
        .unwrap();
    }
    assert_eq!(
        rounds,
        vec![vec!["elicit_region"], vec!["confirm"], vec!["final"]]
    );
    assert_eq!(text(&result), "final true");
}

#[tokio::test]
async fn decline_and_cancel_are_answers_kept_without_asking_again() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t").resolve(
        |_args: Args, region: Elicit<Region>, size: Elicit<Size>, confirm: Confirm| async move {
            Ok(format!(
                "{:?} {:?} {}",
                region,
                size.accepted().map(|s| s.gigabytes),
                confirm.0
            ))
        },
    );
    let server = server(&mcp);
    let r1 = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((
            &r1,
            json!({"elicit_region": {"action": "decline"}, "elicit_size": {"action": "cancel"}}),
        )),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        asked(&r2),
        vec!["confirm"],
        "declined and cancelled questions are not asked again"
    );
    let r3 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r2, json!({"confirm": accept(json!({"ok": true}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(text(&r3), "Declined None true");
}

#[allow(dead_code)] // the fields are what the schema is made of
mod reworded {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// In which region, exactly, should the database live?
    #[derive(Clone, Debug, Deserialize, JsonSchema)]
    pub(crate) struct Region {
        pub(crate) region: String,
    }
}

#[allow(dead_code)]
mod reshaped {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// Which region should the database live in?
    #[derive(Clone, Debug, Deserialize, JsonSchema)]
    pub(crate) struct Region {
        pub(crate) region: String,
        pub(crate) zone: Option<String>,
    }
}

#[derive(Clone, Debug)]
struct ConfirmAny(#[allow(dead_code)] bool);

impl Resolve<Args> for ConfirmAny {
    type Deps = ();
    fn key() -> String {
        "confirm".into()
    }
    fn question(_args: &Args, _deps: &()) -> Result<InputRequest, ToolError> {
        Ok(tern_mcp::ask::elicit_form(
            "Sure?",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        )?)
    }
    fn from_response(response: &serde_json::value::RawValue, _deps: &()) -> Option<Self> {
        form_content(response)?.get("ok")?.as_bool().map(ConfirmAny)
    }
}

#[tokio::test]
async fn a_reworded_question_or_changed_schema_is_asked_again() {
    // Round 1 answers the region on the original server; round 2 (the confirm answer)
    // reaches a redeployed instance whose region question changed.
    let original = keyed("fleet", KEY);
    original
        .tool("t")
        .resolve(|_a: Args, r: Elicit<Region>, _c: ConfirmAny| async move { Ok(format!("{r:?}")) });
    let original = server(&original);
    let r1 = call(&original, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    assert_eq!(asked(&r1), vec!["confirm", "elicit_region"]);
    let r2 = call(
        &original,
        "t",
        json!({"name": "db"}),
        Some((
            &r1,
            json!({"elicit_region": accept(json!({"region": "eu"}))}),
        )),
        None,
    )
    .await
    .unwrap();
    assert_eq!(asked(&r2), vec!["confirm"]);

    let reworded = keyed("fleet", KEY);
    reworded.tool("t").resolve(
        |_a: Args, r: Elicit<reworded::Region>, _c: ConfirmAny| async move { Ok(format!("{r:?}")) },
    );
    let reworded = server(&reworded);
    let r3 = call(
        &reworded,
        "t",
        json!({"name": "db"}),
        Some((&r2, json!({"confirm": accept(json!({"ok": true}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        asked(&r3),
        vec!["elicit_region"],
        "the stale answer to the old wording is not used"
    );
    assert!(
        r3["inputRequests"]["elicit_region"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("exactly")
    );

    let reshaped = keyed("fleet", KEY);
    reshaped.tool("t").resolve(
        |_a: Args, r: Elicit<reshaped::Region>, _c: ConfirmAny| async move { Ok(format!("{r:?}")) },
    );
    let reshaped = server(&reshaped);
    let r4 = call(
        &reshaped,
        "t",
        json!({"name": "db"}),
        Some((&r2, json!({"confirm": accept(json!({"ok": true}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        asked(&r4),
        vec!["elicit_region"],
        "the stale answer to the old schema is not used"
    );
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_asked_again_without_leaking_why() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t")
        .resolve(|_args: Args, region: Elicit<Region>| async move { Ok(format!("{region:?}")) });
    let server = server(&mcp);
    let r1 = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r1, json!({"elicit_region": accept(json!({"region": 42}))}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(asked(&r2), vec!["elicit_region"]);
    assert_eq!(
        r2["inputRequests"], r1["inputRequests"],
        "the same question, with nothing about the failure"
    );
}

#[tokio::test]
async fn answers_under_keys_that_were_not_asked_are_ignored() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t")
        .resolve(|_args: Args, region: Elicit<Region>| async move { Ok(format!("{region:?}")) });
    let server = server(&mcp);
    // A forged answer on the first call: nothing was asked, so nothing is taken.
    let r1 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((
            &json!({}),
            json!({"elicit_region": accept(json!({"region": "forged"}))}),
        )),
        None,
    )
    .await
    .unwrap();
    assert_eq!(asked(&r1), vec!["elicit_region"]);
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r1, json!({"elicit_region": accept(json!({"region": "eu"})), "unknown": {"action": "accept"}}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(text(&r2), "Accepted(Region { region: \"eu\" })");
}

const FIXED: &str = "Invalid or expired requestState";

fn direct_stateful(mcp: &McpServer, name: &str) {
    mcp.tool(name.to_owned()).run(
        |_args: serde_json::Map<String, Value>, ctx: tern_mcp::mcp::ToolContext| async move {
            Ok(match ctx.request_state() {
                None => tern_mcp::ask::input_required(
                    Vec::<(String, InputRequest)>::new(),
                    Some("step-1"),
                )
                .into(),
                Some(state) => tern_mcp::types::v2026_07_28::CallToolOutcome::Complete(
                    tern_mcp::types::v2026_07_28::CallToolResult::new(vec![tern_mcp::ask::text(
                        format!("resumed {state}"),
                    )]),
                ),
            })
        },
    );
}

#[tokio::test]
async fn sealed_state_replayed_on_another_tool_or_with_other_arguments_is_rejected() {
    let mcp = McpServer::new("s", "1");
    direct_stateful(&mcp, "a");
    direct_stateful(&mcp, "b");
    let server = server(&mcp);
    let r1 = call(&server, "a", json!({"x": 1}), None, None)
        .await
        .unwrap();
    assert_ne!(
        r1["requestState"], "step-1",
        "the state is sealed on the wire"
    );
    let other_tool = call(&server, "b", json!({"x": 1}), Some((&r1, json!({}))), None)
        .await
        .unwrap_err();
    assert_eq!(
        (other_tool.code, other_tool.message.as_str()),
        (-32602, FIXED)
    );
    let other_args = call(&server, "a", json!({"x": 2}), Some((&r1, json!({}))), None)
        .await
        .unwrap_err();
    assert_eq!(
        (other_args.code, other_args.message.as_str()),
        (-32602, FIXED)
    );
    let ok = call(&server, "a", json!({"x": 1}), Some((&r1, json!({}))), None)
        .await
        .unwrap();
    assert_eq!(text(&ok), "resumed step-1");
}

#[tokio::test]
async fn a_bind_principal_hook_sees_the_arguments_when_state_is_sealed_and_when_opened() {
    // The server binds tokens to the arguments by a digest computed once per request;
    // a hook still sees the arguments themselves on both sides of a round.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let security = RequestStateSecurity::keys([KEY])
        .unwrap()
        .bind_principal(move |binding| {
            let tenant = binding.arguments?.get("tenant")?.as_str()?.to_owned();
            log.lock().unwrap().push(tenant.clone());
            Some(tern_mcp::seal::Principal::custom(tenant))
        });
    let mcp = McpServer::new("s", "1").seal(security);
    direct_stateful(&mcp, "a");
    let server = server(&mcp);
    let r1 = call(&server, "a", json!({"tenant": "acme"}), None, None)
        .await
        .unwrap();
    let ok = call(
        &server,
        "a",
        json!({"tenant": "acme"}),
        Some((&r1, json!({}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(text(&ok), "resumed step-1");
    assert_eq!(*seen.lock().unwrap(), ["acme", "acme"]);
}

#[tokio::test]
async fn state_moves_between_instances_sharing_keys_and_name_and_nowhere_else() {
    let make = |name: &str, key: &[u8]| {
        let mcp = keyed(name, key);
        direct_stateful(&mcp, "a");
        server(&mcp)
    };
    let first = make("fleet", KEY);
    let sibling = make("fleet", KEY);
    let other_key = make("fleet", OTHER_KEY);
    let other_name = make("another-service", KEY);
    let r1 = call(&first, "a", json!({}), None, None).await.unwrap();
    let ok = call(&sibling, "a", json!({}), Some((&r1, json!({}))), None)
        .await
        .unwrap();
    assert_eq!(text(&ok), "resumed step-1");
    for stranger in [&other_key, &other_name] {
        let err = call(stranger, "a", json!({}), Some((&r1, json!({}))), None)
            .await
            .unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (-32602, FIXED));
    }
    // Two default servers each have their own ephemeral key.
    let ephemeral_a = McpServer::new("fleet", "1");
    direct_stateful(&ephemeral_a, "a");
    let ephemeral_b = McpServer::new("fleet", "1");
    direct_stateful(&ephemeral_b, "a");
    let r = call(&server(&ephemeral_a), "a", json!({}), None, None)
        .await
        .unwrap();
    let err = call(
        &server(&ephemeral_b),
        "a",
        json!({}),
        Some((&r, json!({}))),
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(err.message, FIXED);
}

#[tokio::test]
async fn state_minted_for_one_principal_is_rejected_for_another() {
    let mcp = McpServer::new("s", "1");
    direct_stateful(&mcp, "a");
    let server = server(&mcp);
    let alice = AuthInfo::new("app")
        .with_issuer("https://idp")
        .with_subject("alice");
    let bob = alice.clone().with_subject("bob");
    let r1 = call(&server, "a", json!({}), None, Some(alice.clone()))
        .await
        .unwrap();
    let err = call(&server, "a", json!({}), Some((&r1, json!({}))), Some(bob))
        .await
        .unwrap_err();
    assert_eq!(err.message, FIXED);
    let err = call(&server, "a", json!({}), Some((&r1, json!({}))), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.message, FIXED,
        "a principal that disappears is a rejection too"
    );
    let ok = call(&server, "a", json!({}), Some((&r1, json!({}))), Some(alice))
        .await
        .unwrap();
    assert_eq!(text(&ok), "resumed step-1");
}

#[tokio::test]
async fn every_incoming_state_is_verified_even_for_a_tool_that_never_emits_one() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("plain")
        .run(|_a: NoArgs, _ctx: tern_mcp::mcp::ToolContext| async move { Ok("fine") });
    let server = server(&mcp);
    let err = call(
        &server,
        "plain",
        json!({}),
        Some((&json!({"requestState": "made-up"}), json!({}))),
        None,
    )
    .await
    .unwrap_err();
    assert_eq!((err.code, err.message.as_str()), (-32602, FIXED));
}

#[tokio::test]
async fn a_resolver_the_client_cannot_answer_is_32021() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t")
        .resolve(|_args: Args, s: Sample<Summary>| async move { Ok(s.text()) });
    let server = server(&mcp);
    let params = json!({"_meta": meta(json!({"elicitation": {}})), "name": "t", "arguments": {"name": "db"}});
    let err = handle(&server, "tools/call", params, None)
        .await
        .unwrap_err();
    assert_eq!(err.code, -32021);
    assert_eq!(
        err.data.unwrap()["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn invalid_arguments_are_32602_naming_the_field() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t")
        .resolve(|args: Args, _r: Elicit<Region>| async move { Ok(args.name) });
    let server = server(&mcp);
    let err = call(&server, "t", json!({"name": 5}), None, None)
        .await
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(err.message.contains("`name`"), "{}", err.message);
    let err = call(&server, "t", json!({}), None, None).await.unwrap_err();
    assert!(err.message.contains("name"), "{}", err.message);
    let err = call(&server, "nope", json!({}), None, None)
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "Unknown tool: nope")
    );
}

#[tokio::test]
async fn arguments_decoded_without_a_schema_check_are_refused_as_the_check_would() {
    // `Args` derives a schema that refuses nothing decoding does not, so its calls are
    // decoded straight from their text; the same schema given as is is checked first.
    let mcp = McpServer::new("s", "1");
    mcp.tool("derived")
        .resolve(|args: Args, _r: Elicit<Region>| async move { Ok(args.name) });
    let schema =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    mcp.tool("given")
        .input_schema(schema.as_object().unwrap().clone())
        .resolve(|args: Args, _r: Elicit<Region>| async move { Ok(args.name) });
    let server = server(&mcp);
    for bad in [json!({"name": 5}), json!({}), json!({"name": null})] {
        let derived = call(&server, "derived", bad.clone(), None, None)
            .await
            .unwrap_err();
        let given = call(&server, "given", bad.clone(), None, None)
            .await
            .unwrap_err();
        assert_eq!(derived.code, -32602, "{bad}");
        assert_eq!(
            derived.message,
            given.message.replace("tool given", "tool derived"),
            "{bad}"
        );
    }
    let asked = call(
        &server,
        "derived",
        json!({"name": "orders", "extra": 1}),
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        asked["resultType"], "input_required",
        "unknown members pass, as the schema lets them"
    );
}

async fn list(server: &Server, method: &str, cursor: Option<&str>) -> Value {
    let mut params = json!({"_meta": meta(json!({}))});
    if let Some(c) = cursor {
        params["cursor"] = json!(c);
    }
    handle(server, method, params, None).await.unwrap()
}

#[tokio::test]
async fn tools_list_is_ordered_paged_and_its_schemas_are_json_schema_2020_12() {
    let mcp = McpServer::new("s", "1").page_size(2).cache(60_000, true);
    for name in ["zeta", "alpha", "mid"] {
        mcp.tool(name)
            .description("d")
            .resolve(|args: Args, _r: Elicit<Region>| async move { Ok(args.name) });
    }
    mcp.tool("structured")
        .run(|_a: NoArgs, _ctx: tern_mcp::mcp::ToolContext| async move {
            Ok(tern_mcp::mcp::Structured(json!({"n": 1})))
        });
    let server = server(&mcp);
    let first = list(&server, "tools/list", None).await;
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["zeta", "alpha"], "registration order");
    assert_eq!(
        (first["ttlMs"].as_u64(), first["cacheScope"].as_str()),
        (Some(60_000), Some("public"))
    );
    let second = list(&server, "tools/list", first["nextCursor"].as_str()).await;
    let names: Vec<&str> = second["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["mid", "structured"]);
    assert!(second.get("nextCursor").is_none());

    let validator = jsonschema::draft202012::meta::validator();
    for tool in first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["tools"].as_array().unwrap())
    {
        let schema = &tool["inputSchema"];
        assert!(
            validator.is_valid(schema),
            "{} inputSchema is not 2020-12: {schema}",
            tool["name"]
        );
        assert_eq!(schema["type"], "object");
        if let Some(out) = tool.get("outputSchema") {
            assert!(validator.is_valid(out), "{out}");
        }
    }
    assert_eq!(
        first["tools"][0]["inputSchema"]["required"],
        json!(["name"])
    );
}

#[tokio::test]
async fn prompts_and_templates_complete_their_arguments() {
    let mcp = McpServer::new("s", "1");
    mcp.prompt("greet")
        .complete("language", |typed: String| async move {
            ["english", "esperanto", "estonian", "french"]
                .iter()
                .filter(|l| l.starts_with(&typed))
                .map(|l| (*l).to_owned())
                .collect()
        })
        .run(
            |args: serde_json::Map<String, Value>, _ctx: tern_mcp::mcp::ToolContext| async move {
                Ok(format!("{args:?}"))
            },
        );
    let server = server(&mcp);
    let params = json!({"_meta": meta(json!({})), "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "language", "value": "es"}});
    let result = handle(&server, "completion/complete", params, None)
        .await
        .unwrap();
    assert_eq!(
        result["completion"]["values"],
        json!(["esperanto", "estonian"])
    );
}

struct Authorize;
impl tern_mcp::mcp::UrlPrompt<Args> for Authorize {
    const KEY: &'static str = "authorize";
    fn message(args: &Args) -> String {
        format!("Authorize access to {}", args.name)
    }
    fn url(args: &Args) -> String {
        format!("https://auth.example.com/grant?db={}", args.name)
    }
}

#[tokio::test]
async fn url_elicitation_is_asked_in_url_mode_and_resumes_when_the_user_is_done() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("t").resolve(
        |args: Args, grant: tern_mcp::mcp::ElicitUrl<Authorize>| async move {
            Ok(format!("{} {:?}", args.name, grant.0))
        },
    );
    let server = server(&mcp);
    let r1 = call(&server, "t", json!({"name": "db"}), None, None)
        .await
        .unwrap();
    let asked = &r1["inputRequests"]["authorize"]["params"];
    assert_eq!(asked["mode"], "url");
    assert_eq!(asked["url"], "https://auth.example.com/grant?db=db");
    let r2 = call(
        &server,
        "t",
        json!({"name": "db"}),
        Some((&r1, json!({"authorize": {"action": "accept"}}))),
        None,
    )
    .await
    .unwrap();
    assert_eq!(text(&r2), "db Accepted(())");
}

#[tokio::test]
async fn templates_complete_their_variables() {
    let mcp = McpServer::new("s", "1");
    mcp.resource_template("notes://{project}/{id}", "notes")
        .complete("project", |typed: String| async move {
            ["tern", "terrace", "other"]
                .iter()
                .filter(|p| p.starts_with(&typed))
                .map(|p| (*p).to_owned())
                .collect()
        })
        .read(|vars, _ctx| async move { Ok(format!("{} #{}", vars["project"], vars["id"])) });
    let server = server(&mcp);
    let params = json!({"_meta": meta(json!({})), "ref": {"type": "ref/resource", "uri": "notes://{project}/{id}"}, "argument": {"name": "project", "value": "ter"}});
    let result = handle(&server, "completion/complete", params, None)
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["tern", "terrace"]));
}

#[tokio::test]
async fn subscribers_hear_that_the_tool_list_changed() {
    let mcp = McpServer::new("s", "1");
    let server = server(&mcp);
    let (client_end, server_end) = tern_mcp::transport::memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let mut peer = tern_tests::wire::RawPeer::new(client_end);
    peer.send(
        json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": {
            "_meta": meta(json!({})), "notifications": {"toolsListChanged": true}
        }}),
    )
    .await;
    let ack = peer.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // A prompt change is not what was asked for; a tool change is.
    mcp.prompt("p")
        .run(|_a: NoArgs, _ctx: tern_mcp::mcp::ToolContext| async move { Ok("hi".to_owned()) });
    mcp.tool("late")
        .run(
            |_a: NoArgs, _ctx: tern_mcp::mcp::ToolContext| async move { Ok("added while serving") },
        );
    let changed = peer.recv().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // Cancelling the subscription ends the stream without a response.
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub-1"}})).await;
    let list = peer.call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta(json!({}))}})).await;
    assert_eq!(list["result"]["tools"][0]["name"], "late", "{list}");
}

#[tokio::test]
async fn a_static_resource_reads_and_an_unknown_uri_is_not_found() {
    let mcp = McpServer::new("s", "1");
    mcp.resource("file:///readme.txt", "readme")
        .mime_type("text/plain")
        .read(|| async { Ok("hello") });
    let server = server(&mcp);
    let read = |uri: &str| {
        let params = json!({"_meta": meta(json!({})), "uri": uri});
        handle(&server, "resources/read", params, None)
    };
    let ok = read("file:///readme.txt").await.unwrap();
    assert_eq!(ok["contents"][0]["text"], "hello");
    assert_eq!(ok["contents"][0]["mimeType"], "text/plain");
    assert!(
        ok["ttlMs"].is_number() && ok["cacheScope"].is_string(),
        "{ok}"
    );
    let missing = read("file:///nope").await.unwrap_err();
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (-32602, "Resource not found")
    );
}
