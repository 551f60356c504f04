//! tern's `t1.` token: confidentiality, integrity, strict spelling, keys and rotation.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use super::*;

const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn round_trip(payload: &[u8]) {
    let keys = ring(&[SECRET_A]);
    let token = keys.seal(payload).unwrap();
    assert_eq!(keys.unseal(&token).unwrap(), payload);
}

/// The raw bytes of a token, for surgery on one region.
fn raw(token: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(token.strip_prefix(TOKEN_PREFIX).unwrap())
        .unwrap()
}

fn respell(raw: &[u8]) -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
}

#[test]
fn round_trip_of_an_empty_payload() {
    round_trip(b"");
}

#[test]
fn round_trip_of_an_ascii_payload() {
    round_trip(b"step=2;region=eu-west-1");
}

#[test]
fn round_trip_of_a_multibyte_payload() {
    round_trip("région 日本語 😀".as_bytes());
}

#[test]
fn round_trip_of_a_binary_payload() {
    round_trip(&(0..=255u8).chain((0..=255u8).rev()).collect::<Vec<_>>());
}

#[test]
fn round_trip_of_a_64_kib_payload_under_a_raised_cap() {
    // The cap measures the token, which is 4/3 of the payload plus overhead, so a 64 KiB
    // state needs the cap raised; the default refuses it rather than truncating.
    let payload: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
    let keys = ring(&[SECRET_A]).with_max_token_len(Keyring::token_len(payload.len()));
    let token = keys.seal(&payload).unwrap();
    assert_eq!(keys.unseal(&token).unwrap(), payload);
    assert_eq!(
        ring(&[SECRET_A]).seal(&payload).unwrap_err().reason(),
        SealFailureReason::TooLarge
    );
}

#[test]
fn the_largest_payload_under_the_default_cap_round_trips() {
    let keys = ring(&[SECRET_A]);
    let mut len = DEFAULT_MAX_TOKEN_LEN;
    while Keyring::token_len(len) > DEFAULT_MAX_TOKEN_LEN {
        len -= 1;
    }
    let payload = vec![7u8; len];
    let token = keys.seal(&payload).unwrap();
    assert!(token.len() <= DEFAULT_MAX_TOKEN_LEN);
    assert_eq!(keys.unseal(&token).unwrap(), payload);
    assert!(keys.seal(&vec![7u8; len + 1]).is_err());
}

#[test]
fn token_length_is_predicted_exactly() {
    let keys = ring(&[SECRET_A]);
    for len in 0..100 {
        assert_eq!(
            keys.seal(&vec![0; len]).unwrap().len(),
            Keyring::token_len(len)
        );
    }
}

#[test]
fn two_seals_of_one_payload_differ() {
    let keys = ring(&[SECRET_A]);
    let first = keys.seal(b"same").unwrap();
    let second = keys.seal(b"same").unwrap();
    assert_ne!(first, second);
    assert_ne!(raw(&first)[4..28], raw(&second)[4..28], "nonces differ");
}

#[test]
fn the_token_contains_no_plaintext_in_any_encoding() {
    let keys = ring(&[SECRET_A]);
    let secret = b"the-launch-code-is-0000-and-the-region-is-eu-west-1";
    let token = keys.seal(secret).unwrap();
    let needle = &secret[8..40];
    let lower = |s: &str| s.to_ascii_lowercase();
    let mut encodings = vec![
        String::from_utf8(needle.to_vec()).unwrap(),
        needle.iter().map(|b| format!("{b:02x}")).collect(),
        needle.iter().map(|b| format!("{b:02X}")).collect(),
    ];
    // Base64 of a substring depends on its alignment; trim the unstable edge characters.
    for shift in 0..3 {
        for engine in [&STANDARD, &URL_SAFE, &STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&needle[shift..]);
            encodings.push(encoded[4..encoded.len() - 4].to_owned());
        }
    }
    for encoding in encodings {
        assert!(!token.contains(&encoding), "{encoding}");
        assert!(!lower(&token).contains(&lower(&encoding)), "{encoding}");
    }
    assert!(!raw(&token).windows(needle.len()).any(|w| w == needle));
}

#[test]
fn corrupting_any_region_is_rejected() {
    let keys = ring(&[SECRET_A]);
    let token = keys.seal(b"region corruption").unwrap();
    let bytes = raw(&token);
    let regions = [
        ("key id", 0..4, RejectReason::UnknownKey),
        ("nonce", 4..28, RejectReason::Seal),
        ("ciphertext", 28..bytes.len() - 16, RejectReason::Seal),
        ("tag", bytes.len() - 16..bytes.len(), RejectReason::Seal),
    ];
    for (name, range, expected) in regions {
        for index in range {
            for bit in [0x01, 0x80] {
                let mut corrupt = bytes.clone();
                corrupt[index] ^= bit;
                let err = keys.unseal(&respell(&corrupt)).unwrap_err();
                assert_eq!(err.reason(), expected, "{name} byte {index}");
            }
        }
    }
    for prefix in ["t2.", "T1.", "t1-", "u1.", "t1,"] {
        let other = format!("{prefix}{}", &token[TOKEN_PREFIX.len()..]);
        assert_eq!(
            reason(keys.unseal(&other)),
            RejectReason::Malformed,
            "{prefix}"
        );
    }
    assert!(keys.unseal(&token).is_ok(), "the original still verifies");
}

#[test]
fn truncated_tokens_are_rejected() {
    let keys = ring(&[SECRET_A]);
    let token = keys.seal(b"truncate me").unwrap();
    for len in 0..token.len() {
        assert!(keys.unseal(&token[..len]).is_err(), "length {len}");
    }
}

#[test]
fn every_alternative_spelling_of_a_valid_token_is_rejected() {
    let keys = ring(&[SECRET_A]);
    // Payload lengths 0, 1 and 2 give every raw-length residue mod 3, so every kind of
    // final base64 character (with 0, 2 or 4 unused bits) is covered.
    for payload_len in 0..3 {
        let token = keys.seal(&vec![0x5a; payload_len]).unwrap();
        let (body, last) = token.split_at(token.len() - 1);
        let mut accepted = 0;
        for substitute in ALPHABET.chars().chain("+/=.~ \u{e9}".chars()) {
            let spelling = format!("{body}{substitute}");
            if keys.unseal(&spelling).is_ok() {
                accepted += 1;
                assert_eq!(
                    spelling, token,
                    "only the original final character verifies"
                );
            }
        }
        assert_eq!(accepted, 1, "original final character {last:?}");
        for padding in ["=", "==", "==="] {
            assert!(keys.unseal(&format!("{token}{padding}")).is_err());
        }
        for position in [0, 1, 2, 3, 4, token.len() / 2, token.len() - 1, token.len()] {
            for space in [" ", "\n", "\r\n", "\t", "\u{a0}"] {
                let mut spelling = token.clone();
                spelling.insert_str(position, space);
                assert!(keys.unseal(&spelling).is_err(), "{space:?} at {position}");
            }
        }
        for prefix in ["", "t1", "T1.", "t1..", "t0.", "t2.", " t1.", "t1.t1."] {
            let spelling = format!("{prefix}{}", &token[TOKEN_PREFIX.len()..]);
            assert!(keys.unseal(&spelling).is_err(), "prefix {prefix:?}");
        }
        let standard_alphabet = token.replace('-', "+").replace('_', "/");
        if standard_alphabet != token {
            assert!(keys.unseal(&standard_alphabet).is_err());
        }
        assert!(keys.unseal(&token).is_ok());
    }
}

#[test]
fn a_transplanted_key_id_is_rejected() {
    let keys = ring(&[SECRET_A, SECRET_B]);
    let token_b = ring(&[SECRET_B]).seal(b"x").unwrap();
    let token_a = keys.seal(b"x").unwrap();
    let mut transplanted = raw(&token_a);
    transplanted[..4].copy_from_slice(&raw(&token_b)[..4]);
    assert_eq!(
        reason(keys.unseal(&respell(&transplanted))),
        RejectReason::Seal
    );
}

#[test]
fn a_token_under_an_unknown_key_is_rejected() {
    let token = ring(&[SECRET_A]).seal(b"x").unwrap();
    assert_eq!(
        reason(ring(&[SECRET_B, SECRET_C]).unseal(&token)),
        RejectReason::UnknownKey
    );
}

#[test]
fn two_ephemeral_rings_cannot_read_each_other() {
    let first = Keyring::ephemeral().unwrap();
    let second = Keyring::ephemeral().unwrap();
    let token = first.seal(b"x").unwrap();
    assert!(first.unseal(&token).is_ok());
    assert!(second.unseal(&token).is_err());
}

#[test]
fn two_ephemeral_policies_cannot_read_each_other() {
    let first = RequestStateSecurity::ephemeral().build(None).unwrap();
    let second = RequestStateSecurity::ephemeral().build(None).unwrap();
    let request = RequestBinding::tool("t", None);
    let token = first.seal(&request, b"x").unwrap();
    assert_eq!(first.verify(&token, &request).unwrap(), b"x");
    assert_eq!(
        reason(second.verify(&token, &request)),
        RejectReason::UnknownKey
    );
}

#[test]
fn rotation_phase_1_new_key_verifies_while_old_still_seals() {
    const OLD: [u8; 32] = SECRET_A;
    const NEW: [u8; 32] = SECRET_B;
    let not_yet_rotated = ring(&[OLD]);
    let phase1 = ring(&[OLD, NEW]);
    let token = phase1.seal(b"p1").unwrap();
    assert_eq!(
        raw(&token)[..4],
        raw(&not_yet_rotated.seal(b"").unwrap())[..4]
    );
    assert!(not_yet_rotated.unseal(&token).is_ok(), "OLD still seals");
    assert!(phase1.unseal(&not_yet_rotated.seal(b"x").unwrap()).is_ok());
    assert!(
        phase1.unseal(&ring(&[NEW]).seal(b"x").unwrap()).is_ok(),
        "NEW verifies"
    );
}

#[test]
fn rotation_phase_2_new_key_seals_and_old_tokens_keep_verifying() {
    const OLD: [u8; 32] = SECRET_A;
    const NEW: [u8; 32] = SECRET_B;
    let phase1 = ring(&[OLD, NEW]);
    let phase2 = ring(&[NEW, OLD]);
    let in_flight = phase1.seal(b"old").unwrap();
    let fresh = phase2.seal(b"new").unwrap();
    assert_eq!(phase2.unseal(&in_flight).unwrap(), b"old");
    assert_eq!(
        phase1.unseal(&fresh).unwrap(),
        b"new",
        "laggards verify NEW"
    );
    assert_eq!(raw(&fresh)[..4], raw(&ring(&[NEW]).seal(b"").unwrap())[..4]);
}

#[test]
fn rotation_phase_3_retires_the_old_key() {
    const OLD: [u8; 32] = SECRET_A;
    const NEW: [u8; 32] = SECRET_B;
    let phase3 = ring(&[NEW]);
    let from_phase2 = ring(&[NEW, OLD]).seal(b"new").unwrap();
    let retired = ring(&[OLD, NEW]).seal(b"old").unwrap();
    assert_eq!(phase3.unseal(&from_phase2).unwrap(), b"new");
    assert_eq!(reason(phase3.unseal(&retired)), RejectReason::UnknownKey);
}

#[test]
fn oversize_tokens_are_rejected_on_unseal() {
    let keys = ring(&[SECRET_A]).with_max_token_len(200);
    let big = ring(&[SECRET_A]).seal(&[1; 200]).unwrap();
    assert_eq!(reason(keys.unseal(&big)), RejectReason::TooLarge);
    let huge = format!("{TOKEN_PREFIX}{}", "A".repeat(10 * DEFAULT_MAX_TOKEN_LEN));
    assert_eq!(
        reason(ring(&[SECRET_A]).unseal(&huge)),
        RejectReason::TooLarge
    );
}

#[test]
fn oversize_tokens_are_refused_on_seal() {
    let keys = ring(&[SECRET_A]).with_max_token_len(200);
    let fits = (0..)
        .take_while(|&n| Keyring::token_len(n) <= 200)
        .last()
        .unwrap();
    assert!(keys.seal(&vec![0; fits]).is_ok());
    let err = keys.seal(&vec![0; fits + 1]).unwrap_err();
    assert_eq!(err.reason(), SealFailureReason::TooLarge);
}

#[test]
fn garbage_input_is_rejected_without_panicking() {
    let keys = ring(&[SECRET_A]);
    let long = "t1.".to_owned() + &"_".repeat(1000);
    for garbage in [
        "", "t", "t1.", "t1.A", "t1.AA", "t1.AAA", "t1.AAAA", "t1.é", "t1.\u{0}", "💥", &long,
    ] {
        assert!(keys.unseal(garbage).is_err(), "{garbage:?}");
    }
}

#[test]
fn key_ring_rejects_an_empty_ring() {
    let err = Keyring::new(Vec::<Vec<u8>>::new()).unwrap_err();
    assert!(matches!(err, crate::ConfigError::EmptyKeyRing));
    assert!(err.to_string().contains("generate_secret_hex"), "{err}");
}

#[test]
fn key_ring_rejects_a_short_secret_and_says_how_to_generate_one() {
    let err = Keyring::new([&SECRET_A[..], &[1u8; 31][..]]).unwrap_err();
    assert!(matches!(
        err,
        crate::ConfigError::KeyTooShort { index: 1, len: 31 }
    ));
    let message = err.to_string();
    assert!(message.contains("at least 32 bytes"), "{message}");
    assert!(
        message.contains("tern_mcp::seal::generate_secret_hex()"),
        "{message}"
    );
    assert!(
        Keyring::new([vec![9u8; 64]]).is_ok(),
        "longer secrets are fine"
    );
}

#[test]
fn key_ring_rejects_a_duplicate_secret() {
    let err = Keyring::new([SECRET_A, SECRET_B, SECRET_A]).unwrap_err();
    assert!(matches!(
        err,
        crate::ConfigError::DuplicateKey {
            first: 0,
            second: 2
        }
    ));
}

#[test]
fn policy_keys_surface_the_same_construction_errors() {
    assert!(RequestStateSecurity::keys(Vec::<[u8; 32]>::new()).is_err());
    assert!(RequestStateSecurity::keys([[0u8; 16]]).is_err());
    assert!(RequestStateSecurity::keys([SECRET_A, SECRET_A]).is_err());
}

#[test]
fn debug_never_shows_key_material() {
    let secret = generate_secret();
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let keys = Keyring::new([secret]).unwrap();
    let policy = RequestStateSecurity::keys([secret]).unwrap();
    let sealer = RequestStateSecurity::keys([secret])
        .unwrap()
        .build(Some("svc"))
        .unwrap();
    for shown in [
        format!("{keys:?}"),
        format!("{keys:#?}"),
        format!("{policy:?}"),
        format!("{sealer:?}"),
    ] {
        assert!(!shown.contains(&hex), "{shown}");
        assert!(!shown.contains(&format!("{:?}", &secret[..4])), "{shown}");
        assert!(!shown.to_lowercase().contains("key:"), "{shown}");
    }
    assert!(format!("{keys:?}").starts_with("Keyring { key_ids: [\""));
}

#[test]
fn key_ids_follow_the_secrets_and_a_key_keeps_its_id_across_rings() {
    let (old, new) = ([7u8; 32], [9u8; 32]);
    let rotating: Vec<String> = Keyring::new([new, old]).unwrap().key_ids().collect();
    let before: Vec<String> = Keyring::new([old]).unwrap().key_ids().collect();
    assert_eq!(rotating.len(), 2);
    assert_ne!(rotating[0], rotating[1]);
    assert_eq!(rotating[1], before[0]);
    assert!(
        rotating
            .iter()
            .all(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()))
    );
}
