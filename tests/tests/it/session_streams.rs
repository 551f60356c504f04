//! A 2025-11-25 session's streams under a caller that opens many or sends much: a
//! message outside any request goes to one GET stream, never to all of them; a session
//! keeps a few GET streams connected, not one per GET; and what its event store keeps
//! for `Last-Event-ID` is bounded in bytes, not only in count.

use std::time::Duration;

use serde_json::json;

use crate::http_support::{SseSocket, legacy_body, legacy_headers, post};
use crate::session_features::{call, get_headers, http_child, session, touch, updated};

#[tokio::test]
async fn a_sessions_notification_goes_to_one_of_its_get_streams_not_to_all() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    call(
        addr,
        &id,
        2,
        "resources/subscribe",
        json!({"uri": "note://a"}),
    )
    .await;
    let mut streams = Vec::new();
    for _ in 0..50 {
        let mut stream = SseSocket::open(addr, "GET", &get_headers(&id, None), "").await;
        assert_eq!(stream.status, 200);
        stream.next().await.expect("a priming event");
        streams.push(stream);
    }
    touch(addr, &id, 3, "note://a").await;

    // The newest stream carries the update; the three before it stay open and quiet.
    let mut newest = streams.pop().unwrap();
    let (_, message) = newest.next_message().await.expect("the update");
    assert_eq!(updated(&[message]), ["note://a"]);
    for stream in streams.iter_mut().rev().take(3) {
        assert!(stream.quiet_for(Duration::from_millis(300)).await);
    }
    // The older ones were ended as newer ones opened: a session keeps four.
    for (n, stream) in streams.iter_mut().take(46).enumerate() {
        assert!(stream.next().await.is_none(), "stream {n} is still open");
    }
}

/// The resident memory of process `pid` now, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test]
async fn a_sessions_event_store_is_bounded_in_bytes() {
    let (child, addr) = http_child(&[]).await;
    let pid = child.id().unwrap();
    let id = session(addr).await;
    let before = rss_kib(pid);
    let text = "x".repeat(1024 * 1024);
    for n in 0..175 {
        let body = legacy_body(
            n,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": text}}),
        );
        let r = post(addr, &legacy_headers(Some(&id)), &body).await;
        assert_eq!(r.status, 200, "{}", &r.body[..200.min(r.body.len())]);
        assert!(r.body.contains("echoing"), "answered on an SSE stream");
    }
    let grew = rss_kib(pid).saturating_sub(before);
    println!("175 SSE-answered calls of 1 MiB in one session: resident memory grew {grew} KiB");
    // The store keeps 4 MiB per session; the rest is the allocator's slack.
    assert!(grew < 48 * 1024, "resident memory grew {grew} KiB");
}
