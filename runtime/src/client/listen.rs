//! What the server tells the client besides results, typed: [`Notice`]s, on a call's
//! stream ([`Client::request_with_notices`]) or outside any call
//! ([`Client::listen`]: `subscriptions/listen` in 2026-07-28; in a 2025-11-25 session,
//! `resources/subscribe` and the session's own stream).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::Client;
use crate::transport::OutgoingRequest;
use crate::types::rpc::{ClientRequestMethod, Notification as _, Request as _};
use crate::types::v2025_11_25::method as session_method;
use crate::types::v2026_07_28::{
    LoggingMessageNotificationParams, ProgressNotificationParams, SubscriptionFilter,
    SubscriptionsListenRequestParams, method,
};
use crate::{Era, Error};

/// How long [`Client::listen`] waits for the server to acknowledge a listen stream.
const ACKNOWLEDGE_TIMEOUT: Duration = Duration::from_secs(30);
/// The first wait before a dropped listen stream is opened again; it doubles up to
/// [`RELISTEN_MAX`], and starts over once a stream is acknowledged.
const RELISTEN_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between attempts to open a dropped listen stream again.
const RELISTEN_MAX: Duration = Duration::from_secs(5);

/// A notification from the server, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// `notifications/progress`.
    Progress(ProgressNotificationParams),
    /// `notifications/message`: a log entry.
    Log(LoggingMessageNotificationParams),
    /// `notifications/resources/updated`: the resource at this URI changed.
    ResourceUpdated(String),
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/prompts/list_changed`.
    PromptsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/tasks`: a task the listener watches (its id in the filter's
    /// `taskIds`) changed; the task as `tasks/get` would return it.
    Task(Box<crate::types::ext_tasks::TaskStatusNotificationParams>),
    /// Not the server's: the client's own loop, at a round's end (only on the notice
    /// stream of a call the automatic loop runs, such as
    /// [`Client::call_tool_with_notices`]).
    Round(super::RoundEvent),
    /// Not the server's: the listen stream dropped and is open again (the server
    /// acknowledged it). What the server sent in between is lost (its streams do not
    /// resume): fetch again what you show. The client's response cache forgot that
    /// server's answers.
    Relistened,
    /// Any other notification, as sent.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
}

impl Notice {
    /// Reads a notification given as `{"method": ..., "params": ...}`.
    pub(crate) fn from_message(message: &Value) -> Option<Self> {
        let name = message.get("method")?.as_str()?;
        let params = message.get("params").filter(|p| !p.is_null());
        fn typed<T: serde::de::DeserializeOwned>(p: Option<&Value>) -> Option<T> {
            T::deserialize(p?).ok()
        }
        // A route by method onto the notice each notification is.
        Some(match name {
            method::Progress::METHOD => Self::Progress(typed(params)?),
            method::LoggingMessage::METHOD => Self::Log(typed(params)?),
            method::ResourceUpdated::METHOD => {
                Self::ResourceUpdated(params?.get("uri")?.as_str()?.to_owned())
            }
            method::ToolListChanged::METHOD => Self::ToolsChanged,
            method::PromptListChanged::METHOD => Self::PromptsChanged,
            method::ResourceListChanged::METHOD => Self::ResourcesChanged,
            crate::types::ext_tasks::method::TaskStatus::METHOD => {
                Self::Task(Box::new(typed(params)?))
            }
            other => Self::Other {
                method: other.to_owned(),
                params: params.cloned(),
            },
        })
    }

    /// Whether `filter` asked for this notice.
    fn wanted(&self, filter: &SubscriptionFilter, uris: &HashSet<String>) -> bool {
        let on = |flag: Option<bool>| flag == Some(true);
        match self {
            Self::ToolsChanged => on(filter.tools_list_changed),
            Self::PromptsChanged => on(filter.prompts_list_changed),
            Self::ResourcesChanged => on(filter.resources_list_changed),
            Self::ResourceUpdated(uri) => uris.contains(uri),
            // Log entries outside any request are the session's to hear.
            Self::Log(_) => true,
            Self::Task(task) => filter
                .extra
                .get("taskIds")
                .and_then(Value::as_array)
                .is_some_and(|ids| ids.iter().any(|id| id.as_str() == Some(task_id(task)))),
            _ => false,
        }
    }
}

/// The id of the task a `notifications/tasks` names.
pub(crate) fn task_id(task: &crate::types::ext_tasks::TaskStatusNotificationParams) -> &str {
    use crate::types::ext_tasks::TaskStatusNotificationParams as P;
    match task {
        P::Working(t) => &t.task_id,
        P::InputRequired(t) => &t.task_id,
        P::Completed(t) => &t.task_id,
        P::Failed(t) => &t.task_id,
        P::Cancelled(t) => &t.task_id,
    }
}

/// Where the automatic loop's notifications and round events go
/// ([`Client::notice_sink`]).
pub(crate) struct NoticeSink {
    /// For the transport: the server's notifications on each round's stream.
    pub(crate) raw: mpsc::UnboundedSender<Value>,
    /// For the loop: its round events.
    pub(crate) rounds: mpsc::UnboundedSender<super::RoundEvent>,
    forward: tokio::task::JoinHandle<()>,
}

impl NoticeSink {
    /// Closes the sink and waits until everything in it was handed over.
    pub(crate) async fn close(self) {
        drop(self.raw);
        drop(self.rounds);
        let _ = self.forward.await;
    }
}

/// The notices a [`Client::listen`] stream hears, until it is dropped.
#[derive(Debug)]
pub struct Subscription {
    notices: mpsc::UnboundedReceiver<Notice>,
    task: tokio::task::AbortHandle,
}

impl Subscription {
    /// The next notice; `None` once the stream ended (the server closed it, or the
    /// transport went away).
    pub async fn next(&mut self) -> Option<Notice> {
        self.notices.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Ends the listen request (2026-07-28) or stops forwarding (a session).
        self.task.abort();
    }
}

/// The work of [`Client::request_with_notices`].
pub(super) async fn request_with_notices<M: ClientRequestMethod>(
    client: &Client,
    params: M::Params,
    notices: mpsc::UnboundedSender<Notice>,
) -> crate::Result<M::Result> {
    observed::<M>(client, params, move |notice| {
        let _ = notices.send(notice);
    })
    .await
}

/// Sends one request of method `M`, each notification of its stream read as a
/// [`Notice`] and handed to `on` as it arrives (in a task of its own, so a slow `on`
/// does not hold up the stream); every one that arrived before the response is
/// handed over before this returns.
pub(crate) async fn observed<M: ClientRequestMethod>(
    client: &Client,
    params: M::Params,
    mut on: impl FnMut(Notice) + Send + 'static,
) -> crate::Result<M::Result> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let forward = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if let Some(notice) = Notice::from_message(&message) {
                on(notice);
            }
        }
    });
    let result = client.send::<M>(&params, None, Some(&tx)).await;
    drop(tx);
    let _ = forward.await;
    result
}

/// Sends `logging/setLevel` with the client-wide level, on a 2025-11-25 session
/// that was given one ([`ClientBuilder::log_level`](super::ClientBuilder::log_level)).
pub(crate) async fn set_session_log_level(client: &Client) -> crate::Result<()> {
    let Some(level) = client.inner.log_level else {
        return Ok(());
    };
    let transport = &client.inner.transport;
    let request = OutgoingRequest {
        id: transport.next_id(),
        method: session_method::SetLevel::METHOD.into(),
        params: json!({ "level": level }),
        notifications: None,
    };
    transport
        .request(request)
        .await
        .map(drop)
        .map_err(Error::from)
}

/// A sink for the automatic loop's notifications: log entries to the client's
/// [`on_log`](super::ClientBuilder::on_log), everything to `notices`, with the
/// loop's round events in order among them; `None` when neither listens. The task
/// ends once the sink is dropped and what it holds is handed over.
pub(crate) fn notice_sink(
    client: &Client,
    notices: Option<mpsc::UnboundedSender<Notice>>,
) -> Option<NoticeSink> {
    let on_log = client.inner.on_log.clone();
    if notices.is_none() && on_log.is_none() {
        return None;
    }
    let (raw, mut raw_rx) = mpsc::unbounded_channel::<Value>();
    let (rounds, mut rounds_rx) = mpsc::unbounded_channel::<super::RoundEvent>();
    let client = client.clone();
    let forward = tokio::spawn(async move {
        let hand = |notice: Notice| {
            client.heard(&notice);
            if let (Notice::Log(entry), Some(on_log)) = (&notice, &on_log) {
                on_log(entry.clone());
            }
            if let Some(n) = &notices {
                let _ = n.send(notice);
            }
        };
        // A round event is sent after the response that ended its round, and the
        // transport queued that round's notifications before the response: taking
        // the notifications first keeps the order they happened in.
        loop {
            tokio::select! {
                biased;
                Some(message) = raw_rx.recv() => {
                    if let Some(notice) = Notice::from_message(&message) {
                        hand(notice);
                    }
                }
                Some(event) = rounds_rx.recv() => hand(Notice::Round(event)),
                else => break,
            }
        }
    });
    Some(NoticeSink {
        raw,
        rounds,
        forward,
    })
}

/// The work of [`Client::listen`].
pub(super) async fn listen(
    client: &Client,
    filter: SubscriptionFilter,
) -> crate::Result<Subscription> {
    let uris: HashSet<String> = filter
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    let (tx, rx) = mpsc::unbounded_channel();
    let task = match client.inner.dialect.era() {
        Era::Stateless => listen_stateless(client, filter, uris, tx).await?,
        Era::Session => listen_on_session(client, filter, uris, tx).await?,
    };
    Ok(Subscription { notices: rx, task })
}

async fn listen_stateless(
    client: &Client,
    filter: SubscriptionFilter,
    uris: HashSet<String>,
    tx: mpsc::UnboundedSender<Notice>,
) -> crate::Result<tokio::task::AbortHandle> {
    let (acknowledged, ack) = oneshot::channel::<crate::Result<()>>();
    let client = client.clone();
    let task = tokio::spawn(async move {
        let stream = Stream {
            client,
            params: SubscriptionsListenRequestParams::new(filter.clone()),
            filter,
            uris,
            tx,
        };
        stream.run(acknowledged).await;
    });
    let abort = task.abort_handle();
    match tokio::time::timeout(ACKNOWLEDGE_TIMEOUT, ack).await {
        Ok(Ok(Ok(()))) => Ok(abort),
        Ok(Ok(Err(e))) => Err(e),
        Ok(Err(_)) => Err(Error::Protocol(crate::ProtocolError::Listen(
            "the listen stream ended at once".into(),
        ))),
        Err(_) => {
            abort.abort();
            Err(Error::Protocol(crate::ProtocolError::Listen(
                "the server did not acknowledge subscriptions/listen".into(),
            )))
        }
    }
}

async fn listen_on_session(
    client: &Client,
    filter: SubscriptionFilter,
    uris: HashSet<String>,
    tx: mpsc::UnboundedSender<Notice>,
) -> crate::Result<tokio::task::AbortHandle> {
    let transport = &client.inner.transport;
    // Heard from before the first subscription, so no update falls in between.
    let mut notices = transport.notices().ok_or_else(|| {
        Error::Protocol(crate::ProtocolError::Listen(
            "this transport carries no session notifications to listen to".into(),
        ))
    })?;
    for uri in &uris {
        let request = OutgoingRequest {
            id: transport.next_id(),
            method: session_method::Subscribe::METHOD.into(),
            params: json!({ "uri": uri }),
            notifications: None,
        };
        transport.request(request).await.map_err(Error::from)?;
    }
    let client = client.clone();
    let task = tokio::spawn(async move {
        loop {
            match notices.recv().await {
                Ok(message) => {
                    let heard = Notice::from_message(&message);
                    if let Some(notice) = &heard {
                        client.heard(notice);
                    }
                    let wanted = heard.filter(|notice| notice.wanted(&filter, &uris));
                    if let Some(notice) = wanted {
                        if tx.send(notice).is_err() {
                            break;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "a listener fell behind and missed notifications");
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    Ok(task.abort_handle())
}

/// One `subscriptions/listen` stream kept open: opened again, after a backoff, whenever
/// it drops, until its [`Subscription`] is dropped or the server refuses it.
struct Stream {
    client: Client,
    params: SubscriptionsListenRequestParams,
    filter: SubscriptionFilter,
    uris: HashSet<String>,
    tx: mpsc::UnboundedSender<Notice>,
}

/// How one listen request ended.
enum Ended {
    /// It was acknowledged and then dropped (the connection went, the server ended
    /// it): worth opening again.
    Dropped,
    /// Refused (a JSON-RPC error), never acknowledged, or nobody listens any more.
    Done,
}

impl Stream {
    async fn run(self, acknowledged: oneshot::Sender<crate::Result<()>>) {
        let mut acknowledged = Some(acknowledged);
        let mut delay = RELISTEN_FIRST;
        loop {
            let (ended, was_acknowledged) = self.once(&mut acknowledged).await;
            if matches!(ended, Ended::Done) || self.tx.is_closed() {
                return;
            }
            if was_acknowledged {
                delay = RELISTEN_FIRST;
            }
            tracing::debug!(
                delay_ms = delay.as_millis() as u64,
                "the listen stream dropped: opening it again"
            );
            // Whatever changed meanwhile went unheard.
            self.client.forget_cached();
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(RELISTEN_MAX);
        }
    }

    /// Sends the listen request and hands its notices over until it ends; the first
    /// acknowledgment goes to `acknowledged` (the caller of `listen` waits on it), a
    /// later stream's (the first was taken) is told as [`Notice::Relistened`]. Returns
    /// how it ended and whether this one was acknowledged.
    async fn once(
        &self,
        acknowledged: &mut Option<oneshot::Sender<crate::Result<()>>>,
    ) -> (Ended, bool) {
        let (raw_tx, mut raw_rx) = mpsc::unbounded_channel::<Value>();
        let request =
            self.client
                .send::<method::SubscriptionsListen>(&self.params, None, Some(&raw_tx));
        tokio::pin!(request);
        let mut this_acknowledged = false;
        loop {
            tokio::select! {
                ended = &mut request => {
                    if let Some(waiting) = acknowledged.take() {
                        // The first stream never opened: that is the caller's answer.
                        let _ = waiting.send(ended.map(|_| ()));
                        return (Ended::Done, false);
                    }
                    let ended = match ended {
                        Err(Error::Rpc(e)) => {
                            tracing::warn!(error = %e, "the server refused subscriptions/listen again");
                            Ended::Done
                        }
                        _ => Ended::Dropped,
                    };
                    return (ended, this_acknowledged);
                }
                Some(message) = raw_rx.recv() => {
                    let name = message.get("method").and_then(Value::as_str);
                    if name == Some(method::SubscriptionsAcknowledged::METHOD) {
                        this_acknowledged = true;
                        if let Some(waiting) = acknowledged.take() {
                            let _ = waiting.send(Ok(()));
                        } else if self.tx.send(Notice::Relistened).is_err() {
                            return (Ended::Done, true);
                        }
                        continue;
                    }
                    let Some(notice) = Notice::from_message(&message) else {
                        continue;
                    };
                    self.client.heard(&notice);
                    if notice.wanted(&self.filter, &self.uris) && self.tx.send(notice).is_err() {
                        return (Ended::Done, this_acknowledged);
                    }
                }
            }
        }
    }
}
