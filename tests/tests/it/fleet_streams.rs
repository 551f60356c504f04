//! 2025-11-25 sessions' streams shared by a fleet through a `RedisEventStore` (one
//! redis-server, started by the test; `#[ignore]`d in a plain `cargo test`, run by
//! `scripts/fleet`): a stream dropped on one instance resumes with `Last-Event-ID` on
//! another, with nothing lost and nothing twice; a session's GET stream, held by any
//! instance, hears what any instance tells the session, once; another caller cannot
//! resume it; the store itself keeps each session within its bounds and forgets it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tern_mcp::fleet::RedisEventStore;
use tern_mcp::http::EventStore;
use tern_mcp::server::ServerEvent;
use tern_mcp::types::v2026_07_28::LoggingLevel;

use crate::fleet_sessions::{Fleet, as_user, call, initialize, two_instances};
use crate::http_support::{self, legacy_body, set};
use crate::redis_support::redis;

fn get_headers(user: &str, session: &str, last_event: Option<&str>) -> Vec<(String, String)> {
    let mut headers = as_user(user, Some(session));
    set(&mut headers, "Accept", Some("text/event-stream"));
    if let Some(id) = last_event {
        headers.push(("Last-Event-ID".into(), id.to_owned()));
    }
    headers
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_stream_dropped_on_one_instance_resumes_on_another_with_nothing_lost() {
    let fleet = two_instances("fleet-streams-resume", Duration::from_secs(60)).await;
    streams_resume_anywhere(&fleet).await;
}

pub(crate) async fn streams_resume_anywhere(fleet: &Fleet) {
    let (a, b) = (fleet.a, fleet.b);
    let session = initialize(a, "alice").await;

    // The tool runs on A; its stream drops after the first step.
    let body = legacy_body(2, "tools/call", json!({"name": "steps", "arguments": {}}));
    let mut first =
        http_support::SseSocket::open(a, "POST", &as_user("alice", Some(&session)), &body).await;
    assert_eq!(first.status, 200);
    let (id, step) = first.next_message().await.expect("the first step");
    assert_eq!(step["params"]["data"], "step 1", "{step}");
    let id = id.expect("every event has an id");
    drop(first);

    // Another caller cannot resume it, on either instance.
    for addr in [a, b] {
        let refused = http_support::SseSocket::open(
            addr,
            "GET",
            &get_headers("bob", &session, Some(&id)),
            "",
        )
        .await;
        assert_eq!(refused.status, 404);
    }

    // The client resumes on B and hears the rest, once, then the result.
    let mut resumed =
        http_support::SseSocket::open(b, "GET", &get_headers("alice", &session, Some(&id)), "")
            .await;
    assert_eq!(resumed.status, 200);
    let mut heard = Vec::new();
    while let Some((_, message)) = resumed.next_message().await {
        heard.push(message);
    }
    let steps: Vec<&str> = heard
        .iter()
        .filter_map(|m| m["params"]["data"].as_str())
        .collect();
    assert_eq!(steps, ["step 2", "step 3"], "{heard:?}");
    let result = heard.last().expect("the result");
    assert_eq!(
        result["result"]["content"][0]["text"], "all steps done",
        "{result}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_session_with_a_stream_and_its_events_takes_five_keys_at_most() {
    let fleet = two_instances("fleet-streams-keys", Duration::from_secs(60)).await;
    // A session, its GET stream on one instance, events told by the other, and the
    // stream resumed there.
    let session = get_streams_hear_once(&fleet).await;
    let redis = fleet.redis.as_ref().expect("the fleet's own redis");
    let keys = redis.keys_with(&session).await;
    // One for the session's record, four for its stream's events.
    assert!((1..=5).contains(&keys.len()), "a session's keys: {keys:?}");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_get_stream_held_by_one_instance_hears_what_another_tells_once() {
    let fleet = two_instances("fleet-streams-get", Duration::from_secs(60)).await;
    get_streams_hear_once(&fleet).await;
}

/// The session's id.
pub(crate) async fn get_streams_hear_once(fleet: &Fleet) -> String {
    let (a, b, b_server) = (fleet.a, fleet.b, &fleet.b_server);
    let session = initialize(a, "alice").await;
    // Both instances serve the session: each forwards the server's events to it.
    assert_eq!(call(b, "alice", &session).await.status, 200);

    let mut stream =
        http_support::SseSocket::open(a, "GET", &get_headers("alice", &session, None), "").await;
    assert_eq!(stream.status, 200);
    b_server
        .tool("added")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("new") });
    let (id, heard) = stream.next_message().await.expect("a notification");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    assert!(
        stream.quiet_for(Duration::from_millis(300)).await,
        "told once"
    );

    // The GET stream drops; a change made meanwhile waits in the store, and the
    // client resuming on B hears it.
    drop(stream);
    b_server
        .tool("another")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("new") });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut resumed =
        http_support::SseSocket::open(b, "GET", &get_headers("alice", &session, id.as_deref()), "")
            .await;
    assert_eq!(resumed.status, 200);
    let (_, heard) = resumed
        .next_message()
        .await
        .expect("the change made meanwhile");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    assert!(
        resumed.quiet_for(Duration::from_millis(300)).await,
        "told once"
    );
    session
}

/// The store's own rules, as the in-memory store keeps them.
#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_redis_event_store_replays_bounds_and_forgets_as_the_memory_store_does() {
    let redis = redis("fleet-streams-store").await;
    let store = RedisEventStore::connect(&redis.url).await.unwrap();
    let first = store.append("s", "r1", "progress").await.unwrap();
    store.append("s", "g1", "elsewhere").await.unwrap();
    store.append("s", "r1", "response").await.unwrap();
    store.end_stream("s", "r1").await.unwrap();
    let replay = store.replay("s", &first).await.unwrap().expect("kept");
    assert_eq!(replay.stream, "r1");
    assert_eq!(replay.events.len(), 1);
    assert_eq!(replay.events[0].1, "response");
    assert!(replay.ended);
    assert_eq!(store.replay("other", &first).await.unwrap(), None);
    assert_eq!(
        store.replay("s", "r1.99").await.unwrap(),
        None,
        "never handed out"
    );
    assert_eq!(store.replay("s", "nonsense").await.unwrap(), None);

    // Told outside any request: on the GET stream, once per key.
    let primed = store.open_get("s", "g2").await.unwrap();
    store.notify("s", "x.1", "changed").await.unwrap();
    store.notify("s", "x.1", "changed").await.unwrap();
    let replay = store.replay("s", &primed).await.unwrap().unwrap();
    assert_eq!(replay.events.len(), 1);

    store.end_session("s").await.unwrap();
    assert_eq!(store.replay("s", &first).await.unwrap(), None);
    assert_eq!(keys(&redis).await, 0, "nothing of an ended session is left");

    // What a stream costs Redis: a session with a hundred ordinary notifications kept.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "step 1 of 3: resolving the region"}})
    .to_string();
    for _ in 0..100 {
        store
            .append("m", "rabcdef0123456789-1", &note)
            .await
            .unwrap();
    }
    let mut bytes = 0;
    for part in ["log", "meta", "ended", "told"] {
        let key = format!("tern:events:{{m}}:{part}");
        let usage = redis.cli(&["MEMORY", "USAGE", &key]).await;
        bytes += usage.parse::<usize>().unwrap_or(0);
    }
    println!(
        "fleet: one session's stream in Redis: {bytes} bytes for 100 events of {} bytes",
        note.len()
    );
    assert!(bytes < 100 * (note.len() + 200), "{bytes} bytes");
    store.end_session("m").await.unwrap();

    // Bounded by count, by bytes and by age.
    let counted =
        store
            .clone()
            .bounds(2, 1 << 20, Duration::from_secs(60), Duration::from_secs(60));
    let ids: Vec<String> = futures_ids(&counted, "c", 4, "x").await;
    assert_eq!(
        counted.replay("c", &ids[0]).await.unwrap(),
        None,
        "pushed out by the count"
    );
    assert!(counted.replay("c", &ids[2]).await.unwrap().is_some());
    let sized = store.clone().bounds(
        100,
        10_000,
        Duration::from_secs(60),
        Duration::from_secs(60),
    );
    let ids = futures_ids(&sized, "z", 10, &"x".repeat(3_000)).await;
    assert_eq!(
        sized.replay("z", &ids[5]).await.unwrap(),
        None,
        "pushed out by the size"
    );
    assert_eq!(
        sized
            .replay("z", &ids[6])
            .await
            .unwrap()
            .unwrap()
            .events
            .len(),
        3
    );
    let aged = store.clone().bounds(
        100,
        1 << 20,
        Duration::from_millis(50),
        Duration::from_millis(50),
    );
    let ids = futures_ids(&aged, "t", 2, "x").await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(
        aged.replay("t", &ids[0]).await.unwrap(),
        None,
        "pushed out by the age"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !has_keys(&redis, "{t}").await,
        "an idle session's keys expire"
    );
}

async fn futures_ids(
    store: &RedisEventStore,
    session: &str,
    n: usize,
    message: &str,
) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(store.append(session, "r1", message).await.unwrap());
    }
    ids
}

async fn keys(redis: &crate::redis_support::Redis) -> usize {
    redis.cli(&["DBSIZE"]).await.parse().unwrap()
}

async fn has_keys(redis: &crate::redis_support::Redis, tag: &str) -> bool {
    !redis.keys_with(tag).await.is_empty()
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_choice_made_through_one_instance_filters_what_every_instance_tells_the_session() {
    let fleet = two_instances("fleet-streams-choices", Duration::from_secs(60)).await;
    let (a, b, b_server) = (fleet.a, fleet.b, &fleet.b_server);
    let session = initialize(a, "alice").await;
    // A holds the GET stream (and the session as it was then: no level chosen).
    let mut stream =
        http_support::SseSocket::open(a, "GET", &get_headers("alice", &session, None), "").await;
    assert_eq!(stream.status, 200);
    // The client chooses `error` through B.
    let level = legacy_body(3, "logging/setLevel", json!({"level": "error"}));
    let chosen = http_support::post(b, &as_user("alice", Some(&session)), &level).await;
    assert_eq!(chosen.status, 200);
    tokio::time::sleep(Duration::from_millis(200)).await;
    for (level, text) in [
        (LoggingLevel::Info, "below the level"),
        (LoggingLevel::Error, "at the level"),
    ] {
        b_server.publish(ServerEvent::Log {
            level,
            logger: None,
            data: Arc::new(json!(text)),
        });
    }
    let (_, heard) = stream.next_message().await.expect("a log message");
    assert_eq!(heard["params"]["data"], "at the level", "{heard}");
    assert!(stream.quiet_for(Duration::from_millis(300)).await);
}
