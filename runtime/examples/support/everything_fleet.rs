//! `--redis URL`: what the instances of a fleet of `everything` servers share on one
//! Redis (with the `redis` feature): 2025-11-25 sessions and their streams' events (so
//! any instance serves any session's requests and resumes any stream), single-use state
//! and tasks. Beside `--state-key HEX`, which
//! they need to open each other's sealed state.

use tern_mcp::mcp::McpServer;
use tern_mcp::server::http::HttpServer;
use tern_mcp::tasks::Tasks;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The shared stores, connected.
#[cfg(feature = "redis")]
pub(crate) struct Fleet {
    sessions: tern_mcp::server::http::RedisSessionStore,
    events: tern_mcp::server::http::RedisEventStore,
    replay: tern_mcp::server::replay::RedisReplayStore,
    tasks: tern_mcp::tasks::RedisTaskStore,
}

/// Without the `redis` feature there is nothing to share through.
#[cfg(not(feature = "redis"))]
pub(crate) enum Fleet {}

/// Connects to the Redis at `url`, if one was named.
#[cfg(feature = "redis")]
pub(crate) async fn connect(url: Option<&str>) -> Result<Option<Fleet>, BoxError> {
    let Some(url) = url else {
        return Ok(None);
    };
    Ok(Some(Fleet {
        sessions: tern_mcp::server::http::RedisSessionStore::connect(url).await?,
        events: tern_mcp::server::http::RedisEventStore::connect(url).await?,
        replay: tern_mcp::server::replay::RedisReplayStore::connect(url).await?,
        tasks: tern_mcp::tasks::RedisTaskStore::connect(url).await?,
    }))
}

#[cfg(not(feature = "redis"))]
pub(crate) async fn connect(url: Option<&str>) -> Result<Option<Fleet>, BoxError> {
    match url {
        Some(_) => Err("--redis needs the example built with the `redis` feature".into()),
        None => Ok(None),
    }
}

/// The tasks extension: its tasks in Redis for a fleet, else in this process.
pub(crate) fn tasks(fleet: Option<&Fleet>) -> Tasks {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => Tasks::new(fleet.tasks.clone()),
        _ => Tasks::default(),
    }
}

/// `mcp` with its single-use state recorded in Redis, for a fleet.
pub(crate) fn single_use(mcp: McpServer, fleet: Option<&Fleet>) -> McpServer {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => mcp.replay_store(std::sync::Arc::new(fleet.replay.clone())),
        _ => mcp,
    }
}

/// `http` with its sessions' records and events in Redis, for a fleet.
pub(crate) fn sessions(http: HttpServer, fleet: Option<&Fleet>) -> HttpServer {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => http
            .session_store(std::sync::Arc::new(fleet.sessions.clone()))
            .event_store(std::sync::Arc::new(fleet.events.clone())),
        _ => http,
    }
}
