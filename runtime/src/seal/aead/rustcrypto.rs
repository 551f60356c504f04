//! The pure-Rust engine (without the default `seal-ring` feature): the `chacha20poly1305`
//! crate's XChaCha20-Poly1305.
//!
//! Its `zeroize` feature wipes the key when the cipher drops. Per message the crate derives
//! the HChaCha20 subkey and the Poly1305 key; on x86-64 its `poly1305` picks an AVX2
//! backend at run time whose per-message setup makes one ~200-byte message cost a few
//! microseconds, several times the ring composition behind `seal-ring`, and still small
//! beside one round trip.

use chacha20poly1305::aead::inout::InOutBuf;
use chacha20poly1305::aead::{AeadInOut as _, KeyInit as _};
use chacha20poly1305::{Key, Tag, XNonce};

use super::{AeadError, KEY_LEN, NONCE_LEN, Nonces, TAG_LEN};

/// An XChaCha20-Poly1305 key, wiped when dropped, and its nonces.
pub(crate) struct XChaCha20Poly1305 {
    cipher: chacha20poly1305::XChaCha20Poly1305,
    nonces: Nonces,
}

impl XChaCha20Poly1305 {
    /// A cipher under `key`, with nonces of its own.
    pub(crate) fn new(key: &[u8; KEY_LEN]) -> Self {
        Self {
            cipher: chacha20poly1305::XChaCha20Poly1305::new(&Key::from(*key)),
            nonces: Nonces::new(),
        }
    }

    /// A nonce no earlier call gave, for [`seal_in_place`](Self::seal_in_place).
    pub(crate) fn next_nonce(&self) -> [u8; NONCE_LEN] {
        self.nonces.next()
    }

    /// Encrypts `in_out` in place and returns the tag over `aad` and the ciphertext.
    pub(crate) fn seal_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        in_out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], AeadError> {
        let tag = self
            .cipher
            .encrypt_inout_detached(&XNonce::from(*nonce), aad, InOutBuf::from(in_out))
            .map_err(|_| AeadError)?;
        Ok(tag.into())
    }

    /// Checks `tag` over `aad` and the ciphertext in `in_out`, then leaves the plaintext in
    /// `in_out`. The crate checks the tag before it decrypts, so on a bad tag `in_out`
    /// still holds the ciphertext, never unauthenticated plaintext.
    pub(crate) fn open_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), AeadError> {
        self.cipher
            .decrypt_inout_detached(
                &XNonce::from(*nonce),
                aad,
                InOutBuf::from(in_out),
                &Tag::from(*tag),
            )
            .map_err(|_| AeadError)
    }
}
