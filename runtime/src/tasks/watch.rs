//! `notifications/tasks` on a `subscriptions/listen` stream: the tasks a listener named
//! in `notifications.taskIds`, read from the store at the poll interval (so a change
//! made on any instance is heard), each change sent as the task `tasks/get` would
//! return at that moment (a task whose instance stopped taken over or failed first, as
//! `tasks/get` does, so a client that only listens sees it end).

use serde_json::Value;

use super::{Status, TaskRecord, Tasks};
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::types::v2026_07_28::SubscriptionFilter;

/// How many tasks one listen stream may watch.
pub(crate) const MAX_WATCHED_TASKS: usize = 100;

/// The tasks a listener watches, with what it last heard of each.
pub(crate) struct Watch {
    tasks: Tasks,
    /// The listen request: a watched task whose instance stopped is settled through it
    /// (taken over, or failed), as `tasks/get` would.
    ctx: RequestContext,
    watched: Vec<(String, Option<Seen>)>,
}

/// What a notification already told of a task.
#[derive(PartialEq)]
struct Seen {
    status: Status,
    updated_ms: u64,
    asks: usize,
}

impl Seen {
    fn of(r: &TaskRecord) -> Self {
        Self {
            status: r.status,
            updated_ms: r.updated_ms,
            asks: r.asks.len(),
        }
    }
}

impl Watch {
    /// The watch a listen request asks for (`notifications.taskIds`): only the tasks the
    /// caller may see; -32021 when it names tasks without declaring the extension, -32602
    /// past [`MAX_WATCHED_TASKS`] or for ids that are not strings.
    pub(crate) async fn start(
        tasks: &Tasks,
        ctx: &RequestContext,
        filter: &SubscriptionFilter,
    ) -> Result<Self, RpcError> {
        let ids: Vec<String> = match filter.extra.get("taskIds") {
            None => Vec::new(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|_| RpcError::invalid_params("Invalid params: taskIds must be strings"))?,
        };
        if ids.len() > MAX_WATCHED_TASKS {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: at most {MAX_WATCHED_TASKS} taskIds per stream"
            )));
        }
        if !ids.is_empty() && !super::wire::declares(ctx.client_capabilities()) {
            return Err(super::wire::extension_required());
        }
        let mut watched = Vec::with_capacity(ids.len());
        for id in ids.into_iter().filter(|id| super::is_task_id(id)) {
            let visible = tasks
                .store
                .get(&id)
                .await
                .ok()
                .flatten()
                .is_some_and(|r| super::run::may_see(ctx, &r.owner));
            if visible && !watched.iter().any(|(w, _)| *w == id) {
                watched.push((id, None));
            }
        }
        Ok(Self {
            tasks: tasks.clone(),
            ctx: ctx.for_task(tokio_util::sync::CancellationToken::new()),
            watched,
        })
    }

    /// The ids watched, for the acknowledgement.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.watched.iter().map(|(id, _)| id.clone()).collect()
    }

    /// Waits a poll interval (forever when nothing is watched), then returns the
    /// `notifications/tasks` params of every watched task that changed, each with
    /// `meta` as its `_meta`. A task that ended is watched no more once told.
    pub(crate) async fn changes(&mut self, meta: &Value) -> Vec<Value> {
        if self.watched.is_empty() {
            return std::future::pending().await;
        }
        tokio::time::sleep(self.tasks.poll_interval).await;
        let mut out = Vec::new();
        for (id, seen) in &mut self.watched {
            let Ok(Some(mut record)) = self.tasks.store.get(id).await else {
                continue;
            };
            if super::wire::lapsed(&record) {
                match super::wire::settle(&self.tasks, &self.ctx, record.clone()).await {
                    Ok(settled) => record = settled,
                    Err(e) => {
                        tracing::warn!(task = %id, error = %e.message, "could not settle a watched task")
                    }
                }
            }
            let now = Seen::of(&record);
            if seen.as_ref() == Some(&now) {
                continue;
            }
            *seen = Some(now);
            if let Ok(detailed) = super::wire::detailed(&record) {
                if let Ok(Value::Object(mut params)) = serde_json::to_value(detailed) {
                    params.remove("resultType");
                    params.insert("_meta".into(), meta.clone());
                    out.push(Value::Object(params));
                }
            }
        }
        self.watched
            .retain(|(_, seen)| !seen.as_ref().is_some_and(|s| s.status.is_terminal()));
        out
    }
}
