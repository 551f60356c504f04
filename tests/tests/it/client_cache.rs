//! The client's response cache over real HTTP: a fresh `tools/list` is served again
//! without a request, dropped when the server says the list changed, kept per
//! credential when `private`, shared when `public`; and a listen stream that drops is
//! opened again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tern_mcp::types::v2026_07_28::method::ListTools;

use tern_mcp::client::{Client, EraMode, Notice, ResponseCache};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::McpServer;
use tern_mcp::server::middleware::{Dispatch, Dispatched, Downstream, Middleware};
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::SubscriptionFilter;

use crate::http_support::{serve, url};

/// Counts the `tools/list` requests that reach the server.
struct CountLists(Arc<AtomicUsize>);

impl Middleware for CountLists {
    fn handle<'a>(
        &'a self,
        request: &'a Dispatch<'a>,
        next: Downstream<'a>,
    ) -> BoxFuture<'a, Dispatched> {
        if request.method == "tools/list" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        next.run()
    }
}

/// A server whose lists may be reused for a minute (`public` or `private`), counting
/// the `tools/list` requests it serves.
fn catalog(public: bool) -> (McpServer, Arc<AtomicUsize>) {
    let served = Arc::new(AtomicUsize::new(0));
    let mcp = McpServer::new("catalog", "1")
        .cache(60_000, public)
        .layer(CountLists(Arc::clone(&served)));
    mcp.tool("first")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("one") });
    (mcp, served)
}

async fn client(url: &str, token: &str, cache: &ResponseCache) -> Client {
    let transport = HttpClientTransport::builder(url)
        .bearer_token(token)
        .build()
        .unwrap();
    Client::builder("cache", "1")
        .era(EraMode::Stateless)
        .response_cache(Some(cache.clone()))
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

fn tools_changed() -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter
}

#[tokio::test]
async fn a_fresh_list_is_served_without_a_request_until_the_server_says_it_changed() {
    let (mcp, served) = catalog(false);
    let addr = serve(HttpServer::new(mcp.server().unwrap())).await;
    let c = client(&url(addr), "alice", &ResponseCache::default()).await;
    let mut listener = c.listen(tools_changed()).await.unwrap();

    assert_eq!(c.list_all::<ListTools>().await.unwrap().len(), 1);
    assert_eq!(c.list_all::<ListTools>().await.unwrap().len(), 1);
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "the second came from the cache"
    );

    mcp.tool("second")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("two") });
    let heard = tokio::time::timeout(Duration::from_secs(10), listener.next())
        .await
        .unwrap();
    assert_eq!(heard, Some(Notice::ToolsChanged));
    assert_eq!(c.list_all::<ListTools>().await.unwrap().len(), 2);
    assert_eq!(
        served.load(Ordering::SeqCst),
        2,
        "the change dropped the entry"
    );

    // Without a cache, every list is a request.
    let uncached = Client::builder("cache", "1")
        .era(EraMode::Stateless)
        .response_cache(None)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(
            HttpClientTransport::builder(url(addr)).build().unwrap(),
        ))
        .await
        .unwrap();
    uncached.list_all::<ListTools>().await.unwrap();
    uncached.list_all::<ListTools>().await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_private_answer_is_not_served_to_another_credential_and_a_public_one_is() {
    let (private, served) = catalog(false);
    let addr = serve(HttpServer::new(private.server().unwrap())).await;
    let shared = ResponseCache::default();
    let alice = client(&url(addr), "alice-token", &shared).await;
    let bob = client(&url(addr), "bob-token", &shared).await;
    alice.list_all::<ListTools>().await.unwrap();
    alice.list_all::<ListTools>().await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), 1);
    bob.list_all::<ListTools>().await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), 2, "bob's list is his own");

    let (public, served) = catalog(true);
    let addr = serve(HttpServer::new(public.server().unwrap())).await;
    let alice = client(&url(addr), "alice-token", &shared).await;
    let bob = client(&url(addr), "bob-token", &shared).await;
    alice.list_all::<ListTools>().await.unwrap();
    bob.list_all::<ListTools>().await.unwrap();
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "a public answer is shared"
    );
}

/// A TCP relay from `listener` to `upstream`: every connection through it dies with it.
fn relay(
    listener: tokio::net::TcpListener,
    upstream: std::net::SocketAddr,
) -> tokio::task::JoinSet<()> {
    let mut relay = tokio::task::JoinSet::new();
    relay.spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            connections.spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    relay
}

#[tokio::test]
async fn a_dropped_listen_stream_is_opened_again_and_hears_what_comes_next() {
    let (mcp, served) = catalog(false);
    let upstream = serve(HttpServer::new(mcp.server().unwrap())).await;
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = front.local_addr().unwrap();
    let mut first = relay(front, upstream);
    let c = client(&url(addr), "alice", &ResponseCache::default()).await;
    let mut notices = c.listen(tools_changed()).await.unwrap();
    c.list_all::<ListTools>().await.unwrap();

    // The network between them drops every connection, and comes back.
    first.shutdown().await;
    let _second = relay(tokio::net::TcpListener::bind(addr).await.unwrap(), upstream);

    let heard = tokio::time::timeout(Duration::from_secs(10), notices.next())
        .await
        .unwrap();
    assert_eq!(heard, Some(Notice::Relistened));
    // What changed while the stream was down went unheard: the cache forgot it.
    c.list_all::<ListTools>().await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), 2);

    // The stream is open again (the server acknowledged it): the next change is heard.
    mcp.tool("again")
        .run(|_: tern_mcp::mcp::NoArgs, _ctx: tern_mcp::mcp::ToolContext| async { Ok("again") });
    let heard = tokio::time::timeout(Duration::from_secs(10), notices.next())
        .await
        .unwrap();
    assert_eq!(heard, Some(Notice::ToolsChanged));
}

#[tokio::test]
async fn a_draining_server_ends_its_listen_streams_and_the_client_listens_at_the_next() {
    let (mcp, _served) = catalog(false);
    let server = mcp.server().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let first = tokio::spawn(HttpServer::new(server.clone()).serve(listener, async {
        let _ = stopped.await;
    }));
    let c = client(&url(addr), "alice", &ResponseCache::default()).await;
    let mut notices = c.listen(tools_changed()).await.unwrap();

    // A rolling restart: the old instance drains, promptly, though a stream was open.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("the drain ends the listen stream instead of waiting on it")
        .unwrap()
        .unwrap();
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    tokio::spawn(HttpServer::new(server).serve(listener, std::future::pending()));
    let heard = tokio::time::timeout(Duration::from_secs(10), notices.next())
        .await
        .unwrap();
    assert_eq!(heard, Some(Notice::Relistened));
}
