//! The calls `Client` offers beyond one request: the automatic and manual input loops,
//! the lists, and listening. Each is a thin door into the module that does the work.

use tokio::sync::mpsc;

use super::input_loop::InputLoopMethod;
use super::listen::Subscription;
use super::lists::ListMethod;
use super::pending::{PendingCall, Step};
use super::{Client, Notice, input_loop, listen, lists, pending};
use crate::types::rpc::ClientRequestMethod;
use crate::types::v2026_07_28::{InputResponses, SubscriptionFilter};

impl Client {
    /// Runs the input-required loop for method `M` from `params` to its complete result.
    ///
    /// Each round's input requests go to the registered callbacks concurrently; the
    /// retry is the same method with the same params, a new id, the answers under the
    /// same keys and `requestState` echoed byte for byte. A round with state and no
    /// requests waits 50 ms, doubling to 250 ms, before retrying.
    ///
    /// A result of an extension's type is followed to its end by the extension (a task
    /// the server made of a tool call, for a client that speaks
    /// [`ClientTasks`](crate::tasks::ClientTasks), which cancels it if this future is
    /// dropped first).
    pub(crate) async fn run_input_loop<M: InputLoopMethod>(
        &self,
        params: M::Params,
    ) -> crate::Result<M::Complete> {
        input_loop::run_input_loop::<M>(self, params).await
    }

    /// The input loop of `M` up to its complete result, or a result of an extension's
    /// type, handed back unfollowed.
    pub(crate) async fn run_until_deferred<M: InputLoopMethod>(
        &self,
        params: M::Params,
    ) -> crate::Result<Result<M::Complete, super::Deferred>> {
        let started = input_loop::run_input_loop_until_deferred::<M>(self, params, None).await?;
        Ok(match started {
            input_loop::Started::Done(done) => Ok(done),
            input_loop::Started::Deferred(deferred) => Err(deferred),
        })
    }

    /// [`request`](Client::request)'s input loop, handing every notification the server
    /// sends on the streams of the call's rounds (progress, log entries) to `notices`,
    /// in order, as they arrive: one sink across all the rounds.
    pub async fn run_input_loop_with_notices<M: InputLoopMethod>(
        &self,
        params: M::Params,
        notices: Option<mpsc::UnboundedSender<Notice>>,
    ) -> crate::Result<M::Complete> {
        input_loop::run_input_loop_with_notices::<M>(self, params, notices).await
    }

    /// Like [`request`](Self::request), handing the request's notifications (progress,
    /// log entries, anything else the server sends on the request's stream) to
    /// `notices` as they arrive.
    pub async fn request_with_notices<M: ClientRequestMethod>(
        &self,
        params: M::Params,
        notices: mpsc::UnboundedSender<Notice>,
    ) -> crate::Result<M::Result> {
        listen::request_with_notices::<M>(self, params, notices).await
    }

    /// Listens for the list changes and resource updates `filter` names, until the
    /// [`Subscription`] is dropped. In 2026-07-28 this is a `subscriptions/listen` request,
    /// returned once the server acknowledged it; in a 2025-11-25 session each of
    /// `filter.resource_subscriptions` is subscribed with `resources/subscribe`, and the
    /// session's own stream is heard (the transport must carry one: HTTP's standalone
    /// GET stream, or a message transport's connection).
    pub async fn listen(&self, filter: SubscriptionFilter) -> crate::Result<Subscription> {
        listen::listen(self, filter).await
    }

    /// One page of a list method (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`): the first without a cursor, the next with the one
    /// the previous page gave.
    ///
    /// ```no_run
    /// # async fn demo(client: tern_mcp::client::Client) -> tern_mcp::Result<()> {
    /// use tern_mcp::types::v2026_07_28::method::ListTools;
    /// let first = client.list::<ListTools>(None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn list<M: ListMethod>(&self, cursor: Option<String>) -> crate::Result<M::Result> {
        lists::page::<M>(self, cursor).await
    }

    /// Every item of a list method, page after page (at most 1,000 pages: a server that
    /// keeps answering with a next cursor is stopped there with
    /// [`ProtocolError::TooManyPages`](crate::ProtocolError::TooManyPages)).
    pub async fn list_all<M: ListMethod>(&self) -> crate::Result<Vec<M::Item>> {
        lists::all_pages::<M>(self).await
    }

    /// Sends a call once and stops at its first questions, without the callbacks:
    /// a [`Step::NeedsInput`] holds everything its retry needs, as data. Rounds that
    /// carry state and no questions are retried here, with the usual backoff.
    ///
    /// The server asks only for what the client declares: a client without callbacks
    /// (the answers come from elsewhere) declares them with
    /// [`ClientBuilder::capabilities`](super::ClientBuilder::capabilities).
    pub async fn start<M: InputLoopMethod>(
        &self,
        params: M::Params,
    ) -> crate::Result<Step<M::Complete>> {
        pending::start::<M>(self, params).await
    }

    /// Continues a [`PendingCall`] with the answers to its questions (keyed as its
    /// [`input_requests`](PendingCall::input_requests) are): one retry, and the
    /// next stop. The round cap of the client applies across the whole flow.
    pub async fn resume<M: InputLoopMethod>(
        &self,
        pending: PendingCall,
        answers: InputResponses,
    ) -> crate::Result<Step<M::Complete>> {
        pending::resume::<M>(self, pending, answers).await
    }
}
