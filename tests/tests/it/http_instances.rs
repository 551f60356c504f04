//! Several instances over real HTTP: two `fleet_server` processes behind a client whose
//! consecutive requests alternate between them, as a round-robin load balancer with no
//! affinity would send them. A multi round-trip flow then crosses instances on every
//! round. It completes when the instances share `requestState` keys and a name; with
//! the default ephemeral keys (or another name) the crossing round is refused with the
//! one fixed error, and the client can only start the flow over.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::client::Client;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::{BoxFuture, CallError, ClientTransport, OutgoingRequest, TransportError};
use tern_mcp::types::v2026_07_28::{ContentBlock, ElicitRequestParams, RequestId};

const KEY: &str = "6b1f3c2a9d8e7f60112233445566778899aabbccddeeff00112233445566778a";
const FIXED: &str = "Invalid or expired requestState";

/// A `fleet_server` child process, killed (by its own PID) when dropped.
struct Instance {
    child: Child,
    url: String,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts an instance on a fresh loopback port and waits until it listens.
fn spawn(label: &str, name: &str, key: Option<&str>) -> Instance {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fleet_server"));
    command
        .args(["--addr", "127.0.0.1:0", "--name", name, "--instance", label])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(key) = key {
        command.args(["--state-key", key]);
    }
    let mut child = command.spawn().expect("fleet_server starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    // The instance prints its URL once bound; a crash before that ends the stream.
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the listening line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("fleet_server {label} said {line:?}"))
        .to_owned();
    Instance { child, url }
}

/// A [`ClientTransport`] that sends each request to the next instance in turn.
struct RoundRobin {
    instances: Vec<HttpClientTransport>,
    next: AtomicUsize,
    served: Vec<AtomicUsize>,
    next_id: AtomicI64,
}

impl RoundRobin {
    fn new(instances: &[&Instance]) -> Self {
        Self {
            instances: instances
                .iter()
                .map(|i| HttpClientTransport::builder(&i.url).build().unwrap())
                .collect(),
            next: AtomicUsize::new(0),
            served: instances.iter().map(|_| AtomicUsize::new(0)).collect(),
            next_id: AtomicI64::new(1),
        }
    }

    fn served(&self) -> Vec<usize> {
        self.served
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .collect()
    }
}

/// No server requests (these tests speak 2026-07-28 only), so only the three required
/// methods.
impl ClientTransport for RoundRobin {
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.instances.len();
        self.served[i].fetch_add(1, Ordering::Relaxed);
        self.instances[i].request(request)
    }

    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.instances.len();
        self.instances[i].notify(method, params)
    }

    fn next_id(&self) -> RequestId {
        RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

/// A client answering both of `deploy`'s questions.
async fn fleet_client(transport: Arc<RoundRobin>) -> Client {
    // These tests count the restarts themselves.
    Client::builder("fleet-client", "1.0")
        .restart_on_rejected_state(false)
        .on_elicitation(|_ctx, params| async move {
            let ElicitRequestParams::Form(form) = params else {
                panic!("only form elicitation is expected");
            };
            Ok(if form.message.starts_with("Deploy to") {
                tern_mcp::ask::accept([("confirm", true)])
            } else {
                tern_mcp::ask::accept([("region", "eu-west-1")])
            })
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap()
}

fn text(result: &tern_mcp::types::v2026_07_28::CallToolResult) -> String {
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

/// Whether `error` is the fixed `requestState` rejection, however the transport carried
/// it (a JSON-RPC error in a 200 answer, or the body of a refused HTTP request).
fn is_fixed_rejection(error: &Error) -> bool {
    let rpc = match error {
        Error::Transport(e) => e.rpc_error(),
        other => other.rpc(),
    };
    rpc.is_some_and(|e| e.code == -32602 && e.message == FIXED)
}

/// Runs the flow, starting it over after a `requestState` rejection, `attempts` times at
/// most. Returns the result (or the last error) and how many attempts were rejected.
async fn deploy_restarting(client: &Client, attempts: usize) -> (Result<String, Error>, usize) {
    let mut rejected = 0;
    loop {
        match client.call_tool("deploy", json!({"service": "web"})).await {
            Ok(result) => return (Ok(text(&result)), rejected),
            Err(e) if is_fixed_rejection(&e) && rejected + 1 < attempts => rejected += 1,
            Err(e) => {
                let counted = usize::from(is_fixed_rejection(&e));
                return (Err(e), rejected + counted);
            }
        }
    }
}

#[tokio::test]
async fn flows_cross_instances_that_share_keys_and_a_name() {
    let a = spawn("a", "fleet", Some(KEY));
    let b = spawn("b", "fleet", Some(KEY));
    let balancer = Arc::new(RoundRobin::new(&[&a, &b]));
    let client = fleet_client(balancer.clone()).await;
    // Three requests per flow (call, two retries): flows alternate between starting and
    // finishing on a and on b, and every round lands on the other instance.
    for finisher in ["a", "b", "a", "b"] {
        let (result, rejected) = deploy_restarting(&client, 1).await;
        assert_eq!(
            result.unwrap(),
            format!("Deployed 'web' to eu-west-1 (finished on {finisher}).")
        );
        assert_eq!(rejected, 0);
    }
    assert_eq!(balancer.served(), vec![6, 6]);
}

#[tokio::test]
async fn with_ephemeral_keys_a_crossing_round_is_refused_and_the_flow_starts_over() {
    let a = spawn("a", "fleet", None);
    let b = spawn("b", "fleet", None);
    let balancer = Arc::new(RoundRobin::new(&[&a, &b]));
    let client = fleet_client(balancer.clone()).await;
    // Every attempt is accepted by one instance and refused by the other at the retry,
    // so restarting over the same balancer never completes: bounded, then given up.
    let (result, rejected) = deploy_restarting(&client, 3).await;
    let error = result.unwrap_err();
    assert!(is_fixed_rejection(&error), "{error:?}");
    assert_eq!(
        error.rpc().map(|e| (e.code, e.message.as_str())),
        Some((-32602, FIXED)),
        "a handler-level rejection travels as a JSON-RPC error in a 200 answer"
    );
    assert_eq!(rejected, 3);
    assert_eq!(balancer.served(), vec![3, 3]);

    // The instances themselves are fine: a restarted flow whose rounds all reach one
    // instance (the affinity an ephemeral key needs) completes on either.
    for (instance, label) in [(&a, "a"), (&b, "b")] {
        let pinned = fleet_client(Arc::new(RoundRobin::new(&[instance]))).await;
        let (result, rejected) = deploy_restarting(&pinned, 1).await;
        assert_eq!(
            result.unwrap(),
            format!("Deployed 'web' to eu-west-1 (finished on {label}).")
        );
        assert_eq!(rejected, 0);
    }
}

#[tokio::test]
async fn shared_keys_under_different_names_do_not_let_a_flow_cross() {
    // The name is the token's audience: another service holding the same secret cannot
    // replay this one's state.
    let a = spawn("a", "fleet", Some(KEY));
    let b = spawn("b", "another-service", Some(KEY));
    let client = fleet_client(Arc::new(RoundRobin::new(&[&a, &b]))).await;
    let (result, rejected) = deploy_restarting(&client, 2).await;
    assert!(is_fixed_rejection(&result.unwrap_err()));
    assert_eq!(rejected, 2);
}
