//! The skills under a directory, served over Streamable HTTP on loopback:
//! `skills_server DIR`. Its first stdout line is `serving on http://ADDR/mcp`; the tests
//! of what a skill file costs to serve measure this process.

use tern_mcp::http::HttpServer;
use tern_mcp::mcp::McpServer;
use tern_mcp::skills::Skills;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: skills_server DIR")?;
    let mcp = McpServer::new("skills", "1").extension(Skills::from_dir(dir)?);
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("serving on http://{}/mcp", listener.local_addr()?);
    HttpServer::new(mcp.server()?)
        .serve(listener, shutdown)
        .await?;
    Ok(())
}
