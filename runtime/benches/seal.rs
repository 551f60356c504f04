//! Cost of sealing and verifying one round's `requestState`, against the bare AEAD floor.
//!
//! Run with `cargo bench -p tern-mcp --bench seal` (the default engine, HChaCha20 and ring) or
//! with `--no-default-features --features stdio` (the pure-Rust `chacha20poly1305` crate). The state is ~160 bytes and
//! travels with its full claims (time, request, arguments digest, audience), as on the wire.

// A benchmark should stop loudly on a broken setup rather than measure nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tern_mcp::auth::AuthInfo;
use tern_mcp::seal::{Principal, RequestBinding, RequestStateSecurity};

const STATE_LEN: usize = 160;

fn state() -> Vec<u8> {
    // Shaped like a real handler state: a small JSON object.
    let mut state =
        br#"{"step":2,"answers":{"region":"eu-west-1","size":"large"},"draft":""#.to_vec();
    state.resize(STATE_LEN - 2, b'x');
    state.extend_from_slice(br#""}"#);
    state
}

fn bench_seal(c: &mut Criterion) {
    let sealer = RequestStateSecurity::keys([[0x42u8; 32]])
        .unwrap()
        .build(Some("deployer"))
        .unwrap();
    let arguments = serde_json::json!({"name": "orders", "region": "eu-west-1", "replicas": 3});
    let request = RequestBinding::tool("provision", arguments.as_object());
    let state = state();
    let token = sealer.seal(&request, &state).unwrap();
    assert_eq!(sealer.verify(&token, &request).unwrap(), state);

    let mut group = c.benchmark_group("seal");
    group.throughput(Throughput::Bytes(STATE_LEN as u64));
    group.bench_function("seal", |b| {
        b.iter(|| sealer.seal(black_box(&request), black_box(&state)).unwrap())
    });
    group.bench_function("unseal", |b| {
        b.iter(|| {
            sealer
                .verify(black_box(&token), black_box(&request))
                .unwrap()
        })
    });
    group.bench_function("seal+unseal", |b| {
        b.iter(|| {
            let token = sealer.seal(black_box(&request), black_box(&state)).unwrap();
            sealer.verify(&token, black_box(&request)).unwrap()
        })
    });

    let alice = Principal::from_auth(
        &AuthInfo::new("https://client.example/app")
            .with_issuer("https://idp.example")
            .with_subject("alice"),
    );
    let authenticated = request.with_principal(Some(&alice));
    group.bench_function("seal+unseal with principal", |b| {
        b.iter(|| {
            let token = sealer
                .seal(black_box(&authenticated), black_box(&state))
                .unwrap();
            sealer.verify(&token, black_box(&authenticated)).unwrap()
        })
    });

    // The floor: XChaCha20-Poly1305 alone over the same state, no claims, no encoding,
    // through the chacha20poly1305 crate as tern's default engine uses it.
    let key = [0x42u8; 32];
    let extended_nonce = [7u8; 24];
    let cipher = XChaCha20Poly1305::new(&Key::from(key));
    let nonce = XNonce::from(extended_nonce);
    group.bench_function("bare aead encrypt+decrypt (chacha20poly1305 crate)", |b| {
        b.iter(|| {
            let mut buffer = black_box(&state).clone();
            cipher
                .encrypt_in_place(&nonce, b"t1.", &mut buffer)
                .unwrap();
            cipher
                .decrypt_in_place(&nonce, b"t1.", &mut buffer)
                .unwrap();
            buffer
        })
    });
    #[cfg(feature = "seal-ring")]
    ring_floor(&mut group, &state, key, extended_nonce);
    group.finish();
}

/// The `seal-ring` engine's floor, built the way runtime/src/seal/aead/ring.rs builds it:
/// HChaCha20 of the key and the first 16 nonce bytes, then ring's IETF ChaCha20-Poly1305
/// under that subkey, the subkey derived for each direction as tern does for each message.
#[cfg(feature = "seal-ring")]
fn ring_floor(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    state: &[u8],
    key: [u8; 32],
    extended_nonce: [u8; 24],
) {
    use chacha20::{R20, hchacha};
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

    let ietf = |nonce: &[u8; 24]| {
        let head: [u8; 16] = nonce[..16].try_into().unwrap();
        let subkey = hchacha::<R20>(&key.into(), &head.into());
        let mut ietf_nonce = [0u8; 12];
        ietf_nonce[4..].copy_from_slice(&nonce[16..]);
        (
            LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &subkey).unwrap()),
            Nonce::assume_unique_for_key(ietf_nonce),
        )
    };
    group.bench_function("bare aead encrypt+decrypt (seal-ring)", |b| {
        b.iter(|| {
            let mut buffer = black_box(state).to_vec();
            let (key, nonce) = ietf(black_box(&extended_nonce));
            let tag = key
                .seal_in_place_separate_tag(nonce, Aad::from(b"t1."), &mut buffer)
                .unwrap();
            let (key, nonce) = ietf(black_box(&extended_nonce));
            key.open_in_place_separate_tag(nonce, Aad::from(b"t1."), tag, &mut buffer, 0..)
                .unwrap();
            buffer
        })
    });
}

criterion_group!(benches, bench_seal);
criterion_main!(benches);
