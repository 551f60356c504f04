//! Single-use state: a tool that opts in with
//! [`ToolBuilder::single_use`](crate::mcp::ToolBuilder::single_use) accepts each
//! sealed `requestState` once. A second redemption of the same token is refused with
//! the fixed -32602, except when its flow completed: then the stored final result is
//! answered again, so a client whose response was lost gets it without the side effect
//! running twice. The protocol leaves at-most-once to servers; this is it.
//!
//! A token's id is a digest of the token itself (its random nonce makes each unique), so
//! nothing is added to the token's format. Redemptions live in a [`ReplayStore`]: the
//! bounded in-memory [`MemoryReplayStore`] by default, one per process; several
//! instances share one through Redis (`RedisReplayStore`, feature `redis`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::StoreError;
use crate::transport::BoxFuture;
use crate::util::lock;

/// How a replay store names itself in its errors.
pub(crate) const STORE: &str = "replay store";

/// The longest a redemption is kept in memory, whatever its TTL: a year. A longer TTL
/// (`Duration::MAX`) would be an instant past what the clock can represent.
const MAX_TTL: Duration = Duration::from_secs(366 * 24 * 60 * 60);

/// When a redemption made at `now` for `ttl` expires.
fn expiry(now: Instant, ttl: Duration) -> Instant {
    now + ttl.min(MAX_TTL)
}

/// The id of one sealed `requestState` token: the first 16 bytes of its SHA-256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenId([u8; 16]);

impl TokenId {
    /// The id of `token`.
    pub(crate) fn of(token: &str) -> Self {
        let digest = Sha256::digest(token.as_bytes());
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        Self(id)
    }

    /// The id as 32 lowercase hex digits (what a shared store keys on).
    #[cfg(any(test, feature = "redis"))]
    pub(crate) fn to_hex(self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(32);
        for b in self.0 {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
        out
    }
}

/// What a store says when a token is redeemed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redemption {
    /// The first redemption: run the tool.
    First,
    /// Redeemed before, and its flow completed with this result (JSON): answer it again.
    Completed(String),
    /// Redeemed before (in progress, or answered with another round): refuse.
    Spent,
}

/// Where redemptions of single-use state are recorded. Implementations must make
/// [`redeem`](Self::redeem) atomic: of two concurrent redemptions of one token, exactly
/// one is [`Redemption::First`].
pub trait ReplayStore: Send + Sync + 'static {
    /// Records that `token` is redeemed, for `ttl` (at least its remaining life), and
    /// says whether it was before.
    fn redeem(
        &self,
        token: TokenId,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Redemption, StoreError>>;

    /// Keeps `result` (a complete result's JSON) as the answer to `token`, for `ttl`.
    fn complete(
        &self,
        token: TokenId,
        result: String,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// How many redemptions [`MemoryReplayStore::new`] keeps by default.
pub(crate) const DEFAULT_MEMORY_REDEMPTIONS: usize = 100_000;

/// Redemptions in this process's memory, at most a fixed number of them. Expired ones
/// are dropped as room is needed; when every kept redemption is still live, a new one
/// is refused (the store fails closed rather than forget a live token).
#[derive(Debug)]
pub struct MemoryReplayStore {
    entries: Mutex<HashMap<TokenId, Entry>>,
    max: usize,
}

#[derive(Debug)]
struct Entry {
    expires: Instant,
    result: Option<String>,
}

impl MemoryReplayStore {
    /// A store that keeps at most `max` redemptions.
    pub fn new(max: usize) -> Self {
        Self {
            entries: Mutex::default(),
            max: max.max(1),
        }
    }
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        Self::new(DEFAULT_MEMORY_REDEMPTIONS)
    }
}

impl ReplayStore for MemoryReplayStore {
    fn redeem(
        &self,
        token: TokenId,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Redemption, StoreError>> {
        let now = Instant::now();
        let mut entries = lock(&self.entries);
        let answer = match entries.get(&token).filter(|e| e.expires > now) {
            Some(Entry {
                result: Some(result),
                ..
            }) => Ok(Redemption::Completed(result.clone())),
            Some(_) => Ok(Redemption::Spent),
            None => {
                if entries.len() >= self.max {
                    entries.retain(|_, e| e.expires > now);
                }
                if entries.len() >= self.max {
                    Err(StoreError::new(
                        STORE,
                        format!("{} live redemptions: the store is full", self.max),
                    ))
                } else {
                    entries.insert(
                        token,
                        Entry {
                            expires: expiry(now, ttl),
                            result: None,
                        },
                    );
                    Ok(Redemption::First)
                }
            }
        };
        Box::pin(std::future::ready(answer))
    }

    fn complete(
        &self,
        token: TokenId,
        result: String,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        lock(&self.entries).insert(
            token,
            Entry {
                expires: expiry(Instant::now(), ttl),
                result: Some(result),
            },
        );
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block<T>(f: BoxFuture<'_, T>) -> T {
        futures_util::FutureExt::now_or_never(f).expect("the memory store is immediate")
    }

    #[test]
    fn a_token_is_first_once_then_spent_then_its_stored_result() {
        let store = MemoryReplayStore::default();
        let token = TokenId::of("t1.abc");
        let ttl = Duration::from_secs(60);
        assert_eq!(block(store.redeem(token, ttl)).unwrap(), Redemption::First);
        assert_eq!(block(store.redeem(token, ttl)).unwrap(), Redemption::Spent);
        block(store.complete(token, "{\"done\":1}".into(), ttl)).unwrap();
        assert_eq!(
            block(store.redeem(token, ttl)).unwrap(),
            Redemption::Completed("{\"done\":1}".into())
        );
        assert_eq!(
            block(store.redeem(TokenId::of("t1.abd"), ttl)).unwrap(),
            Redemption::First
        );
    }

    #[test]
    fn a_full_store_drops_expired_redemptions_and_fails_closed_on_live_ones() {
        let store = MemoryReplayStore::new(2);
        let short = Duration::from_millis(1);
        let long = Duration::from_secs(60);
        block(store.redeem(TokenId::of("a"), short)).unwrap();
        block(store.redeem(TokenId::of("b"), long)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        // "a" expired: room for "c".
        assert_eq!(
            block(store.redeem(TokenId::of("c"), long)).unwrap(),
            Redemption::First
        );
        // Both live now: "d" is refused, and "b" is still known as spent.
        assert!(block(store.redeem(TokenId::of("d"), long)).is_err());
        assert_eq!(
            block(store.redeem(TokenId::of("b"), long)).unwrap(),
            Redemption::Spent
        );
    }

    #[test]
    fn token_ids_are_hex_digests() {
        let id = TokenId::of("t1.x");
        assert_eq!(id.to_hex().len(), 32);
        assert_eq!(id, TokenId::of("t1.x"));
        assert_ne!(id, TokenId::of("t1.y"));
    }
}
