//! tern's built-in codec: keys derived from secrets, and the `t1.` token format.
//!
//! A token is `t1.` followed by the unpadded base64url encoding of
//! `key id (4) | nonce (24) | XChaCha20-Poly1305 ciphertext | tag (16)`, with `t1.` and the
//! key id as associated data so neither can be swapped without breaking the tag. The nonce
//! is the sealing cipher's own (`aead::Nonces`: its random prefix, then a count).

use std::fmt;
use std::ops::Range;
use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::NO_PAD;
#[cfg(test)]
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hkdf::Hkdf;
use sha2::{Digest as _, Sha256};
use zeroize::Zeroizing;

use super::aead::{KEY_LEN, NONCE_LEN, TAG_LEN, XChaCha20Poly1305};
use super::ct::bytes_ct_eq;
use super::secret::{SECRET_LEN, generate_secret};
use super::{InvalidRequestState, RejectReason, SealFailure, SealFailureReason, StateCodec};
use crate::ConfigError;

use super::Result;

/// The version prefix of tern's token format; bound into the tag as associated data.
pub(crate) const TOKEN_PREFIX: &str = "t1.";

/// The default cap on a token's length, in bytes, on both seal and unseal.
pub(crate) const DEFAULT_MAX_TOKEN_LEN: usize = 64 * 1024;

const KEY_ID_LEN: usize = 4;
const HEADER_LEN: usize = KEY_ID_LEN + NONCE_LEN;
const OVERHEAD: usize = HEADER_LEN + TAG_LEN;

// Distinct labels keep tern's keys unrelated to anything else derived from the same secret.
const HKDF_SALT: &[u8] = b"tern requestState v1";
const HKDF_INFO: &[u8] = b"tern requestState t1 XChaCha20-Poly1305 key";
const KEY_ID_LABEL: &[u8] = b"tern requestState t1 key id";

/// base64url without padding, through base64's run-time-detected SIMD engine where the
/// target has one: the scalar engine spent as long on a ~270-character token as the AEAD.
/// Both engines take the same strict decoding path (no padding, zero trailing bits), and a
/// test holds them to the same output and the same verdicts.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
type Base64 = base64::engine::Simd;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type Base64 = base64::engine::GeneralPurpose;

/// Built once per process: the engine (its tables and the detected instruction set) is
/// ~0.4 KiB, too much to carry in every keyring.
static BASE64: LazyLock<Base64> = LazyLock::new(base64_engine);

fn base64_engine() -> Base64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return base64::engine::Simd::url_safe(NO_PAD);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return base64::engine::GeneralPurpose::new(&base64::alphabet::URL_SAFE, NO_PAD);
}

/// One derived key: the cipher (which wipes its key on drop) and the id naming it.
struct SealingKey {
    id: [u8; KEY_ID_LEN],
    cipher: XChaCha20Poly1305,
}

impl SealingKey {
    /// Derives the cipher key with HKDF-SHA256 and names it by a hash of the derived key,
    /// so the id reveals nothing about the secret and rotating the secret changes the id.
    fn derive(secret: &[u8]) -> Result<(Self, Zeroizing<[u8; KEY_LEN]>)> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        let hkdf = Hkdf::<Sha256>::new(Some(HKDF_SALT), secret);
        // HKDF-SHA256 expands up to 8160 bytes, so this cannot fail; if it ever did, an
        // all-zero key must not slip through.
        hkdf.expand(HKDF_INFO, &mut key[..])
            .map_err(|_| ConfigError::Invalid("requestState key derivation failed".into()))?;
        let digest = Sha256::new()
            .chain_update(KEY_ID_LABEL)
            .chain_update(&key[..])
            .finalize();
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        let cipher = XChaCha20Poly1305::new(&key);
        Ok((Self { id, cipher }, key))
    }
}

/// A ring of `requestState` keys: the first seals, every one verifies.
///
/// Implements [`StateCodec`] with tern's `t1.` token format. Keys are derived once, at
/// construction; the derived keys are wiped when the ring drops, and `Debug` shows only
/// the key ids.
pub struct Keyring {
    keys: Vec<SealingKey>,
    max_token_len: usize,
}

impl Keyring {
    /// Builds a ring from secrets of at least 32 bytes each; `secrets[0]` seals.
    ///
    /// Rejects an empty ring, a short secret and a repeated secret, each with an error
    /// that says how to fix it.
    pub fn new<I, S>(secrets: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let mut derived: Vec<(SealingKey, Zeroizing<[u8; KEY_LEN]>)> = Vec::new();
        for (index, secret) in secrets.into_iter().enumerate() {
            let secret = secret.as_ref();
            if secret.len() < SECRET_LEN {
                return Err(ConfigError::KeyTooShort {
                    index,
                    len: secret.len(),
                });
            }
            let (key, raw) = SealingKey::derive(secret)?;
            for (first, (earlier, earlier_raw)) in derived.iter().enumerate() {
                if earlier.id == key.id {
                    return Err(if bool::from(bytes_ct_eq(&earlier_raw[..], &raw[..])) {
                        ConfigError::DuplicateKey {
                            first,
                            second: index,
                        }
                    } else {
                        ConfigError::KeyIdCollision {
                            first,
                            second: index,
                        }
                    });
                }
            }
            derived.push((key, raw));
        }
        if derived.is_empty() {
            return Err(ConfigError::EmptyKeyRing);
        }
        Ok(Self {
            keys: derived.into_iter().map(|(key, _)| key).collect(),
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
        })
    }

    /// A ring of one random key that lives and dies with this value: tokens it seals can
    /// only be read by it, so not after a restart nor on another instance.
    pub(crate) fn ephemeral() -> Result<Self> {
        let secret = Zeroizing::new(generate_secret());
        let (key, _raw) = SealingKey::derive(&secret[..])?;
        Ok(Self {
            keys: vec![key],
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
        })
    }

    /// Sets the cap on a token's length in bytes, enforced on seal and unseal
    /// (default [`DEFAULT_MAX_TOKEN_LEN`]).
    pub(crate) fn with_max_token_len(mut self, max_token_len: usize) -> Self {
        self.max_token_len = max_token_len;
        self
    }

    /// The length of the token that sealing `payload_len` bytes produces.
    pub(crate) fn token_len(payload_len: usize) -> usize {
        let raw = payload_len.saturating_add(OVERHEAD);
        TOKEN_PREFIX.len() + raw / 3 * 4 + [0, 2, 3][raw % 3]
    }

    fn find(&self, id: &[u8]) -> Option<&SealingKey> {
        self.keys.iter().find(|key| key.id == id)
    }
}

fn associated_data(id: &[u8; KEY_ID_LEN]) -> [u8; TOKEN_PREFIX.len() + KEY_ID_LEN] {
    let mut aad = [0u8; TOKEN_PREFIX.len() + KEY_ID_LEN];
    aad[..TOKEN_PREFIX.len()].copy_from_slice(TOKEN_PREFIX.as_bytes());
    aad[TOKEN_PREFIX.len()..].copy_from_slice(id);
    aad
}

impl Keyring {
    /// Seals a payload of `payload_len` bytes that `fill` appends to the buffer, so the
    /// sealer can write its claims straight into the buffer that gets encrypted, and
    /// appends the token to `out` (a JSON text being written, often: `t1.` and base64url
    /// need no escaping). On failure `out` is as it was.
    pub(crate) fn seal_with(
        &self,
        payload_len: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<(), SealFailure>,
        out: &mut Vec<u8>,
    ) -> Result<(), SealFailure> {
        let token_len = Self::token_len(payload_len);
        if token_len > self.max_token_len {
            return Err(SealFailure::because(SealFailureReason::TooLarge));
        }
        let Some(key) = self.keys.first() else {
            return Err(SealFailure::because(SealFailureReason::Codec));
        };
        let nonce = key.cipher.next_nonce();

        let mut raw = Vec::with_capacity(payload_len + OVERHEAD);
        raw.extend_from_slice(&key.id);
        raw.extend_from_slice(&nonce);
        fill(&mut raw)?;
        if raw.len() != HEADER_LEN + payload_len {
            return Err(SealFailure::because(SealFailureReason::Codec));
        }
        let Some(body) = raw.get_mut(HEADER_LEN..) else {
            return Err(SealFailure::because(SealFailureReason::Codec));
        };
        let tag = key
            .cipher
            .seal_in_place(&nonce, &associated_data(&key.id), body)
            .map_err(|_| SealFailure::because(SealFailureReason::TooLarge))?;
        raw.extend_from_slice(&tag);

        // Encoded straight into `out`: no token of its own to allocate, check as text
        // and copy.
        let start = out.len();
        out.extend_from_slice(TOKEN_PREFIX.as_bytes());
        out.resize(start + token_len, 0);
        let encoded = out
            .get_mut(start + TOKEN_PREFIX.len()..)
            .and_then(|room| BASE64.encode_slice(&raw, room).ok());
        if encoded != Some(token_len - TOKEN_PREFIX.len()) {
            out.truncate(start);
            return Err(SealFailure::because(SealFailureReason::Codec));
        }
        Ok(())
    }

    /// Decrypts `token` in place; the plaintext is `buffer[range]`. Lets the sealer parse
    /// the claims and cut out the state with a single move.
    pub(crate) fn open(&self, token: &str) -> Result<(Vec<u8>, Range<usize>), InvalidRequestState> {
        let reject = InvalidRequestState::because;
        if token.len() > self.max_token_len {
            return Err(reject(RejectReason::TooLarge));
        }
        let body = token
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(reject(RejectReason::Malformed))?;
        // The engine requires no padding and zero trailing bits, so each byte string has
        // exactly one accepted spelling (tests pin this down for every final character).
        // Into a vector it grows, not `decode`'s zeroed one: glibc serves a zeroed
        // allocation (`calloc`) past its per-thread cache, some 450 instructions.
        let mut raw = Vec::new();
        BASE64
            .decode_vec(body, &mut raw)
            .map_err(|_| reject(RejectReason::Malformed))?;
        let Some(ciphertext_len) = raw.len().checked_sub(OVERHEAD) else {
            return Err(reject(RejectReason::Malformed));
        };
        let (header, rest) = raw.split_at_mut(HEADER_LEN);
        let (id, nonce) = header.split_at(KEY_ID_LEN);
        let key = self.find(id).ok_or(reject(RejectReason::UnknownKey))?;
        let (ciphertext, tag) = rest.split_at_mut(ciphertext_len);
        let (Ok(nonce), Ok(tag)) = (
            <&[u8; NONCE_LEN]>::try_from(nonce),
            <&[u8; TAG_LEN]>::try_from(&*tag),
        ) else {
            return Err(reject(RejectReason::Malformed));
        };
        key.cipher
            .open_in_place(nonce, &associated_data(&key.id), ciphertext, tag)
            .map_err(|_| reject(RejectReason::Seal))?;
        Ok((raw, HEADER_LEN..HEADER_LEN + ciphertext_len))
    }
}

impl StateCodec for Keyring {
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure> {
        let mut token = Vec::with_capacity(Self::token_len(payload.len()));
        self.seal_with(
            payload.len(),
            |buffer| {
                buffer.extend_from_slice(payload);
                Ok(())
            },
            &mut token,
        )?;
        String::from_utf8(token).map_err(|_| SealFailure::because(SealFailureReason::Codec))
    }

    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState> {
        let (mut raw, plaintext) = self.open(token)?;
        raw.truncate(plaintext.end);
        raw.drain(..plaintext.start);
        Ok(raw)
    }
}

impl Keyring {
    /// The id each key writes into the tokens it seals, as eight hex digits, in the
    /// order given (the first seals): what tells an operator which key sealed a token
    /// and which keys an instance holds during a rotation.
    pub fn key_ids(&self) -> impl Iterator<Item = String> + '_ {
        self.keys
            .iter()
            .map(|key| format!("{:08x}", u32::from_be_bytes(key.id)))
    }
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Ids<'a>(&'a [SealingKey]);
        impl fmt::Debug for Ids<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list()
                    .entries(
                        self.0
                            .iter()
                            .map(|key| format!("{:08x}", u32::from_be_bytes(key.id))),
                    )
                    .finish()
            }
        }
        f.debug_struct("Keyring")
            .field("key_ids", &Ids(&self.keys))
            .field("max_token_len", &self.max_token_len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use chacha20poly1305::aead::{AeadInOut, KeyInit};
    use chacha20poly1305::{Key, XNonce};

    use super::*;

    const SECRET: [u8; 32] = [0x42; 32];

    /// A token assembled by hand around the `chacha20poly1305` crate's one-shot API under
    /// the same derived key: the `t1.` layout built independently of the keyring's code.
    fn reference_token(secret: &[u8], nonce: [u8; NONCE_LEN], payload: &[u8]) -> String {
        let (key, raw) = SealingKey::derive(secret).unwrap();
        let cipher = chacha20poly1305::XChaCha20Poly1305::new(&Key::from(*raw));
        let mut body = payload.to_vec();
        cipher
            .encrypt_in_place(&XNonce::from(nonce), &associated_data(&key.id), &mut body)
            .unwrap();
        let mut bytes = key.id.to_vec();
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&body);
        format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    #[test]
    fn the_simd_base64_engine_agrees_with_the_scalar_one() {
        let engine = base64_engine();
        // Every length across several SIMD block sizes, so each tail shape is covered.
        for len in 0..200usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 89 + len) as u8).collect();
            let text = URL_SAFE_NO_PAD.encode(&bytes);
            assert_eq!(engine.encode(&bytes), text);
            assert_eq!(engine.decode(&text).unwrap(), bytes);
            // One foreign or non-canonical character at each position must be refused by
            // both engines alike.
            for position in 0..text.len() {
                for bad in [b'+', b'/', b'=', b' ', b'.', b'\n', 0x80, 0xff] {
                    let mut spoiled = text.clone().into_bytes();
                    spoiled[position] = bad;
                    assert_eq!(
                        engine.decode(&spoiled).is_ok(),
                        URL_SAFE_NO_PAD.decode(&spoiled).is_ok(),
                        "len {len}, position {position}, byte {bad}"
                    );
                    assert!(engine.decode(&spoiled).is_err());
                }
            }
            // Non-zero trailing bits and padding are refused by both.
            if let Some(last) = text.as_bytes().last() {
                for replacement in ALPHABET.bytes().filter(|c| c != last) {
                    let mut respelled = text.clone().into_bytes();
                    *respelled.last_mut().unwrap() = replacement;
                    assert_eq!(
                        engine.decode(&respelled).ok(),
                        URL_SAFE_NO_PAD.decode(&respelled).ok(),
                        "len {len}, last {replacement}"
                    );
                }
            }
            assert!(engine.decode(format!("{text}=")).is_err());
        }
    }

    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    #[test]
    fn a_t1_token_sealed_by_an_earlier_release_still_opens() {
        // Sealed from SECRET, with the nonce 0, 1, ..., 23, by an earlier release's
        // chacha20poly1305-based codec; pins the wire format independently of every engine.
        const OLD_TOKEN: &str = "t1.MGHcNQABAgMEBQYHCAkKCwwNDg8QERITFBUWF88L6R_5OlCn_HjrJKZ-Jfdh1gAsrobKUeQqfdrT69rGtgeG-YwdIg";
        let keys = Keyring::new([SECRET]).unwrap();
        assert_eq!(keys.unseal(OLD_TOKEN).unwrap(), b"step=2;region=eu-west-1");
    }

    #[test]
    fn tokens_match_the_reference_xchacha20poly1305_both_ways() {
        let keys = Keyring::new([SECRET]).unwrap();
        for len in [0, 1, 16, 63, 64, 65, 160, 300] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 13) as u8).collect();
            let nonce: [u8; NONCE_LEN] = core::array::from_fn(|i| (i * 7 + len) as u8);

            let theirs = reference_token(&SECRET, nonce, &payload);
            assert_eq!(keys.unseal(&theirs).unwrap(), payload, "len {len}");

            let ours = keys.seal(&payload).unwrap();
            let raw = URL_SAFE_NO_PAD
                .decode(ours.strip_prefix(TOKEN_PREFIX).unwrap())
                .unwrap();
            let ours_nonce: [u8; NONCE_LEN] = raw[KEY_ID_LEN..HEADER_LEN].try_into().unwrap();
            assert_eq!(
                reference_token(&SECRET, ours_nonce, &payload),
                ours,
                "len {len}"
            );
        }
    }
}
