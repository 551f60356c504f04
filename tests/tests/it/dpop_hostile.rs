//! DPoP at tern's resource server, from a hostile holder of a bound token (#60): an
//! EdDSA proof accepted for a token bound to its RFC 8037 thumbprint (and not for one
//! bound to the text jsonwebtoken hashes); a `jwk` whose `kty` and `crv` disagree
//! answered 401 with the connection still serving; a flood of fresh proofs from one key
//! held to that key's share of the seen-`jti` store, so another user's first proof is
//! still accepted; `jti`s remembered per key; `htu` compared after RFC 3986
//! normalization, its trailing slash significant. Tokens here are `bound:<jkt>`, taken
//! by a verifier that binds each to the thumbprint it names; proofs are signed by hand.

use crate::http_support::{self, Raw};

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use sha2::Digest as _;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::http::{Dpop, HttpServer, ProtectedResource};
use tern_mcp::transport::BoxFuture;

/// The resource's public URL: what proofs name as `htu`.
const RESOURCE: &str = "https://rs.example/mcp";

/// Takes `bound:<jkt>` as a token bound to the key whose thumbprint is `jkt`.
struct Bound;

impl TokenVerifier for Bound {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let said = token
            .strip_prefix("bound:")
            .map(|jkt| {
                AuthInfo::new("dpop-client")
                    .with_subject(jkt)
                    .with_scopes(["files:read"])
                    .with_dpop_jkt(jkt)
            })
            .ok_or_else(|| AuthError::InvalidToken("not a bound: token".into()));
        Box::pin(async move { said })
    }
}

/// The notes server behind `Bound`, checking proofs by `dpop`'s rules.
async fn serve(dpop: Dpop) -> SocketAddr {
    let http = HttpServer::new(crate::oauth_server::notes().server().unwrap())
        .token_verifier(Arc::new(Bound))
        .dpop(dpop)
        .protected_resource(
            ProtectedResource::new(RESOURCE, "https://auth.test").with_scopes(["files:read"]),
        );
    http_support::serve(http).await
}

/// A signing key, its public half as a JWK, and that JWK's RFC 7638 thumbprint
/// (computed here, from the RFC's text, not by the code under test).
struct Key {
    encoding: EncodingKey,
    alg: Algorithm,
    jwk: Value,
    thumbprint: String,
}

impl Key {
    /// A P-256 key made from `seed`.
    fn p256(seed: &str) -> Self {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = p256::SecretKey::from_slice(&sha2::Sha256::digest(seed.as_bytes())).unwrap();
        let point = secret.public_key().to_encoded_point(false);
        let x = URL_SAFE_NO_PAD.encode(point.x().unwrap());
        let y = URL_SAFE_NO_PAD.encode(point.y().unwrap());
        Self {
            encoding: EncodingKey::from_ec_der(secret.to_pkcs8_der().unwrap().as_bytes()),
            alg: Algorithm::ES256,
            thumbprint: hash(&format!(
                r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#
            )),
            jwk: json!({"kty": "EC", "crv": "P-256", "x": x, "y": y}),
        }
    }

    /// RFC 8037 Appendix A.1's Ed25519 key.
    fn ed25519() -> Self {
        let seed = URL_SAFE_NO_PAD
            .decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
            .unwrap();
        // PKCS#8 v1: the Ed25519 algorithm identifier, then the seed as an octet string.
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend_from_slice(&seed);
        let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
        Self {
            encoding: EncodingKey::from_ed_der(&der),
            alg: Algorithm::EdDSA,
            // RFC 8037 Appendix A.3.
            thumbprint: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k".into(),
            jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": x}),
        }
    }

    /// The token bound to this key.
    fn token(&self) -> String {
        format!("bound:{}", self.thumbprint)
    }

    /// A fresh proof by this key for `htu`, presenting `token`.
    fn proof(&self, htu: &str, token: &str) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let jti = format!("jti-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.proof_with(&self.jwk, htu, token, &jti)
    }

    /// A proof by this key carrying `jwk` in its header, for `htu`, presenting `token`.
    fn proof_with(&self, jwk: &Value, htu: &str, token: &str, jti: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let header = json!({"typ": "dpop+jwt", "alg": format!("{:?}", self.alg), "jwk": jwk});
        let claims = json!({"jti": jti, "htm": "POST", "htu": htu, "iat": now,
            "ath": URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()))});
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature =
            jsonwebtoken::crypto::sign(message.as_bytes(), &self.encoding, self.alg).unwrap();
        format!("{message}.{signature}")
    }
}

/// base64url(SHA-256(`text`)).
fn hash(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(text.as_bytes()))
}

/// The headers of a `read` call presenting `token` with `proof`.
fn call_headers(token: &str, proof: &str) -> Vec<(String, String)> {
    let mut headers = http_support::mcp_headers("tools/call", Some("read"));
    headers.push(("Authorization".into(), format!("DPoP {token}")));
    headers.push(("DPoP".into(), proof.into()));
    headers
}

fn read_body() -> String {
    http_support::body(7, "tools/call", json!({"name": "read", "arguments": {}}))
}

/// Calls `read` on its own connection, presenting `token` with `proof`.
async fn call(addr: SocketAddr, token: &str, proof: &str) -> Raw {
    http_support::post(addr, &call_headers(token, proof), &read_body()).await
}

/// What a refusal said in its `WWW-Authenticate`.
fn said(answer: &Raw) -> &str {
    answer.header("www-authenticate").unwrap_or_default()
}

/// One keep-alive connection, for several requests in turn.
struct Conn(http_support::KeepAlive);

impl Conn {
    async fn open(addr: SocketAddr) -> Self {
        Self(http_support::KeepAlive::open(addr).await)
    }

    /// Calls `read` presenting `token` with `proof`; `None` if the connection closed
    /// without a whole answer.
    async fn call(&mut self, token: &str, proof: &str) -> Option<Raw> {
        let headers = call_headers(token, proof);
        self.0.send("POST", &headers, &read_body()).await
    }
}

#[tokio::test]
async fn an_eddsa_proof_is_accepted_for_its_rfc_8037_thumbprint_and_not_for_the_wrong_text() {
    let addr = serve(Dpop::new()).await;
    let key = Key::ed25519();
    let accepted = call(addr, &key.token(), &key.proof(RESOURCE, &key.token())).await;
    assert_eq!(accepted.status, 200, "{accepted:?}");
    assert!(accepted.body.contains("read by kPrK_"), "{}", accepted.body);

    // The text jsonwebtoken 10.3 hashes for an OKP key: `crv` unquoted.
    let x = key.jwk["x"].as_str().unwrap();
    let wrong = format!(
        "bound:{}",
        hash(&format!(r#"{{crv:"Ed25519","kty":"OKP","x":"{x}"}}"#))
    );
    let refused = call(addr, &wrong, &key.proof(RESOURCE, &wrong)).await;
    assert_eq!(refused.status, 401);
    assert!(
        said(&refused).contains("invalid_dpop_proof"),
        "{}",
        said(&refused)
    );
    assert!(
        said(&refused).contains("not bound to"),
        "{}",
        said(&refused)
    );
    // What the challenge offers is what is accepted.
    assert!(said(&refused).contains("EdDSA"), "{}", said(&refused));
}

#[tokio::test]
async fn a_jwk_whose_kty_and_crv_disagree_is_refused_and_the_connection_serves_on() {
    let addr = serve(Dpop::new()).await;
    let ec = Key::p256("kty EC, crv Ed25519");
    let ed = Key::ed25519();
    let mut ec_as_ed = ec.jwk.clone();
    ec_as_ed["crv"] = "Ed25519".into();
    let mut ed_as_p256 = ed.jwk.clone();
    ed_as_p256["crv"] = "P-256".into();
    let mut conn = Conn::open(addr).await;
    for (key, jwk) in [(&ec, ec_as_ed), (&ed, ed_as_p256)] {
        let token = key.token();
        let proof = key.proof_with(&jwk, RESOURCE, &token, &format!("mismatch {jwk}"));
        let answer = conn.call(&token, &proof).await;
        let answer = answer.expect("an answer, not a closed connection");
        assert_eq!(answer.status, 401, "{jwk}");
        assert!(
            said(&answer).contains("invalid_dpop_proof"),
            "{}",
            said(&answer)
        );
        assert!(said(&answer).contains("does not fit"), "{}", said(&answer));
    }
    let token = ec.token();
    let served = conn
        .call(&token, &ec.proof(RESOURCE, &token))
        .await
        .unwrap();
    assert_eq!(served.status, 200, "{served:?}");
}

#[tokio::test]
async fn a_flood_from_one_key_stops_at_its_share_and_another_users_first_proof_is_accepted() {
    // 40 proofs in all, a tenth of them (4) of any one key.
    let addr = serve(Dpop::new().max_proofs(40)).await;
    let flooder = Key::p256("flooder");
    let token = flooder.token();
    let mut conn = Conn::open(addr).await;
    let mut accepted = 0;
    for _ in 0..60 {
        let answer = conn
            .call(&token, &flooder.proof(RESOURCE, &token))
            .await
            .unwrap();
        match answer.status {
            200 => accepted += 1,
            _ => assert!(
                said(&answer).contains("too many proofs from this key"),
                "{}",
                said(&answer)
            ),
        }
    }
    assert_eq!(accepted, 4, "the flooding key's share");

    let user = Key::p256("another user");
    let first = call(addr, &user.token(), &user.proof(RESOURCE, &user.token())).await;
    assert_eq!(first.status, 200, "{}", said(&first));
}

#[tokio::test]
async fn a_jti_is_one_keys_and_a_replay_of_the_same_key_and_jti_is_refused() {
    let addr = serve(Dpop::new()).await;
    let alice = Key::p256("alice");
    let bob = Key::p256("bob");
    let from_alice = alice.proof_with(&alice.jwk, RESOURCE, &alice.token(), "same-jti");
    let from_bob = bob.proof_with(&bob.jwk, RESOURCE, &bob.token(), "same-jti");
    assert_eq!(call(addr, &alice.token(), &from_alice).await.status, 200);
    assert_eq!(call(addr, &bob.token(), &from_bob).await.status, 200);

    let replayed = call(addr, &alice.token(), &from_alice).await;
    assert_eq!(replayed.status, 401);
    assert!(
        said(&replayed).contains("used before"),
        "{}",
        said(&replayed)
    );
    // A fresh proof by alice with the jti again: the same (key, jti).
    let again = alice.proof_with(&alice.jwk, RESOURCE, &alice.token(), "same-jti");
    let refused = call(addr, &alice.token(), &again).await;
    assert!(said(&refused).contains("used before"), "{}", said(&refused));
}

#[tokio::test]
async fn htu_compares_after_normalization_with_its_trailing_slash_significant() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("htu");
    let token = key.token();
    for htu in [
        "HTTPS://RS.Example:443/mcp",
        "https://rs.example/mcp?q=1#f",
        "https://rs.example/a/../%6Dcp",
    ] {
        let answer = call(addr, &token, &key.proof(htu, &token)).await;
        assert_eq!(answer.status, 200, "{htu}: {}", said(&answer));
    }
    for htu in [
        "https://rs.example/mcp/",
        "https://rs.example/MCP",
        "http://rs.example/mcp",
        "https://rs.example:8443/mcp",
    ] {
        let answer = call(addr, &token, &key.proof(htu, &token)).await;
        assert_eq!(answer.status, 401, "{htu}");
        assert!(
            said(&answer).contains("the proof is for"),
            "{}",
            said(&answer)
        );
    }
}

/// The measured figure for #60: one token floods fresh proofs for 60 s (from two
/// connections, the machine's two cores being shared with the server), and a second
/// user's first proof is sent while the flood goes on. Prints the counts. The store is
/// 2,000 proofs (200 of one key), so that a debug build's flood (a few thousand proofs a
/// minute) passes the whole store, as the one reported in #60 passed the default 100,000.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "takes a minute: run it for the figure"]
async fn a_second_users_first_proof_during_a_minute_long_flood_from_one_token() {
    let addr = serve(Dpop::new().max_proofs(2_000)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let flooder = Arc::new(Key::p256("flooder"));
    let (sent, accepted) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut floods = Vec::new();
    for _ in 0..2 {
        let (stop, flooder) = (Arc::clone(&stop), Arc::clone(&flooder));
        let (sent, accepted) = (Arc::clone(&sent), Arc::clone(&accepted));
        floods.push(tokio::spawn(async move {
            let token = flooder.token();
            let mut conn = Conn::open(addr).await;
            while !stop.load(Ordering::Relaxed) {
                let Some(answer) = conn.call(&token, &flooder.proof(RESOURCE, &token)).await else {
                    break;
                };
                sent.fetch_add(1, Ordering::Relaxed);
                if answer.status == 200 {
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    let user = Key::p256("second user");
    let first = call(addr, &user.token(), &user.proof(RESOURCE, &user.token())).await;
    stop.store(true, Ordering::Relaxed);
    for flood in floods {
        flood.await.unwrap();
    }
    let (sent, accepted) = (
        sent.load(Ordering::Relaxed),
        accepted.load(Ordering::Relaxed),
    );
    println!(
        "flood: {sent} proofs sent in 60 s from one key, {accepted} accepted, {} refused; \
         the second user's first proof, sent during it: {} {}",
        sent - accepted,
        first.status,
        said(&first)
    );
    assert_eq!(first.status, 200, "{}", said(&first));
    assert!(accepted <= 200, "one key's share of the store");
}
