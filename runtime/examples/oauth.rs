//! An MCP server behind OAuth 2.1, and a client that signs in to call it.
//!
//! ```sh
//! # The server: JWT access tokens from ISSUER (checked against its JWKS), one tool
//! # per scope; its Protected Resource Metadata tells clients where to sign in.
//! cargo run -p tern-mcp --features jwt --example oauth -- serve --port 8080 \
//!     --issuer https://auth.example.com --jwks https://auth.example.com/jwks
//!
//! # The client: finds the authorization server, registers, opens the sign-in page
//! # (printed here: open it in a browser), takes the redirect on 127.0.0.1:8976, and
//! # keeps what it got in a file, so the next run signs in only if the refresh fails.
//! cargo run -p tern-mcp --features jwt --example oauth -- call http://127.0.0.1:8080/mcp read \
//!     --store ./tern-credentials.json
//! ```
//!
//! `read` needs the scope `notes:read`, `write` needs `notes:write`: calling `write`
//! with a token that lacks it is answered 403 `insufficient_scope`, and the client
//! asks the user for the wider grant (a step-up) before calling again.

use std::sync::Arc;

use serde_json::json;
use tern_mcp::auth::JwtVerifier;
use tern_mcp::client::Client;
use tern_mcp::http::{HttpServer, ProtectedResource};
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::oauth::{FileStore, LoopbackRedirect, MemoryStore, OAuthClient};
use tern_mcp::transport::http::client::HttpClientTransport;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const USAGE: &str = "usage: oauth serve --port PORT --issuer URL --jwks URL
       oauth call URL TOOL [--store FILE]";

/// The usage on stderr, as lines (an error returned from `main` would be shown quoted,
/// its line break as `\n`), and exit status 2.
fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

/// The value after `flag` in `args`.
fn flag(args: &[String], flag: &str) -> Option<String> {
    let at = args.iter().position(|a| a == flag)?;
    args.get(at + 1).cloned()
}

fn notes() -> McpServer {
    let mcp = McpServer::new("notes", env!("CARGO_PKG_VERSION"));
    mcp.tool("read")
        .description("Reads the notes (scope notes:read)")
        .required_scopes(["notes:read"])
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let who = ctx
                .auth()
                .and_then(|a| a.subject.clone())
                .unwrap_or_default();
            Ok(format!("{who}'s notes: none yet"))
        });
    mcp.tool("write")
        .description("Writes a note (scope notes:write)")
        .required_scopes(["notes:write"])
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("written") });
    mcp
}

async fn serve(args: &[String]) -> Result<(), BoxError> {
    let port: u16 = flag(args, "--port").unwrap_or_else(|| usage()).parse()?;
    let issuer = flag(args, "--issuer").unwrap_or_else(|| usage());
    let jwks = flag(args, "--jwks").unwrap_or_else(|| usage());
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    // The resource identifier tokens must be issued for: this endpoint's public URL.
    let resource = format!("http://{}/mcp", listener.local_addr()?);
    let verifier = JwtVerifier::new(jwks, issuer.clone(), resource.clone())?;
    let mcp = notes();
    println!("listening on {resource}");
    HttpServer::new(mcp.server()?)
        .token_verifier(Arc::new(verifier))
        .protected_resource(ProtectedResource::new(resource, issuer).with_scopes(["notes:read"]))
        .serve(listener, shutdown)
        .await?;
    Ok(())
}

async fn call(args: &[String]) -> Result<(), BoxError> {
    let (Some(url), Some(tool)) = (args.first(), args.get(1)) else {
        usage()
    };
    let store: Arc<dyn tern_mcp::oauth::CredentialStore> = match flag(args, "--store") {
        Some(path) => Arc::new(FileStore::open(path)?),
        None => Arc::new(MemoryStore::default()),
    };
    let oauth = OAuthClient::builder("tern oauth example")
        .user_agent(LoopbackRedirect::new(8976, |url| {
            eprintln!("Sign in at:\n  {url}");
        }))
        .store(store)
        .build()?;
    let transport = HttpClientTransport::builder(url.as_str())
        .authorizer(Arc::new(oauth))
        .build()?;
    let client = Client::builder("oauth-example", env!("CARGO_PKG_VERSION"))
        .connect(Arc::new(transport))
        .await?;
    let result = client.call_tool(tool.as_str(), json!({})).await?;
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]).await,
        Some("call") => call(&args[1..]).await,
        _ => usage(),
    }
}
