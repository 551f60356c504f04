//! 2025-11-25 sessions shared by a fleet through a `RedisSessionStore` (one
//! redis-server, started by the test; `#[ignore]`d in a plain `cargo test`, run by
//! `scripts/fleet`): a session opened on one instance is served by
//! another, its choices (a log level, a subscription) are kept for every instance, it
//! belongs to its caller on every instance, and DELETE or the idle timeout ends it
//! everywhere; the client's answer to a question one instance asked on the session may
//! reach another, which relays it (or says the asking instance has gone). Without a
//! store, an instance knows only its own sessions.

use crate::http_support::{self, legacy_body, legacy_headers, post, send, set};
use crate::redis_support::redis;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::fleet::{RedisEventStore, RedisSessionStore};
use tern_mcp::http::{EventStore, HttpLimits, HttpServer, SessionStore};
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::server::SessionInput;
use tern_mcp::transport::BoxFuture;
use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolResult, LoggingLevel};

/// Tokens are `user:NAME`.
struct Users;

impl TokenVerifier for Users {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let user = token.strip_prefix("user:").map(str::to_owned);
        Box::pin(async move {
            let user = user.ok_or_else(|| AuthError::InvalidToken("not user:NAME".into()))?;
            Ok(AuthInfo::new("app").with_subject(user))
        })
    }
}

/// What the instances of a fleet share: sessions' records and their events.
#[derive(Clone)]
pub(crate) struct Stores {
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) events: Arc<dyn EventStore>,
}

impl Stores {
    pub(crate) async fn redis(url: &str) -> Self {
        Self {
            sessions: Arc::new(RedisSessionStore::connect(url).await.unwrap()),
            events: Arc::new(RedisEventStore::connect(url).await.unwrap()),
        }
    }
}

/// One instance of the fleet: its own process state, the shared stores.
async fn instance(stores: Option<Stores>, idle: Duration) -> SocketAddr {
    serving(stores, idle).await.0
}

/// [`instance`], and its server to change while it serves.
async fn serving(stores: Option<Stores>, idle: Duration) -> (SocketAddr, McpServer) {
    let mcp = McpServer::new("fleet", "1").fulfil_input_on_sessions(SessionInput::default());
    mcp.tool("whoami")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let who = ctx
                .auth()
                .and_then(|a| a.subject.clone())
                .unwrap_or_default();
            Ok(format!("served {who}"))
        });
    // On a session, its question goes to the client as elicitation/create.
    mcp.tool("confirm")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if ctx.request_state() == Some("asked") {
                let done = CallToolResult::new(vec![ask::text("confirmed")]);
                return Ok(CallToolOutcome::Complete(done));
            }
            let form = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            Ok(
                ask::input_required([("ok", ask::elicit_form("Sure?", form)?)], Some("asked"))
                    .into(),
            )
        });
    // Three steps, each logged a little apart: time for a stream to drop.
    mcp.tool("steps")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            for step in 1..=3u32 {
                ctx.log(LoggingLevel::Info, json!(format!("step {step}")));
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            Ok("all steps done")
        });
    mcp.resource("note://a", "a").read(|| async { Ok("A") });
    let mut limits = HttpLimits::default();
    limits.session_idle_timeout = idle;
    let mut http = HttpServer::new(mcp.server().unwrap())
        .token_verifier(Arc::new(Users))
        .limits(limits);
    if let Some(stores) = stores {
        http = http
            .session_store(stores.sessions)
            .event_store(stores.events);
    }
    (http_support::serve(http).await, mcp)
}

/// Two instances sharing their stores on a redis-server of their own.
pub(crate) struct Fleet {
    /// The redis-server of their own, if they have one.
    pub(crate) redis: Option<crate::redis_support::Redis>,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) a: SocketAddr,
    pub(crate) b: SocketAddr,
    /// The second instance's server, to change while it serves.
    pub(crate) b_server: McpServer,
}

pub(crate) async fn two_instances(name: &str, idle: Duration) -> Fleet {
    let redis = redis(name).await;
    let mut fleet = two_instances_on(&redis.url, idle).await;
    fleet.redis = Some(redis);
    fleet
}

/// Two instances sharing their stores on the Redis (or Redis Cluster) at `url`.
pub(crate) async fn two_instances_on(url: &str, idle: Duration) -> Fleet {
    let stores = Stores::redis(url).await;
    let a = instance(Some(stores.clone()), idle).await;
    let (b, b_server) = serving(Some(stores.clone()), idle).await;
    Fleet {
        redis: None,
        store: stores.sessions,
        a,
        b,
        b_server,
    }
}

pub(crate) fn as_user(user: &str, session: Option<&str>) -> Vec<(String, String)> {
    let mut headers = legacy_headers(session);
    headers.push(("Authorization".into(), format!("Bearer user:{user}")));
    headers
}

pub(crate) async fn initialize(addr: SocketAddr, user: &str) -> String {
    let mut headers = as_user(user, None);
    set(&mut headers, "MCP-Protocol-Version", None);
    let answer = post(addr, &headers, &http_support::initialize_body()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.header("mcp-session-id").unwrap().to_owned()
}

pub(crate) async fn call(addr: SocketAddr, user: &str, session: &str) -> http_support::Raw {
    let body = legacy_body(2, "tools/call", json!({"name": "whoami", "arguments": {}}));
    post(addr, &as_user(user, Some(session)), &body).await
}

fn text(answer: &http_support::Raw) -> String {
    let message = answer
        .events()
        .into_iter()
        .last()
        .unwrap_or_else(|| answer.json());
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn any_instance_serves_a_session_another_opened_and_its_end_is_everywhere() {
    let fleet = two_instances("fleet-sessions", Duration::from_secs(60)).await;
    sessions_are_shared(&fleet).await;
}

pub(crate) async fn sessions_are_shared(fleet: &Fleet) {
    let idle = Duration::from_secs(60);
    let (store, a, b) = (&fleet.store, fleet.a, fleet.b);

    let session = initialize(a, "alice").await;
    let answer = call(b, "alice", &session).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(text(&answer), "served alice");

    // A choice made through B is the session's, for every instance.
    let level = legacy_body(3, "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(
        post(b, &as_user("alice", Some(&session)), &level)
            .await
            .status,
        200
    );
    let subscribe = legacy_body(4, "resources/subscribe", json!({"uri": "note://a"}));
    assert_eq!(
        post(a, &as_user("alice", Some(&session)), &subscribe)
            .await
            .status,
        200
    );
    let record = store.get(&session, idle).await.unwrap().expect("kept");
    assert!(
        record.contains("\"warning\"") && record.contains("note://a"),
        "{record}"
    );
    // What one session costs the Redis it is kept in (its record and the key).
    if let Some(redis) = &fleet.redis {
        let socket = redis.url.trim_start_matches("redis+unix://");
        let key = format!("tern:session:{{{session}}}");
        let usage = tokio::process::Command::new("redis-cli")
            .args(["-s", socket, "MEMORY", "USAGE", &key])
            .output()
            .await
            .expect("redis-cli comes with redis-server");
        let bytes: usize = String::from_utf8_lossy(&usage.stdout)
            .trim()
            .parse()
            .unwrap();
        println!("fleet: one 2025-11-25 session's record in Redis: {bytes} bytes");
        assert!(bytes < 2048, "{bytes} bytes");
    }

    // The session is alice's on every instance.
    assert_eq!(call(b, "bob", &session).await.status, 404);
    assert_eq!(call(a, "bob", &session).await.status, 404);

    // Ended through B: gone on A too.
    let ended = send(b, "DELETE", &as_user("alice", Some(&session)), "").await;
    assert_eq!(ended.status, 200, "{ended:?}");
    assert_eq!(call(a, "alice", &session).await.status, 404);
    assert_eq!(store.get(&session, idle).await.unwrap(), None);
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn an_idle_session_expires_in_the_store_for_every_instance() {
    let idle = Duration::from_millis(400);
    let fleet = two_instances("fleet-sessions-idle", idle).await;
    let (a, b) = (fleet.a, fleet.b);
    let session = initialize(a, "alice").await;
    // Each use, on either instance, keeps it alive.
    for addr in [b, a, b] {
        tokio::time::sleep(idle / 2).await;
        assert_eq!(call(addr, "alice", &session).await.status, 200);
    }
    tokio::time::sleep(idle * 3).await;
    assert_eq!(call(a, "alice", &session).await.status, 404);
    assert_eq!(call(b, "alice", &session).await.status, 404);
}

#[tokio::test]
async fn without_a_store_an_instance_knows_only_its_own_sessions() {
    let idle = Duration::from_secs(60);
    let a = instance(None, idle).await;
    let b = instance(None, idle).await;
    let session = initialize(a, "alice").await;
    assert_eq!(call(a, "alice", &session).await.status, 200);
    assert_eq!(call(b, "alice", &session).await.status, 404);
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn an_answer_posted_to_another_instance_reaches_the_question_it_answers() {
    let fleet = two_instances("fleet-sessions-relay", Duration::from_secs(60)).await;
    answers_are_relayed(&fleet).await;
}

pub(crate) async fn answers_are_relayed(fleet: &Fleet) {
    let (a, b) = (fleet.a, fleet.b);
    let session = initialize(a, "alice").await;

    // The tool asks on A's stream...
    let body = legacy_body(2, "tools/call", json!({"name": "confirm", "arguments": {}}));
    let mut stream =
        http_support::SseSocket::open(a, "POST", &as_user("alice", Some(&session)), &body).await;
    assert_eq!(stream.status, 200);
    let (_, asked) = stream.next_message().await.expect("a question");
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let id = asked["id"].clone();
    assert!(
        id.is_string(),
        "in a fleet, a request's id names its instance: {id}"
    );

    // ... the client answers through B ...
    let answer = json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"ok": true}}});
    let relayed = post(b, &as_user("alice", Some(&session)), &answer.to_string()).await;
    assert_eq!(relayed.status, 202, "{relayed:?}");

    // ... and the tool finishes on A.
    let (_, done) = stream.next_message().await.expect("the result");
    assert_eq!(done["result"]["content"][0]["text"], "confirmed", "{done}");

    // An answer for an instance that has gone (no one listens under its name): said.
    let orphan = json!({"jsonrpc": "2.0", "id": "0123456789abcdef.7",
        "result": {"action": "accept", "content": {"ok": true}}});
    let refused = post(b, &as_user("alice", Some(&session)), &orphan.to_string()).await;
    assert_eq!(refused.status, 404, "{refused:?}");
    assert!(refused.body.contains("has gone"), "{}", refused.body);
    // The session lives on.
    assert_eq!(call(b, "alice", &session).await.status, 200);
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_change_made_through_one_instance_reaches_a_stream_held_by_another() {
    let fleet = two_instances("fleet-sessions-bus", Duration::from_secs(60)).await;
    let (a, b, b_server) = (fleet.a, fleet.b, &fleet.b_server);
    let session = initialize(a, "alice").await;
    // A request through B starts B's end of the bus (as any first request does).
    assert_eq!(call(b, "alice", &session).await.status, 200);

    // The session's GET stream is held by A...
    let mut headers = as_user("alice", Some(&session));
    set(&mut headers, "Accept", Some("text/event-stream"));
    let mut stream = http_support::SseSocket::open(a, "GET", &headers, "").await;
    assert_eq!(stream.status, 200);
    // ... a tool is added through B ...
    b_server
        .tool("added")
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("new") });
    // ... and A's stream says the list changed.
    let (_, heard) = stream.next_message().await.expect("a notification");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    // Once: A does not hear its own events back, nor B's twice.
    assert!(stream.quiet_for(Duration::from_millis(300)).await);
}
