//! Every engine compiled in is held to the `chacha20poly1305` crate's own output and to the
//! draft's test vector, so a token sealed by one opens under the other.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Key, XNonce};

use super::{AeadError, PREFIX_LEN, TAG_LEN};

/// The crate's one-shot API: the output every engine must equal, tag appended.
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

/// The same tests for each engine, so the default one and `seal-ring` stay interchangeable.
macro_rules! engine_tests {
    ($name:ident, $engine:ty) => {
        mod $name {
            use super::*;

            type Engine = $engine;

            #[test]
            fn output_equals_the_chacha20poly1305_crates_xchacha20poly1305() {
                let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 160, 200, 255, 256, 1000, 4097];
                let aads: [&[u8]; 4] = [b"", b"t1.", b"t1.\x01\x02\x03\x04", &[0xa5; 77]];
                for seed in 0..6u8 {
                    let key = bytes::<32>(seed);
                    let nonce = bytes::<24>(seed.wrapping_add(100));
                    let cipher = Engine::new(&key);
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
                let tag = Engine::new(&key)
                    .seal_in_place(&nonce, &aad, &mut buffer)
                    .unwrap();
                assert_eq!(
                    &buffer[..8],
                    &[0xbd, 0x6d, 0x17, 0x9d, 0x3e, 0x83, 0xd4, 0x3b]
                );
                assert_eq!(
                    tag,
                    [
                        0xc0, 0x87, 0x59, 0x24, 0xc1, 0xc7, 0x98, 0x79, 0x47, 0xde, 0xaf, 0xd8,
                        0x78, 0x0a, 0xcf, 0x49
                    ]
                );
            }

            #[test]
            fn a_changed_byte_anywhere_fails_to_open() {
                let key = bytes::<32>(1);
                let nonce = bytes::<24>(2);
                let cipher = Engine::new(&key);
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

            #[test]
            fn its_own_nonces_seal_what_the_crate_seals_and_open_under_another_instance() {
                let key = bytes::<32>(3);
                let cipher = Engine::new(&key);
                let other = Engine::new(&key);
                let plaintext = b"a state sealed under this instance's own nonces";
                for _ in 0..3 {
                    let nonce = cipher.next_nonce();
                    let mut buffer = plaintext.to_vec();
                    let tag = cipher.seal_in_place(&nonce, b"t1.", &mut buffer).unwrap();
                    let mut sealed = buffer.clone();
                    sealed.extend_from_slice(&tag);
                    assert_eq!(sealed, reference(&key, &nonce, b"t1.", plaintext));

                    let mut opened = buffer;
                    other
                        .open_in_place(&nonce, b"t1.", &mut opened, &tag)
                        .unwrap();
                    assert_eq!(opened, plaintext);
                }
            }

            #[test]
            fn nonces_share_the_instance_prefix_and_never_repeat() {
                let key = bytes::<32>(4);
                let cipher = Engine::new(&key);
                let nonces: Vec<[u8; 24]> = (0..1000).map(|_| cipher.next_nonce()).collect();
                let distinct: std::collections::HashSet<_> = nonces.iter().collect();
                assert_eq!(distinct.len(), nonces.len());
                let prefix = |nonce: &[u8; 24]| nonce[..PREFIX_LEN].to_vec();
                assert!(nonces.iter().all(|n| prefix(n) == prefix(&nonces[0])));
                // Another instance of the same key draws its own prefix.
                assert_ne!(prefix(&Engine::new(&key).next_nonce()), prefix(&nonces[0]));
            }
        }
    };
}

engine_tests!(
    chacha20poly1305_crate,
    super::super::rustcrypto::XChaCha20Poly1305
);
#[cfg(feature = "seal-ring")]
engine_tests!(ring_engine, super::super::ring::XChaCha20Poly1305);
