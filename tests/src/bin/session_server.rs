//! `tern_tests::notifier::notifier` in a child process, for the session tests:
//! `session_server [--http ADDR] [--no-fulfil]`. Over HTTP it prints
//! `listening on http://ADDR/mcp` once bound; otherwise it serves stdin/stdout.

use tern_mcp::http::HttpServer;
use tern_mcp::transport::stdio::stdio;
use tern_tests::notifier::notifier;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fulfil = !args.iter().any(|a| a == "--no-fulfil");
    let http = args
        .iter()
        .position(|a| a == "--http")
        .map(|i| args.get(i + 1).cloned().ok_or("--http needs an address"))
        .transpose()?;
    let mcp = notifier(fulfil);
    match http {
        None => mcp.serve(stdio()).await?,
        Some(addr) => {
            let shutdown = tern_mcp::server::shutdown_signal();
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            println!("listening on http://{}/mcp", listener.local_addr()?);
            HttpServer::new(mcp.server()?)
                .serve(listener, shutdown)
                .await?;
        }
    }
    Ok(())
}
