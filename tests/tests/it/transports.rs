//! One flow, every transport: [`over_each_transport`] serves a [`Fixture`] over the
//! in-memory transport, a stdio child process, loopback HTTP and a WebSocket transport
//! written outside tern (`websocket.rs`) in turn, and runs the same
//! flow (a closure given a connected client) over each. A new transport is one more
//! [`Transport`] and one more arm in [`Transport::connect`], and every flow test covers it.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use tern_mcp::client::{Client, ClientBuilder};
use tern_mcp::http::HttpServer;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::memory;
use tern_mcp::transport::stdio::ChildProcessTransport;
use tern_tests::fixtures::Fixture;

/// A way for a client to reach a server.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Transport {
    /// The in-memory pair, the server a task of the test.
    Memory,
    /// Newline-delimited JSON with a child process (`fixture_server NAME`).
    Stdio,
    /// Streamable HTTP with a server the test binds on a loopback port.
    Http,
    /// JSON-RPC over WebSocket on a loopback port: a transport of the test's own, on
    /// tern's public API (`websocket.rs`).
    WebSocket,
}

impl Transport {
    /// Every transport a flow runs over.
    pub(crate) const ALL: [Transport; 4] = [
        Transport::Memory,
        Transport::Stdio,
        Transport::Http,
        Transport::WebSocket,
    ];

    /// Serves `fixture` over this transport and connects `client` to it.
    pub(crate) async fn connect(self, fixture: Fixture, client: ClientBuilder) -> Client {
        match self {
            Transport::Memory => {
                let server = fixture.server().unwrap();
                let (client_end, server_end) = memory::pair();
                tokio::spawn(async move { server.serve(server_end).await });
                client
                    .era(tern_mcp::client::EraMode::Stateless)
                    .connect(client_end)
                    .await
                    .unwrap()
            }
            Transport::Stdio => {
                let mut command =
                    tokio::process::Command::new(env!("CARGO_BIN_EXE_fixture_server"));
                command.arg(fixture.name());
                client
                    .era(tern_mcp::client::EraMode::Stateless)
                    .connect(ChildProcessTransport::spawn(command).unwrap())
                    .await
                    .unwrap()
            }
            Transport::Http => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("http://{}/mcp", listener.local_addr().unwrap());
                let http = HttpServer::new(fixture.server().unwrap());
                tokio::spawn(http.serve(listener, std::future::pending()));
                http_ready(&url).await;
                let transport = HttpClientTransport::builder(&url).build().unwrap();
                client
                    .era(tern_mcp::client::EraMode::Stateless)
                    .connect(Arc::new(transport))
                    .await
                    .unwrap()
            }
            Transport::WebSocket => {
                let addr = crate::websocket::serve(fixture.server().unwrap()).await;
                let era = tern_mcp::client::EraMode::Stateless;
                crate::websocket::connect(addr, client, era).await
            }
        }
    }
}

/// Waits until the server at `url` answers a protocol request (`server/discover`, through
/// a throwaway client), not merely until its port accepts.
async fn http_ready(url: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let transport = HttpClientTransport::builder(url).build().unwrap();
        let probe = Client::builder("readiness-probe", "1.0")
            .connect(Arc::new(transport))
            .await;
        match probe {
            Ok(_) => return,
            Err(err) if tokio::time::Instant::now() > deadline => {
                panic!("the HTTP server at {url} never answered: {err}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Runs `flow` once per transport, each time against a fresh `fixture` and a client from
/// `client`. A failing flow fails the test naming the transport it failed over.
pub(crate) async fn over_each_transport<C, F, Fut>(fixture: Fixture, client: C, flow: F)
where
    C: Fn() -> ClientBuilder,
    F: Fn(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    for transport in Transport::ALL {
        let connected = transport.connect(fixture, client()).await;

        if let Err(panic) = AssertUnwindSafe(flow(connected)).catch_unwind().await {
            panic!(
                "the {fixture} flow failed over {transport:?}: {}",
                message(&*panic)
            );
        }
    }
}

fn message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(a panic without a message)")
}
