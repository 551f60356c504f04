//! A transport tern does not ship, written here, outside the crate, on its public API
//! alone: JSON-RPC over WebSocket, one text frame a message (tokio-tungstenite). Both
//! ends are [`MessageTransport`]s, the public trait a message transport implements; the
//! server side is served by [`Server::serve`](tern_mcp::server::Server::serve) (through
//! `McpServer::serve`), the public serving step for a connection: each request accepted,
//! routed by its era (stateless by its 2026-07-28 `_meta`, or on the 2025-11-25 session
//! `initialize` opened), admitted and served in a task of its own, its notifications
//! written before its answer, `notifications/cancelled` honoured; the client side is
//! connected by `ClientBuilder::connect` like any message transport.
//!
//! The flows of `flows.rs` and `mrtr_loop.rs` run over it too ([`Transport::WebSocket`]
//! in `transports.rs`); the tests here add a 2025-11-25 session and a hostile peer.
//!
//! [`Transport::WebSocket`]: crate::transports::Transport::WebSocket

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, StreamExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tern_mcp::client::{Client, ClientBuilder, EraMode};
use tern_mcp::mcp::{Elicit, McpServer, ToolError};
use tern_mcp::server::Server;
use tern_mcp::transport::{
    BoxFuture, MessageSink, MessageSource, MessageTransport, TransportError,
};
use tern_tests::{Asked, recording_client, seed, text_of};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The largest message either end takes: a larger frame ends the connection.
const MAX_MESSAGE: usize = 1024 * 1024;

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// A WebSocket connection as a message transport: text frames carry the messages; a
/// ping or pong is the WebSocket's own business; a binary frame, a frame over the
/// budget or a broken stream ends the connection; a close ends it cleanly.
pub(crate) struct WebSocket<S>(WebSocketStream<S>);

impl<S> MessageTransport for WebSocket<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        let (sink, source) = self.0.split();
        (Box::new(Sink(Mutex::new(sink))), Box::new(Source(source)))
    }
}

struct Sink<S>(Mutex<SplitSink<WebSocketStream<S>, Message>>);

impl<S> MessageSink for Sink<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let mut sink = self.0.lock().await;
            sink.send(Message::text(message))
                .await
                .map_err(|e| TransportError::new(format!("websocket: {e}")))
        })
    }
}

struct Source<S>(SplitStream<WebSocketStream<S>>);

impl<S> MessageSource for Source<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>> {
        Box::pin(async move {
            loop {
                return match self.0.next().await? {
                    Ok(Message::Text(text)) => Some(Ok(text.as_str().to_owned())),
                    Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => continue,
                    Ok(Message::Close(_)) => None,
                    Ok(Message::Binary(_)) => Some(Err(TransportError::new(
                        "websocket: a binary frame; MCP messages are text",
                    ))),
                    Err(e) => Some(Err(TransportError::new(format!("websocket: {e}")))),
                };
            }
        })
    }
}

/// Serves `server` over WebSocket on a loopback port of its own, each connection on
/// its own task; the address.
pub(crate) async fn serve(server: Server) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let server = server.clone();
            tokio::spawn(async move {
                let accepted = tokio::time::timeout(
                    Duration::from_secs(5),
                    tokio_tungstenite::accept_async_with_config(tcp, Some(config())),
                )
                .await;
                if let Ok(Ok(ws)) = accepted {
                    let _ = server.serve(WebSocket(ws)).await;
                }
            });
        }
    });
    addr
}

/// A raw WebSocket to `addr`, for a client of tern's or a hostile peer.
pub(crate) async fn open(addr: SocketAddr) -> WebSocketStream<MaybeTlsStream<TcpStream>> {
    open_with(addr, config()).await
}

async fn open_with(
    addr: SocketAddr,
    config: WebSocketConfig,
) -> WebSocketStream<MaybeTlsStream<TcpStream>> {
    let url = format!("ws://{addr}/");
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), false)
        .await
        .unwrap();
    ws
}

/// `client` connected over WebSocket to `addr`, in `era`.
pub(crate) async fn connect(addr: SocketAddr, client: ClientBuilder, era: EraMode) -> Client {
    client
        .era(era)
        .connect(WebSocket(open(addr).await))
        .await
        .unwrap()
}

#[derive(Deserialize, JsonSchema)]
struct ProvisionArgs {
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Deserialize, JsonSchema)]
struct Region {
    region: String,
}

/// The README's provision tool, as a resolver: served statelessly as MRTR rounds, and on
/// a 2025-11-25 session as the session's own `elicitation/create`.
fn provisioner() -> McpServer {
    let mcp = McpServer::new("Provisioner", "1.0.0");
    mcp.tool("provision")
        .description("Provision a database. Asks which region to put it in.")
        .resolve(|args: ProvisionArgs, region: Elicit<Region>| async move {
            match region {
                Elicit::Accepted(r) => Ok(seed::provisioned(&args.name, &r.region)),
                _ => Err(ToolError::new("no region, no database")),
            }
        });
    mcp
}

/// Provisions `name` over a new connection to `addr` in `era`, answering its question
/// as the seed's client does, and checks the answer: the era the client spoke, and the
/// input key of each question it was asked.
async fn provision(
    addr: SocketAddr,
    era: EraMode,
    name: &str,
) -> (tern_mcp::Era, Vec<Option<String>>) {
    let asked = Asked::default();
    let client = connect(addr, recording_client(&asked), era).await;
    let result = client
        .call_tool("provision", json!({"name": name}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), seed::provisioned(name, seed::REGION));
    (client.era(), asked.take())
}

#[tokio::test]
async fn an_mrtr_flow_runs_over_a_websocket_transport_written_outside_tern() {
    let addr = serve(provisioner().server().unwrap()).await;
    let (era, asked) = provision(addr, EraMode::Stateless, "orders").await;
    assert_eq!(era, tern_mcp::Era::Stateless);
    // One MRTR round, asked under the resolver's input key.
    assert_eq!(asked.len(), 1);
    assert!(asked[0].is_some(), "{asked:?}");
}

#[tokio::test]
async fn a_2025_11_25_session_runs_over_the_same_websocket_transport() {
    let addr = serve(provisioner().server().unwrap()).await;
    let (era, asked) = provision(addr, EraMode::Session, "orders").await;
    assert_eq!(era, tern_mcp::Era::Session);
    // The session's own elicitation/create, which names no input key.
    assert_eq!(asked, vec![None]);
}

#[tokio::test]
async fn an_unprobed_client_finds_the_era_over_websocket_too() {
    let addr = serve(provisioner().server().unwrap()).await;
    let client = connect(addr, Client::builder("auto", "1"), EraMode::Auto).await;
    assert_eq!(client.era(), tern_mcp::Era::Stateless);
}

/// The text of the next text frame `ws` receives, within 5 s.
async fn next_text(ws: &mut WebSocketStream<MaybeTlsStream<TcpStream>>) -> Option<Value> {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("the server neither answered nor closed within 5 s");
        match frame {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            _ => return None,
        }
    }
}

#[tokio::test]
async fn a_hostile_websocket_peer_gets_errors_and_the_server_serves_on() {
    let addr = serve(provisioner().server().unwrap()).await;
    let mut ws = open(addr).await;

    // Not JSON: a parse error, and the connection reads on.
    ws.send(Message::text("{not json")).await.unwrap();
    let answer = next_text(&mut ws).await.unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");

    // A request of no era: refused by the server's own checks, on the same connection.
    ws.send(Message::text(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
    ))
    .await
    .unwrap();
    let answer = next_text(&mut ws).await.unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer.get("error").is_some(), "{answer}");

    // A binary frame ends this connection, and only this one.
    ws.send(Message::binary(vec![0u8; 16])).await.unwrap();
    assert_eq!(next_text(&mut ws).await, None);

    // A message over the server's budget ends its connection too (this peer keeps no
    // budget of its own, so the message leaves it whole).
    let unbounded = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    let mut big = open_with(addr, unbounded).await;
    let huge = format!("\"{}\"", "x".repeat(MAX_MESSAGE + 1));
    big.send(Message::text(huge)).await.unwrap();
    assert_eq!(next_text(&mut big).await, None);

    // The server serves on: many clients at once, each through a whole MRTR flow.
    let flows = (0..32).map(|_| provision(addr, EraMode::Stateless, "orders"));
    for (_, asked) in futures_util::future::join_all(flows).await {
        assert_eq!(asked.len(), 1);
    }
}

#[tokio::test]
async fn a_peer_that_goes_away_mid_flow_leaves_the_server_serving() {
    let server = provisioner().server().unwrap();
    let addr = serve(server).await;
    // A request whose answer is an input round, then the peer hangs up at once.
    let mut ws = open(addr).await;
    let mut call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "provision", "arguments": {"name": "orders"}},
    });
    call["params"]["_meta"] = tern_tests::wire::meta(json!({"elicitation": {"form": {}}}));
    ws.send(Message::text(call.to_string())).await.unwrap();
    drop(ws);
    provision(addr, EraMode::Stateless, "again").await;
}
