//! Resolvers: a tool declares what it needs from the client as parameters
//! ([`Elicit<T>`], [`Sample<P>`], [`ListRoots`], or a resolver of your own that depends
//! on the arguments and on other resolvers), and tern asks, remembers and retries.
//!
//! Each round, every question whose dependencies are answered is asked, all in one
//! `InputRequiredResult`. Each answer is recorded in the (sealed) request state bound to
//! a digest of the exact question shown; when the question changes (a reworded message,
//! a changed schema) the stale answer is dropped and the question asked again, and an
//! answer that does not fit its schema is asked again too. Declines and cancels are
//! answers: they are kept, not re-asked. Answers under keys the server did not ask in the
//! previous round are ignored. The tool body runs once, when everything is answered.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schema;
use super::tool::{IntoCallToolResult, ToolError};
use crate::jsonrpc::RpcError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult, ElicitResultAction, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListRootsRequest, ListRootsResult, Root, SamplingMessageContent,
    SamplingMessageContentBlock,
};

/// Something a tool needs from the client before its body can run.
///
/// Implement it for your own type to ask a question that depends on the arguments `A`
/// and on other resolvers (`Deps`, a tuple of resolver types answered first).
pub trait Resolve<A>: Clone + Send + Sync + Sized + 'static {
    /// The resolvers this one needs answered first: `()` or a tuple of resolver types.
    type Deps: ResolveSet<A>;
    /// The key of this question in `inputRequests`; the same in every process running
    /// the same code, so a retry served by another instance finds its answer.
    fn key() -> String;
    /// The question, from the arguments and the answers it depends on.
    fn question(args: &A, deps: &Self::Deps) -> Result<InputRequest, ToolError>;
    /// The value from the client's answer, or `None` when the answer does not fit (the
    /// question is then asked again).
    fn from_response(response: &Value, deps: &Self::Deps) -> Option<Self>;
}

/// A resolver's question, erased: how to ask it and how to read its answer.
#[doc(hidden)]
pub struct Node<A> {
    key: String,
    question: fn(&A, &Store) -> Option<Result<InputRequest, ToolError>>,
    decode: fn(&Value, &Store) -> Option<Box<dyn Any + Send + Sync>>,
}

/// Resolved values by key.
#[doc(hidden)]
#[derive(Default)]
pub struct Store(HashMap<String, Box<dyn Any + Send + Sync>>);

impl Store {
    fn get<R: Clone + 'static>(&self, key: &str) -> Option<R> {
        self.0.get(key)?.downcast_ref::<R>().cloned()
    }
}

fn question_of<A, R: Resolve<A>>(
    args: &A,
    store: &Store,
) -> Option<Result<InputRequest, ToolError>> {
    let deps = R::Deps::fetch(store)?;
    Some(R::question(args, &deps))
}

fn decode_of<A, R: Resolve<A>>(
    response: &Value,
    store: &Store,
) -> Option<Box<dyn Any + Send + Sync>> {
    let deps = R::Deps::fetch(store)?;
    R::from_response(response, &deps).map(|r| Box::new(r) as Box<dyn Any + Send + Sync>)
}

/// A set of resolvers: `()` or a tuple of up to eight resolver types. Implemented by
/// tern for tuples.
pub trait ResolveSet<A>: Sized + Send + 'static {
    /// Adds the set's resolvers and their dependencies, dependencies first.
    #[doc(hidden)]
    fn nodes(out: &mut Vec<Node<A>>);
    /// The set's values, once all are resolved.
    #[doc(hidden)]
    fn fetch(store: &Store) -> Option<Self>;
}

impl<A> ResolveSet<A> for () {
    fn nodes(_out: &mut Vec<Node<A>>) {}
    fn fetch(_store: &Store) -> Option<Self> {
        Some(())
    }
}

fn push_node<A, R: Resolve<A>>(out: &mut Vec<Node<A>>) {
    R::Deps::nodes(out);
    let key = R::key();
    if !out.iter().any(|n| n.key == key) {
        out.push(Node {
            key,
            question: question_of::<A, R>,
            decode: decode_of::<A, R>,
        });
    }
}

macro_rules! resolve_set {
    ($($r:ident),+) => {
        impl<A, $($r: Resolve<A>),+> ResolveSet<A> for ($($r,)+) {
            fn nodes(out: &mut Vec<Node<A>>) {
                $(push_node::<A, $r>(out);)+
            }
            fn fetch(store: &Store) -> Option<Self> {
                Some(($(store.get::<$r>(&$r::key())?,)+))
            }
        }
    };
}

resolve_set!(R1);
resolve_set!(R1, R2);
resolve_set!(R1, R2, R3);
resolve_set!(R1, R2, R3, R4);
resolve_set!(R1, R2, R3, R4, R5);
resolve_set!(R1, R2, R3, R4, R5, R6);
resolve_set!(R1, R2, R3, R4, R5, R6, R7);
resolve_set!(R1, R2, R3, R4, R5, R6, R7, R8);

/// A tool function in the resolver form: `Fn(Args, R1, ..., Rn) -> Future<Output =
/// Result<T, ToolError>>` with each `Ri` a resolver and `T` a complete result.
#[diagnostic::on_unimplemented(
    message = "this function cannot be registered as a tool that uses resolvers",
    label = "not `async fn(Args, Resolver1, ...) -> Result<T, ToolError>` with T a complete result",
    note = "each parameter after the arguments must be a resolver (Elicit<T>, Sample<P>, ListRoots, or your own Resolve impl), at most eight",
    note = "the result must be a complete one (CallToolResult, String, ContentBlock, Vec<ContentBlock>, Json<T>): a tool that uses resolvers cannot return InputRequiredResult, because the resolvers own the call's inputResponses and requestState; register it with `.run` to return InputRequiredResult yourself"
)]
pub trait ResolverHandler<A, P>: Send + Sync + 'static {
    /// Runs the body with the arguments and every resolved value.
    #[doc(hidden)]
    fn call(&self, args: A, resolved: P) -> BoxFuture<'static, Result<CallToolResult, ToolError>>;
}

macro_rules! resolver_handler {
    ($($r:ident),+) => {
        #[allow(non_snake_case)]
        impl<F, Fut, T, A, $($r),+> ResolverHandler<A, ($($r,)+)> for F
        where
            F: Fn(A, $($r),+) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
            T: IntoCallToolResult,
            A: Send + 'static,
            $($r: Resolve<A>),+
        {
            fn call(&self, args: A, resolved: ($($r,)+)) -> BoxFuture<'static, Result<CallToolResult, ToolError>> {
                let ($($r,)+) = resolved;
                let fut = self(args, $($r),+);
                Box::pin(async move {
                    let out = fut.await?;
                    out.into_call_tool_result().map_err(ToolError::protocol)
                })
            }
        }
    };
}

resolver_handler!(R1);
resolver_handler!(R1, R2);
resolver_handler!(R1, R2, R3);
resolver_handler!(R1, R2, R3, R4);
resolver_handler!(R1, R2, R3, R4, R5);
resolver_handler!(R1, R2, R3, R4, R5, R6);
resolver_handler!(R1, R2, R3, R4, R5, R6, R7);
resolver_handler!(R1, R2, R3, R4, R5, R6, R7, R8);

/// What the resolvers keep between rounds (sealed by the server like any state).
#[derive(Debug, Default, Serialize, Deserialize)]
struct ResolverState {
    /// Format version.
    v: u8,
    /// Answers kept: key -> the digest of the question answered and the answer.
    #[serde(default)]
    answers: BTreeMap<String, Recorded>,
    /// The questions asked in the previous round: key -> digest.
    #[serde(default)]
    asked: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Recorded {
    q: String,
    a: Value,
}

/// The digest a recorded answer is bound to: the question's canonical JSON (sorted keys)
/// hashed as the sealer hashes arguments, in hex.
fn question_digest(request: &InputRequest) -> Result<String, RpcError> {
    let value = serde_json::to_value(request).map_err(|e| {
        tracing::error!(error = %e, "could not encode a resolver's question");
        RpcError::internal("Internal error")
    })?;
    let digest = crate::seal::json_digest(&value);
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// Where a call stands: everything answered, or questions to ask.
pub(crate) enum Resolution {
    Ready(Store),
    Ask(Box<InputRequiredResult>),
}

/// Works out, for this round, which answers hold and what must still be asked.
pub(crate) fn resolve_round<A>(
    nodes: &[Node<A>],
    args: &A,
    input_responses: Option<&InputResponses>,
    request_state: Option<&str>,
) -> Result<Resolution, ToolError> {
    // The state is sealed by the server, so it is ours; an unreadable one starts over.
    let previous: ResolverState = request_state
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut store = Store::default();
    let mut next = ResolverState {
        v: 1,
        ..ResolverState::default()
    };
    let mut to_ask: BTreeMap<String, InputRequest> = BTreeMap::new();
    for node in nodes {
        let Some(question) = (node.question)(args, &store) else {
            // A dependency is not answered yet: asked in a later round.
            continue;
        };
        let question = question?;
        let digest = question_digest(&question).map_err(ToolError::protocol)?;
        if let Some(recorded) = previous.answers.get(&node.key).filter(|r| r.q == digest) {
            if let Some(value) = (node.decode)(&recorded.a, &store) {
                store.0.insert(node.key.clone(), value);
                next.answers.insert(node.key.clone(), recorded.clone());
                continue;
            }
        }
        let fresh = input_responses
            .and_then(|r| r.raw(&node.key))
            .filter(|_| previous.asked.get(&node.key) == Some(&digest));
        if let Some(raw) = fresh {
            if let Some(value) = (node.decode)(raw, &store) {
                store.0.insert(node.key.clone(), value);
                next.answers.insert(
                    node.key.clone(),
                    Recorded {
                        q: digest,
                        a: raw.clone(),
                    },
                );
                continue;
            }
            tracing::debug!(key = %node.key, "an answer did not fit its question; asking again");
        }
        next.asked.insert(node.key.clone(), digest);
        to_ask.insert(node.key.clone(), question);
    }
    if to_ask.is_empty() && store.0.len() == nodes.len() {
        return Ok(Resolution::Ready(store));
    }
    let state = serde_json::to_string(&next).map_err(|e| {
        tracing::error!(error = %e, "could not encode resolver state");
        ToolError::protocol(RpcError::internal("Internal error"))
    })?;
    let mut result = InputRequiredResult::new();
    result.input_requests = Some(InputRequests(to_ask));
    result.request_state = Some(state);
    Ok(Resolution::Ask(Box::new(result)))
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out
}

/// The user's answer to a form: the value of `T` they submitted, or their refusal.
///
/// As a tool parameter, asks the client to elicit `T`: the form is `T`'s JSON Schema,
/// the message is `T`'s doc comment (or its title). A decline or cancel is an answer:
/// the tool runs with it and the question is not asked again.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicit<T> {
    /// The user submitted the form.
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

impl<T> Elicit<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accepted(t) => Some(t),
            _ => None,
        }
    }
}

fn elicit_answer<T: DeserializeOwned>(response: &Value) -> Option<Elicit<T>> {
    let result: ElicitResult = serde_json::from_value(response.clone()).ok()?;
    match result.action {
        ElicitResultAction::Accept => {
            let content = serde_json::to_value(result.content.unwrap_or_default()).ok()?;
            serde_json::from_value(content).ok().map(Elicit::Accepted)
        }
        ElicitResultAction::Decline => Some(Elicit::Declined),
        ElicitResultAction::Cancel => Some(Elicit::Cancelled),
    }
}

impl<A, T> Resolve<A> for Elicit<T>
where
    T: JsonSchema + DeserializeOwned + Clone + Send + Sync + 'static,
{
    type Deps = ();

    fn key() -> String {
        format!("elicit_{}", snake(&T::schema_name()))
    }

    fn question(_args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        let (message, form) = schema::cached_form_schema::<T>();
        let message = message.unwrap_or_else(|| format!("Please provide {}", T::schema_name()));
        let form = serde_json::from_value(form).map_err(|e| {
            ToolError::protocol(RpcError::internal(format!(
                "{} is not a form schema: {e}",
                T::schema_name()
            )))
        })?;
        Ok(InputRequest::Elicit(ElicitRequest::new(
            ElicitRequestParams::Form(ElicitRequestFormParams::new(message, form)),
        )))
    }

    fn from_response(response: &Value, _deps: &()) -> Option<Self> {
        elicit_answer(response)
    }
}

/// How a URL elicitation is presented for arguments `A`.
pub trait UrlPrompt<A>: Send + Sync + 'static {
    /// The answer key.
    const KEY: &'static str;
    /// What the user is asked to do.
    fn message(args: &A) -> String;
    /// Where they do it. Put what you need to correlate the out-of-band step in the URL.
    fn url(args: &A) -> String;
}

/// A step the user completes out of band at a URL (`mode: "url"`); the client retries
/// when it is done. Accepted carries no data: the server learns the outcome through
/// its own channel, correlated by what [`UrlPrompt::url`] put in the URL.
pub struct ElicitUrl<P>(pub Elicit<()>, PhantomData<P>);

impl<P> Clone for ElicitUrl<P> {
    fn clone(&self) -> Self {
        Self(self.0.clone(), PhantomData)
    }
}

impl<P> std::fmt::Debug for ElicitUrl<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ElicitUrl").field(&self.0).finish()
    }
}

impl<A, P: UrlPrompt<A>> Resolve<A> for ElicitUrl<P> {
    type Deps = ();

    fn key() -> String {
        P::KEY.to_owned()
    }

    fn question(args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::Elicit(ElicitRequest::new(
            ElicitRequestParams::Url(ElicitRequestUrlParams::new(P::message(args), P::url(args))),
        )))
    }

    fn from_response(response: &Value, _deps: &()) -> Option<Self> {
        let result: ElicitResult = serde_json::from_value(response.clone()).ok()?;
        let outcome = match result.action {
            ElicitResultAction::Accept => Elicit::Accepted(()),
            ElicitResultAction::Decline => Elicit::Declined,
            ElicitResultAction::Cancel => Elicit::Cancelled,
        };
        Some(Self(outcome, PhantomData))
    }
}

/// How a sampling request is built from the arguments `A`.
pub trait SamplePrompt<A>: Send + Sync + 'static {
    /// The answer key.
    const KEY: &'static str;
    /// The request for the client's model.
    fn request(args: &A) -> CreateMessageRequestParams;
}

/// A completion from the client's model, requested as [`SamplePrompt::request`] builds
/// it from the arguments.
pub struct Sample<P>(pub CreateMessageResult, PhantomData<P>);

impl<P> Clone for Sample<P> {
    fn clone(&self) -> Self {
        Self(self.0.clone(), PhantomData)
    }
}

impl<P> std::fmt::Debug for Sample<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Sample").field(&self.0).finish()
    }
}

impl<P> Sample<P> {
    /// The text of the model's answer (its text blocks, joined).
    pub fn text(&self) -> String {
        let blocks: Vec<&SamplingMessageContentBlock> = match &self.0.content {
            SamplingMessageContent::One(b) => vec![b],
            SamplingMessageContent::Many(bs) => bs.iter().collect(),
        };
        blocks
            .into_iter()
            .filter_map(|b| match b {
                SamplingMessageContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }
}

impl<A, P: SamplePrompt<A>> Resolve<A> for Sample<P> {
    type Deps = ();

    fn key() -> String {
        P::KEY.to_owned()
    }

    fn question(args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::CreateMessage(CreateMessageRequest::new(
            P::request(args),
        )))
    }

    fn from_response(response: &Value, _deps: &()) -> Option<Self> {
        serde_json::from_value(response.clone())
            .ok()
            .map(|r| Self(r, PhantomData))
    }
}

/// The client's roots.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRoots(pub Vec<Root>);

impl<A> Resolve<A> for ListRoots {
    type Deps = ();

    fn key() -> String {
        "roots".to_owned()
    }

    fn question(_args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::ListRoots(ListRootsRequest::new()))
    }

    fn from_response(response: &Value, _deps: &()) -> Option<Self> {
        serde_json::from_value::<ListRootsResult>(response.clone())
            .ok()
            .map(|r| Self(r.roots))
    }
}

/// Object maps for answers, so a custom resolver can read a form's content.
pub fn form_content(response: &Value) -> Option<Map<String, Value>> {
    let result: ElicitResult = serde_json::from_value(response.clone()).ok()?;
    if result.action != ElicitResultAction::Accept {
        return None;
    }
    serde_json::to_value(result.content.unwrap_or_default())
        .ok()?
        .as_object()
        .cloned()
}
