//! Tools: typed arguments, what a tool function may return, and the registration
//! builder.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::ToolContext;
use super::setting::{Gate, ToolSetting, ToolSettings};
use super::{McpServer, schema};
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolOutcome, CallToolResult, ContentBlock, InputRequiredResult, InputResponses, Outcome,
    TextContent, Tool, ToolAnnotations, ToolArguments,
};

/// A tool's failure. The client sees it as a result with `isError: true` and the
/// message as text, so the model can read it; [`ToolError::protocol`] answers with a
/// JSON-RPC error instead.
#[derive(Debug)]
pub struct ToolError(ToolErrorKind);

#[derive(Debug)]
enum ToolErrorKind {
    InBand(String),
    Protocol(RpcError),
}

impl ToolError {
    /// A failure the model should see, as the tool's text result.
    pub fn new(message: impl Into<String>) -> Self {
        Self(ToolErrorKind::InBand(message.into()))
    }

    /// A failure answered as a JSON-RPC error (for example invalid params).
    pub fn protocol(error: RpcError) -> Self {
        Self(ToolErrorKind::Protocol(error))
    }

    pub(crate) fn into_outcome(self) -> Result<CallToolOutcome, RpcError> {
        match self.0 {
            ToolErrorKind::InBand(message) => {
                let mut result =
                    CallToolResult::new(vec![ContentBlock::Text(TextContent::new(message))]);
                result.is_error = Some(true);
                Ok(result.into())
            }
            ToolErrorKind::Protocol(e) => Err(e),
        }
    }
}

impl<E: std::fmt::Display> From<E> for ToolError {
    fn from(e: E) -> Self {
        Self::new(e.to_string())
    }
}

/// A serializable value returned as structured content: the tool advertises `T`'s
/// schema as its `outputSchema`, and the result carries the value as
/// `structuredContent` and as JSON text.
#[derive(Debug, Clone)]
pub struct Structured<T>(pub T);

/// What a tool may return when it completes.
///
/// Implemented for [`CallToolResult`], `String`, `&'static str`, [`ContentBlock`],
/// `Vec<ContentBlock>` and [`Structured<T>`].
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}` as its result",
    label = "this is not a complete tool result",
    note = "return CallToolResult, String, ContentBlock, Vec<ContentBlock> or tern_mcp::mcp::Structured<T> (T: Serialize + JsonSchema)",
    note = "a tool that uses resolvers (registered with `.resolve`) cannot return InputRequiredResult: the resolvers own the call's inputResponses and requestState; register it with `.run` instead"
)]
pub trait IntoCallToolResult {
    /// The complete result.
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError>;
    /// The `outputSchema` the tool advertises, if its results are structured.
    fn output_schema() -> Option<Map<String, Value>> {
        None
    }
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(self)
    }
}

impl IntoCallToolResult for String {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::new(vec![ContentBlock::Text(
            TextContent::new(self),
        )]))
    }
}

impl IntoCallToolResult for &'static str {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        self.to_owned().into_call_tool_result()
    }
}

impl IntoCallToolResult for ContentBlock {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoCallToolResult for Vec<ContentBlock> {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::new(self))
    }
}

impl<T: Serialize + JsonSchema> IntoCallToolResult for Structured<T> {
    fn into_call_tool_result(self) -> Result<CallToolResult, RpcError> {
        let value = serde_json::to_value(&self.0).map_err(|e| {
            tracing::error!(error = %e, "could not encode a tool's structured result");
            RpcError::internal("Internal error")
        })?;
        let mut result = CallToolResult::new(vec![ContentBlock::Text(TextContent::new(
            value.to_string(),
        ))]);
        result.structured_content = Some(value);
        Ok(result)
    }

    fn output_schema() -> Option<Map<String, Value>> {
        Some(schema::object_schema::<T>())
    }
}

/// What a tool registered with [`ToolBuilder::run`] may return: a complete result, or
/// an [`InputRequiredResult`] asking the client for input first.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    note = "return a complete result (CallToolResult, String, ContentBlock, Vec<ContentBlock>, Structured<T>), an InputRequiredResult, or a CallToolOutcome"
)]
pub trait IntoToolOutcome {
    /// The outcome.
    fn into_tool_outcome(self) -> Result<CallToolOutcome, RpcError>;
    /// The `outputSchema` the tool advertises, if its results are structured.
    fn output_schema() -> Option<Map<String, Value>> {
        None
    }
}

impl<T: IntoCallToolResult> IntoToolOutcome for T {
    fn into_tool_outcome(self) -> Result<CallToolOutcome, RpcError> {
        self.into_call_tool_result().map(Outcome::Complete)
    }
    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }
}

impl IntoToolOutcome for InputRequiredResult {
    fn into_tool_outcome(self) -> Result<CallToolOutcome, RpcError> {
        Ok(Outcome::InputRequired(self))
    }
}

impl IntoToolOutcome for CallToolOutcome {
    fn into_tool_outcome(self) -> Result<CallToolOutcome, RpcError> {
        Ok(self)
    }
}

/// Tool arguments that are an empty object.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, serde::Serialize, JsonSchema)]
pub struct NoArgs {}

/// One call of a tool, as the registry hands it to the tool's function.
pub(crate) struct ToolCall {
    pub(crate) ctx: RequestContext,
    /// The tool called: what its arguments are checked against when they do not decode.
    pub(crate) entry: Arc<ToolEntry>,
    /// The arguments as sent (`{}` when there were none).
    pub(crate) arguments: ToolArguments,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
    /// Where [`ToolContext::continue_as_task`] asks, when the call may become a task.
    pub(crate) detach: Option<Arc<super::detach::Detach>>,
}

pub(crate) type ToolFn =
    Arc<dyn Fn(ToolCall) -> BoxFuture<'static, Result<CallToolOutcome, RpcError>> + Send + Sync>;

/// A registered tool.
pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) call: ToolFn,
    /// Each sealed state accepted once (see [`ToolBuilder::single_use`]).
    pub(crate) single_use: bool,
    /// The `x-mcp-header` annotations of the tool's `inputSchema`, read once.
    #[cfg(feature = "http-server")]
    pub(crate) headers: Vec<crate::transport::http::ParamHeader>,
    /// The OAuth scopes a call needs (see [`ToolBuilder::required_scopes`]).
    pub(crate) scopes: Vec<String>,
    /// Its settings for the extensions that take its calls.
    pub(crate) settings: ToolSettings,
    /// What its listing shows of those settings, by what each request declares.
    pub(crate) gates: Vec<Gate>,
    /// Whether its body can ask mid-call to go on detached (a resolver's cannot).
    pub(crate) can_detach: bool,
    /// The `inputSchema`, compiled once.
    #[cfg(feature = "schema-validation")]
    pub(crate) validator: Option<Arc<jsonschema::Validator>>,
    /// Whether the schema is checked before the arguments are decoded: unless it was
    /// derived from the arguments' type and refuses nothing decoding does not.
    pub(crate) check_first: bool,
}

impl ToolEntry {
    pub(crate) fn new(tool: Tool, call: ToolFn, single_use: bool, scopes: Vec<String>) -> Self {
        #[cfg(feature = "schema-validation")]
        let validator = crate::util::schema::compile(
            &tool.input_schema,
            &format!("the inputSchema of tool {}", tool.name),
        );
        #[cfg(feature = "http-server")]
        let headers = {
            let schema = serde_json::to_value(&tool.input_schema).unwrap_or_default();
            crate::transport::http::param_headers(&schema).unwrap_or_else(|e| {
                tracing::error!(tool = %tool.name, error = %e, "a tool's x-mcp-header annotations are invalid: clients will not call it");
                Vec::new()
            })
        };
        Self {
            tool,
            call,
            single_use,
            #[cfg(feature = "http-server")]
            headers,
            scopes,
            settings: Vec::new(),
            gates: Vec::new(),
            can_detach: true,
            #[cfg(feature = "schema-validation")]
            validator,
            check_first: true,
        }
    }

    /// The entry of a tool whose `inputSchema` was derived from its arguments' type:
    /// checked first only when it refuses more than decoding into that type does.
    pub(crate) fn derived_schema(mut self) -> Self {
        self.check_first = !super::arguments::decoding_refuses_all(&self.tool.input_schema);
        self
    }

    /// Refuses `arguments` that break the tool's `inputSchema` (-32602 naming the
    /// first offending place), before the tool runs; a schema that asks no more than
    /// decoding is left to the decoding (see [`derived_schema`](Self::derived_schema)).
    pub(crate) fn check_arguments(&self, arguments: &ToolArguments) -> Result<(), RpcError> {
        #[cfg(feature = "schema-validation")]
        if self.check_first && self.validator.is_some() {
            let tree = arguments
                .to_map()
                .map_err(|e| super::arguments::invalid("tool", &self.tool.name, &e))?;
            return self.check_tree(&Value::Object(tree));
        }
        let _ = arguments;
        Ok(())
    }

    /// A call's `arguments` as `A`, straight from their text; arguments that do not
    /// decode are refused by the schema when it refuses them (what a check before
    /// decoding would have said), else by where decoding went wrong.
    pub(crate) fn decode<A: DeserializeOwned>(
        &self,
        arguments: &ToolArguments,
    ) -> Result<A, RpcError> {
        if let Ok(args) = arguments.decode() {
            return Ok(args);
        }
        let tree = arguments
            .to_map()
            .map(Value::Object)
            .map_err(|e| super::arguments::invalid("tool", &self.tool.name, &e))?;
        self.check_tree(&tree)?;
        super::arguments::decode_tree("tool", &self.tool.name, tree)
    }

    /// Refuses `arguments`, a tree, when they break the tool's `inputSchema`.
    pub(crate) fn check_tree(&self, arguments: &Value) -> Result<(), RpcError> {
        #[cfg(feature = "schema-validation")]
        if let Some(validator) = &self.validator {
            crate::util::schema::check(validator, arguments, "the arguments").map_err(|at| {
                RpcError::invalid_params(format!(
                    "Invalid arguments for tool {}: {at}",
                    self.tool.name
                ))
            })?;
        }
        let _ = arguments;
        Ok(())
    }

    pub(crate) fn with_settings(mut self, settings: ToolSettings, gates: Vec<Gate>) -> Self {
        self.settings = settings;
        self.gates = gates;
        self
    }
}

/// Registers a tool: `mcp.tool("name").description("...").run(f)`.
#[must_use = "a tool is registered by `.run` or `.resolve`"]
pub struct ToolBuilder<'a> {
    pub(crate) server: &'a McpServer,
    pub(crate) tool: Tool,
    pub(crate) single_use: bool,
    /// An `inputSchema` given as is, in place of the one derived from the arguments.
    pub(crate) input_schema: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) scopes: Vec<String>,
    pub(crate) settings: ToolSettings,
    pub(crate) gates: Vec<Gate>,
}

impl ToolBuilder<'_> {
    /// How the tool takes part in an extension the server serves (see
    /// [`McpServer::extension`]): that extension then takes its calls. For the tasks
    /// extension, a [`TaskSupport`](crate::tasks::TaskSupport), or
    /// [`TaskSupport::on_request`](crate::tasks::TaskSupport::on_request) for a call that
    /// runs inline until the tool asks to go on as a task. One setting per extension: a
    /// second replaces the first.
    pub fn extension<S: ToolSetting>(mut self, setting: S) -> Self {
        self.settings.retain(|(id, _)| *id != S::EXTENSION);
        self.gates.retain(|g| g.extension != S::EXTENSION);
        self.gates.push(Gate::of(&setting));
        self.settings.push((S::EXTENSION, Arc::new(setting)));
        self
    }

    /// Accepts each sealed `requestState` of this tool once: a second redemption of a
    /// token is refused with the fixed -32602, and once a flow completes its result is
    /// kept (for the state's TTL) and answered again to a retry of the last round, so
    /// a client whose response was lost gets it without the tool running twice. For
    /// tools with side effects that must happen at most once; redemptions are recorded
    /// in the server's [`ReplayStore`](crate::server::replay::ReplayStore) (see
    /// [`McpServer::replay_store`]). The first round, which carries no state, is not
    /// guarded: put the side effect behind an answer.
    pub fn single_use(mut self) -> Self {
        self.single_use = true;
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Advertises `schema` as the tool's `inputSchema`, exactly as given (every JSON
    /// Schema 2020-12 keyword kept), in place of the schema derived from the argument
    /// type; the arguments are still decoded into that type. For a schema the type's
    /// derivation cannot say (`$defs` with anchors, `if`/`then`/`else`, `x-mcp-header`).
    pub fn input_schema(mut self, schema: serde_json::Map<String, serde_json::Value>) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The OAuth scopes a call of this tool needs. On an
    /// [`HttpServer`](crate::http::HttpServer) of this server's
    /// [`server`](McpServer::server), with a token verifier, a call whose token lacks one
    /// is answered 403 `insufficient_scope` naming them, before the tool runs.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Hints about the tool's behaviour.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Registers `f` as the tool (the direct form). It receives the typed arguments and
    /// a [`ToolContext`], and may return a complete result or an
    /// [`InputRequiredResult`], reading the retry's answers and plaintext state from the
    /// context.
    pub fn run<A, F, Fut, R>(mut self, f: F)
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoToolOutcome + 'static,
    {
        let derived = self.input_schema.is_none();
        self.tool.input_schema = self
            .input_schema
            .take()
            .unwrap_or_else(schema::object_schema::<A>);
        self.tool.output_schema = R::output_schema();
        let f = Arc::new(f);
        let call: ToolFn = Arc::new(move |call: ToolCall| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let args: A = call.entry.decode(&call.arguments)?;
                let ctx = ToolContext::new(call.ctx, call.input_responses, call.request_state)
                    .with_detach(call.detach);
                match f(args, ctx).await {
                    Ok(r) => r.into_tool_outcome(),
                    Err(e) => e.into_outcome(),
                }
            })
        });
        let entry = ToolEntry::new(self.tool, call, self.single_use, self.scopes)
            .with_settings(self.settings, self.gates);
        self.server.add_tool(if derived {
            entry.derived_schema()
        } else {
            entry
        });
    }
}
