//! XChaCha20-Poly1305 as the `t1.` format uses it.
//!
//! By default (feature `seal-ring`) the engine is HChaCha20 in front of ring's IETF
//! ChaCha20-Poly1305 (`ring.rs` here says why it is faster); without it, the
//! `chacha20poly1305` crate's `XChaCha20Poly1305` (pure Rust, no C compiler, no assembly).
//! Both produce the same bytes, which the tests hold them to whenever `seal-ring` is on
//! (tests.rs), so tokens sealed by either open under the other.

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

/// The AEAD failed: on seal the input was too long, on open the tag did not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AeadError;

#[cfg(test)]
mod tests;
