//! The one link every Redis store shares: connecting to a server or a cluster (found
//! by asking the server), the subscriptions, and a TTL said in milliseconds.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A link to a Redis server, or to a Redis Cluster (found by asking the server at
/// the URL): either way one connection every store clones, that reconnects on its
/// own and, on a cluster, sends each command to the node holding its keys.
#[derive(Clone)]
pub(crate) enum Link {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// Connects to the Redis at `url`: a cluster's node makes a cluster link (the
/// other nodes are learnt from it).
pub(crate) async fn connect(url: &str) -> Result<Link, redis::RedisError> {
    connect_node(url).await.map(|connected| connected.link)
}

/// What a store that publishes and listens holds: its [`Link`], and the server at
/// the URL, where it listens and publishes (on a cluster, a node counts only the
/// listeners connected to itself: every instance given the same URL publishes and
/// listens on the same node, so a publisher knows whether anyone heard).
#[derive(Clone)]
// Only the HTTP server's stores publish and listen.
#[cfg_attr(not(feature = "http-server"), allow(dead_code))]
pub(crate) struct Connected {
    pub(crate) link: Link,
    pub(crate) client: redis::Client,
    pub(crate) node: ConnectionManager,
}

/// [`connect`], keeping the server at the URL for publishing and listening.
pub(crate) async fn connect_node(url: &str) -> Result<Connected, redis::RedisError> {
    let client = redis::Client::open(url)?;
    let mut node = ConnectionManager::new(client.clone()).await?;
    let info: String = redis::cmd("INFO")
        .arg("cluster")
        .query_async(&mut node)
        .await?;
    let link = if info.contains("cluster_enabled:1") {
        let cluster = redis::cluster::ClusterClient::new(vec![url])?;
        Link::Cluster(cluster.get_async_connection().await?)
    } else {
        Link::Single(node.clone())
    };
    Ok(Connected { link, client, node })
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c) => c.req_packed_commands(cmd, offset, count),
            Self::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

/// The messages published on `channel` from now on (subscribed before this
/// returns), until the link drops.
#[cfg(feature = "http-server")]
pub(crate) async fn subscribe(
    client: &redis::Client,
    channel: &str,
) -> Result<futures_util::stream::BoxStream<'static, String>, redis::RedisError> {
    use futures_util::StreamExt as _;
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    let messages = pubsub
        .into_on_message()
        .filter_map(|message| async move { message.get_payload::<String>().ok() });
    Ok(messages.boxed())
}

/// `ttl` in whole milliseconds, at least one (Redis refuses a zero expiry).
pub(crate) fn millis(ttl: std::time::Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}
