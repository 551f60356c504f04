//! Streams under a caller that opens many or sends much. A 2025-11-25 session: a
//! message outside any request goes to one GET stream, never to all of them; a session
//! keeps a few GET streams connected, not one per GET; what its event store keeps for
//! `Last-Event-ID` is bounded in bytes, not only in count. Streams that never end
//! (`subscriptions/listen`, GET) are capped per caller, so one client cannot take every
//! connection, and a listen stream keeps about what it asked for.

use std::time::Duration;

use serde_json::json;

use crate::http_support::{SseSocket, body, legacy_body, legacy_headers, mcp_headers, post};
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
    crate::http_support::memory_kib(pid, "VmRSS")
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

fn listen_request(uris: &[String]) -> String {
    let params =
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": uris}});
    body(1, "subscriptions/listen", params)
}

#[tokio::test]
async fn one_caller_holds_sixteen_never_ending_streams_and_others_are_still_served() {
    let (_child, addr) = http_child(&[]).await;
    let headers = mcp_headers("subscriptions/listen", None);
    let mut held = Vec::new();
    for _ in 0..16 {
        let mut stream = SseSocket::open(addr, "POST", &headers, &listen_request(&[])).await;
        assert_eq!(stream.status, 200);
        stream.next_message().await.expect("the acknowledgement");
        held.push(stream);
    }
    let refused = post(addr, &headers, &listen_request(&[])).await;
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(refused.header("retry-after").is_some());
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("you hold 16"), "{message}");
    // A session's GET stream counts against the same caller.
    let id = session(addr).await;
    let get = post_get(addr, &id).await;
    assert_eq!(get.status, 429, "{get:?}");
    // Requests are not streams: the same caller's call is served.
    touch(addr, &id, 2, "note://a").await;
    // A stream given up makes room for another.
    held.pop();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = SseSocket::open(addr, "POST", &headers, &listen_request(&[])).await;
    assert_eq!(again.status, 200);
    again.next_message().await.expect("the acknowledgement");
}

async fn post_get(addr: std::net::SocketAddr, session: &str) -> crate::http_support::Raw {
    crate::http_support::send(addr, "GET", &get_headers(session, None), "").await
}

#[tokio::test]
async fn a_listen_stream_keeps_about_what_it_asked_for() {
    let (child, addr) = http_child(&[]).await;
    let pid = child.id().unwrap();
    let headers = mcp_headers("subscriptions/listen", None);
    // A warm-up stream, so the baseline holds the buffers any stream needs.
    let mut warm = SseSocket::open(addr, "POST", &headers, &listen_request(&[])).await;
    warm.next_message().await.expect("the acknowledgement");
    let before = rss_kib(pid);
    let mut held = Vec::new();
    let mut asked = 0;
    for s in 0..5 {
        let uris: Vec<String> = (0..1000)
            .map(|i| format!("note://{s}/{i}/{}", "x".repeat(3_400)))
            .collect();
        let text = listen_request(&uris);
        asked += text.len();
        let mut stream = SseSocket::open(addr, "POST", &headers, &text).await;
        assert_eq!(stream.status, 200);
        stream.next_message().await.expect("the acknowledgement");
        held.push(stream);
    }
    let held_kib = rss_kib(pid);
    let asked_kib = asked as u64 / 5 / 1024;
    drop(held);
    // The streams' own memory is what their end gives back; the rest of the growth is
    // the allocator keeping what the requests' reading used for a moment.
    let mut freed = 0;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        freed = held_kib.saturating_sub(rss_kib(pid)) / 5;
    }
    let grew = held_kib.saturating_sub(before) / 5;
    println!(
        "a listen stream of 1,000 URIs of 3.4 KB ({asked_kib} KiB asked): resident memory \
         grew {grew} KiB per stream, {freed} KiB per stream given back when they closed"
    );
    assert!(
        freed < 2 * asked_kib,
        "{freed} KiB held for {asked_kib} KiB asked"
    );
    assert!(
        grew < 5 * asked_kib,
        "{grew} KiB grown for {asked_kib} KiB asked"
    );
}
