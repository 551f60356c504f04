//! The DPoP proofs this process has seen, remembered for their window so a replay is
//! recognised: keyed by the signing key's thumbprint and the proof's `jti` (one key's
//! `jti` says nothing about another key's proofs), in a store of bounded size where each
//! key has a share.
//!
//! The numbers: the store holds at most `max_proofs` proofs (100,000 by default), each
//! for two windows and a second (121 s by default: a proof whose `iat` is a window either
//! side of now, read in whole seconds, stays acceptable that long). One key holds at most a tenth of them, [`share`] (10,000
//! by default, about 83 proofs a second sustained); past it that key's proofs are refused
//! ("too many proofs from this key") until its older ones leave, while other keys still
//! have room. The store as a whole fills only when ten keys each hold their share, that
//! is ten holders of bound tokens flooding together; then every new proof is refused
//! until older ones leave, never forgotten early (forgetting would let a replay in).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::lock;

/// How many keys it takes to fill the store: each key's share is this fraction of it.
const KEYS_TO_FILL: usize = 10;
/// The longest a proof is remembered, whatever the window (a day: past it, an instant
/// in the future might not be representable).
const MAX_KEEP: Duration = Duration::from_secs(24 * 60 * 60);

/// The most proofs one key may have remembered at once, of a store of `max_proofs`.
pub(super) fn share(max_proofs: usize) -> usize {
    (max_proofs / KEYS_TO_FILL).max(1)
}

/// Why a proof could not be remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unseen {
    /// This key used this `jti` within the window.
    Replay,
    /// This key has its share of the store.
    KeyFull,
    /// The store is full.
    Full,
}

impl Unseen {
    /// The refusal's words, for the client.
    pub(super) fn why(self) -> &'static str {
        match self {
            Self::Replay => "the proof was used before",
            Self::KeyFull => "too many proofs from this key within the window: try again shortly",
            Self::Full => "too many proofs within the window: try again shortly",
        }
    }
}

/// The proofs seen within the window.
#[derive(Debug)]
pub(super) struct Seen {
    max_proofs: usize,
    per_key: usize,
    keep: Duration,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// `{thumbprint}.{jti}` of each proof remembered (a thumbprint is base64url: no `.`).
    proofs: HashSet<Arc<str>>,
    /// The same, with when each is forgotten, oldest first.
    until: VecDeque<(Instant, Arc<str>)>,
    /// How many proofs each key has remembered.
    per_key: HashMap<Box<str>, usize>,
}

impl Seen {
    /// A store of at most `max_proofs`, each kept for `keep` (at most a day).
    pub(super) fn new(max_proofs: usize, keep: Duration) -> Self {
        Self {
            max_proofs,
            per_key: share(max_proofs),
            keep: keep.min(MAX_KEEP),
            inner: Mutex::default(),
        }
    }

    /// Remembers the proof `jti` by the key `thumbprint`; why not, when it was seen or
    /// there is no room for it.
    pub(super) fn remember(&self, thumbprint: &str, jti: &str) -> Result<(), Unseen> {
        let mut inner = lock(&self.inner);
        // Taken under the lock, so `until` stays in order.
        let now = Instant::now();
        inner.forget_until(now);
        let id = format!("{thumbprint}.{jti}");
        if inner.proofs.contains(id.as_str()) {
            return Err(Unseen::Replay);
        }
        if inner.per_key.get(thumbprint).copied().unwrap_or(0) >= self.per_key {
            return Err(Unseen::KeyFull);
        }
        if inner.proofs.len() >= self.max_proofs {
            return Err(Unseen::Full);
        }
        let id: Arc<str> = id.into();
        inner.proofs.insert(Arc::clone(&id));
        inner.until.push_back((now + self.keep, id));
        *inner.per_key.entry(thumbprint.into()).or_insert(0) += 1;
        Ok(())
    }

    /// How many proofs are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.inner).proofs.len()
    }
}

impl Inner {
    /// Forgets the proofs whose time is up at `now`.
    fn forget_until(&mut self, now: Instant) {
        while let Some((until, id)) = self.until.front() {
            if *until > now {
                break;
            }
            let id = Arc::clone(id);
            self.until.pop_front();
            self.proofs.remove(&id);
            let key = id.split_once('.').map_or(&*id, |(key, _)| key);
            if let Some(count) = self.per_key.get_mut(key) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    self.per_key.remove(key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_over_its_share_is_refused_while_other_keys_have_room() {
        let seen = Seen::new(20, Duration::from_secs(120));
        assert_eq!(share(20), 2);
        assert_eq!(seen.remember("flood", "1"), Ok(()));
        assert_eq!(seen.remember("flood", "2"), Ok(()));
        for jti in 3..100 {
            assert_eq!(
                seen.remember("flood", &jti.to_string()),
                Err(Unseen::KeyFull)
            );
        }
        assert_eq!(seen.len(), 2, "the refused proofs take no room");
        assert_eq!(
            seen.remember("user", "1"),
            Ok(()),
            "the same jti, another key"
        );
        assert_eq!(seen.remember("user", "1"), Err(Unseen::Replay));
        assert_eq!(seen.remember("flood", "1"), Err(Unseen::Replay));
    }

    #[test]
    fn the_store_fills_only_when_enough_keys_hold_their_share() {
        let seen = Seen::new(20, Duration::from_secs(120));
        for key in 0..10 {
            for jti in 0..2 {
                assert_eq!(seen.remember(&format!("k{key}"), &jti.to_string()), Ok(()));
            }
        }
        assert_eq!(seen.remember("k10", "0"), Err(Unseen::Full));
    }

    #[test]
    fn proofs_are_forgotten_when_their_time_is_up_and_their_share_freed() {
        let seen = Seen::new(20, Duration::ZERO);
        for jti in 0..50 {
            assert_eq!(seen.remember("k", &jti.to_string()), Ok(()));
        }
        assert!(seen.len() <= 1);
        assert!(lock(&seen.inner).per_key.len() <= 1);
    }

    #[test]
    fn a_store_of_one_still_takes_a_proof() {
        let seen = Seen::new(1, Duration::from_secs(120));
        assert_eq!(seen.remember("k", "a"), Ok(()));
        assert_eq!(seen.remember("other", "a"), Err(Unseen::Full));
    }
}
