//! The streams that never end on their own (`subscriptions/listen`, a 2025-11-25
//! session's GET stream), counted per caller and in all, so that one client cannot hold
//! every connection open: a caller holds at most [`PER_CALLER`] of them, and all callers
//! together at most half the connection cap, which leaves the rest to requests. One
//! more is refused 429 with `Retry-After` and an error that names the cap.
//!
//! A caller is its principal when the request was authenticated, else its address
//! (over tern's own accept loop), else everyone unauthenticated together.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use http::header::RETRY_AFTER;
use http::{HeaderValue, StatusCode};

use super::reply::rpc_error;
use crate::auth::AuthInfo;
use crate::jsonrpc::RpcError;
use crate::seal::Principal;
use crate::types::v2026_07_28::RequestId;
use crate::util::lock;

/// How many never-ending streams one caller may hold open.
pub(crate) const PER_CALLER: usize = 16;

/// When a refused caller should try again, in seconds.
const RETRY_AFTER_SECS: u64 = 5;

/// Who holds a stream.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Caller {
    Principal(String),
    Peer(IpAddr),
    Anonymous,
}

impl Caller {
    pub(crate) fn of(auth: Option<&AuthInfo>, peer: Option<IpAddr>) -> Self {
        match (auth, peer) {
            (Some(auth), _) => Self::Principal(Principal::from_auth(auth).owner_key()),
            (None, Some(ip)) => Self::Peer(ip),
            (None, None) => Self::Anonymous,
        }
    }
}

/// The streams held open, per caller and in all.
#[derive(Debug)]
pub(crate) struct Streams {
    total: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    all: usize,
    by_caller: HashMap<Caller, usize>,
}

/// One stream's place, given back when it is dropped (its response body went).
#[derive(Debug)]
pub(crate) struct Slot {
    streams: Arc<Streams>,
    caller: Caller,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = lock(&self.streams.held);
        held.all -= 1;
        if let Some(n) = held.by_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                held.by_caller.remove(&self.caller);
            }
        }
    }
}

impl Streams {
    /// Room for `total` streams in all: half of `max_connections`.
    pub(crate) fn new(max_connections: usize) -> Arc<Self> {
        Arc::new(Self {
            total: (max_connections / 2).max(1),
            held: Mutex::default(),
        })
    }

    /// A stream's place for `caller`, or the refusal to answer its request `id` with.
    pub(crate) fn take(
        self: &Arc<Self>,
        caller: Caller,
        id: Option<&RequestId>,
    ) -> Result<Slot, Box<Response>> {
        let mut held = lock(&self.held);
        let mine = held.by_caller.get(&caller).copied().unwrap_or(0);
        let message = if mine >= PER_CALLER {
            format!(
                "Too many open streams: you hold {PER_CALLER}, the most one caller may; \
                 close one first"
            )
        } else if held.all >= self.total {
            "Too many open streams: the server holds as many as it can; try again later".to_owned()
        } else {
            held.all += 1;
            *held.by_caller.entry(caller.clone()).or_default() += 1;
            return Ok(Slot {
                streams: Arc::clone(self),
                caller,
            });
        };
        tracing::debug!(?caller, "refused a stream: {message}");
        let mut refused = rpc_error(
            StatusCode::TOO_MANY_REQUESTS,
            id,
            RpcError::new(-32000, message),
        );
        refused
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        Err(Box::new(refused))
    }
}

/// `response` with `slot` held until its body is dropped.
pub(crate) fn holding(response: Response, slot: Slot) -> Response {
    use futures_util::StreamExt as _;
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &slot;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}
