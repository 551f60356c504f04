//! DPoP at the resource server (RFC 9449 §7): a token bound to a key (`cnf.jkt`) is
//! accepted only with the `DPoP` scheme and a proof signed by that key, made for this
//! request (`htm`, `htu`, see `htu`), recently (`iat`), for this token (`ath`), never
//! seen before from that key (`jti`, remembered for the window in a bounded store where
//! each key has a share, see `seen`, or in a fleet's shared [`ReplayStore`]), and, when
//! the server asks for them, with one of its nonces (§9):
//! stateless, a MAC of the time window under a secret the fleet may share, so a nonce
//! one instance gave is good at every instance.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Validation;
use serde::Deserialize;

use crate::server::replay::{Redemption, ReplayStore, TokenId};

mod htu;
mod key;
mod seen;

pub(crate) use key::ALGS;

/// The longest `jti` remembered.
const MAX_JTI_BYTES: usize = 256;

/// How an [`HttpServer`](super::HttpServer) checks DPoP proofs.
#[derive(Clone)]
pub struct Dpop {
    window: Duration,
    nonce: bool,
    max_proofs: usize,
    nonce_secret: [u8; 32],
    replay: Option<Arc<dyn ReplayStore>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("window", &self.window)
            .field("nonce", &self.nonce)
            .field("max_proofs", &self.max_proofs)
            .field("shared_replay_store", &self.replay.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Dpop {
    fn default() -> Self {
        let mut nonce_secret = [0u8; 32];
        rand::fill(&mut nonce_secret[..]);
        Self {
            window: Duration::from_secs(60),
            nonce: false,
            max_proofs: 100_000,
            nonce_secret,
            replay: None,
        }
    }
}

impl Dpop {
    /// Proofs at most 60 s off the server's clock, up to 100,000 of them remembered
    /// (at most 10,000 of one key), no nonce required.
    pub fn new() -> Self {
        Self::default()
    }

    /// How far a proof's `iat` may be from now, either way; its `jti` is remembered as
    /// long.
    pub fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Requires each proof to carry a nonce the server gave (`DPoP-Nonce`), so a proof
    /// cannot be made ahead of time; a proof without a current one is answered
    /// `use_dpop_nonce` with a fresh nonce.
    pub fn require_nonce(mut self) -> Self {
        self.nonce = true;
        self
    }

    /// The most proofs remembered at once (a replay is recognised only while
    /// remembered), each for twice the window; one key may hold at most a tenth of them
    /// (at least one). Past its share a key's proofs are refused, and past the whole,
    /// every key's, until older ones leave.
    pub fn max_proofs(mut self, max: usize) -> Self {
        self.max_proofs = max;
        self
    }

    /// The secret nonces are made with (default: one of this process's): instances of
    /// a fleet that share it accept each other's nonces.
    pub fn nonce_secret(mut self, secret: [u8; 32]) -> Self {
        self.nonce_secret = secret;
        self
    }

    /// Remembers the proofs seen in `store` (a `RedisReplayStore` a fleet shares, say)
    /// instead of this process's memory, so a proof replayed at another instance is
    /// refused too.
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.replay = Some(store);
        self
    }
}

/// Why a proof was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `invalid_dpop_proof`, and why.
    Invalid(String),
    /// `use_dpop_nonce`, with the nonce to use.
    UseNonce(String),
}

/// The checks, and the proofs seen (when no shared store remembers them).
#[derive(Debug)]
pub(crate) struct DpopGuard {
    policy: Dpop,
    seen: seen::Seen,
    /// HMAC-SHA256 keyed with the nonce secret (HMAC takes a key of any length).
    keyed: Option<hmac::Hmac<sha2::Sha256>>,
}

#[derive(Deserialize)]
struct Claims {
    jti: String,
    htm: String,
    htu: String,
    /// A NumericDate (RFC 7519 §2): seconds, a fraction allowed.
    iat: f64,
    #[serde(default)]
    ath: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
}

/// What a proof is checked against.
pub(crate) struct Request<'a> {
    /// The request's method.
    pub(crate) method: &'a str,
    /// The URLs the request may have been sent to (the resource's public URL, or those
    /// the `Host` it came with makes).
    pub(crate) urls: &'a [String],
    /// The access token it presents.
    pub(crate) token: &'a str,
    /// The thumbprint the token is bound to.
    pub(crate) jkt: &'a str,
}

/// How long a proof is remembered: as long as it can be accepted. Its `iat` may be a
/// window either side of now, read in whole seconds of the server's clock, so from its
/// first use it stays acceptable for up to two windows and a second (a day at most: a
/// window that long is a proof kept a day).
fn keep(window: Duration) -> Duration {
    window
        .saturating_mul(2)
        .saturating_add(Duration::from_secs(1))
        .min(Duration::from_secs(24 * 60 * 60))
}

fn invalid(why: impl Into<String>) -> Refusal {
    Refusal::Invalid(why.into())
}

impl DpopGuard {
    pub(crate) fn new(policy: Dpop) -> Self {
        use hmac::KeyInit as _;
        Self {
            keyed: hmac::Hmac::new_from_slice(&policy.nonce_secret).ok(),
            seen: seen::Seen::new(policy.max_proofs, keep(policy.window)),
            policy,
        }
    }

    /// Checks `proofs` (the request's `DPoP` header values) for `request`.
    pub(crate) async fn check<'p>(
        &self,
        mut proofs: impl Iterator<Item = &'p [u8]>,
        request: &Request<'_>,
    ) -> Result<(), Refusal> {
        let proof = proofs
            .next()
            .ok_or_else(|| invalid("a DPoP-bound token needs a DPoP proof"))?;
        if proofs.next().is_some() || proof.contains(&b',') {
            return Err(invalid("more than one DPoP proof"));
        }
        let proof = std::str::from_utf8(proof).map_err(|_| invalid("the proof is not text"))?;
        // The key's type and curve are checked against the alg before anything else.
        let key = key::proof_key(proof).map_err(Refusal::Invalid)?;
        let mut validation = Validation::new(key.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Claims>(proof, &key.decoding, &validation)
            .map_err(|e| invalid(format!("the proof does not verify: {e}")))?
            .claims;
        if key.thumbprint != request.jkt {
            return Err(invalid(
                "the proof is signed by a key the token is not bound to",
            ));
        }
        self.claims(&claims, request)?;
        if self.policy.nonce && !self.nonce_ok(claims.nonce.as_deref()) {
            return Err(Refusal::UseNonce(self.nonce()));
        }
        match &self.policy.replay {
            Some(store) => {
                self.redeem(store.as_ref(), &key.thumbprint, &claims.jti)
                    .await
            }
            None => self
                .seen
                .remember(&key.thumbprint, &claims.jti)
                .map_err(|unseen| invalid(unseen.why())),
        }
    }

    /// Records the proof in the shared store; a second sight is a replay.
    async fn redeem(&self, store: &dyn ReplayStore, jkt: &str, jti: &str) -> Result<(), Refusal> {
        let id = TokenId::of(&format!("dpop:{jkt}:{jti}"));
        match store.redeem(id, keep(self.policy.window)).await {
            Ok(Redemption::First) => Ok(()),
            Ok(_) => Err(invalid("the proof was used before")),
            Err(e) => {
                tracing::warn!(error = %e, "could not record a DPoP proof");
                Err(invalid(
                    "the proofs seen could not be checked: try again shortly",
                ))
            }
        }
    }

    /// `htm`, `htu`, `iat` and `ath` against the request.
    fn claims(&self, claims: &Claims, request: &Request<'_>) -> Result<(), Refusal> {
        if claims.htm != request.method {
            return Err(invalid(format!(
                "the proof is for {}, not {}",
                claims.htm, request.method
            )));
        }
        let htu = htu::normalize(&claims.htu);
        let named = |url: &String| htu.is_some() && htu::normalize(url) == htu;
        if !request.urls.iter().any(named) {
            return Err(invalid(format!("the proof is for {}", claims.htu)));
        }
        // Any number may come (JSON has no infinity): a distance of floats cannot overflow.
        let now = crate::util::unix_secs() as f64;
        if (now - claims.iat).abs() > self.policy.window.as_secs() as f64 {
            return Err(invalid("the proof's iat is outside the accepted window"));
        }
        let expected = crate::util::sha256_b64url(request.token);
        if claims.ath.as_deref() != Some(expected.as_str()) {
            return Err(invalid("the proof's ath is not the token's hash"));
        }
        if claims.jti.is_empty() || claims.jti.len() > MAX_JTI_BYTES {
            return Err(invalid("the proof's jti is empty or too long"));
        }
        Ok(())
    }

    /// The nonce to give now: good for this window and the next.
    pub(crate) fn nonce(&self) -> String {
        self.nonce_for(self.window_now())
    }

    fn window_now(&self) -> u64 {
        crate::util::unix_secs() / self.policy.window.as_secs().max(1)
    }

    /// The nonce of time window `window`: the window and a MAC of it.
    fn nonce_for(&self, window: u64) -> String {
        let mut bytes = window.to_be_bytes().to_vec();
        bytes.extend_from_slice(&self.mac(window).unwrap_or_default());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The MAC of `window`; `None` (no nonce is ever good) without a keyed HMAC.
    fn mac(&self, window: u64) -> Option<[u8; 16]> {
        use hmac::Mac as _;
        let mut mac = self.keyed.clone()?;
        mac.update(b"tern dpop nonce");
        mac.update(&window.to_be_bytes());
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&full[..16]);
        Some(tag)
    }

    fn nonce_ok(&self, nonce: Option<&str>) -> bool {
        self.nonce_ok_at(nonce, self.window_now())
    }

    /// Whether `nonce` is one made for window `now` or the one before, with this secret.
    fn nonce_ok_at(&self, nonce: Option<&str>, now: u64) -> bool {
        let Some(bytes) = nonce.and_then(|n| URL_SAFE_NO_PAD.decode(n).ok()) else {
            return false;
        };
        let Some((window, tag)) = bytes.split_first_chunk::<8>() else {
            return false;
        };
        let window = u64::from_be_bytes(*window);
        let fresh = window == now || window.checked_add(1) == Some(now);
        let Some(mac) = self.mac(window) else {
            return false;
        };
        fresh && bool::from(subtle::ConstantTimeEq::ct_eq(&mac[..], tag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_stays_good_for_one_window_after_the_next_at_every_instance_of_a_fleet() {
        let secret = [7u8; 32];
        let here = DpopGuard::new(Dpop::new().nonce_secret(secret));
        let there = DpopGuard::new(Dpop::new().nonce_secret(secret));
        let stranger = DpopGuard::new(Dpop::new());
        let given = here.nonce_for(1_000);
        assert!(here.nonce_ok_at(Some(&given), 1_000));
        assert!(
            there.nonce_ok_at(Some(&given), 1_001),
            "the next window, elsewhere"
        );
        assert!(!there.nonce_ok_at(Some(&given), 1_002), "too old");
        assert!(!here.nonce_ok_at(Some(&given), 999), "not yet");
        assert!(!stranger.nonce_ok_at(Some(&given), 1_000), "another secret");
        assert!(!here.nonce_ok_at(Some("made-up"), 1_000));
        assert!(!here.nonce_ok_at(None, 1_000));
    }
}
