//! Prompts: typed arguments, results (or input-required), argument completion.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::arguments::decode_tree;
use super::context::ToolContext;
use super::tool::ToolError;
use super::{Completer, McpServer, schema};
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    ContentBlock, GetPromptOutcome, GetPromptResult, InputRequiredResult, InputResponses, Outcome,
    Prompt, PromptArgument, PromptMessage, Role, TextContent,
};

/// What a prompt function may return: messages, a full result, or an
/// [`InputRequiredResult`] asking the client for input first.
#[diagnostic::on_unimplemented(
    message = "a prompt cannot return `{Self}`",
    note = "return Vec<PromptMessage>, GetPromptResult, String (one user message), InputRequiredResult or GetPromptOutcome"
)]
pub trait IntoPromptOutcome {
    /// The outcome.
    fn into_prompt_outcome(self) -> GetPromptOutcome;
}

impl IntoPromptOutcome for GetPromptResult {
    fn into_prompt_outcome(self) -> GetPromptOutcome {
        Outcome::Complete(self)
    }
}

impl IntoPromptOutcome for Vec<PromptMessage> {
    fn into_prompt_outcome(self) -> GetPromptOutcome {
        Outcome::Complete(GetPromptResult::new(self))
    }
}

impl IntoPromptOutcome for String {
    fn into_prompt_outcome(self) -> GetPromptOutcome {
        vec![PromptMessage::new(
            ContentBlock::Text(TextContent::new(self)),
            Role::User,
        )]
        .into_prompt_outcome()
    }
}

impl IntoPromptOutcome for InputRequiredResult {
    fn into_prompt_outcome(self) -> GetPromptOutcome {
        Outcome::InputRequired(self)
    }
}

impl IntoPromptOutcome for GetPromptOutcome {
    fn into_prompt_outcome(self) -> GetPromptOutcome {
        self
    }
}

pub(crate) struct PromptCall {
    pub(crate) ctx: RequestContext,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

pub(crate) type PromptFn =
    Arc<dyn Fn(PromptCall) -> BoxFuture<'static, Result<GetPromptOutcome, RpcError>> + Send + Sync>;

pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) get: PromptFn,
    pub(crate) completers: Vec<(String, Completer)>,
    /// The OAuth scopes a `prompts/get` needs.
    pub(crate) scopes: Vec<String>,
}

/// A failure of a prompt, resource or completion function, answered as a JSON-RPC error.
pub(crate) fn as_rpc(e: ToolError) -> RpcError {
    match e.into_outcome() {
        Err(rpc) => rpc,
        Ok(outcome) => {
            let text = match outcome {
                Outcome::Complete(r) => r
                    .content
                    .into_iter()
                    .find_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text),
                        _ => None,
                    })
                    .unwrap_or_default(),
                Outcome::InputRequired(_) => String::new(),
            };
            RpcError::internal(text)
        }
    }
}

/// The prompt's declared arguments, read from `A`'s schema (prompt arguments are
/// strings).
fn arguments_of<A: JsonSchema>() -> Vec<PromptArgument> {
    let schema = schema::object_schema::<A>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut arg = PromptArgument::new(name.clone());
            arg.description = prop
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            arg.required = Some(required.contains(&name.as_str()));
            arg
        })
        .collect()
}

/// Registers a prompt: `mcp.prompt("name").description("...").run(f)`.
#[must_use = "a prompt is registered by `.run`"]
pub struct PromptBuilder<'a> {
    pub(crate) server: &'a McpServer,
    pub(crate) prompt: Prompt,
    pub(crate) completers: Vec<(String, Completer)>,
    pub(crate) scopes: Vec<String>,
}

impl PromptBuilder<'_> {
    /// The OAuth scopes a `prompts/get` of this prompt needs (see
    /// [`ToolBuilder::required_scopes`](crate::mcp::ToolBuilder::required_scopes)).
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Completes values of the argument `argument` for `completion/complete`: `f`
    /// receives what the user typed so far and returns candidates.
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, f: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers.push((argument.into(), super::completer(f)));
        self
    }

    /// Registers `f` as the prompt. It receives the typed arguments and a
    /// [`ToolContext`], and may return messages or an [`InputRequiredResult`].
    pub fn run<A, F, Fut, R>(mut self, f: F)
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoPromptOutcome + 'static,
    {
        let arguments = arguments_of::<A>();
        if !arguments.is_empty() {
            self.prompt.arguments = Some(arguments);
        }
        let name = self.prompt.name.clone();
        let f = Arc::new(f);
        let get: PromptFn = Arc::new(move |call: PromptCall| {
            let f = Arc::clone(&f);
            let name = name.clone();
            Box::pin(async move {
                let args: A = decode_tree("prompt", &name, Value::Object(call.arguments))?;
                let ctx = ToolContext::new(call.ctx, call.input_responses, call.request_state);
                f(args, ctx)
                    .await
                    .map(IntoPromptOutcome::into_prompt_outcome)
                    .map_err(as_rpc)
            })
        });
        self.server.add_prompt(PromptEntry {
            prompt: self.prompt,
            get,
            completers: self.completers,
            scopes: self.scopes,
        });
    }
}
