//! The seed's provision flow as separate processes, for `scripts/bench-cost`, which runs
//! one side under `valgrind --tool=callgrind` and counts instructions per flow.
//!
//! ```text
//! cost serve-http        # the sealed provision server on 127.0.0.1:0; prints its URL;
//!                        # exits cleanly on SIGTERM or ctrl-c (so callgrind writes out)
//! cost serve-http layer  # the same with one pass-through middleware layer
//! cost serve-http spans  # the same with a subscriber recording its spans (a registry)
//! cost serve-http mcp    # what users write: the README's provision tool on McpServer
//!                        # (a resolver, sealed by default)
//! cost serve-http gateway URL  # tern's gateway (`tern_mcp::proxy`) in front of the
//!                        # server at URL, one upstream without a name, as `tern proxy` runs
//! cost serve-http-mt ... # any of the above on the multi-thread runtime `#[tokio::main]`
//!                        # gives (`serve-http` runs on a current-thread one)
//! cost client URL N      # N sequential flows with tern's automatic client
//! cost client-distinct URL N  # the same, each flow's `name` a different one
//! cost client URL N C    # 20 warm-up flows, then N flows over C concurrent callers,
//!                        # timed (microseconds per flow, flows per second), as the
//!                        # rmcp harness's client prints them
//! cost memory N          # N flows, server and client in one process, in-memory transport
//! ```
//!
//! Built with the `count-allocs` feature, the run also counts allocations (dhat) and
//! prints `allocations N` and `bytes N` when it ends; the counting allocator costs
//! instructions, so instruction counts come from a build without it.

#[path = "../../../runtime/examples/support/seed.rs"]
mod seed;

#[path = "../../../runtime/examples/support/provision_mcp.rs"]
mod provision_mcp;

use std::sync::Arc;

use serde_json::json;
use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::server::Server;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::memory;

#[cfg(feature = "count-allocs")]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn server() -> Result<Server> {
    Ok(seed::provision_server()
        .seal(RequestStateSecurity::ephemeral())
        .build()?)
}

/// A layer that only passes each request on: what the layer machinery itself costs.
struct PassThrough;

impl tern_mcp::server::middleware::Middleware for PassThrough {
    fn handle<'a>(
        &'a self,
        request: &'a tern_mcp::server::middleware::Dispatch<'a>,
        next: tern_mcp::server::middleware::Downstream<'a>,
    ) -> tern_mcp::transport::BoxFuture<'a, tern_mcp::server::middleware::Dispatched> {
        let _ = request;
        next.run()
    }
}

fn client() -> tern_mcp::client::ClientBuilder {
    Client::builder("cost", "1.0.0")
        .on_elicitation(|_ctx, _p| async { Ok(tern_mcp::ask::accept([("region", "eu-west-1")])) })
}

async fn flows(client: &Client, n: usize) -> Result<()> {
    flows_named(client, n, false).await
}

/// `n` flows; with `distinct`, each provisions a database of its own name.
async fn flows_named(client: &Client, n: usize, distinct: bool) -> Result<()> {
    for i in 0..n {
        let name = if distinct {
            format!("orders-{i:06}")
        } else {
            "orders".to_owned()
        };
        let result = client
            .call_tool("provision", json!({ "name": name }))
            .await?;
        if result.is_error == Some(true) {
            return Err("the flow ended in a tool error".into());
        }
    }
    Ok(())
}

/// 20 warm-up flows, then `n` flows shared out over `callers` concurrent tasks on one
/// client, timed: what the rmcp harness's client prints, for the same comparison.
async fn timed(client: &Client, n: usize, callers: usize) -> Result<()> {
    flows(client, 20).await?;
    let callers = callers.max(1);
    let started = std::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..callers {
        let client = client.clone();
        let share = n / callers + usize::from(i < n % callers);
        tasks.spawn(async move { flows(&client, share).await.map_err(|e| e.to_string()) });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    let elapsed = started.elapsed();
    let n = n.max(1) as f64;
    println!("{:.1} us per flow", elapsed.as_secs_f64() * 1e6 / n);
    println!("{:.0} flows/s", n / elapsed.as_secs_f64());
    Ok(())
}

async fn serve_http(server: Server) -> Result<()> {
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    HttpServer::new(server).serve(listener, shutdown).await?;
    Ok(())
}

async fn run(args: &[&str]) -> Result<()> {
    match args {
        ["serve-http"] => serve_http(server()?).await,
        ["serve-http", "layer"] => {
            let layered = seed::provision_server()
                .seal(RequestStateSecurity::ephemeral())
                .layer(PassThrough)
                .build()?;
            serve_http(layered).await
        }
        ["serve-http", "mcp"] => serve_http(provision_mcp::server().server()?).await,
        ["serve-http", "gateway", upstream] => {
            let upstream = Upstream::http(HttpClientTransport::builder(*upstream)).await?;
            serve_http(Gateway::new("cost-gateway", "1.0.0").upstream(upstream).build()?).await
        }
        ["serve-http", "spans"] => {
            tracing::subscriber::set_global_default(tracing_subscriber::registry())?;
            serve_http(server()?).await
        }
        ["client", url, n] => {
            let transport = HttpClientTransport::builder(*url).build()?;
            let client = client()
                .era(tern_mcp::client::EraMode::Stateless)
                .connect(Arc::new(transport))
                .await
                .unwrap();
            flows(&client, n.parse()?).await
        }
        ["client-distinct", url, n] => {
            let transport = HttpClientTransport::builder(*url).build()?;
            let client = client()
                .era(tern_mcp::client::EraMode::Stateless)
                .connect(Arc::new(transport))
                .await?;
            flows_named(&client, n.parse()?, true).await
        }
        ["client", url, n, callers] => {
            let transport = HttpClientTransport::builder(*url).build()?;
            let client = client()
                .era(tern_mcp::client::EraMode::Stateless)
                .connect(Arc::new(transport))
                .await
                .unwrap();
            timed(&client, n.parse()?, callers.parse()?).await
        }
        ["memory", n] => {
            let (client_end, server_end) = memory::pair();
            let server = server()?;
            tokio::spawn(async move { server.serve(server_end).await });
            flows(
                &client()
                    .era(tern_mcp::client::EraMode::Stateless)
                    .connect(client_end)
                    .await
                    .unwrap(),
                n.parse()?,
            )
            .await
        }
        _ => Err(
            "usage: cost (serve-http[-mt] [layer | spans | mcp | gateway URL] | client URL N [CALLERS] \
             | client-distinct URL N | memory N)"
                .into(),
        ),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    #[cfg(feature = "count-allocs")]
    let profiler = dhat::Profiler::builder().testing().build();
    // One thread by default: instruction counts then do not depend on how work lands
    // on workers. `serve-http-mt` serves as users run servers, on the multi-thread
    // runtime `#[tokio::main]` builds.
    let runtime = if args.first() == Some(&"serve-http-mt") {
        args[0] = "serve-http";
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    };
    runtime.block_on(run(&args))?;
    #[cfg(feature = "count-allocs")]
    {
        let stats = dhat::HeapStats::get();
        println!("allocations {}", stats.total_blocks);
        println!("bytes {}", stats.total_bytes);
        drop(profiler);
    }
    Ok(())
}
