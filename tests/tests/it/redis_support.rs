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

impl Redis {
    /// What `redis-cli` prints for `args` on this server, trimmed.
    pub(crate) async fn cli(&self, args: &[&str]) -> String {
        let socket = self.url.trim_start_matches("redis+unix://");
        let out = tokio::process::Command::new("redis-cli")
            .args(["-s", socket])
            .args(args)
            .output()
            .await
            .expect("redis-cli comes with redis-server");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The keys whose names contain `part`.
    pub(crate) async fn keys_with(&self, part: &str) -> Vec<String> {
        let listed = self.cli(&["KEYS", &format!("*{part}*")]).await;
        listed
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// A task store on this server, connected.
    pub(crate) async fn task_store(&self) -> tern_mcp::fleet::RedisTaskStore {
        tern_mcp::fleet::RedisTaskStore::connect(&self.url)
            .await
            .unwrap()
    }
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
        if tern_mcp::fleet::RedisTaskStore::connect(&url).await.is_ok() {
            return Redis { child, dir, url };
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("redis-server did not answer on {url}");
}

/// A three-node Redis Cluster on loopback (no replicas), its slots spread over the
/// three, ready once every node says the cluster is ok; stopped on drop.
pub(crate) struct Cluster {
    nodes: Vec<tokio::process::Child>,
    dir: PathBuf,
    /// A node's address (`redis://127.0.0.1:PORT`): the stores learn the others.
    pub(crate) url: String,
    /// Every node's client port.
    pub(crate) ports: Vec<u16>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port nothing listens on now (bound to port 0 and let go: redis-server takes a
/// port number, not a socket).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts a three-node cluster named `name` and waits until it serves every slot.
pub(crate) async fn cluster(name: &str) -> Cluster {
    let dir = std::env::temp_dir().join(format!("tern-cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut nodes = Vec::new();
    let mut ports = Vec::new();
    for n in 0..3 {
        let (port, bus) = (free_port(), free_port());
        let home = dir.join(format!("node{n}"));
        std::fs::create_dir_all(&home).unwrap();
        let child = tokio::process::Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                &bus.to_string(),
            ])
            .args([
                "--cluster-config-file",
                "nodes.conf",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .current_dir(&home)
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server is installed (.ci/run installs it)");
        nodes.push(child);
        ports.push(port);
    }
    for port in &ports {
        wait_for(*port, "PING", "PONG").await;
    }
    let addresses: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let created = tokio::process::Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addresses)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .await
        .expect("redis-cli comes with redis-server");
    assert!(
        created.status.success(),
        "redis-cli --cluster create: {}",
        String::from_utf8_lossy(&created.stdout)
    );
    for port in &ports {
        wait_for(*port, "CLUSTER INFO", "cluster_state:ok").await;
    }
    Cluster {
        nodes,
        dir,
        url: format!("redis://127.0.0.1:{}", ports[0]),
        ports,
    }
}

/// Waits until the node on `port` answers `command` with something containing `want`.
async fn wait_for(port: u16, command: &str, want: &str) {
    for _ in 0..400 {
        let out = tokio::process::Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(command.split(' '))
            .output()
            .await
            .expect("redis-cli comes with redis-server");
        if String::from_utf8_lossy(&out.stdout).contains(want) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the redis-server on port {port} never answered {command} with {want}");
}
