//! A task store the test can stall: an instance reaches the shared store through it,
//! and while it is paused every call waits, as a stopped process's would.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_mcp::StoreError;
use tern_mcp::tasks::{Admission, TaskRecord, TaskStore, Transition};
use tern_mcp::transport::BoxFuture;
use tokio::sync::watch;

/// A store an instance reaches through, that the test can stall: while paused every
/// call waits, as a stopped process's would; each write it saw refused for a lost
/// lease is written down.
pub(crate) struct Stallable<S> {
    inner: S,
    paused: watch::Sender<bool>,
    refused: Arc<Mutex<Vec<String>>>,
}

#[derive(Clone)]
pub(crate) struct Stall {
    paused: watch::Sender<bool>,
    refused: Arc<Mutex<Vec<String>>>,
}

impl Stall {
    pub(crate) fn pause(&self) {
        self.paused.send_replace(true);
    }

    pub(crate) fn resume(&self) {
        self.paused.send_replace(false);
    }

    pub(crate) fn refused(&self) -> Vec<String> {
        self.refused.lock().unwrap().clone()
    }
}

pub(crate) fn stallable<S: TaskStore>(inner: S) -> (Stallable<S>, Stall) {
    let (paused, _) = watch::channel(false);
    let refused = Arc::default();
    let stall = Stall {
        paused: paused.clone(),
        refused: Arc::clone(&refused),
    };
    (
        Stallable {
            inner,
            paused,
            refused,
        },
        stall,
    )
}

impl<S: TaskStore> Stallable<S> {
    async fn running(&self) {
        let mut paused = self.paused.subscribe();
        let _ = paused.wait_for(|p| !*p).await;
    }

    fn note<T>(&self, what: String, r: Result<T, StoreError>) -> Result<T, StoreError> {
        if r.as_ref().is_err_and(StoreError::is_lease_lost) {
            self.refused.lock().unwrap().push(what);
        }
        r
    }
}

impl<S: TaskStore> TaskStore for Stallable<S> {
    fn create(
        &self,
        task: TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        Box::pin(async move {
            self.running().await;
            self.inner.create(task, per_owner).await
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            self.running().await;
            self.inner.get(id).await
        })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        change: Transition,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            self.running().await;
            let what = format!("transition to {:?}", change.status);
            let r = self.inner.transition(id, fence, change).await;
            self.note(what, r)
        })
    }

    fn deliver<'a>(
        &'a self,
        id: &'a str,
        answers: Vec<(String, String)>,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            self.running().await;
            self.inner.deliver(id, answers, at_ms).await
        })
    }

    fn take_answers<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>> {
        Box::pin(async move {
            self.running().await;
            let r = self.inner.take_answers(id, fence).await;
            self.note("take answers".into(), r)
        })
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            self.running().await;
            self.inner.request_cancel(id).await
        })
    }

    fn renew<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            self.running().await;
            let r = self.inner.renew(id, fence, until_ms).await;
            self.note("renew".into(), r)
        })
    }

    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move {
            self.running().await;
            self.inner.take_over(id, now_ms, until_ms).await
        })
    }

    fn changed<'a>(&'a self, id: &'a str, at_most: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.running().await;
            self.inner.changed(id, at_most).await;
        })
    }
}
