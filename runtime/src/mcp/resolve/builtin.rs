//! The resolvers tern ships: forms, URL elicitation, sampling and roots.

use std::any::TypeId;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{OnceLock, RwLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Resolve;
use crate::jsonrpc::RpcError;
use crate::mcp::schema;
use crate::mcp::tool::ToolError;
use crate::types::v2026_07_28::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult,
    ElicitResultAction, InputRequest, ListRootsRequest, ListRootsResult, Root,
    SamplingMessageContent, SamplingMessageContentBlock,
};

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

/// An elicitation's answer as the client sent it: the action, and the content left as
/// text until the action says it is wanted.
#[derive(Deserialize)]
struct Answer<'a> {
    action: ElicitResultAction,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

impl<'a> Answer<'a> {
    fn read(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// The answer with the accepted content decoded by `accept`.
    fn outcome<T>(self, accept: impl FnOnce(&str) -> Option<T>) -> Option<Elicit<T>> {
        match self.action {
            ElicitResultAction::Accept => {
                accept(self.content.map_or("{}", RawValue::get)).map(Elicit::Accepted)
            }
            ElicitResultAction::Decline => Some(Elicit::Declined),
            ElicitResultAction::Cancel => Some(Elicit::Cancelled),
        }
    }
}

impl<A, T> Resolve<A> for Elicit<T>
where
    T: JsonSchema + DeserializeOwned + Clone + Send + Sync + 'static,
{
    type Deps = ();
    const FIXED_QUESTION: bool = true;

    fn key() -> String {
        format!("elicit_{}", snake(&T::schema_name()))
    }

    fn question(_args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        form_question::<T>()
    }

    fn from_response(response: &RawValue, deps: &()) -> Option<Self> {
        <Self as Resolve<A>>::from_text(response.get(), deps)
    }

    fn from_text(text: &str, _deps: &()) -> Option<Self> {
        Answer::read(text)?.outcome(|content| serde_json::from_str(content).ok())
    }
}

/// Each `Elicit<T>`'s question, built once per type: generating the form schema and
/// decoding it cost more than the rest of a round, and the question is the same in
/// every round (a type that is not a form is an error each time it is asked).
fn form_question<T: JsonSchema + 'static>() -> Result<InputRequest, ToolError> {
    static QUESTIONS: OnceLock<RwLock<HashMap<TypeId, InputRequest>>> = OnceLock::new();
    let questions = QUESTIONS.get_or_init(RwLock::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = questions.read().ok().and_then(|m| m.get(&id).cloned()) {
        return Ok(hit);
    }
    let (message, form) = schema::form_schema::<T>();
    let message = message.unwrap_or_else(|| format!("Please provide {}", T::schema_name()));
    let form = serde_json::from_value(form).map_err(|e| {
        ToolError::protocol(RpcError::internal(format!(
            "{} is not a form schema: {e}",
            T::schema_name()
        )))
    })?;
    let question = InputRequest::Elicit(ElicitRequest::new(ElicitRequestParams::Form(
        ElicitRequestFormParams::new(message, form),
    )));
    if let Ok(mut m) = questions.write() {
        m.insert(id, question.clone());
    }
    Ok(question)
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

    fn from_response(response: &RawValue, deps: &()) -> Option<Self> {
        <Self as Resolve<A>>::from_text(response.get(), deps)
    }

    fn from_text(text: &str, _deps: &()) -> Option<Self> {
        let outcome = Answer::read(text)?.outcome(|_| Some(()))?;
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

    fn from_response(response: &RawValue, deps: &()) -> Option<Self> {
        <Self as Resolve<A>>::from_text(response.get(), deps)
    }

    fn from_text(text: &str, _deps: &()) -> Option<Self> {
        serde_json::from_str(text)
            .ok()
            .map(|r| Self(r, PhantomData))
    }
}

/// The client's roots.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRoots(pub Vec<Root>);

impl<A> Resolve<A> for ListRoots {
    type Deps = ();

    const FIXED_QUESTION: bool = true;

    fn key() -> String {
        "roots".to_owned()
    }

    fn question(_args: &A, _deps: &()) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::ListRoots(ListRootsRequest::new()))
    }

    fn from_response(response: &RawValue, deps: &()) -> Option<Self> {
        <Self as Resolve<A>>::from_text(response.get(), deps)
    }

    fn from_text(text: &str, _deps: &()) -> Option<Self> {
        serde_json::from_str::<ListRootsResult>(text)
            .ok()
            .map(|r| Self(r.roots))
    }
}

/// Object maps for answers, so a custom resolver can read a form's content: `response`
/// is an answer as JSON (a `Value`, or the raw text `InputResponses::raw` gives).
pub fn form_content<T: serde::Serialize + ?Sized>(response: &T) -> Option<Map<String, Value>> {
    let result: ElicitResult = serde_json::to_value(response)
        .and_then(serde_json::from_value)
        .ok()?;
    if result.action != ElicitResultAction::Accept {
        return None;
    }
    serde_json::to_value(result.content.unwrap_or_default())
        .ok()?
        .as_object()
        .cloned()
}
