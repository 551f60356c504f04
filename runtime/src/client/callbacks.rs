//! The three callbacks that answer input requests, and running them for a round.

use std::future::Future;
use std::sync::Arc;

use crate::Error;
use crate::jsonrpc::RpcError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    InputRequest, InputRequests, InputResponse, InputResponses, ListRootsRequestParams,
    ListRootsResult,
};

/// What a callback knows about the request it answers.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InputContext {
    /// The server's key for the request in `inputRequests`; `None` for a
    /// server-to-client request on a 2025-11-25 session.
    pub key: Option<String>,
}

pub(crate) type Callback<P, R> =
    Arc<dyn Fn(InputContext, P) -> BoxFuture<'static, Result<R, RpcError>> + Send + Sync>;

pub(crate) fn erase<P, R, F, Fut>(f: F) -> Callback<P, R>
where
    P: Send + 'static,
    R: Send + 'static,
    F: Fn(InputContext, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
{
    Arc::new(move |ctx, p| Box::pin(f(ctx, p)))
}

#[derive(Default, Clone)]
pub(crate) struct Callbacks {
    pub(crate) elicitation: Option<Callback<ElicitRequestParams, ElicitResult>>,
    pub(crate) sampling: Option<Callback<CreateMessageRequestParams, CreateMessageResult>>,
    pub(crate) roots: Option<Callback<Option<ListRootsRequestParams>, ListRootsResult>>,
}

impl Callbacks {
    /// Fails when no callback answers `request`.
    fn check(&self, request: &InputRequest) -> crate::Result<()> {
        let present = match request {
            InputRequest::Elicit(_) => self.elicitation.is_some(),
            InputRequest::CreateMessage(_) => self.sampling.is_some(),
            InputRequest::ListRoots(_) => self.roots.is_some(),
        };
        if present {
            Ok(())
        } else {
            Err(Error::NoCallback {
                method: request.method().to_owned(),
            })
        }
    }

    /// Answers one input request.
    pub(crate) async fn answer(
        &self,
        ctx: InputContext,
        request: InputRequest,
    ) -> crate::Result<InputResponse> {
        fn missing(method: &str) -> Error {
            Error::NoCallback {
                method: method.to_owned(),
            }
        }
        let method = request.method();
        let failed = |error: RpcError| Error::Callback {
            method: method.to_owned(),
            error: Box::new(error),
        };
        Ok(match request {
            InputRequest::Elicit(r) => {
                let cb = self.elicitation.as_ref().ok_or_else(|| missing(method))?;
                InputResponse::Elicit(cb(ctx, r.params).await.map_err(failed)?)
            }
            InputRequest::CreateMessage(r) => {
                let cb = self.sampling.as_ref().ok_or_else(|| missing(method))?;
                InputResponse::CreateMessage(cb(ctx, r.params).await.map_err(failed)?)
            }
            InputRequest::ListRoots(r) => {
                let cb = self.roots.as_ref().ok_or_else(|| missing(method))?;
                InputResponse::ListRoots(cb(ctx, r.params).await.map_err(failed)?)
            }
        })
    }

    /// Answers every request of a round concurrently, under the same keys; the first
    /// failure drops the others.
    pub(crate) async fn fulfil(&self, requests: &InputRequests) -> crate::Result<InputResponses> {
        self.answer_all(requests.clone()).await
    }

    /// Answers every request of a round concurrently, as [`fulfil`](Self::fulfil) does,
    /// taking the requests rather than copying them (the input-required loop owns them).
    pub(crate) async fn answer_all(
        &self,
        requests: InputRequests,
    ) -> crate::Result<InputResponses> {
        // Fail before running anything when a request has no callback.
        for request in requests.values() {
            self.check(request)?;
        }
        let answers =
            futures_util::future::try_join_all(requests.0.into_iter().map(|(key, request)| {
                let ctx = InputContext {
                    key: Some(key.clone()),
                };
                async move { self.answer(ctx, request).await.map(|r| (key, r)) }
            }))
            .await?;
        let mut out = InputResponses::new();
        for (key, response) in answers {
            out.insert(key, response).map_err(Error::Encode)?;
        }
        Ok(out)
    }
}
