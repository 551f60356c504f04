//! Static resources (no context: they cannot ask) and resource templates (which can).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use super::context::ToolContext;
use super::prompt::as_rpc;
use super::tool::ToolError;
use super::{Completer, McpServer};
use crate::jsonrpc::RpcError;
use crate::server::{RequestContext, SharedResult};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    Annotations, AnyResourceContents, BlobResourceContents, InputRequiredResult, InputResponses,
    Outcome, ReadResourceOutcome, ReadResourceResult, Resource, ResourceTemplate,
    TextResourceContents,
};

/// A resource's body: text or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes, sent base64-encoded.
    Blob(Vec<u8>),
}

impl From<String> for ResourceBody {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&'static str> for ResourceBody {
    fn from(s: &'static str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<Vec<u8>> for ResourceBody {
    fn from(b: Vec<u8>) -> Self {
        Self::Blob(b)
    }
}

/// The bytes `result`'s contents hold (a blob's decoded).
fn body_len(result: &ReadResourceResult) -> usize {
    result
        .contents
        .iter()
        .map(|contents| match contents {
            AnyResourceContents::Text(text) => text.text.len(),
            AnyResourceContents::Blob(blob) => {
                let padding = blob.blob.bytes().rev().take_while(|b| *b == b'=').count();
                (blob.blob.len() / 4 * 3).saturating_sub(padding)
            }
        })
        .sum()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What a resource function may return when it completes.
#[diagnostic::on_unimplemented(
    message = "a resource cannot return `{Self}`",
    note = "return a String (text), Vec<u8> (bytes), ResourceBody, or a ReadResourceResult"
)]
pub trait IntoReadResult {
    /// The result for the resource at `uri` with `mime_type`.
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResourceResult;
}

impl<B: Into<ResourceBody>> IntoReadResult for B {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResourceResult {
        let contents = match self.into() {
            ResourceBody::Text(text) => {
                let mut c = TextResourceContents::new(text, uri);
                c.mime_type = mime_type.map(str::to_owned);
                AnyResourceContents::Text(c)
            }
            ResourceBody::Blob(bytes) => {
                let mut c = BlobResourceContents::new(base64(&bytes), uri);
                c.mime_type = mime_type.map(str::to_owned);
                AnyResourceContents::Blob(c)
            }
        };
        ReadResourceResult::new(vec![contents])
    }
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _uri: &str, _mime_type: Option<&str>) -> ReadResourceResult {
        self
    }
}

/// What a resource-template function may return: contents, or an
/// [`InputRequiredResult`] asking for input first.
#[diagnostic::on_unimplemented(
    message = "a resource template cannot return `{Self}`",
    note = "return a String, Vec<u8>, ResourceBody, ReadResourceResult, InputRequiredResult or ReadResourceOutcome"
)]
pub trait IntoReadOutcome {
    /// The outcome for `uri`.
    fn into_read_outcome(self, uri: &str, mime_type: Option<&str>) -> ReadResourceOutcome;
}

impl<T: IntoReadResult> IntoReadOutcome for T {
    fn into_read_outcome(self, uri: &str, mime_type: Option<&str>) -> ReadResourceOutcome {
        Outcome::Complete(self.into_read_result(uri, mime_type))
    }
}

impl IntoReadOutcome for InputRequiredResult {
    fn into_read_outcome(self, _uri: &str, _mime_type: Option<&str>) -> ReadResourceOutcome {
        Outcome::InputRequired(self)
    }
}

impl IntoReadOutcome for ReadResourceOutcome {
    fn into_read_outcome(self, _uri: &str, _mime_type: Option<&str>) -> ReadResourceOutcome {
        self
    }
}

pub(crate) type StaticFn =
    Arc<dyn Fn() -> BoxFuture<'static, Result<ReadResourceResult, RpcError>> + Send + Sync>;

/// How a static resource is read.
pub(crate) enum StaticRead {
    /// By its function, at each read.
    Each(StaticFn),
    /// Its fixed contents, written once and shared by every read.
    Fixed(Arc<SharedResult>),
}

pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) read: StaticRead,
    /// The OAuth scopes a `resources/read` needs.
    pub(crate) scopes: Vec<String>,
    /// Whom it is listed to, by the extensions their requests declare (an app's page).
    pub(crate) gates: Vec<super::setting::Gate>,
}

pub(crate) struct TemplateCall {
    pub(crate) ctx: RequestContext,
    pub(crate) uri: String,
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

pub(crate) type TemplateFn = Arc<
    dyn Fn(TemplateCall) -> BoxFuture<'static, Result<ReadResourceOutcome, RpcError>> + Send + Sync,
>;

pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) read: TemplateFn,
    pub(crate) completers: Vec<(String, Completer)>,
}

/// Matches `uri` against a level-1 URI template (`notes://{project}/{id}`): literal
/// text must match exactly and each `{var}` takes a non-empty run up to the next
/// literal (or `/`).
pub(crate) fn match_template(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
    let mut vars = BTreeMap::new();
    let mut rest = uri;
    let mut t = template;
    while !t.is_empty() {
        if let Some(after_brace) = t.strip_prefix('{') {
            let end = after_brace.find('}')?;
            let name = &after_brace[..end];
            t = &after_brace[end + 1..];
            let next_literal: String = t.chars().take_while(|c| *c != '{').collect();
            let stop = if next_literal.is_empty() {
                rest.find('/').unwrap_or(rest.len())
            } else {
                rest.find(next_literal.as_str())?
            };
            if stop == 0 {
                return None;
            }
            vars.insert(name.to_owned(), rest[..stop].to_owned());
            rest = &rest[stop..];
        } else {
            let lit_len = t.find('{').unwrap_or(t.len());
            let lit = &t[..lit_len];
            rest = rest.strip_prefix(lit)?;
            t = &t[lit_len..];
        }
    }
    rest.is_empty().then_some(vars)
}

/// Registers a static resource: `mcp.resource(uri, name).read(f)`.
#[must_use = "a resource is registered by `.read`"]
pub struct ResourceBuilder<'a> {
    pub(crate) server: &'a McpServer,
    pub(crate) resource: Resource,
    pub(crate) scopes: Vec<String>,
    pub(crate) gates: Vec<super::setting::Gate>,
}

impl ResourceBuilder<'_> {
    /// The OAuth scopes a `resources/read` of this resource needs (see
    /// [`ToolBuilder::required_scopes`](crate::mcp::ToolBuilder::required_scopes)).
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// What the resource holds.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// The MIME type of its contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// Hints for the client: who it is for, how much it matters, when it last changed.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.resource.annotations = Some(annotations);
        self
    }

    /// Registers `f`, which produces the contents. Static resources get no context, so
    /// they cannot ask for input.
    pub fn read<F, Fut, R>(self, f: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoReadResult + 'static,
    {
        let uri = self.resource.uri.clone();
        let mime = self.resource.mime_type.clone();
        let f = Arc::new(f);
        let read: StaticFn = Arc::new(move || {
            let f = Arc::clone(&f);
            let uri = uri.clone();
            let mime = mime.clone();
            Box::pin(async move {
                f().await
                    .map(|r| r.into_read_result(&uri, mime.as_deref()))
                    .map_err(as_rpc)
            })
        });
        self.register(StaticRead::Each(read));
    }

    /// Serves `contents`, which never change: written as JSON once, here, and that text
    /// shared by every read, so a large body costs its size once however many clients
    /// read it at a time, or are slow to take it. The resource's size is the body's,
    /// unless given.
    pub fn contents(mut self, contents: impl IntoReadResult) {
        let mime = self.resource.mime_type.as_deref();
        let result = contents.into_read_result(&self.resource.uri, mime);
        if self.resource.size.is_none() {
            self.resource.size = i64::try_from(body_len(&result)).ok();
        }
        let read = match serde_json::to_string(&result).map(SharedResult::new) {
            Ok(Some(shared)) => StaticRead::Fixed(shared),
            // Not written as an object (a member of its own the encoder refused): read
            // as a function's result would be, and refused as that would be.
            _ => {
                let result = Arc::new(result);
                StaticRead::Each(Arc::new(move || {
                    let result = ReadResourceResult::clone(&result);
                    Box::pin(async move { Ok(result) })
                }))
            }
        };
        self.register(read);
    }

    fn register(self, read: StaticRead) {
        self.server.add_resource(ResourceEntry {
            resource: self.resource,
            read,
            scopes: self.scopes,
            gates: self.gates,
        });
    }
}

/// Registers a resource template: `mcp.resource_template(template, name).read(f)`.
#[must_use = "a resource template is registered by `.read`"]
pub struct TemplateBuilder<'a> {
    pub(crate) server: &'a McpServer,
    pub(crate) template: ResourceTemplate,
    pub(crate) completers: Vec<(String, Completer)>,
}

impl TemplateBuilder<'_> {
    /// What the resources hold.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.template.description = Some(description.into());
        self
    }

    /// The MIME type of their contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }

    /// Hints for the client about the resources it makes (see
    /// [`ResourceBuilder::annotations`]).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.template.annotations = Some(annotations);
        self
    }

    /// Completes values of the template variable `variable` for `completion/complete`.
    pub fn complete<F, Fut>(mut self, variable: impl Into<String>, f: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers.push((variable.into(), super::completer(f)));
        self
    }

    /// Registers `f`, which receives the template's variables and a
    /// [`ToolContext`], and may return contents or an [`InputRequiredResult`].
    pub fn read<F, Fut, R>(self, f: F)
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoReadOutcome + 'static,
    {
        let mime = self.template.mime_type.clone();
        let f = Arc::new(f);
        let read: TemplateFn = Arc::new(move |call: TemplateCall| {
            let f = Arc::clone(&f);
            let mime = mime.clone();
            Box::pin(async move {
                let ctx = ToolContext::new(call.ctx, call.input_responses, call.request_state);
                f(call.variables, ctx)
                    .await
                    .map(|r| r.into_read_outcome(&call.uri, mime.as_deref()))
                    .map_err(as_rpc)
            })
        });
        self.server.add_template(TemplateEntry {
            template: self.template,
            read,
            completers: self.completers,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::match_template;

    #[test]
    fn templates_match_literals_and_variables() {
        let vars = match_template("notes://{project}/{id}", "notes://tern/42").unwrap();
        assert_eq!(vars["project"], "tern");
        assert_eq!(vars["id"], "42");
        assert!(match_template("notes://{project}/{id}", "notes://tern").is_none());
        assert!(match_template("notes://{project}/{id}", "other://tern/42").is_none());
        assert!(match_template("notes://{project}/{id}", "notes://tern/42/extra").is_none());
        let vars = match_template("file:///{name}.txt", "file:///report.txt").unwrap();
        assert_eq!(vars["name"], "report");
    }
}
