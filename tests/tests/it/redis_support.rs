//! redis-server for the tests that share a store: on a Unix socket of its own (no port
//! to race for), ready once it answers a command, stopped on drop.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// One redis-server process.
pub(crate) struct Redis {
    child: tokio::process::Child,
    dir: PathBuf,
    /// Where it listens (`redis+unix://...`).
    pub(crate) url: String,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts a redis-server named `name` (its directory) and waits until it answers.
pub(crate) async fn redis(name: &str) -> Redis {
    let dir = std::env::temp_dir().join(format!("tern-redis-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("redis.sock");
    let child = tokio::process::Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--save",
            "",
            "--appendonly",
            "no",
            "--unixsocket",
        ])
        .arg(&socket)
        .current_dir(&dir)
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server is installed (.ci/run installs it)");
    let url = format!("redis+unix://{}", socket.display());
    for _ in 0..200 {
        if tern_mcp::tasks::RedisTaskStore::connect(&url).await.is_ok() {
            return Redis { child, dir, url };
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("redis-server did not answer on {url}");
}
