//! Full multi round-trip flows over loopback Streamable HTTP, tern client to tern
//! server: `tools/call`, input-required, the client's callback, the retry, complete.
//!
//! ```sh
//! cargo bench -p tern-mcp --bench http_flow
//! ```
//!
//! Prints the median and 99th percentile of sequential flows, sequential flows per
//! second, and flows per second with 16 concurrent callers sharing one client. The
//! server runs on its own multi-threaded runtime (two workers), the client on another,
//! so both compete for the machine's cores as they would in two processes.
//!
//! It also runs the flow in memory: on one current-thread runtime (the flow's own cost);
//! on a multi-threaded runtime with the client in a task on its workers, as a request
//! handler or any spawned work calls it (`in_memory_multi_thread`); and with the client
//! in `block_on` on the main thread, which is no worker, so that every message to the
//! server and back is a hop between threads (`in_memory_block_on`: what hops cost).
//!
//! First it measures the machine's floor: a one-byte TCP echo between the same two
//! runtimes. A flow is two HTTP round trips, so twice that median is what no HTTP
//! client and server could beat here; on a virtual machine whose idle cores halt
//! without polling it is most of a flow's time.

#[path = "../examples/support/seed.rs"]
mod seed;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::transport::http::client::HttpClientTransport;

const WARMUP: usize = 500;
const SEQUENTIAL: usize = 5_000;
const CONCURRENT_CALLERS: usize = 16;
const CONCURRENT_FOR: Duration = Duration::from_secs(5);

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn runtime(workers: usize) -> BenchResult<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?)
}

/// One-byte echoes over a loopback TCP connection: the median and 99th percentile.
async fn loopback_round_trip(addr: std::net::SocketAddr) -> BenchResult<()> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut byte = [0u8; 1];
    let mut times = Vec::with_capacity(SEQUENTIAL);
    for i in 0..WARMUP + SEQUENTIAL {
        let t = Instant::now();
        stream.write_all(b"x").await?;
        stream.read_exact(&mut byte).await?;
        if i >= WARMUP {
            times.push(t.elapsed());
        }
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "http_flow/loopback_round_trip: median {:.1} µs, p99 {:.1} µs (a flow needs two)",
        median.as_secs_f64() * 1e6,
        times[times.len() * 99 / 100].as_secs_f64() * 1e6,
    );
    Ok(())
}

/// Echoes every byte back, on each connection.
async fn echo(listener: tokio::net::TcpListener) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    while let Ok((mut stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let mut byte = [0u8; 1];
            while stream.read_exact(&mut byte).await.is_ok() {
                if stream.write_all(&byte).await.is_err() {
                    return;
                }
            }
        });
    }
}

async fn flow(client: &Client) -> BenchResult<()> {
    client
        .call_tool("provision", json!({"name": "orders"}))
        .await?;
    Ok(())
}

/// Runs `SEQUENTIAL` flows one after another and prints their median, p99 and rate.
async fn sequential(name: &str, client: &Client) -> BenchResult<()> {
    for _ in 0..WARMUP {
        flow(client).await?;
    }
    let mut times = Vec::with_capacity(SEQUENTIAL);
    let started = Instant::now();
    for _ in 0..SEQUENTIAL {
        let t = Instant::now();
        flow(client).await?;
        times.push(t.elapsed());
    }
    let total = started.elapsed();
    times.sort();
    let median = times[times.len() / 2];
    let p99 = times[times.len() * 99 / 100];
    println!(
        "http_flow/{name}: median {:.1} µs, p99 {:.1} µs, {:.0} flows/s ({SEQUENTIAL} flows)",
        median.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        SEQUENTIAL as f64 / total.as_secs_f64()
    );
    Ok(())
}

fn main() -> BenchResult<()> {
    // `cargo test --benches` runs bench binaries with `--bench` absent: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        return Ok(());
    }
    let server_rt = runtime(2)?;
    let (addr, echo_addr) = server_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = seed::provision_server().build()?;
        tokio::spawn(HttpServer::new(server).serve(listener, std::future::pending()));
        let echo_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let echo_addr = echo_listener.local_addr()?;
        tokio::spawn(echo(echo_listener));
        BenchResult::Ok((addr, echo_addr))
    })?;

    // The in-memory flow with client and server on one current-thread runtime: no task
    // crosses a thread, so this is the flow's own cost, without the machine's wake-ups.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let (client_end, server_end) = tern_mcp::transport::memory::pair();
            let server = seed::provision_server().build()?;
            tokio::spawn(async move { server.serve(server_end).await });
            let in_memory = Client::builder("bench", "1.0.0")
                .on_elicitation(|_ctx, _p| async {
                    Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
                })
                .era(tern_mcp::client::EraMode::Stateless)
                .connect(client_end)
                .await?;
            sequential("in_memory_current_thread", &in_memory).await
        })?;

    let client_rt = runtime(2)?;
    client_rt.block_on(async {
        loopback_round_trip(echo_addr).await?;
        let transport = HttpClientTransport::builder(format!("http://{addr}/mcp")).build()?;
        let client = Client::builder("bench", "1.0.0")
            .on_elicitation(|_ctx, _p| async {
                Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
            })
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(Arc::new(transport))
            .await?;

        // The same flow in memory, the server a task on this multi-threaded runtime and
        // the client in `block_on`: what the HTTP figures add to it is the transport.
        let (client_end, server_end) = tern_mcp::transport::memory::pair();
        let server = seed::provision_server().build()?;
        tokio::spawn(async move { server.serve(server_end).await });
        let in_memory = Client::builder("bench", "1.0.0")
            .on_elicitation(|_ctx, _p| async {
                Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
            })
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(client_end)
            .await?;
        sequential("in_memory_block_on", &in_memory).await?;
        // The same, the client in a task on the runtime's workers, as a request handler
        // or any spawned work calls it, rather than in `block_on` on the main thread
        // (whose every message to the server is a hop between threads).
        let in_task = in_memory.clone();
        tokio::spawn(async move {
            sequential("in_memory_multi_thread", &in_task)
                .await
                .map_err(|e| e.to_string())
        })
        .await??;
        sequential("sequential", &client).await?;

        let deadline = Instant::now() + CONCURRENT_FOR;
        let started = Instant::now();
        let mut callers = Vec::with_capacity(CONCURRENT_CALLERS);
        for _ in 0..CONCURRENT_CALLERS {
            let client = client.clone();
            callers.push(tokio::spawn(async move {
                let mut done = 0u64;
                while Instant::now() < deadline {
                    if flow(&client).await.is_err() {
                        return Err(done);
                    }
                    done += 1;
                }
                Ok(done)
            }));
        }
        let mut flows = 0u64;
        for caller in callers {
            match caller.await? {
                Ok(n) => flows += n,
                Err(n) => return Err(format!("a concurrent flow failed after {n} flows").into()),
            }
        }
        println!(
            "http_flow/concurrent_{CONCURRENT_CALLERS}: {:.0} flows/s ({flows} flows in {:.1} s)",
            flows as f64 / started.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
        BenchResult::Ok(())
    })
}
