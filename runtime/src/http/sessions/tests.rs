//! The sessions of one endpoint: found by their header, owned, expired and capped.

use super::*;
use crate::types::v2026_07_28::RequestId;
use http::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

fn server() -> crate::server::Server {
    crate::server::Server::builder("s", "1").build().unwrap()
}

fn session() -> Session {
    let params = serde_json::json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}
    });
    let server = crate::server::Server::builder("s", "1").build().unwrap();
    server.open_session(Some(&params)).unwrap().0
}

fn naming(id: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(SESSION_HEADER, HeaderValue::from_str(id).unwrap());
    headers
}

fn alice() -> AuthInfo {
    AuthInfo {
        client_id: "app".into(),
        subject: Some("alice".into()),
        ..AuthInfo::default()
    }
}

#[tokio::test]
async fn a_session_is_found_by_its_header_and_ended_once() {
    let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
    let id = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(sessions.find(&server(), &naming(&id), None).await.is_ok());
    assert_eq!(
        sessions
            .find(&server(), &HeaderMap::new(), None)
            .await
            .err(),
        Some(Lookup::Missing)
    );
    assert_eq!(
        sessions.find(&server(), &naming("nope"), None).await.err(),
        Some(Lookup::Unknown)
    );
    assert_eq!(sessions.end(&server(), &naming(&id), None).await, Ok(()));
    assert_eq!(
        sessions.end(&server(), &naming(&id), None).await,
        Err(Lookup::Unknown)
    );
}

#[tokio::test]
async fn a_session_belongs_to_the_caller_that_opened_it() {
    let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
    let id = sessions
        .open(session(), None, Some(&alice()), quiet())
        .await
        .unwrap()
        .unwrap();
    assert!(
        sessions
            .find(&server(), &naming(&id), Some(&alice()))
            .await
            .is_ok()
    );
    let bob = AuthInfo {
        subject: Some("bob".into()),
        ..alice()
    };
    assert_eq!(
        sessions
            .find(&server(), &naming(&id), Some(&bob))
            .await
            .err(),
        Some(Lookup::Unknown)
    );
    assert_eq!(
        sessions.find(&server(), &naming(&id), None).await.err(),
        Some(Lookup::Unknown)
    );
}

#[tokio::test]
async fn idle_sessions_expire_and_make_room() {
    let sessions = Sessions::new(limits(Duration::ZERO, 1));
    let first = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2));
    // Full, but the first one is idle past the timeout: swept to make room.
    let second = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sessions.len(), 1);
    std::thread::sleep(Duration::from_millis(2));
    assert_eq!(
        sessions.find(&server(), &naming(&first), None).await.err(),
        Some(Lookup::Unknown)
    );
    assert_eq!(
        sessions.find(&server(), &naming(&second), None).await.err(),
        Some(Lookup::Unknown)
    );
}

#[tokio::test]
async fn a_session_serving_a_request_does_not_expire() {
    let idle = Duration::from_millis(250);
    let sessions = Sessions::new(limits(idle, 10));
    let id = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    let live = sessions.find(&server(), &naming(&id), None).await.unwrap();
    let tracked = live
        .in_flight
        .track(&RequestId::Integer(1), CancellationToken::new());
    std::thread::sleep(idle * 2);
    assert!(
        sessions.find(&server(), &naming(&id), None).await.is_ok(),
        "busy, so not idle"
    );
    drop(tracked);
    std::thread::sleep(idle * 2);
    assert_eq!(
        sessions.find(&server(), &naming(&id), None).await.err(),
        Some(Lookup::Unknown)
    );
}

#[tokio::test]
async fn at_the_cap_the_least_recently_used_idle_session_makes_room() {
    let sessions = Sessions::new(limits(Duration::from_secs(60), 2));
    let first = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    let second = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    // Using the first makes the second the least recently used.
    std::thread::sleep(Duration::from_millis(2));
    sessions
        .find(&server(), &naming(&first), None)
        .await
        .unwrap();
    let third = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(
        sessions.find(&server(), &naming(&second), None).await.err(),
        Some(Lookup::Unknown)
    );
    assert!(
        sessions
            .find(&server(), &naming(&first), None)
            .await
            .is_ok()
    );
    // Sessions serving a request are never evicted: when all are busy, refuse.
    let mut busy = Vec::new();
    for name in [&first, &third] {
        let s = sessions.find(&server(), &naming(name), None).await.unwrap();
        busy.push(
            s.in_flight
                .track(&RequestId::Integer(1), CancellationToken::new()),
        );
    }
    assert!(
        sessions
            .open(session(), None, None, quiet())
            .await
            .unwrap()
            .is_none()
    );
    drop(busy);
    assert!(
        sessions
            .open(session(), None, None, quiet())
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn one_caller_at_its_own_cap_gives_up_its_own_sessions_not_others() {
    let sessions = Sessions::new(Limits {
        per_principal: 2,
        ..limits(Duration::from_secs(60), 100)
    });
    let bob = AuthInfo {
        subject: Some("bob".into()),
        ..alice()
    };
    let bobs = sessions
        .open(session(), None, Some(&bob), quiet())
        .await
        .unwrap()
        .unwrap();
    let mut alices = Vec::new();
    for _ in 0..50 {
        alices.push(
            sessions
                .open(session(), None, Some(&alice()), quiet())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(sessions.len(), 3, "alice holds two, bob one");
    assert!(
        sessions
            .find(&server(), &naming(&bobs), Some(&bob))
            .await
            .is_ok()
    );
    assert!(
        sessions
            .find(&server(), &naming(&alices[49]), Some(&alice()))
            .await
            .is_ok()
    );
    assert!(
        sessions
            .find(&server(), &naming(&alices[0]), Some(&alice()))
            .await
            .is_err()
    );
}

fn limits(idle_timeout: Duration, max: usize) -> Limits {
    Limits {
        idle_timeout,
        max,
        per_principal: max,
        store: Arc::new(super::super::events::MemoryEventStore::default()),
        retry: Duration::from_secs(1),
        shared: None,
    }
}

/// Events from a server that publishes none.
fn quiet() -> broadcast::Receiver<crate::server::Stamped> {
    broadcast::channel(1).1
}

#[tokio::test]
async fn ending_a_session_cancels_its_requests() {
    let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
    let id = sessions
        .open(session(), None, None, quiet())
        .await
        .unwrap()
        .unwrap();
    let live = sessions.find(&server(), &naming(&id), None).await.unwrap();
    let token = CancellationToken::new();
    let _tracked = live.in_flight.track(&RequestId::Integer(7), token.clone());
    sessions.end(&server(), &naming(&id), None).await.unwrap();
    assert!(token.is_cancelled());
}
