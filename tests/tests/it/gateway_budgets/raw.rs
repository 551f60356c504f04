//! A hostile upstream for the gateway's tests: a raw HTTP/1.1 server answering what a
//! test says (text no SDK would write), and the gateway in front of such upstreams.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::proxy::{Gateway, Upstream, UpstreamBudgets};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{ElicitResult, ElicitResultAction};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::hostile_server::read_request;
use crate::http_support::{serve_default, url};

/// What a raw upstream answers a request with: its result as JSON text, by method and
/// params; `None` is -32601.
pub(crate) type Answers = Arc<dyn Fn(&str, &Value) -> Option<Arc<str>> + Send + Sync>;

/// A request as a raw upstream read it: its method, its `Mcp-Param-*` headers, its body.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) param_headers: Vec<String>,
}

/// A raw HTTP/1.1 upstream called `who` on a loopback port: `server/discover` answered
/// as a 2026-07-28 server of that name, `subscriptions/listen` refused (so the gateway
/// fetches its lists on every request, as the issue's upstream made it), anything else
/// as `answers` says. Every request it reads is recorded in `seen`.
pub(crate) async fn raw_upstream(
    who: &'static str,
    answers: Answers,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (answers, seen) = (Arc::clone(&answers), Arc::clone(&seen));
            tokio::spawn(async move {
                let _ = answer(who, stream, answers, seen).await;
            });
        }
    });
    url(addr)
}

async fn answer(
    who: &str,
    mut stream: TcpStream,
    answers: Answers,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> std::io::Result<()> {
    while let Some((head, request)) = read_request(&mut stream).await? {
        let method = request["method"].as_str().unwrap_or_default().to_owned();
        let param_headers = head
            .lines()
            .filter(|l| l.starts_with("mcp-param-"))
            .map(str::to_owned)
            .collect();
        seen.lock().unwrap().push(Seen {
            method: method.clone(),
            param_headers,
        });
        let id = request["id"].to_string();
        let result: Option<Arc<str>> = match method.as_str() {
            "server/discover" => Some(discover(who).into()),
            "subscriptions/listen" => None,
            other => answers(other, &request["params"]),
        };
        let (open, text, close) = match &result {
            Some(text) => (
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#),
                &**text,
                "}",
            ),
            None => (
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#
                ),
                "",
                "",
            ),
        };
        let length = open.len() + text.len() + close.len();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(open.as_bytes()).await?;
        stream.write_all(text.as_bytes()).await?;
        stream.write_all(close.as_bytes()).await?;
    }
    Ok(())
}

fn discover(who: &str) -> String {
    json!({
        "resultType": "complete",
        "capabilities": {"tools": {"listChanged": true}},
        "supportedVersions": ["2026-07-28"],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": who, "version": "1"}}
    })
    .to_string()
}

/// A raw upstream answering `tools/list` with `list` (one page) and every `tools/call`
/// with `call`; its URL.
pub(crate) async fn lister(who: &'static str, list: String, call: Option<String>) -> String {
    let (list, call): (Arc<str>, Option<Arc<str>>) = (list.into(), call.map(Into::into));
    let answers: Answers = Arc::new(move |method, _params| match method {
        "tools/list" => Some(Arc::clone(&list)),
        "tools/call" => call.clone(),
        _ => None,
    });
    raw_upstream(who, answers, Arc::default()).await
}

/// A `tools/list` result of `n` tools called `{prefix}{i}`, each with an input schema of
/// `properties` properties (about 50 bytes a tool without, 2 KB with 80), written as
/// text (no tree of it is ever built here).
pub(crate) fn tool_list(prefix: &str, n: usize, properties: usize) -> String {
    let mut properties_text = String::new();
    for p in 0..properties {
        if p > 0 {
            properties_text.push(',');
        }
        properties_text.push_str(&format!(r#""p{p}":{{"type":"string"}}"#));
    }
    let mut text = String::with_capacity(n * (80 + properties_text.len()) + 16);
    text.push_str(r#"{"tools":["#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"name":"{prefix}{i}","inputSchema":{{"type":"object","properties":{{{properties_text}}}}}}}"#
        ));
    }
    text.push_str("]}");
    text
}

/// An `InputRequiredResult` of `n` questions and a `requestState` of `state` bytes.
pub(crate) fn round(n: usize, state: usize) -> String {
    let mut text = String::with_capacity(n * 150 + state + 64);
    text.push_str(r#"{"resultType":"input_required","inputRequests":{"#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#""q{i}":{{"method":"elicitation/create","params":{{"mode":"form","message":"?","requestedSchema":{{"type":"object","properties":{{}}}}}}}}"#
        ));
    }
    text.push_str(r#"},"requestState":""#);
    text.push_str(&"s".repeat(state));
    text.push_str(r#""}"#);
    text
}

/// The upstream at `url` as the gateway holds it, called `name`, within `budgets`.
pub(crate) async fn upstream(url: &str, name: Option<&str>, budgets: UpstreamBudgets) -> Upstream {
    let upstream = Upstream::http(HttpClientTransport::builder(url))
        .await
        .unwrap()
        .budgets(budgets);
    match name {
        Some(name) => upstream.named(name).unwrap(),
        None => upstream,
    }
}

/// A gateway over `upstreams`, served over HTTP, and a client of it.
pub(crate) async fn gateway_client(upstreams: Vec<Upstream>) -> Client {
    let mut gateway = Gateway::new("gateway", "1");
    for upstream in upstreams {
        gateway = gateway.upstream(upstream);
    }
    let addr: SocketAddr = serve_default(gateway.build().unwrap()).await;
    let transport = HttpClientTransport::builder(url(addr)).build().unwrap();
    // Able to answer a form, so the gateway relays its upstreams' questions.
    Client::builder("test-client", "1.0")
        .era(EraMode::Stateless)
        .on_elicitation(|_ctx, _params| async {
            Ok(ElicitResult::new(ElicitResultAction::Decline))
        })
        .connect(transport)
        .await
        .unwrap()
}
