//! The `seal-ring` engine: XChaCha20-Poly1305 assembled from HChaCha20 and ring.
//!
//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha) is, by definition, HChaCha20 of the key and
//! the first 16 nonce bytes giving a subkey, then IETF ChaCha20-Poly1305 (RFC 8439) under
//! that subkey with the nonce `0u32 | nonce[16..24]`. HChaCha20 comes from the `chacha20`
//! crate and the IETF AEAD from `ring`; neither primitive is written here.
//!
//! Why it exists beside the `chacha20poly1305` crate's `XChaCha20Poly1305`, the default: on
//! x86-64 that crate's `poly1305` 0.9 picks the AVX2 backend at run time, whose helpers are
//! compiled without AVX2 enabled, so every `_mm256_*` intrinsic becomes an out-of-line
//! call; with the per-message setup of r², r³, r⁴ that path cost ~1.9 µs for one 200-byte
//! message. The only way to pick its software backend is a `--cfg` in RUSTFLAGS, which
//! users' builds do not set. HChaCha20 plus ring's assembly take ~0.35 µs for the same
//! message (a third of it HChaCha20). The price is ring's C and assembly, hence a C
//! compiler; the default features pay it already (rustls, for `http-client-tls`), so it
//! is on by default, and a build without default features stays pure Rust.
//!
//! The nonces this cipher seals with share one prefix ([`Nonces`]), so the subkey for it
//! is derived once, when the cipher is made, and kept as ring's key, built: sealing
//! derives and builds nothing, and opening derives and builds a key only for a token
//! another instance sealed. That took HChaCha20's ~1,100 instructions out of both, and
//! building ring's key ~300 more. Tests pin its output to the crate's for several keys,
//! nonces, lengths and associated data, and to the draft's test vector.
//!
//! ring does not wipe its keys, and tern forbids `unsafe`, so the kept key is wiped by
//! writing a key of zeros over it when the cipher drops ([`OwnKey`]); the keys tern holds
//! itself are `Zeroizing`. A key built for another instance's token lives on the stack
//! for one message, as ring's keys do.

use chacha20::{R20, hchacha};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};
use ring::error::Unspecified;
use zeroize::{Zeroize as _, Zeroizing};

use super::{AeadError, KEY_LEN, NONCE_LEN, Nonces, PREFIX_LEN, TAG_LEN};

/// An XChaCha20-Poly1305 key, its nonces, and the IETF key of their prefix's subkey;
/// the keys are wiped when dropped.
pub(crate) struct XChaCha20Poly1305 {
    key: Zeroizing<[u8; KEY_LEN]>,
    nonces: Nonces,
    /// HChaCha20 of the key and `nonces`' prefix, as ring's key (which ring cannot fail
    /// to build from 32 bytes; were it to, each message would build its own).
    own: Option<OwnKey>,
}

/// ring's key for the subkey of the cipher's own nonces, built once. Boxed: ring's key
/// type is sized for its largest algorithm (AES-GCM tables, ~0.5 KiB), and the cipher is
/// moved. Wiped when dropped by a key of zeros written over it.
struct OwnKey(Box<LessSafeKey>);

impl Drop for OwnKey {
    fn drop(&mut self) {
        if let Ok(zeros) = UnboundKey::new(&CHACHA20_POLY1305, &[0u8; KEY_LEN]) {
            *self.0 = LessSafeKey::new(zeros);
            // Read, as far as the compiler knows: the write is not dropped as dead
            // before the box is freed.
            std::hint::black_box(&*self.0);
        }
    }
}

impl XChaCha20Poly1305 {
    /// A cipher under `key`, with nonces of its own.
    pub(crate) fn new(key: &[u8; KEY_LEN]) -> Self {
        let nonces = Nonces::new();
        let own_subkey = subkey(key, nonces.prefix());
        let own = UnboundKey::new(&CHACHA20_POLY1305, &own_subkey[..])
            .ok()
            .map(|own| OwnKey(Box::new(LessSafeKey::new(own))));
        Self {
            key: Zeroizing::new(*key),
            nonces,
            own,
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
        let tag = self.with_ietf(nonce, |key, nonce| {
            key.seal_in_place_separate_tag(nonce, Aad::from(aad), in_out)
        })?;
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(tag.as_ref());
        Ok(out)
    }

    /// Checks `tag` over `aad` and the ciphertext in `in_out`, then leaves the plaintext in
    /// `in_out`. On a bad tag ring zeroes `in_out` rather than leave unauthenticated
    /// plaintext there.
    pub(crate) fn open_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), AeadError> {
        self.with_ietf(nonce, |key, nonce| {
            key.open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(*tag), in_out, 0..)
                .map(|_| ())
        })
    }

    /// Runs `f` with the IETF ChaCha20-Poly1305 key and nonce this extended nonce stands
    /// for. The key is lent rather than returned because ring's key type is sized for its
    /// largest algorithm (AES-GCM tables, ~0.5 KiB), and every move of it is a copy.
    fn with_ietf<T>(
        &self,
        nonce: &[u8; NONCE_LEN],
        f: impl FnOnce(&LessSafeKey, Nonce) -> Result<T, Unspecified>,
    ) -> Result<T, AeadError> {
        let (prefix, tail) = nonce.split_first_chunk::<PREFIX_LEN>().ok_or(AeadError)?;
        let mut ietf_nonce = [0u8; 12];
        ietf_nonce[4..].copy_from_slice(tail);
        let nonce = Nonce::assume_unique_for_key(ietf_nonce);
        if let Some(own) = self.own.as_ref().filter(|_| prefix == self.nonces.prefix()) {
            return f(&own.0, nonce).map_err(|_| AeadError);
        }
        // Another instance's token: ring keeps its own copy of the derived subkey in its
        // key, which it does not wipe; that copy lives on the stack for this message only
        // and is overwritten by later calls, while ours is wiped when dropped.
        let key = UnboundKey::new(&CHACHA20_POLY1305, &subkey(&self.key, prefix)[..])
            .map(LessSafeKey::new);
        // Borrowed where it lies: moving the key out of the Result would copy it again.
        match &key {
            Ok(key) => f(key, nonce).map_err(|_| AeadError),
            Err(_) => Err(AeadError),
        }
    }
}

/// HChaCha20 of `key` and `prefix`: the subkey for the nonces that start with `prefix`.
fn subkey(key: &[u8; KEY_LEN], prefix: &[u8; PREFIX_LEN]) -> Zeroizing<[u8; KEY_LEN]> {
    let mut derived = hchacha::<R20>(&(*key).into(), &(*prefix).into());
    let mut out = Zeroizing::new([0u8; KEY_LEN]);
    out.copy_from_slice(derived.as_slice());
    derived.as_mut_slice().zeroize();
    out
}
