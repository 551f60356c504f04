//! The three callbacks that answer input requests, and running them for a round.

use std::future::Future;
use std::sync::Arc;

use crate::Error;
use crate::jsonrpc::RpcError;
use crate::protocol::rounds::RoundLimits;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitResultAction, ElicitValue, InputRequest, InputRequests, InputResponse, InputResponses,
    ListRootsRequestParams, ListRootsResult, PrimitiveSchemaDefinition, ToolArguments,
};

/// What a callback knows about the request it answers, and about the call that asked.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InputContext {
    /// The server's key for the request in `inputRequests`; `None` for a
    /// server-to-client request on a 2025-11-25 session.
    pub key: Option<String>,
    /// The method of the call that asked (`tools/call`, `prompts/get`,
    /// `resources/read`), when the client's loop made it.
    pub method: Option<&'static str>,
    /// What that call names: the tool or prompt, or the resource's URI.
    pub target: Option<String>,
    /// The call's arguments (a tool's, a prompt's), as sent: JSON text, read when a
    /// callback asks ([`ToolArguments::get`], [`ToolArguments::decode`]).
    pub arguments: Option<Arc<ToolArguments>>,
    /// The round of the call that asks: 1 for its first input-required answer.
    pub round: usize,
    /// The task asking, when the call became one (its questions come through
    /// `tasks/get`).
    pub task: Option<String>,
    /// The name of the server asking ([`Client::server_name`](super::Client::server_name)).
    pub server: Option<Arc<str>>,
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
            Err(Error::Input(crate::InputError::NoCallback {
                method: request.method().to_owned(),
            }))
        }
    }

    /// Answers one input request.
    pub(crate) async fn answer(
        &self,
        ctx: InputContext,
        request: InputRequest,
    ) -> crate::Result<InputResponse> {
        fn missing(method: &str) -> Error {
            Error::Input(crate::InputError::NoCallback {
                method: method.to_owned(),
            })
        }
        let method = request.method();
        let failed = |error: RpcError| {
            Error::Input(crate::InputError::Callback {
                method: method.to_owned(),
                error: Box::new(error),
            })
        };
        Ok(match request {
            InputRequest::Elicit(r) => {
                let cb = self.elicitation.as_ref().ok_or_else(|| missing(method))?;
                let defaults = form_defaults(&r.params);
                let mut answer = cb(ctx, r.params).await.map_err(failed)?;
                apply_defaults(&mut answer, defaults);
                InputResponse::Elicit(answer)
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

    /// Answers every request of a round, `limits.concurrency` at a time, under the
    /// same keys; the first failure drops the others. A round with more requests than
    /// `limits.max_questions` fails before any callback runs.
    pub(crate) async fn fulfil(
        &self,
        requests: &InputRequests,
        limits: &RoundLimits,
    ) -> crate::Result<InputResponses> {
        self.answer_all(requests.clone(), InputContext::default(), limits)
            .await
    }

    /// Answers every request of a round concurrently, as [`fulfil`](Self::fulfil) does,
    /// taking the requests rather than copying them (the input-required loop owns them).
    pub(crate) async fn answer_all(
        &self,
        requests: InputRequests,
        asking: InputContext,
        limits: &RoundLimits,
    ) -> crate::Result<InputResponses> {
        use futures_util::{StreamExt as _, TryStreamExt as _};
        // Fail before running anything when a round is too big or a request has no
        // callback.
        if requests.len() > limits.max_questions {
            return Err(Error::Input(crate::InputError::TooManyRequests {
                asked: requests.len(),
                max: limits.max_questions,
            }));
        }
        for request in requests.values() {
            self.check(request)?;
        }
        let mut entries = requests.0.into_iter();
        let answers: Vec<_> = if entries.len() == 1
            && let Some((key, request)) = entries.next()
        {
            // One question (the common round): answered here, the context moved into
            // it, without the stream that runs several at once.
            let ctx = InputContext {
                key: Some(key.clone()),
                ..asking
            };
            vec![(key, self.answer(ctx, request).await?)]
        } else {
            let answer_one = |(key, request): (String, InputRequest)| {
                let ctx = InputContext {
                    key: Some(key.clone()),
                    ..asking.clone()
                };
                async move { self.answer(ctx, request).await.map(|r| (key, r)) }
            };
            futures_util::stream::iter(entries.map(answer_one))
                .buffer_unordered(limits.concurrency.max(1))
                .try_collect()
                .await?
        };
        let mut out = InputResponses::new();
        for (key, response) in answers {
            out.insert(key, response).map_err(Error::Encode)?;
        }
        Ok(out)
    }
}

/// The `default` of each field of a form the schema gives one (SEP-1034), that an
/// accepting answer gets for the fields it leaves out.
fn form_defaults(params: &ElicitRequestParams) -> Vec<(String, ElicitValue)> {
    let ElicitRequestParams::Form(form) = params else {
        return Vec::new();
    };
    form.requested_schema
        .properties
        .iter()
        .filter_map(|(name, field)| Some((name.clone(), field_default(field)?)))
        .collect()
}

/// A form field's `default`, read from its typed schema (no tree is built: most forms
/// have none, and this runs for every answer).
fn field_default(field: &PrimitiveSchemaDefinition) -> Option<ElicitValue> {
    use PrimitiveSchemaDefinition as Field;
    Some(match field {
        Field::String(f) => ElicitValue::String(f.default.clone()?),
        Field::Boolean(f) => ElicitValue::Boolean(f.default?),
        Field::Number(f) => {
            let n = f.default.as_ref()?;
            match n.as_i64() {
                Some(i) => ElicitValue::Integer(i),
                None => ElicitValue::Number(n.as_f64()?),
            }
        }
        Field::UntitledSingleSelectEnum(f) => ElicitValue::String(f.default.clone()?),
        Field::TitledSingleSelectEnum(f) => ElicitValue::String(f.default.clone()?),
        Field::LegacyTitledEnum(f) => ElicitValue::String(f.default.clone()?),
        Field::UntitledMultiSelectEnum(f) => ElicitValue::List(f.default.clone()?),
        Field::TitledMultiSelectEnum(f) => ElicitValue::List(f.default.clone()?),
    })
}

/// Fills the fields an accepting answer left out with their schema defaults.
fn apply_defaults(answer: &mut ElicitResult, defaults: Vec<(String, ElicitValue)>) {
    if answer.action != ElicitResultAction::Accept || defaults.is_empty() {
        return;
    }
    let content = answer.content.get_or_insert_with(Default::default);
    for (name, default) in defaults {
        content.entry(name).or_insert(default);
    }
}

#[cfg(test)]
mod defaults {
    use super::*;

    #[test]
    fn an_accepting_answer_gets_the_defaults_it_left_out_and_keeps_its_own() {
        let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "plain": {"type": "string"}
            }}
        }))
        .unwrap();
        let mut answer: ElicitResult =
            serde_json::from_value(serde_json::json!({"action": "accept", "content": {"age": 41}}))
                .unwrap();
        apply_defaults(&mut answer, form_defaults(&params));
        let content = serde_json::to_value(&answer.content).unwrap();
        assert_eq!(content, serde_json::json!({"name": "John Doe", "age": 41}));
        let mut declined: ElicitResult =
            serde_json::from_value(serde_json::json!({"action": "decline"})).unwrap();
        apply_defaults(&mut declined, form_defaults(&params));
        assert_eq!(declined.content, None);
    }
}
