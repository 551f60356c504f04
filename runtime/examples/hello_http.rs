//! The main example: the `hello` server (an `McpServer`, sealed by default) served over
//! Streamable HTTP on loopback, then called once by tern's client, which shows what the
//! wire carried between the two rounds.
//!
//! ```sh
//! cargo run -p tern-mcp --example hello_http                    # serve, call once, exit
//! cargo run -p tern-mcp --example hello_http -- 127.0.0.1:3000  # serve until ctrl-c
//! ```

#[path = "support/hello.rs"]
mod hello;

use tern_mcp::client::{Client, Step};
use tern_mcp::http::HttpServer;
use tern_mcp::server::shutdown_signal;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, ContentBlock, method};

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let address = std::env::args().nth(1);
    let listener =
        tokio::net::TcpListener::bind(address.as_deref().unwrap_or("127.0.0.1:0")).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let endpoint = HttpServer::new(hello::server().server()?);
    if address.is_some() {
        let shutdown = shutdown_signal();
        println!("serving {url} (ctrl-c stops)");
        return Ok(endpoint.serve(listener, shutdown).await?);
    }
    tokio::spawn(endpoint.serve(listener, std::future::pending()));
    call(&url).await
}

/// One call of `greet`, one round at a time, so that the state between them shows.
async fn call(url: &str) -> Result<(), Error> {
    let client = Client::builder("hello-client", "1.0.0")
        .on_elicitation(|_ctx, _params| async { Ok(tern_mcp::ask::accept([("name", "Ada")])) })
        .connect(HttpClientTransport::builder(url).build()?)
        .await?;
    let Step::NeedsInput(pending) = client
        .start::<method::CallTool>(CallToolRequestParams::new("greet"))
        .await?
    else {
        return Err("the server did not ask".into());
    };
    for (key, request) in pending.input_requests.iter() {
        println!("round 1: the server asks {key:?} ({})", request.method());
    }
    let state = pending.request_state.as_deref().unwrap_or_default();
    println!(
        "requestState on the wire: {} characters, sealed: {}...",
        state.len(),
        state.get(..20).unwrap_or(state)
    );
    let answers = client.fulfil(Some(&pending.input_requests)).await?;
    let Step::Done(result) = client.resume::<method::CallTool>(pending, answers).await? else {
        return Err("the server asked again".into());
    };
    for block in &result.content {
        if let ContentBlock::Text(text) = block {
            println!("round 2: {}", text.text);
        }
    }
    Ok(())
}
