//! The client the official MCP conformance suite drives (`conformance client --command`).
//!
//! ```sh
//! MCP_CONFORMANCE_SCENARIO=tools_call \
//!     cargo run -p tern-mcp --example conformance_client -- http://127.0.0.1:3000/mcp
//! ```
//!
//! The harness appends its mock server's URL as the last argument, names the scenario
//! in `MCP_CONFORMANCE_SCENARIO` and may put JSON in `MCP_CONFORMANCE_CONTEXT`. Every
//! scenario gets the same ordinary client: it discovers the server's era (so scenarios
//! of the 2025-11-25 suite run in a session), lists the server's tools (the HTTP
//! transport drops tools whose `x-mcp-header` annotations are invalid), then calls the
//! tools the context names with the context's arguments, or else every listed tool
//! with arguments made from its input schema. Input requests are answered by the
//! usual callbacks and the automatic input-required loop. The exit code is non-zero
//! when any step fails (a server that serves no `tools/call` at all, -32601, is not a
//! failure: some scenarios check only what the client does with the list).
//!
//! The skills scenarios (`sep-2640-client-*`) ask for no call: the client lists the
//! server's skills and stops there (`no-prefetch`), or loads the first skill, reading its
//! `SKILL.md` and then each of its other files, each checked against the skill's entry,
//! and stops at the first file that fails (the exit code says so).
//!
//! One scenario asks for more than a call: `json-schema-2020-12-preservation` wants the
//! input schema the client holds for `json_schema_2020_12_tool` passed back, verbatim,
//! to `json_schema_echo`, to show that no keyword was lost in parsing.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tern_mcp::client::{Client, InputContext};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::oauth::{
    ClientKey, FetchRedirect, IdentityProvider, OAuthClient, Registration, TokenSource,
};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsRequestParams, ListRootsResult, PaginatedRequestParams, Role, Root,
    SamplingMessageContent, SamplingMessageContentBlock, TextContent, Tool, method,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// At most this many `tools/list` pages are read: a server that pages forever is a bug.
const MAX_PAGES: usize = 20;

/// A value of the JSON Schema `schema` that a fixture accepts: the default if there is
/// one, else the first enum member, else a placeholder of the schema's type.
fn sample_value(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("conformance"),
    }
}

/// Arguments for a tool: a sample value for each required property.
fn sample_arguments(tool: &Tool) -> Map<String, Value> {
    let schema = serde_json::to_value(&tool.input_schema).unwrap_or(Value::Null);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut arguments = Map::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            if required.contains(&name.as_str()) {
                arguments.insert(name.clone(), sample_value(property));
            }
        }
    }
    arguments
}

/// Accepts every form with sample values for its fields.
async fn elicit(_ctx: InputContext, params: ElicitRequestParams) -> Result<ElicitResult, RpcError> {
    let ElicitRequestParams::Form(form) = params else {
        // A URL step cannot be completed by a headless client.
        return Ok(tern_mcp::ask::decline());
    };
    let mut content = Map::new();
    for (name, property) in &form.requested_schema.properties {
        let schema = serde_json::to_value(property).unwrap_or(Value::Null);
        content.insert(name.clone(), sample_value(&schema));
    }
    let answer = json!({"action": "accept", "content": content});
    serde_json::from_value(answer).map_err(|e| RpcError::internal(e.to_string()))
}

/// Answers every sampling request with a fixed text.
async fn sample(
    _ctx: InputContext,
    _params: CreateMessageRequestParams,
) -> Result<CreateMessageResult, RpcError> {
    let text = SamplingMessageContentBlock::Text(TextContent::new("Hello from the tern client."));
    Ok(CreateMessageResult::new(
        SamplingMessageContent::One(text),
        "tern-conformance",
        Role::Assistant,
    ))
}

/// One root: the current directory's URI is not needed by any fixture.
async fn roots(
    _ctx: InputContext,
    _params: Option<ListRootsRequestParams>,
) -> Result<ListRootsResult, RpcError> {
    Ok(ListRootsResult::new(vec![Root::new("file:///tmp")]))
}

async fn list_tools(client: &Client) -> Result<Vec<Tool>, BoxError> {
    let mut tools = Vec::new();
    let mut params = PaginatedRequestParams::new();
    for _ in 0..MAX_PAGES {
        let page = client.request::<method::ListTools>(params.clone()).await?;
        tools.extend(page.tools);
        match page.next_cursor {
            Some(cursor) => params.cursor = Some(cursor),
            None => return Ok(tools),
        }
    }
    Err(format!("tools/list still paging after {MAX_PAGES} pages").into())
}

/// The calls the harness asked for in `MCP_CONFORMANCE_CONTEXT` (`toolCalls`), if any.
fn context_calls() -> Result<Option<Vec<(String, Value)>>, BoxError> {
    let Ok(raw) = std::env::var("MCP_CONFORMANCE_CONTEXT") else {
        return Ok(None);
    };
    let context: Value = serde_json::from_str(&raw)?;
    let Some(calls) = context.get("toolCalls").and_then(Value::as_array) else {
        return Ok(None);
    };
    let calls = calls
        .iter()
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?.to_owned();
            let arguments = c.get("arguments").cloned().unwrap_or_else(|| json!({}));
            Some((name, arguments))
        })
        .collect();
    Ok(Some(calls))
}

/// A host using a server's skills: lists them, and unless `mode` is `no-prefetch` loads
/// the first, its `SKILL.md` first and then its other files, each checked on arrival.
async fn load_skill(client: &Client, mode: &str) -> Result<(), BoxError> {
    let skills = client.skills().await?;
    tracing::info!(count = skills.len(), "listed skills");
    if mode == "no-prefetch" {
        return Ok(());
    }
    let Some(skill) = skills.first() else {
        return Err("the server lists no skill".into());
    };
    client.read_skill_file(skill, &skill.uri).await?;
    tracing::info!(uri = %skill.uri, "loaded");
    if let tern_mcp::types::ext_skills::SkillResources::Many(files) = &skill.resources {
        for file in files.iter().filter(|f| f.uri != skill.uri) {
            client.read_skill_file(skill, &file.uri).await?;
            tracing::info!(uri = %file.uri, "read");
        }
    }
    Ok(())
}

/// The Client ID Metadata Document URL the suite's authorization servers accept.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client a user would configure, as the harness describes it: its
/// pre-registered credentials when the context has them (`client_id`,
/// `client_secret`), the suite's Client ID Metadata Document URL, and a user agent that
/// takes the authorization server's redirect itself (the suite's servers approve at once).
/// The OAuth client a scenario calls for: a machine grant for the extension scenarios
/// that name one (chosen by the scenario's name: `auth/pre-registration` passes the same
/// keys as client-credentials-basic and wants the code flow), else the authorization
/// code flow; always with DPoP, which is used only where the authorization server
/// offers it.
fn authorizer(scenario: &str) -> Result<OAuthClient, BoxError> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|raw| serde_json::from_str(&raw).ok())
        .unwrap_or_default();
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let registration = text("client_id").map(|id| {
        let registration = Registration::new(id);
        match text("client_secret") {
            Some(secret) => registration.with_secret(secret),
            None => registration,
        }
    });
    let oauth = OAuthClient::builder("tern-conformance-client").dpop();
    let oauth = match (scenario, registration) {
        ("auth/client-credentials-basic", Some(registration)) => {
            oauth.client_credentials(registration)
        }
        ("auth/client-credentials-jwt", Some(registration)) => {
            let key = ClientKey::from_pkcs8_pem(text("private_key_pem").unwrap_or_default())?;
            oauth.client_credentials(registration).signing_key(key)
        }
        ("auth/enterprise-managed-authorization", Some(registration)) => {
            let id_token = TokenSource::value(text("idp_id_token").unwrap_or_default());
            let mut idp =
                IdentityProvider::new(text("idp_token_endpoint").unwrap_or_default(), id_token);
            if let Some(id) = text("idp_client_id") {
                idp = idp.client(Registration::new(id));
            }
            oauth.pre_registered(registration).enterprise(idp)
        }
        ("auth/wif-jwt-bearer", _) => {
            oauth.workload_identity(TokenSource::value(text("valid_jwt").unwrap_or_default()))
        }
        (_, registration) => {
            let mut oauth = oauth
                .user_agent(FetchRedirect::new("http://localhost:3000/callback"))
                .client_metadata_url(CLIENT_METADATA_URL);
            if let Some(registration) = registration {
                oauth = oauth.pre_registered(registration);
            }
            oauth
        }
    };
    Ok(oauth.build()?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // Colour only for a person at a terminal who has not asked for none (NO_COLOR).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_max_level(tracing::Level::INFO)
        .init();
    let url = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
        .ok_or("usage: conformance_client URL (the harness appends it)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    tracing::info!(%scenario, %url, "starting");

    let transport = HttpClientTransport::builder(url.as_str())
        .authorizer(Arc::new(authorizer(&scenario)?))
        .build()?;
    let client = Client::builder("tern-conformance-client", env!("CARGO_PKG_VERSION"))
        .extension(tern_mcp::tasks::ClientTasks)
        .on_elicitation(elicit)
        .on_sampling(sample)
        .on_list_roots(roots)
        .connect(Arc::new(transport))
        .await?;
    tracing::info!(version = client.protocol_version(), "negotiated");
    if let Some(mode) = scenario.strip_prefix("sep-2640-client-") {
        return load_skill(&client, mode).await;
    }

    // Listing first also teaches the HTTP transport each tool's Mcp-Param headers.
    let tools = list_tools(&client).await?;
    tracing::info!(count = tools.len(), "listed tools");
    let mut calls = match context_calls()? {
        Some(calls) => calls,
        None => tools
            .iter()
            .map(|t| (t.name.clone(), Value::Object(sample_arguments(t))))
            .collect(),
    };
    if scenario == "json-schema-2020-12-preservation" {
        let observed = tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .map(|t| serde_json::to_value(&t.input_schema))
            .transpose()?;
        for (name, arguments) in &mut calls {
            if let (Some(schema), "json_schema_echo") = (&observed, name.as_str()) {
                *arguments = json!({ "schema": schema });
            }
        }
    }
    let mut failures = 0;
    for (name, arguments) in calls {
        match client.call_tool(name.as_str(), &arguments).await {
            Ok(result) => {
                tracing::info!(tool = %name, is_error = ?result.is_error, "called");
            }
            // A scenario whose mock server lists tools but serves no calls (it checks
            // only what the client did with the list) answers -32601: nothing failed.
            Err(tern_mcp::Error::Rpc(e))
                if e.code == tern_mcp::types::v2026_07_28::MethodNotFoundCode::VALUE =>
            {
                tracing::info!(tool = %name, "the server serves no tools/call here");
            }
            Err(e) => {
                failures += 1;
                tracing::error!(tool = %name, error = %e, "call failed");
            }
        }
    }
    if failures > 0 {
        return Err(format!("{failures} tool call(s) failed").into());
    }
    Ok(())
}
