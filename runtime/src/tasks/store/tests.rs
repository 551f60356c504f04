//! The in-memory task store's rules, as every store keeps them.

use super::*;

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
        asks: Vec::new(),
        result: None,
        error: None,
        cancel_requested: false,
        resume: None,
    }
}

#[tokio::test]
async fn a_restartable_task_is_taken_over_once_its_lease_lapsed_and_by_one_caller() {
    let store = MemoryTaskStore::default();
    let mut restartable = task("r", 60_000);
    restartable.resume = Some("{}".into());
    restartable.lease_ms = now_ms() + 1_000;
    store.create(restartable, 10).await.unwrap();
    store.create(task("plain", 60_000), 10).await.unwrap();
    let later = now_ms() + 20_000;
    assert!(
        !store.take_over("r", now_ms(), later).await.unwrap(),
        "its lease holds"
    );
    let after_lease = now_ms() + 2_000;
    assert!(store.take_over("r", after_lease, later).await.unwrap());
    assert!(
        !store.take_over("r", after_lease, later).await.unwrap(),
        "taken already"
    );
    assert_eq!(store.get("r").await.unwrap().unwrap().lease_ms, later);
    assert!(
        !store
            .take_over("plain", later + 1, later + 2)
            .await
            .unwrap(),
        "not restartable"
    );
    // A finished task is not run again.
    let mut done = Transition::to(Status::Completed, now_ms());
    done.resume = Some("{\"rounds\":1}".into());
    assert!(store.transition("r", done).await.unwrap());
    assert_eq!(
        store.get("r").await.unwrap().unwrap().resume.as_deref(),
        Some("{\"rounds\":1}")
    );
    assert!(!store.take_over("r", later + 1, later + 2).await.unwrap());
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
    store.transition("t", asking(&["a", "b"])).await.unwrap();
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
    let taken = store.take_answers("t").await.unwrap();
    assert_eq!(
        taken,
        [("a".to_owned(), "1".to_owned()), ("b".into(), "1".into())]
    );
    assert!(store.take_answers("t").await.unwrap().is_empty());
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
    assert!(store.transition("t", done).await.unwrap());
    assert!(
        !store
            .transition("t", Transition::to(Status::Failed, now_ms()))
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
    assert!(store.renew("short", now_ms() + 1000).await.unwrap());
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
