//! The in-memory task store's rules, as every store keeps them.

use super::*;
use crate::tasks::now_ms;

fn task(id: &str, ttl_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.into(),
        owner: String::new(),
        status: Status::Working,
        message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms,
        poll_interval_ms: 100,
        lease_ms: now + 10_000,
        fence: 0,
        asks: Vec::new(),
        result: None,
        error: None,
        cancel_requested: false,
        resume: None,
    }
}

#[tokio::test]
async fn a_task_is_taken_over_once_its_lease_lapsed_by_one_caller_under_a_new_token() {
    let store = MemoryTaskStore::default();
    let mut held = task("r", 60_000);
    held.resume = Some("{}".into());
    held.lease_ms = now_ms() + 1_000;
    store.create(held, 10).await.unwrap();
    let later = now_ms() + 20_000;
    assert_eq!(
        store.take_over("r", now_ms(), later).await.unwrap(),
        None,
        "its lease holds"
    );
    let after_lease = now_ms() + 2_000;
    assert_eq!(
        store.take_over("r", after_lease, later).await.unwrap(),
        Some(1)
    );
    assert_eq!(
        store.take_over("r", after_lease, later).await.unwrap(),
        None,
        "taken already"
    );
    let r = store.get("r").await.unwrap().unwrap();
    assert_eq!((r.lease_ms, r.fence), (later, 1));
    // A finished task is not taken over.
    let mut done = Transition::to(Status::Completed, now_ms());
    done.resume = Some("{\"rounds\":1}".into());
    assert!(store.transition("r", 1, done).await.unwrap());
    assert_eq!(
        store.get("r").await.unwrap().unwrap().resume.as_deref(),
        Some("{\"rounds\":1}")
    );
    assert_eq!(
        store.take_over("r", later + 1, later + 2).await.unwrap(),
        None
    );
}

fn lost<T>(r: Result<T, StoreError>) -> bool {
    r.is_err_and(|e| e.is_lease_lost())
}

#[tokio::test]
async fn the_instance_that_lost_its_lease_can_neither_renew_nor_write_nor_take_answers() {
    let store = MemoryTaskStore::default();
    let mut stalled = task("t", 60_000);
    stalled.lease_ms = now_ms().saturating_sub(1);
    store.create(stalled, 10).await.unwrap();
    let new = store
        .take_over("t", now_ms(), now_ms() + 10_000)
        .await
        .unwrap()
        .unwrap();
    // The new holder asks; the client answers (no token: anyone's to deliver).
    assert!(store.transition("t", new, asking(&["a"])).await.unwrap());
    let answer = vec![("a".to_owned(), "1".to_owned())];
    assert_eq!(store.deliver("t", answer, now_ms()).await.unwrap(), ["a"]);
    // The old holder (token 0) is refused everywhere, and changes nothing.
    assert!(lost(store.renew("t", 0, now_ms() + 99_000).await));
    assert!(lost(store.take_answers("t", 0).await));
    let mut stale = Transition::to(Status::Completed, now_ms());
    stale.result = Some("\"old\"".into());
    assert!(lost(store.transition("t", 0, stale).await));
    let r = store.get("t").await.unwrap().unwrap();
    assert_eq!((r.status, r.result, r.fence), (Status::Working, None, new));
    assert!(
        r.lease_ms < now_ms() + 99_000,
        "the old holder's renewal did not apply"
    );
    // The holder's own writes go through.
    assert!(!store.renew("t", new, now_ms() + 10_000).await.unwrap());
    assert_eq!(store.take_answers("t", new).await.unwrap().len(), 1);
    let mut end = Transition::to(Status::Completed, now_ms());
    end.result = Some("\"new\"".into());
    assert!(store.transition("t", new, end).await.unwrap());
    let r = store.get("t").await.unwrap().unwrap();
    assert_eq!(r.result.as_deref(), Some("\"new\""));
}

fn asking(keys: &[&str]) -> Transition {
    let mut t = Transition::to(Status::InputRequired, now_ms());
    t.asks = keys.iter().map(|k| ((*k).into(), "{}".into())).collect();
    t
}

#[tokio::test]
async fn answers_to_keys_not_outstanding_are_ignored_and_the_last_one_resumes_the_task() {
    let store = MemoryTaskStore::default();
    assert_eq!(
        store.create(task("t", 60_000), 100).await.unwrap(),
        Admission::Created
    );
    store.transition("t", 0, asking(&["a", "b"])).await.unwrap();
    let answer = |k: &str| {
        vec![
            (k.to_owned(), "1".to_owned()),
            ("never-asked".into(), "2".into()),
        ]
    };
    assert_eq!(
        store.deliver("t", answer("a"), now_ms()).await.unwrap(),
        ["a"]
    );
    // Answered once: a second answer to the same key is not outstanding any more.
    assert!(
        store
            .deliver("t", answer("a"), now_ms())
            .await
            .unwrap()
            .is_empty()
    );
    let r = store.get("t").await.unwrap().unwrap();
    assert_eq!((r.status, r.asks.len()), (Status::InputRequired, 1));
    assert_eq!(
        store.deliver("t", answer("b"), now_ms()).await.unwrap(),
        ["b"]
    );
    assert_eq!(
        store.get("t").await.unwrap().unwrap().status,
        Status::Working
    );
    let taken = store.take_answers("t", 0).await.unwrap();
    assert_eq!(
        taken,
        [("a".to_owned(), "1".to_owned()), ("b".into(), "1".into())]
    );
    assert!(store.take_answers("t", 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_terminal_task_changes_no_more_and_a_cancel_of_it_asks_nothing() {
    let store = MemoryTaskStore::default();
    assert_eq!(
        store.create(task("t", 60_000), 100).await.unwrap(),
        Admission::Created
    );
    let mut done = Transition::to(Status::Completed, now_ms());
    done.result = Some("{}".into());
    assert!(store.transition("t", 0, done).await.unwrap());
    assert!(
        !store
            .transition("t", 0, Transition::to(Status::Failed, now_ms()))
            .await
            .unwrap()
    );
    assert!(store.request_cancel("t").await.unwrap());
    let r = store.get("t").await.unwrap().unwrap();
    assert_eq!((r.status, r.cancel_requested), (Status::Completed, false));
    assert!(!store.request_cancel("missing").await.unwrap());
}

#[tokio::test]
async fn a_task_is_kept_for_its_ttl_from_creation_and_then_forgotten() {
    let store = MemoryTaskStore::default();
    assert_eq!(
        store.create(task("short", 50), 100).await.unwrap(),
        Admission::Created
    );
    assert!(store.get("short").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert!(store.get("short").await.unwrap().is_none());
    // Renewing a forgotten task tells its body to stop.
    assert!(store.renew("short", 0, now_ms() + 1000).await.unwrap());
}

#[tokio::test]
async fn a_full_store_makes_room_only_from_expired_tasks() {
    let store = MemoryTaskStore::with_capacity(2);
    assert_eq!(
        store.create(task("a", 60_000), 100).await.unwrap(),
        Admission::Created
    );
    assert_eq!(
        store.create(task("b", 30), 100).await.unwrap(),
        Admission::Created
    );
    assert_eq!(
        store.create(task("c", 60_000), 100).await.unwrap(),
        Admission::StoreFull
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        store.create(task("c", 60_000), 100).await.unwrap(),
        Admission::Created
    );
    assert!(
        store.get("a").await.unwrap().is_some(),
        "a live task is never evicted"
    );
}

#[tokio::test]
async fn one_owner_at_its_cap_is_refused_and_others_are_not() {
    let store = MemoryTaskStore::default();
    let owned_by = |id: &str, owner: &str, ttl_ms| TaskRecord {
        owner: owner.into(),
        ..task(id, ttl_ms)
    };
    for n in 0..3 {
        let mine = owned_by(&format!("m{n}"), "mallory", 60_000);
        assert_eq!(store.create(mine, 3).await.unwrap(), Admission::Created);
    }
    let more = owned_by("m3", "mallory", 60_000);
    assert_eq!(store.create(more, 3).await.unwrap(), Admission::OwnerAtCap);
    let theirs = owned_by("a0", "alice", 60_000);
    assert_eq!(store.create(theirs, 3).await.unwrap(), Admission::Created);
    // Expired tasks no longer count against their owner.
    let other = MemoryTaskStore::default();
    let short = owned_by("s", "bob", 20);
    assert_eq!(other.create(short, 1).await.unwrap(), Admission::Created);
    tokio::time::sleep(Duration::from_millis(40)).await;
    let next = owned_by("t", "bob", 60_000);
    assert_eq!(other.create(next, 1).await.unwrap(), Admission::Created);
}

#[tokio::test]
async fn finished_tasks_do_not_hold_the_running_cap_and_are_kept_up_to_it() {
    let store = MemoryTaskStore::default();
    let owned = |id: String| TaskRecord {
        owner: "anon:10.0.0.1".into(),
        ..task(&id, 60_000)
    };
    // Five quick tasks, each finished before the next: a cap of 2 running never bites.
    for n in 0..5 {
        let id = format!("q{n}");
        assert_eq!(
            store.create(owned(id.clone()), 2).await.unwrap(),
            Admission::Created
        );
        let mut done = Transition::to(Status::Completed, now_ms() + n);
        done.result = Some("{}".into());
        assert!(store.transition(&id, 0, done).await.unwrap());
    }
    // Running ones are still capped.
    for n in 0..2 {
        let id = format!("r{n}");
        assert_eq!(
            store.create(owned(id), 2).await.unwrap(),
            Admission::Created
        );
    }
    let more = store.create(owned("r2".into()), 2).await.unwrap();
    assert_eq!(more, Admission::OwnerAtCap);
    // Of the finished, the newest two are kept: storage stays bounded.
    let mut kept = Vec::new();
    for n in 0..5 {
        if store.get(&format!("q{n}")).await.unwrap().is_some() {
            kept.push(n);
        }
    }
    assert_eq!(kept, [3, 4]);
}

#[tokio::test]
async fn finished_tasks_are_forgotten_in_the_order_they_ended_within_one_millisecond() {
    let store = MemoryTaskStore::default();
    let at = now_ms();
    // Five quick tasks that end in the same millisecond, their ids sorting backwards.
    let ids = ["q4", "q3", "q2", "q1", "q0"];
    for id in ids {
        let created = store.create(task(id, 60_000), 2).await.unwrap();
        assert_eq!(created, Admission::Created);
        let mut done = Transition::to(Status::Completed, at);
        done.result = Some("{}".into());
        assert!(store.transition(id, 0, done).await.unwrap());
    }
    // The next start trims them to two: the two that ended last.
    let next = store.create(task("next", 60_000), 2).await.unwrap();
    assert_eq!(next, Admission::Created);
    let mut kept = Vec::new();
    for id in ids {
        if store.get(id).await.unwrap().is_some() {
            kept.push(id);
        }
    }
    assert_eq!(kept, ["q1", "q0"]);
}
