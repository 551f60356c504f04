//! The `hello` server over stdio: JSON-RPC on stdin and stdout, logs on stderr. Call it
//! from a terminal with tern's CLI, which asks you the server's question:
//!
//! ```sh
//! tern call "cargo run -q -p tern-mcp --example hello_stdio" greet
//! ```

#[path = "support/hello.rs"]
mod hello;

use tern_mcp::transport::stdio::stdio;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    hello::server().serve(stdio()).await?;
    Ok(())
}
