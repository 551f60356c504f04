//! XChaCha20-Poly1305 as the `t1.` format uses it.
//!
//! By default (feature `seal-ring`) the engine is HChaCha20 in front of ring's IETF
//! ChaCha20-Poly1305 (`ring.rs` here says why it is faster); without it, the
//! `chacha20poly1305` crate's `XChaCha20Poly1305` (pure Rust, no C compiler, no assembly).
//! Both produce the same bytes, which the tests hold them to whenever `seal-ring` is on
//! (tests.rs), so tokens sealed by either open under the other.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "seal-ring")]
mod ring;
#[cfg(any(not(feature = "seal-ring"), test))]
mod rustcrypto;

#[cfg(feature = "seal-ring")]
pub(crate) use self::ring::XChaCha20Poly1305;
#[cfg(not(feature = "seal-ring"))]
pub(crate) use self::rustcrypto::XChaCha20Poly1305;

/// Key length in bytes.
pub(crate) const KEY_LEN: usize = 32;
/// Nonce length in bytes.
pub(crate) const NONCE_LEN: usize = 24;
/// Tag length in bytes.
pub(crate) const TAG_LEN: usize = 16;

/// The nonces one cipher seals with: a 16-byte prefix drawn at random when the cipher is
/// made, then a 64-bit count from a random start, one step per message.
///
/// Each nonce is unique under its key: the count repeats only after 2^64 messages, and
/// two ciphers (two processes of a fleet sharing a secret, or one key built twice) share
/// a prefix with probability about n²/2^129. A prefix that stays put lets the `seal-ring`
/// engine derive its HChaCha20 subkey once, not per message. What a token shows of it is
/// which instance sealed it and, between two tokens of one instance, how many it sealed
/// in between: a volume, nothing of any state.
pub(crate) struct Nonces {
    prefix: [u8; PREFIX_LEN],
    next: AtomicU64,
}

/// The part of the extended nonce that goes into HChaCha20, and that [`Nonces`] fixes.
pub(crate) const PREFIX_LEN: usize = 16;

impl Nonces {
    /// A random prefix and a random start.
    pub(crate) fn new() -> Self {
        let mut prefix = [0u8; PREFIX_LEN];
        rand::fill(&mut prefix[..]);
        Self {
            prefix,
            next: AtomicU64::new(rand::random()),
        }
    }

    /// The prefix every nonce of this cipher starts with.
    #[cfg_attr(not(feature = "seal-ring"), allow(dead_code))]
    pub(crate) fn prefix(&self) -> &[u8; PREFIX_LEN] {
        &self.prefix
    }

    /// A nonce no earlier call gave.
    pub(crate) fn next(&self) -> [u8; NONCE_LEN] {
        let count = self.next.fetch_add(1, Ordering::Relaxed);
        let mut nonce = [0u8; NONCE_LEN];
        nonce[..PREFIX_LEN].copy_from_slice(&self.prefix);
        nonce[PREFIX_LEN..].copy_from_slice(&count.to_le_bytes());
        nonce
    }
}

/// The AEAD failed: on seal the input was too long, on open the tag did not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AeadError;

#[cfg(test)]
mod tests;
