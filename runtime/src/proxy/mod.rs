//! A gateway: one MCP endpoint in front of several upstream servers, of either era.
//!
//! A [`Gateway`] is built from [`Upstream`]s (each a connected [`Client`], HTTP or stdio,
//! whatever era it found) into an ordinary low-level [`Server`], served like any other
//! (over HTTP, stdio or in memory) and to clients of either era.
//!
//! - **Names.** A named upstream's tools and prompts are served as `NAME.tool` (a dot
//!   cannot appear in an upstream's name, so the first dot splits); an upstream without
//!   a name serves them under their own. Resource URIs are kept as the upstream wrote
//!   them (a URI already says whose it is); a read goes to the upstream that lists it.
//!   Lists are merged and paged by the gateway; the upstreams' list changes are relayed.
//!   Each name is served once and routes to the upstream that lists it: an unnamed
//!   upstream's `NAME.x` beside an upstream named `NAME`, a name two upstreams list (the
//!   second's), and a tool name outside the spec's rules are not served, each said in a
//!   warning naming the upstreams.
//! - **Budgets.** An upstream is an input: what the gateway reads of it is bounded
//!   ([`UpstreamBudgets`]: entries and bytes of a list, questions and state of a round).
//!   Past a budget the client gets -32603 naming the upstream and the budget; the other
//!   upstreams are served as before. Lists are kept as the upstream wrote them, and a
//!   page is read from them when asked for.
//! - **Rounds.** An upstream's `InputRequiredResult` becomes the gateway's own: its
//!   questions keyed `NAME.key` for a named upstream, its `requestState` nested inside
//!   the gateway's state, which the gateway seals (always: without
//!   [`seal`](Gateway::seal), under a key made for this process). The client never sees
//!   an upstream's state; the gateway's is bound, as tern's always is, to the client's
//!   principal, the target and the arguments. The retry's answers go back to the
//!   upstream under its own keys, with its own state.
//! - **Eras.** The gateway relays to each upstream in the era it speaks. A
//!   2025-11-25 client of the gateway gets an upstream's questions as requests on its
//!   session (the gateway fulfils them, then retries the upstream).
//! - **Deadlines.** Each upstream request has a deadline ([`Upstream::deadline`]); an
//!   upstream that misses it, or fails, is a JSON-RPC error naming it, never a hang.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tern_mcp::proxy::{Gateway, Upstream};
//! use tern_mcp::http::HttpServer;
//! use tern_mcp::transport::http::client::HttpClientTransport;
//!
//! let weather = Upstream::http(HttpClientTransport::builder("http://127.0.0.1:8001/mcp"))
//!     .await?
//!     .named("weather")?;
//! let server = Gateway::new("gateway", "1.0").upstream(weather).build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! HttpServer::new(server).serve(listener, std::future::pending()).await?;
//! # Ok(()) }
//! ```

mod bridge;
mod budget;
mod catalog;
mod compose;
mod forward;
mod merge;
mod names;
mod relay;
mod routes;
mod tasks;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use crate::client::Client;
use crate::seal::RequestStateSecurity;
use crate::server::{Server, ServerLimits};
use crate::transport::http::client::HttpClientBuilder;
use crate::types::v2026_07_28::Tool;

pub use budget::UpstreamBudgets;

/// How long an upstream has to answer one request, unless told otherwise.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// One server behind a [`Gateway`]: a connected [`Client`], the name its tools and
/// prompts are served under, its deadline and its budgets.
#[derive(Debug)]
pub struct Upstream {
    name: Option<Arc<str>>,
    client: Client,
    deadline: Duration,
    budgets: UpstreamBudgets,
    /// How to reach it again, when it is over HTTP.
    http: Option<HttpClientBuilder>,
}

impl Upstream {
    /// An upstream reached through `client` (stdio, in memory, or HTTP), its tools and
    /// prompts served under their own names. A 2025-11-25 upstream reached this way is
    /// relayed on `client`'s one session: the questions it asks there are refused (the
    /// gateway cannot tell which call asked); reach it with [`http`](Self::http) to
    /// have them relayed.
    pub fn new(client: Client) -> Self {
        Self {
            name: None,
            client,
            deadline: DEFAULT_DEADLINE,
            budgets: UpstreamBudgets::default(),
            http: None,
        }
    }

    /// An upstream over Streamable HTTP, connected now (its era discovered) as
    /// `tern-proxy`. If it speaks 2025-11-25, each call that may ask (a tool call, a
    /// prompt, a read) gets a session of its own, opened with the gateway's client's
    /// capabilities, and the questions the upstream asks on it are relayed as the
    /// gateway's rounds.
    pub async fn http(http: HttpClientBuilder) -> crate::Result<Self> {
        let client = Client::builder("tern-proxy", env!("CARGO_PKG_VERSION"))
            .extension(crate::tasks::ClientTasks)
            .connect(http.clone().build()?)
            .await?;
        Ok(Self {
            http: Some(http),
            ..Self::new(client)
        })
    }

    /// This upstream served under `name`: its tools and prompts as `NAME.tool`, its
    /// questions keyed `NAME.key`. A name is 1 to 64 letters, digits, `_` or `-`.
    pub fn named(mut self, name: impl Into<String>) -> Result<Self, crate::ConfigError> {
        let name = name.into();
        let valid = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(crate::ConfigError::Invalid(format!(
                "an upstream's name is 1 to 64 letters, digits, '_' or '-', not {name:?}"
            )));
        }
        self.name = Some(name.into());
        Ok(self)
    }

    /// How long this upstream has to answer one request (60 s unless set): past it, the
    /// gateway's client gets -32001 naming the upstream.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// What the gateway reads of this upstream's answers, at most (the
    /// [defaults](UpstreamBudgets::default) unless set): past one, the gateway's client
    /// gets -32603 naming the upstream and the budget. Questions are capped at what a
    /// tern server takes back, 1,000.
    pub fn budgets(mut self, budgets: UpstreamBudgets) -> Self {
        self.budgets = budgets.clamped();
        self
    }
}

/// A gateway in front of [`Upstream`]s, built into a [`Server`] (see the
/// [module](self) for what it does).
#[derive(Debug)]
pub struct Gateway {
    name: String,
    version: String,
    upstreams: Vec<Upstream>,
    composites: Vec<(Tool, Vec<String>)>,
    policies: Vec<Arc<dyn compose::Check>>,
    security: Option<RequestStateSecurity>,
    limits: ServerLimits,
}

impl Gateway {
    /// A gateway called `name` at `version`, with no upstream yet.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            upstreams: Vec::new(),
            composites: Vec::new(),
            policies: Vec::new(),
            security: None,
            limits: ServerLimits::default(),
        }
    }

    /// Serves `upstream` behind the gateway.
    pub fn upstream(mut self, upstream: Upstream) -> Self {
        self.upstreams.push(upstream);
        self
    }

    /// Serves `tool` itself: a call of it calls each of `parts` (tools as the gateway
    /// serves them, `NAME.tool`, each of a different named upstream) at once with its
    /// arguments. Their questions go out in one round, keyed by upstream (with a
    /// policy's, if one applies); its result is their results' content, in order, an
    /// error if any part's was. Parts are called inline (never as tasks) and are
    /// upstreams that ask with `InputRequiredResult`s (2026-07-28).
    pub fn compose<S: Into<String>>(
        mut self,
        tool: Tool,
        parts: impl IntoIterator<Item = S>,
    ) -> Self {
        self.composites
            .push((tool, parts.into_iter().map(Into::into).collect()));
        self
    }

    /// Asks the resolver `P` (an [`Elicit<T>`](crate::mcp::Elicit), or a question of
    /// your own that reads the call's arguments) before every call of the tools
    /// `applies` picks (by the name the gateway serves), keyed `gateway.KEY`, in the same
    /// round as the upstream's first questions; `allow` decides with the answer. Until
    /// it allows the call, the upstream's answers are withheld (a tool that asks before
    /// it acts does not act); refused, the call ends as a tool error. The first policy
    /// that applies to a tool is the one asked.
    pub fn policy<P, F>(
        mut self,
        applies: impl Fn(&str) -> bool + Send + Sync + 'static,
        allow: F,
    ) -> Self
    where
        P: crate::mcp::Resolve<serde_json::Value, Deps = ()>,
        F: Fn(&str, &P) -> bool + Send + Sync + 'static,
    {
        self.policies.push(Arc::new(compose::Policy::<P, F> {
            applies: Box::new(applies),
            allow,
            asks: std::marker::PhantomData,
        }));
        self
    }

    /// Seals the gateway's `requestState` under `security` (shared keys let several
    /// gateway instances serve any retry). Without it, a key made for this process.
    pub fn seal(mut self, security: RequestStateSecurity) -> Self {
        self.security = Some(security);
        self
    }

    /// What the gateway allows every message of its clients.
    pub fn limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Builds the gateway's server. Fails without an upstream, with two upstreams of
    /// one name, or when the sealing policy is invalid. The upstreams' list changes are
    /// heard from the first request on.
    pub fn build(self) -> Result<Server, crate::ConfigError> {
        if self.upstreams.is_empty() {
            return Err(crate::ConfigError::Invalid(
                "a gateway needs at least one upstream".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for name in self.upstreams.iter().filter_map(|u| u.name.as_deref()) {
            if !seen.insert(name) {
                return Err(crate::ConfigError::Invalid(format!(
                    "two upstreams are named {name:?}"
                )));
            }
        }
        if !self.policies.is_empty() && seen.contains(compose::OWN) {
            return Err(crate::ConfigError::Invalid(format!(
                "an upstream is named {:?}, which the gateway's own questions are keyed under",
                compose::OWN
            )));
        }
        routes::build(self)
    }
}
