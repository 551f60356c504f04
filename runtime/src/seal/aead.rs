//! XChaCha20-Poly1305 as the `t1.` format uses it, assembled from two vetted parts.
//!
//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha) is, by definition, HChaCha20 of the key and
//! the first 16 nonce bytes giving a subkey, then IETF ChaCha20-Poly1305 (RFC 8439) under
//! that subkey with the nonce `0u32 | nonce[16..24]`. HChaCha20 comes from the `chacha20`
//! crate and the IETF AEAD from `ring`; neither primitive is written here.
//!
//! Why not the `chacha20poly1305` crate's `XChaCha20Poly1305`, which this replaces: on
//! x86-64 its `poly1305` 0.9 picks the AVX2 backend at run time, whose helpers are compiled
//! without AVX2 enabled, so every `_mm256_*` intrinsic becomes an out-of-line call; with
//! the per-message setup of r², r³, r⁴ that path cost ~1.9 µs for one 200-byte message,
//! more than all of tern's other sealing work. The only way to pick its software backend
//! is a `--cfg` in RUSTFLAGS, which users' builds do not set. HChaCha20 plus ring's
//! assembly take ~0.35 µs for the same message (a third of it HChaCha20). Unit tests pin
//! the output to the `chacha20poly1305` crate's for several keys, nonces, lengths and
//! associated data, and to the draft's test vector.

use chacha20::{R20, hchacha};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};
use ring::error::Unspecified;
use zeroize::{Zeroize as _, Zeroizing};

/// Key length in bytes.
pub(crate) const KEY_LEN: usize = 32;
/// Nonce length in bytes.
pub(crate) const NONCE_LEN: usize = 24;
/// Tag length in bytes.
pub(crate) const TAG_LEN: usize = 16;

/// The part of the extended nonce that goes into HChaCha20.
const HCHACHA_INPUT_LEN: usize = 16;

/// An XChaCha20-Poly1305 key; wiped when dropped.
pub(crate) struct XChaCha20Poly1305 {
    key: Zeroizing<[u8; KEY_LEN]>,
}

/// The AEAD failed: on seal the input was too long for ring, on open the tag did not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AeadError;

impl XChaCha20Poly1305 {
    /// A cipher under `key`.
    pub(crate) fn new(key: &[u8; KEY_LEN]) -> Self {
        Self {
            key: Zeroizing::new(*key),
        }
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
        let (head, tail) = nonce.split_at(HCHACHA_INPUT_LEN);
        let mut input = [0u8; HCHACHA_INPUT_LEN];
        input.copy_from_slice(head);
        let mut subkey = hchacha::<R20>(&(*self.key).into(), &input.into());
        let key = UnboundKey::new(&CHACHA20_POLY1305, subkey.as_slice()).map(LessSafeKey::new);
        // ring keeps its own copy of the subkey in its key, which it does not wipe; that
        // copy lives on the stack for one message only and is overwritten by later calls,
        // while ours is wiped here, before any early return.
        subkey.as_mut_slice().zeroize();
        let mut ietf_nonce = [0u8; 12];
        ietf_nonce[4..].copy_from_slice(tail);
        // Borrowed where it lies: moving the key out of the Result would copy it again.
        match &key {
            Ok(key) => f(key, Nonce::assume_unique_for_key(ietf_nonce)).map_err(|_| AeadError),
            Err(_) => Err(AeadError),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chacha20poly1305::aead::{AeadInOut, KeyInit};
    use chacha20poly1305::{Key, XNonce};

    fn reference(key: &[u8; 32], nonce: &[u8; 24], aad: &[u8], plaintext: &[u8]) -> Vec<u8> {
        let cipher = chacha20poly1305::XChaCha20Poly1305::new(&Key::from(*key));
        let mut buffer = plaintext.to_vec();
        cipher
            .encrypt_in_place(&XNonce::from(*nonce), aad, &mut buffer)
            .unwrap();
        buffer
    }

    /// Deterministic, varied bytes, so the test needs no RNG and fails the same way twice.
    fn bytes<const N: usize>(seed: u8) -> [u8; N] {
        let mut out = [0u8; N];
        for (index, byte) in out.iter_mut().enumerate() {
            *byte = seed
                .wrapping_mul(31)
                .wrapping_add((index as u8).wrapping_mul(97))
                ^ 0x5a;
        }
        out
    }

    #[test]
    fn output_equals_the_chacha20poly1305_crates_xchacha20poly1305() {
        let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 160, 200, 255, 256, 1000, 4097];
        let aads: [&[u8]; 4] = [b"", b"t1.", b"t1.\x01\x02\x03\x04", &[0xa5; 77]];
        for seed in 0..6u8 {
            let key = bytes::<32>(seed);
            let nonce = bytes::<24>(seed.wrapping_add(100));
            let cipher = XChaCha20Poly1305::new(&key);
            for (index, &len) in lengths.iter().enumerate() {
                let aad = aads[(index + usize::from(seed)) % aads.len()];
                let plaintext: Vec<u8> = (0..len)
                    .map(|i| (i * 7 + usize::from(seed)) as u8)
                    .collect();
                let expected = reference(&key, &nonce, aad, &plaintext);

                let mut buffer = plaintext.clone();
                let tag = cipher.seal_in_place(&nonce, aad, &mut buffer).unwrap();
                buffer.extend_from_slice(&tag);
                assert_eq!(buffer, expected, "seed {seed}, len {len}");

                let (ciphertext, tag) = buffer.split_at_mut(len);
                let tag: [u8; TAG_LEN] = (&*tag).try_into().unwrap();
                cipher.open_in_place(&nonce, aad, ciphertext, &tag).unwrap();
                assert_eq!(ciphertext, &plaintext[..]);
            }
        }
    }

    #[test]
    fn matches_the_draft_test_vector() {
        // draft-irtf-cfrg-xchacha-03, appendix A.3.1.
        let key: [u8; 32] = core::array::from_fn(|i| 0x80 + i as u8);
        let nonce: [u8; 24] = core::array::from_fn(|i| 0x40 + i as u8);
        let aad = [
            0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
        ];
        let plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you \
only one tip for the future, sunscreen would be it.";
        let mut buffer = plaintext.to_vec();
        let tag = XChaCha20Poly1305::new(&key)
            .seal_in_place(&nonce, &aad, &mut buffer)
            .unwrap();
        assert_eq!(
            &buffer[..8],
            &[0xbd, 0x6d, 0x17, 0x9d, 0x3e, 0x83, 0xd4, 0x3b]
        );
        assert_eq!(
            tag,
            [
                0xc0, 0x87, 0x59, 0x24, 0xc1, 0xc7, 0x98, 0x79, 0x47, 0xde, 0xaf, 0xd8, 0x78, 0x0a,
                0xcf, 0x49
            ]
        );
    }

    #[test]
    fn a_changed_byte_anywhere_fails_to_open() {
        let key = bytes::<32>(1);
        let nonce = bytes::<24>(2);
        let cipher = XChaCha20Poly1305::new(&key);
        let mut sealed = b"some state".to_vec();
        let tag = cipher.seal_in_place(&nonce, b"t1.", &mut sealed).unwrap();

        let open = |nonce: &[u8; 24], aad: &[u8], mut buffer: Vec<u8>, tag: &[u8; 16]| {
            cipher.open_in_place(nonce, aad, &mut buffer, tag)
        };
        assert_eq!(open(&nonce, b"t1.", sealed.clone(), &tag), Ok(()));

        let mut other_nonce = nonce;
        other_nonce[23] ^= 1;
        assert_eq!(
            open(&other_nonce, b"t1.", sealed.clone(), &tag),
            Err(AeadError)
        );
        assert_eq!(open(&nonce, b"t2.", sealed.clone(), &tag), Err(AeadError));
        let mut other_tag = tag;
        other_tag[0] ^= 1;
        assert_eq!(
            open(&nonce, b"t1.", sealed.clone(), &other_tag),
            Err(AeadError)
        );
        let mut other_ciphertext = sealed;
        other_ciphertext[0] ^= 1;
        assert_eq!(open(&nonce, b"t1.", other_ciphertext, &tag), Err(AeadError));
    }
}
