//! Middleware: layers around dispatch that see each request as MCP sees it (its method,
//! target, era, round and caller) and how it ended, composable in order.
//!
//! ```
//! use tern_mcp::server::middleware::{Dispatch, Dispatched, Middleware, Downstream};
//! use tern_mcp::transport::BoxFuture;
//!
//! /// Writes one audit line per request, with the round and the outcome.
//! struct Audit;
//!
//! impl Middleware for Audit {
//!     fn handle<'a>(&'a self, request: &'a Dispatch<'a>, next: Downstream<'a>) -> BoxFuture<'a, Dispatched> {
//!         Box::pin(async move {
//!             let answered = next.run().await;
//!             tracing::info!(
//!                 method = request.method,
//!                 target = request.target,
//!                 round = request.round,
//!                 ending = ?answered.ending(),
//!                 "audit"
//!             );
//!             answered
//!         })
//!     }
//! }
//! # let _ = tern_mcp::mcp::McpServer::new("demo", "1").layer(Audit);
//! ```
//!
//! A layer runs after the request's `_meta` and method were checked and its
//! `requestState` opened, and before the handler's body: returning without
//! [`Downstream::run`] (a rate limit, a per-tool guard) means the body never runs.
//! Not a tower `Layer`: a tower `Service` owns its request and is polled for readiness,
//! which here would mean boxing and copying what a layer only needs to borrow.

use std::sync::Arc;

use super::pipeline::{Refusal, Verdict};
use crate::Era;
use crate::auth::AuthInfo;
use crate::jsonrpc::RpcError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::RequestId;

/// What a layer sees of one request before its handler runs.
#[derive(Debug)]
#[non_exhaustive]
pub struct Dispatch<'a> {
    /// The JSON-RPC id.
    pub id: &'a RequestId,
    /// The method.
    pub method: &'a str,
    /// What the request names: the tool or prompt, or the resource's URI.
    pub target: Option<&'a str>,
    /// Stateless (2026-07-28) or on a 2025-11-25 session.
    pub era: Era,
    /// The request's round in its multi round-trip flow: 1 without `requestState`, else
    /// one past the round its sealed state was issued in. `None` for a method that
    /// cannot ask for input, and for state the server does not seal (it cannot be
    /// counted then).
    pub round: Option<u32>,
    /// The identity of the access token the transport validated, if any.
    pub auth: Option<&'a AuthInfo>,
}

/// How a request ended, as a layer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// A complete result.
    Complete,
    /// An `InputRequiredResult`: the client will retry with the answers.
    InputRequired,
    /// The `requestState` did not open (tampered, expired, another key, another
    /// request's): the fixed -32602, before the handler ran.
    RejectedState,
    /// Refused for a protocol reason after the handler (it asked for a capability the
    /// client did not declare).
    Refused(Refusal),
    /// A JSON-RPC error with this code, from the handler or a layer.
    Error(i64),
}

/// A request's answer on its way back out through the layers.
#[derive(Debug)]
pub struct Dispatched {
    verdict: Verdict,
    ending: Ending,
}

impl Dispatched {
    /// A layer's own answer instead of the handler's: the request fails with `error`
    /// (a rate limit, a guard), and the handler's body never runs.
    pub fn error(error: RpcError) -> Self {
        Self {
            ending: Ending::Error(error.code),
            verdict: Verdict::Answered(Err(error)),
        }
    }

    /// How the request ended.
    pub fn ending(&self) -> Ending {
        self.ending
    }

    pub(crate) fn new(verdict: Verdict, ending: Ending) -> Self {
        Self { verdict, ending }
    }

    pub(crate) fn into_verdict(self) -> Verdict {
        self.verdict
    }
}

/// A layer around dispatch. Layers run in the order they were added: the first added
/// sees the request first and its answer last.
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`: call `next.run()` to go on to the next layer and the handler,
    /// or answer without it.
    fn handle<'a>(
        &'a self,
        request: &'a Dispatch<'a>,
        next: Downstream<'a>,
    ) -> BoxFuture<'a, Dispatched>;
}

/// The layers added to a server, in order.
pub(crate) type Layers = Arc<[Arc<dyn Middleware>]>;

/// The rest of the chain: the layers after this one, then the handler.
pub struct Downstream<'a> {
    rest: &'a [Arc<dyn Middleware>],
    request: &'a Dispatch<'a>,
    core: BoxFuture<'a, Dispatched>,
}

impl std::fmt::Debug for Downstream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Downstream")
            .field("layers_left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Downstream<'a> {
    /// Runs the rest of the chain and returns its answer.
    pub fn run(self) -> BoxFuture<'a, Dispatched> {
        match self.rest.split_first() {
            None => self.core,
            Some((layer, rest)) => layer.handle(
                self.request,
                Downstream {
                    rest,
                    request: self.request,
                    core: self.core,
                },
            ),
        }
    }
}

/// Runs `request` through `layers` around `core`.
pub(crate) async fn run<'a>(
    layers: &'a [Arc<dyn Middleware>],
    request: &'a Dispatch<'a>,
    core: BoxFuture<'a, Dispatched>,
) -> Dispatched {
    Downstream {
        rest: layers,
        request,
        core,
    }
    .run()
    .await
}
