//! A fleet behind nginx: three `fleet_server` processes sharing `requestState` keys and a
//! name, round-robin behind Debian's nginx on loopback, serve thousands of three-round
//! flows from 16 concurrent callers while the keys rotate through their three phases by
//! rolling restarts (SIGTERM, the graceful drain, a restart on the same port) and one
//! instance is killed outright and restarted. No flow may be lost and no sealed state
//! refused; a round that met a refused connection or a 502 is sent again, and counted.
//!
//! Needs `nginx` on the PATH (or in /usr/sbin): `#[ignore]`d in a plain `cargo test`,
//! run by `scripts/fleet` (which `scripts/test` runs; `.ci/run` installs nginx).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::client::Client;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, ElicitRequestParams, InputRequest, InputResponse, InputResponses,
    Outcome, method,
};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

const OLD: &str = "6b1f3c2a9d8e7f60112233445566778899aabbccddeeff00112233445566778a";
const NEW: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
const CALLERS: usize = 16;
const MIN_FLOWS: usize = 5_000;

/// One instance: its port stays the same across restarts (nginx's upstream names it).
struct Instance {
    label: String,
    port: u16,
    child: Option<Child>,
}

async fn start(label: &str, addr: &str, keys: &[&str]) -> (Child, u16) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fleet_server"));
    command
        .args(["--addr", addr, "--name", "fleet", "--instance", label])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    for key in keys {
        command.args(["--state-key", key]);
    }
    let mut child = command.spawn().expect("fleet_server starts");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("fleet_server reports its address")
        .unwrap()
        .unwrap_or_else(|| panic!("fleet_server {label} exited before listening"));
    let port = line
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("fleet_server {label} said {line:?}"));
    (child, port)
}

impl Instance {
    async fn first(label: &str, keys: &[&str]) -> Self {
        let (child, port) = start(label, "127.0.0.1:0", keys).await;
        Self {
            label: label.into(),
            port,
            child: Some(child),
        }
    }

    /// SIGTERM (the graceful drain) or SIGKILL, then the same port with `keys`.
    async fn restart(&mut self, keys: &[&str], signal: &str) {
        if let Some(mut child) = self.child.take() {
            tern_tests::signal(child.id().unwrap(), signal);
            let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
                .await
                .expect("the instance stops")
                .unwrap();
            if signal == "-TERM" {
                assert!(
                    status.success(),
                    "{} drained and exited: {status:?}",
                    self.label
                );
            }
        }
        let (child, port) = start(&self.label, &format!("127.0.0.1:{}", self.port), keys).await;
        assert_eq!(port, self.port);
        self.child = Some(child);
    }
}

pub(crate) fn nginx_binary() -> PathBuf {
    ["nginx", "/usr/sbin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| std::process::Command::new(p).arg("-v").output().is_ok())
        .expect("nginx is installed (scripts/fleet; .ci/run installs it)")
}

/// nginx in the foreground with a config of its own, round-robin over `ports`.
pub(crate) struct Nginx {
    child: Child,
    pub(crate) url: String,
    _dir: TempDir,
}

impl Drop for Nginx {
    /// SIGTERM to the master, which stops its worker (a SIGKILL would orphan it).
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The fleet's `http` block: round-robin over `ports`, served on `listen`.
fn fleet_http(listen: u16, ports: &[u16]) -> String {
    let upstreams: String = ports
        .iter()
        .map(|p| format!("        server 127.0.0.1:{p} max_fails=0;\n"))
        .collect();
    format!(
        "upstream fleet {{\n{upstreams}        keepalive 32;\n    }}\n\
         server {{\n        listen 127.0.0.1:{listen};\n        location / {{\n\
             proxy_pass http://fleet;\n            proxy_http_version 1.1;\n\
             proxy_set_header Connection \"\";\n            proxy_set_header Host $host;\n\
             proxy_buffering off;\n            proxy_next_upstream error timeout;\n\
         }}\n    }}\n"
    )
}

/// A whole nginx config whose files stay in `dir`, around the `http` block `http`.
fn nginx_config(dir: &Path, http: &str) -> String {
    let d = dir.display();
    format!(
        "worker_processes 1;\ndaemon off;\nuser root;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n\
         {http}}}\n"
    )
}

impl Nginx {
    /// Starts nginx on a free port. nginx cannot report a port it picked, so a port is
    /// chosen, and if another process took it first nginx exits at once and the next
    /// one is tried: no test runs against a server it did not see start.
    async fn start(ports: &[u16]) -> Self {
        Self::serving(|listen| fleet_http(listen, ports)).await
    }

    /// nginx on a free port with the `http` block `http(port)` (which must serve that
    /// port's `/mcp`), ready once an MCP request through it is answered by a server
    /// behind it (its result, or its HTTP refusal: not nginx's 502).
    pub(crate) async fn serving(http: impl Fn(u16) -> String) -> Self {
        let nginx = nginx_binary();
        // One directory per nginx: the fleet tests run side by side in one process.
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tern-fleet-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = TempDir(dir);
        for _ in 0..20 {
            let listen = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = dir.0.join("nginx.conf");
            std::fs::write(&config, nginx_config(&dir.0, &http(listen))).unwrap();
            let mut child = Command::new(&nginx)
                .args(["-p", &dir.0.display().to_string(), "-c"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nginx starts");
            let url = format!("http://127.0.0.1:{listen}/mcp");
            if ready(&url, &mut child).await {
                return Self {
                    child,
                    url,
                    _dir: dir,
                };
            }
            // Exited (the port was taken) or never answered: stop it, try another port.
            if let Some(pid) = child.id() {
                let _ = std::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status();
            }
            let _ = child.wait().await;
        }
        panic!("nginx did not start on any of 20 ports");
    }
}

/// Whether nginx answers a protocol request through the fleet (false if it exited).
async fn ready(url: &str, child: &mut Child) -> bool {
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let transport = HttpClientTransport::builder(url).build().unwrap();
        let client = Client::builder("probe", "1")
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(Arc::new(transport))
            .await
            .unwrap();
        let probe = client.request::<method::ListTools>(Default::default());
        match tokio::time::timeout(Duration::from_secs(2), probe).await {
            Ok(Ok(_)) => return true,
            // The server behind nginx refused it (a Host it does not allow): it answers.
            Ok(Err(Error::Transport(t))) if t.http_status() == Some(403) => return true,
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// What the callers saw.
#[derive(Default)]
struct Figures {
    flows: AtomicUsize,
    rounds: AtomicUsize,
    retries: AtomicUsize,
    /// Rounds nginx answered 502: an instance cut a request it had been sent.
    bad_gateways: AtomicUsize,
    rejections: AtomicUsize,
    lost: AtomicUsize,
}

fn answer(request: &InputRequest) -> InputResponse {
    let InputRequest::Elicit(elicit) = request else {
        panic!("deploy only elicits");
    };
    let ElicitRequestParams::Form(form) = &elicit.params else {
        panic!("deploy asks with forms");
    };
    InputResponse::Elicit(if form.message.starts_with("Deploy to") {
        tern_mcp::ask::accept([("confirm", true)])
    } else {
        tern_mcp::ask::accept([("region", "eu-west-1")])
    })
}

/// Whether a round may be sent again: the connection was refused or cut, or nginx found
/// no instance (502/503/504). The round's state is the same either way.
fn retryable(error: &Error) -> bool {
    match error {
        Error::Transport(t) => {
            t.rpc_error().is_none() && !matches!(t.http_status(), Some(400..=499))
        }
        _ => false,
    }
}

/// One caller: flows of `deploy` by the manual loop, each round resent when retryable.
async fn caller(url: String, figures: Arc<Figures>, done: Arc<AtomicBool>) {
    let transport = HttpClientTransport::builder(&url).build().unwrap();
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let client = Client::builder("fleet-caller", "1")
        .capabilities(capabilities)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    while !done.load(Ordering::Relaxed) {
        let mut params = CallToolRequestParams::new("deploy");
        params.arguments = json!({"service": "orders"}).as_object().map(Into::into);
        let mut attempts = 0;
        loop {
            match client.request::<method::CallTool>(params.clone()).await {
                Ok(Outcome::Complete(_)) => {
                    figures.rounds.fetch_add(1, Ordering::Relaxed);
                    figures.flows.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Ok(Outcome::InputRequired(asked)) => {
                    figures.rounds.fetch_add(1, Ordering::Relaxed);
                    let mut responses = InputResponses::new();
                    for (key, request) in asked.input_requests.iter().flat_map(|r| r.iter()) {
                        responses.insert(key.clone(), answer(request)).unwrap();
                    }
                    params.input_responses = Some(responses);
                    params.request_state = asked.request_state;
                    attempts = 0;
                }
                Err(e) if retryable(&e) && attempts < 50 => {
                    attempts += 1;
                    if let Error::Transport(t) = &e {
                        if t.http_status() == Some(502) {
                            figures.bad_gateways.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    figures.retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => {
                    if e.rpc().is_some_and(|r| r.message.contains("requestState")) {
                        figures.rejections.fetch_add(1, Ordering::Relaxed);
                    } else {
                        figures.lost.fetch_add(1, Ordering::Relaxed);
                    }
                    eprintln!("a flow failed: {e}");
                    break;
                }
            }
        }
    }
}

/// Three instances sealing with OLD behind nginx, and CALLERS callers running flows
/// until `done`.
struct Fleet {
    instances: Vec<Instance>,
    nginx: Nginx,
    figures: Arc<Figures>,
    done: Arc<AtomicBool>,
    callers: Vec<tokio::task::JoinHandle<()>>,
}

impl Fleet {
    async fn start() -> Self {
        let mut instances = Vec::new();
        for label in ["a", "b", "c"] {
            instances.push(Instance::first(label, &[OLD]).await);
        }
        let ports: Vec<u16> = instances.iter().map(|i| i.port).collect();
        let nginx = Nginx::start(&ports).await;
        let figures = Arc::new(Figures::default());
        let done = Arc::new(AtomicBool::new(false));
        let callers: Vec<_> = (0..CALLERS)
            .map(|_| {
                tokio::spawn(caller(
                    nginx.url.clone(),
                    Arc::clone(&figures),
                    Arc::clone(&done),
                ))
            })
            .collect();
        Self {
            instances,
            nginx,
            figures,
            done,
            callers,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: run scripts/fleet"]
async fn a_fleet_behind_nginx_rotates_its_keys_and_loses_no_flow() {
    let Fleet {
        mut instances,
        nginx,
        figures,
        done,
        callers,
    } = Fleet::start().await;
    let started = Instant::now();
    // The three phases of a rotation, one instance at a time: NEW verifies, then NEW
    // seals, then OLD goes. A pause between phases lets the last OLD-sealed rounds land.
    let phases: [&[&str]; 3] = [&[OLD, NEW], &[NEW, OLD], &[NEW]];
    for (phase, keys) in phases.iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(700)).await;
        for instance in &mut instances {
            instance.restart(keys, "-TERM").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if phase == 1 {
            // And one instance dies without a drain, then comes back.
            instances[1].restart(keys, "-KILL").await;
        }
    }
    while figures.flows.load(Ordering::Relaxed) < MIN_FLOWS {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done.store(true, Ordering::Relaxed);
    for caller in callers {
        caller.await.unwrap();
    }
    let elapsed = started.elapsed();
    let flows = figures.flows.load(Ordering::Relaxed);
    println!(
        "fleet: {flows} flows ({} rounds) in {:.1} s = {:.0} flows/s at {CALLERS} callers; \
         {} sealed-state rejections, {} lost flows, {} retried rounds (refused or cut \
         connections, 502s), {} of them 502s",
        figures.rounds.load(Ordering::Relaxed),
        elapsed.as_secs_f64(),
        flows as f64 / elapsed.as_secs_f64(),
        figures.rejections.load(Ordering::Relaxed),
        figures.lost.load(Ordering::Relaxed),
        figures.retries.load(Ordering::Relaxed),
        figures.bad_gateways.load(Ordering::Relaxed),
    );
    drop(nginx);
    assert!(flows >= MIN_FLOWS);
    assert_eq!(
        figures.rejections.load(Ordering::Relaxed),
        0,
        "sealed state refused"
    );
    assert_eq!(figures.lost.load(Ordering::Relaxed), 0, "flows lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nginx: run scripts/fleet"]
async fn ten_rolling_restarts_behind_nginx_cut_no_request() {
    let Fleet {
        mut instances,
        nginx,
        figures,
        done,
        callers,
    } = Fleet::start().await;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        for instance in &mut instances {
            instance.restart(&[OLD], "-TERM").await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    done.store(true, Ordering::Relaxed);
    for caller in callers {
        caller.await.unwrap();
    }
    let bad_gateways = figures.bad_gateways.load(Ordering::Relaxed);
    println!(
        "ten rolling restarts under {CALLERS} callers: {} flows, {bad_gateways} 502s, {} \
         retried rounds, {} lost flows",
        figures.flows.load(Ordering::Relaxed),
        figures.retries.load(Ordering::Relaxed),
        figures.lost.load(Ordering::Relaxed),
    );
    drop(nginx);
    assert_eq!(bad_gateways, 0, "an instance cut requests it had been sent");
    assert_eq!(figures.lost.load(Ordering::Relaxed), 0, "flows lost");
}
