//! DPoP at tern's resource server attacked from outside (#60), knowing only its public
//! description: heads past the HTTP budget (a 1 MB proof, a `jwk` with a 1 MB `n`,
//! 10,000 fields) refused before any proof is read; the largest keys a head can carry,
//! every member of the wrong JSON type, duplicate members, non-canonical base64, points
//! off the curve, RSA exponents 0 and 1, a 16,384-bit modulus and a 1,024-bit key,
//! algorithm confusion (`none`, HS256 keyed with the public key, an alg that does not
//! fit the key), a private key or a `crit` extension in the header, claims of the wrong
//! type or out of range, JSON nested 20,000 deep, hostile `htu`s and `Host` or
//! forwarded fields, text echoed into the challenge that would forge its parameters or
//! the answer's fields, replays across keys, connections, HTTP versions, instances,
//! nonce windows and the remembering window, floods from many keys at once, schemes and
//! proof counts that do not fit, thumbprints that differ only in casing or padding, and
//! the longest window. Each refusal is a 401 with its `WWW-Authenticate: DPoP`
//! challenge, and the connection serves on. Five attacks broke the first build and are
//! fixed (a proof dated ahead replayed in its last second, a zero window, an Ed25519 key
//! of small order, a fractional `iat`, the longest window with a memory replay store);
//! two known limits stay `#[ignore]`d with what they show. Tokens are `bound:<jkt>` (bound to the key whose
//! thumbprint is `jkt`) or `plain:<who>` (bound to none); proofs are signed by hand
//! from header and claims text, so they can be as malformed as an attacker likes.

use crate::http_support::{self, Raw};

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use sha2::Digest as _;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::http::{Dpop, HostPolicy, HttpServer, ProtectedResource};
use tern_mcp::server::replay::MemoryReplayStore;
use tern_mcp::transport::BoxFuture;

/// The resource's public URL: what proofs name as `htu`.
const RESOURCE: &str = "https://rs.example/mcp";

/// Takes `bound:<jkt>` as bound to the key whose thumbprint is `jkt`, and `plain:<who>`
/// as an unbound token of `who`.
struct Verifier;

impl TokenVerifier for Verifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let info = |who: &str| {
            AuthInfo::new("attacker")
                .with_subject(who)
                .with_scopes(["files:read"])
        };
        let said = match (token.strip_prefix("bound:"), token.strip_prefix("plain:")) {
            (Some(jkt), _) => Ok(info(jkt).with_dpop_jkt(jkt)),
            (_, Some(who)) => Ok(info(who)),
            _ => Err(AuthError::InvalidToken("neither bound: nor plain:".into())),
        };
        Box::pin(async move { said })
    }
}

/// The notes server behind `Verifier`, checking proofs by `dpop`'s rules.
async fn serve(dpop: Dpop) -> SocketAddr {
    http_support::serve(notes(dpop)).await
}

fn notes(dpop: Dpop) -> HttpServer {
    HttpServer::new(crate::oauth_server::notes().server().unwrap())
        .token_verifier(Arc::new(Verifier))
        .dpop(dpop)
        .protected_resource(
            ProtectedResource::new(RESOURCE, "https://auth.test").with_scopes(["files:read"]),
        )
}

fn now() -> i64 {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(secs.as_secs()).unwrap()
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// base64url(SHA-256(`bytes`)).
fn hash(bytes: impl AsRef<[u8]>) -> String {
    b64(sha2::Sha256::digest(bytes.as_ref()))
}

/// The RFC 7638 thumbprint of `jwk`: its required members, in order, as they are
/// written (computed here from the RFC's text, not by the code under test).
fn thumbprint(jwk: &Value) -> String {
    let text = |name: &str| jwk[name].to_string();
    let canonical = match jwk["kty"].as_str() {
        Some("RSA") => format!(r#"{{"e":{},"kty":"RSA","n":{}}}"#, text("e"), text("n")),
        Some("OKP") => format!(r#"{{"crv":{},"kty":"OKP","x":{}}}"#, text("crv"), text("x")),
        _ => format!(
            r#"{{"crv":{},"kty":"EC","x":{},"y":{}}}"#,
            text("crv"),
            text("x"),
            text("y")
        ),
    };
    hash(canonical)
}

/// `bytes` in lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token bound to `jkt`.
fn bound(jkt: &str) -> String {
    format!("bound:{jkt}")
}

/// A fresh `jti`.
fn jti() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("attack-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The claims of a good proof for `token` at `htu`, made now.
fn claims(htu: &str, token: &str) -> Value {
    json!({"jti": jti(), "htm": "POST", "htu": htu, "iat": now(), "ath": hash(token)})
}

/// `header.claims.signature`, the first two as given (text, so it may be malformed),
/// the signature by `key` with `alg`.
fn signed(header: &str, claims: &str, key: &EncodingKey, alg: Algorithm) -> String {
    let message = format!("{}.{}", b64(header), b64(claims));
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, alg).unwrap();
    format!("{message}.{signature}")
}

/// A signing key and its public half as a JWK.
struct Key {
    encoding: EncodingKey,
    alg: Algorithm,
    jwk: Value,
}

impl Key {
    /// A P-256 key made from `seed`.
    fn p256(seed: &str) -> Self {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = p256::SecretKey::from_slice(&sha2::Sha256::digest(seed.as_bytes())).unwrap();
        let point = secret.public_key().to_encoded_point(false);
        Self {
            encoding: EncodingKey::from_ec_der(secret.to_pkcs8_der().unwrap().as_bytes()),
            alg: Algorithm::ES256,
            jwk: json!({"kty": "EC", "crv": "P-256",
                "x": b64(point.x().unwrap()), "y": b64(point.y().unwrap())}),
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
        Self {
            encoding: EncodingKey::from_ed_der(&der),
            alg: Algorithm::EdDSA,
            jwk: json!({"kty": "OKP", "crv": "Ed25519",
                "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
        }
    }

    /// One of the RSA keys below, signing with `alg`.
    fn rsa(der: &str, n: &str, alg: Algorithm) -> Self {
        Self {
            encoding: EncodingKey::from_rsa_der(&STANDARD.decode(der).unwrap()),
            alg,
            jwk: json!({"kty": "RSA", "e": "AQAB", "n": n}),
        }
    }

    fn thumbprint(&self) -> String {
        thumbprint(&self.jwk)
    }

    fn token(&self) -> String {
        bound(&self.thumbprint())
    }

    /// The header of a good proof by this key, carrying `jwk`.
    fn header(&self, jwk: &Value) -> Value {
        json!({"typ": "dpop+jwt", "alg": format!("{:?}", self.alg), "jwk": jwk})
    }

    /// A good proof by this key for `htu`, presenting its own token.
    fn proof(&self, htu: &str) -> String {
        self.proof_for(htu, &self.token())
    }

    /// A good proof by this key for `htu`, presenting `token`.
    fn proof_for(&self, htu: &str, token: &str) -> String {
        self.sign(&self.header(&self.jwk), &claims(htu, token))
    }

    /// `header` and `claims` signed by this key.
    fn sign(&self, header: &Value, claims: &Value) -> String {
        self.sign_text(&header.to_string(), &claims.to_string())
    }

    /// `header` and `claims` text signed by this key.
    fn sign_text(&self, header: &str, claims: &str) -> String {
        signed(header, claims, &self.encoding, self.alg)
    }
}

/// The headers of a `read` call presenting `token` (with `scheme`) and `proofs`.
fn headers(scheme: &str, token: &str, proofs: &[&str]) -> Vec<(String, String)> {
    let mut headers = http_support::mcp_headers("tools/call", Some("read"));
    headers.push(("Authorization".into(), format!("{scheme} {token}")));
    for proof in proofs {
        headers.push(("DPoP".into(), (*proof).into()));
    }
    headers
}

fn read_body() -> String {
    http_support::body(7, "tools/call", json!({"name": "read", "arguments": {}}))
}

/// Calls `read` on its own connection, presenting `token` with `proof`.
async fn call(addr: SocketAddr, token: &str, proof: &str) -> Raw {
    http_support::post(addr, &headers("DPoP", token, &[proof]), &read_body()).await
}

/// What a refusal said in its `WWW-Authenticate`.
fn said(answer: &Raw) -> &str {
    answer.header("www-authenticate").unwrap_or_default()
}

/// Asserts `answer` is a 401 whose `DPoP` challenge names `error`.
#[track_caller]
fn refused(answer: &Raw, error: &str, attack: &str) {
    assert_eq!(answer.status, 401, "{attack}: {answer:?}");
    let challenge = said(answer);
    assert!(
        challenge.starts_with(&format!("DPoP error=\"{error}\"")),
        "{attack}: {challenge}"
    );
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
        self.send("POST", &headers("DPoP", token, &[proof]), &read_body())
            .await
    }

    /// Sends one request; `None` if the connection closed without a whole answer.
    async fn send(&mut self, verb: &str, headers: &[(String, String)], body: &str) -> Option<Raw> {
        self.0.send(verb, headers, body).await
    }

    /// Sends each of `proofs` (what it attempts, the proof) with `token` and asserts
    /// each is refused with `error`, the connection serving on.
    async fn all_refused(&mut self, token: &str, proofs: &[(String, String)], error: &str) {
        for (attack, proof) in proofs {
            let answer = self.call(token, proof).await;
            let answer = answer.unwrap_or_else(|| panic!("{attack}: the connection closed"));
            refused(&answer, error, attack);
        }
    }

    /// Asserts a good proof by `key` is still served on this connection.
    async fn serves(&mut self, key: &Key) {
        let answer = self.call(&key.token(), &key.proof(RESOURCE)).await;
        let answer = answer.expect("an answer, not a closed connection");
        assert_eq!(answer.status, 200, "{}", said(&answer));
    }
}

/// A 2048-bit RSA key made for these tests: PKCS#1 DER, base64.
const RSA_2048: &str = "MIIEpAIBAAKCAQEAr1tUAFpsPf6aFPrA1zy3lmNmiNYY5EShlBQKJnvSzZae4x4H2+W1INr23SwuQovLIbdwDFzQ\
    r6cMrFrwXmbnV4qVfwj52FU8oMwToKIToP+5NMVDrqXsrQPM6bHWgt5FYItRCbN7XZZ5EQ+phtgu+gtPxRANGzc2\
    QF0YbTNyNrtsSRIta3wYAbhnhAl95F72YrhJPOx1PfNGg2nFIrlb6pQl9EAlsT1HhcLsyZN3yVkVYvfO6ZV2nehL\
    0vewKIih0b2sldkh7gEPhfIU/Dqm525iMG/d8OyPIgREMRoeDsYBB0O1HSOJmpSxxS0Vn48bRHZGgyrVqsGC7HuL\
    SZ7H1wIDAQABAoIBAAE/jbMB+pmwKt4RxymSugE1z7lIMHXuI/dX/DWvOxEGr/jboqk87VTFDzi9aia/mbnZVmat\
    67PBFbwLY3g6xOGj/i5wY0NTsRs9tnKbWSolb5dY4nqglMbkuHsCWsKo5cV2Mub2Qlru6sLhDdXG09Y6YO/rYjF3\
    TKGZa1ylSzW0LHnfYf5kk6+CsgoikSXlc/bHnFWfeVHqK/56PrTVVCcr2ujZIHofwN2uwoHGKoh+u88BZ6f+ojFT\
    TQA13Rcr0EM8n3bh5Fc+WVd0vwAsoqxovBDDCzvg9k3jakVEW1w3lfB5ONPHQQVU7fz9Mvr8zraTQQDxHipTW5y8\
    AHEBqKkCgYEA4ZUxboUmtg7WUME9jdGFppR2UFetxaw0KcB9ZwyW+Ucjl9HaXQn8eUY4jfbuXy9IIqz2QKfmB7IR\
    RPdugisatZI8C0ZcKaXwRHNi12lqoSizr0mfnGDK1CAUDy5/CZHPozymiaroSm+uOYCFnID6chM74ii6Sla0e5LO\
    etTKTDUCgYEAxwBmyf9u3aJBFG6P7mGdRa/f8uHn+izFpxsLvAMA5nrKQmZYuCEBXVhwg1pKBlHOjahXLPJpfPvv\
    3PKtMaklMYOTctgGeCjrXZABEpGhhOqYJrLZfhTIfK8PqdJefLgMcEPWHLl3mwkh17zvZQj5aonlrknyyNQYTXuI\
    IEVbDVsCgYEA2CQlSuoVn1c0Dgg5vErHLkcN3glEnSRUjrS68yPi/FInTm5qNb89w81+nre8ykL5cRAcmvLEuxbo\
    6RXTMrGuU88b7QmrgNRYFJ4iVJfS7TucfxWh8yni7cEWtz0rx7WIJ7YTM9En5TqAyuPUIZKLZQX82MOBS30sTULq\
    yFJeywkCgYB0PH/NrS2Mt6Fb1disXMgIVFpy/BELx+sLWHjaMMbt2PsbHbzkkCLD60yM7MggONh1VcbVsiJ7pozM\
    edNAFpRq/3e4tQXSWdRgqiR2PCokAQMuV3lCc9FHQtnbT81w+/AIAxelX4/FNuhVoz4RvdQxrqpBy1/MflZTq7wv\
    XVN50QKBgQCk0bmxaShf0x+ppTotOFaXCXS6c/s/noX91B2NqZ/VWMeNIwaX1HF1VUrIHccIg5pFsdWrnflTqEHr\
    OWygHjVN7aiwQdGbdP6Y7UcdfycSwfcrWFkRXyD21KKxfZgS0sHIRXc8sgZIp+gnyirzMcWg9NLy+T+Oh0f58Ij+\
    Q3OlQA==";
/// Its modulus, base64url.
const RSA_2048_N: &str = "r1tUAFpsPf6aFPrA1zy3lmNmiNYY5EShlBQKJnvSzZae4x4H2-W1INr23SwuQovLIbdwDFzQr6cMrFrwXmbnV4qVfwj52FU8oMwToKIToP-5NMVDrqXsrQPM6bHWgt5FYItRCbN7XZZ5EQ-phtgu-gtPxRANGzc2QF0YbTNyNrtsSRIta3wYAbhnhAl95F72YrhJPOx1PfNGg2nFIrlb6pQl9EAlsT1HhcLsyZN3yVkVYvfO6ZV2nehL0vewKIih0b2sldkh7gEPhfIU_Dqm525iMG_d8OyPIgREMRoeDsYBB0O1HSOJmpSxxS0Vn48bRHZGgyrVqsGC7HuLSZ7H1w";
/// A 1024-bit RSA key made for these tests: PKCS#1 DER, base64.
const RSA_1024: &str = "MIICXgIBAAKBgQDaYZaGIzVNLZSBN9sJThZEfgE7Mmp0qchYlvCQEprTJJwjf2akTvUwy3Yl0d5ZqKDH3TlE2grc\
    N3z/JKXoUIru+44RPV192wZZ1eyLqASNCjTCng9ykZr1EbijfFDz1c6ConA/XhNtY635JOg1ehuJKki+NvziV3nD\
    SWO3iDM2OQIDAQABAoGBAIuKshlSZBvF1U/gdhjzCa2Iapb99yJG3xskj+Ev0ji6+v5/yQGS5n/gcsVl3lOiOeKc\
    TJzfSvM+jaOnMlBJLwypInmX4JNgS7NTFo5+aiPuhX4sroIIZNOnpsGzq0CuRsKT+NtyAiinLxOPC0m4fpol1q7A\
    y5RRSKWY5cFWdxnRAkEA/4QYMC8CSGibJlttkmTxZqJeGtdqfZP8NzkfmI6VX9j9qRejyJ6ThUy6cu4ikwJYarkA\
    4e9F/97M0QbIvRY3BQJBANrLfGokoHQ+4iry+R5UsHZeYkYrO32HV3UiM7m4Lq7v3AuMY724UughyTS+db3HF9c1\
    STKu3MmrrtVDI9eGwKUCQQDRU6xlPP3HyDriz6ASgLPrezVRFA1f166WpyulVZo2LZSRxJYfMxpz6AoPQdv9R7yb\
    ofiBH/7ewe5ViBNIJTzpAkAsgIsTw9NnEYtLFRSamLszuErg3tZA2BBv4L8InW/RYTQunSWEZ0Nlt8mHEt479Yzh\
    1xLGXk7GLkdnVTqrEduJAkEA2dQsUYH+sPd6ZtK/6xn6Btshe7HwS3KzAmAjFOBhWXUhwuHwiEqeHeBPphx0Xkbl\
    0RAJugtNmG49+fc86Tw/7Q==";
/// Its modulus, base64url.
const RSA_1024_N: &str = "2mGWhiM1TS2UgTfbCU4WRH4BOzJqdKnIWJbwkBKa0yScI39mpE71MMt2JdHeWaigx905RNoK3Dd8_ySl6FCK7vuOET1dfdsGWdXsi6gEjQo0wp4PcpGa9RG4o3xQ89XOgqJwP14TbWOt-SToNXobiSpIvjb84ld5w0ljt4gzNjk";

/// The status of the answer to `request` sent whole on a fresh connection; 0 when the
/// connection closed without one (the server may stop reading a head past its budget).
async fn raw_status(addr: SocketAddr, request: &[u8]) -> u16 {
    let mut conn = Conn::open(addr).await;
    // A write the server stopped reading fails: the answer, if any, is what counts.
    let _ = conn.0.write(request).await;
    conn.0.answer().await.map_or(0, |answer| answer.status)
}

/// A `read` call's request with `fields` added to its head.
fn request_with(addr: SocketAddr, token: &str, fields: &str) -> Vec<u8> {
    let body = read_body();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (n, v) in http_support::mcp_headers("tools/call", Some("read")) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Authorization: DPoP {token}\r\n{fields}"));
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    head.into_bytes()
}

#[tokio::test]
async fn heads_past_the_budget_are_refused_before_any_proof_is_read_and_the_server_serves_on() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("oversized");
    let token = key.token();

    let mut padded = claims(RESOURCE, &token);
    padded["pad"] = "p".repeat(1 << 20).into();
    let megabyte_proof = key.sign(&key.header(&key.jwk), &padded);
    let huge_n = json!({"kty": "RSA", "e": "AQAB", "n": b64(vec![0xc5u8; 1 << 20])});
    let rsa = Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256);
    let huge_n_proof = rsa.sign(
        &rsa.header(&huge_n),
        &claims(RESOURCE, &bound(&thumbprint(&huge_n))),
    );
    let good = key.proof(RESOURCE);
    let fillers: String = (0..10_000)
        .map(|i| format!("X-Filler-{i}: f\r\n"))
        .collect();
    let proofs: String = (0..10_000).map(|_| format!("DPoP: {good}\r\n")).collect();
    let attacks = [
        (
            "a 1 MB proof",
            request_with(addr, &token, &format!("DPoP: {megabyte_proof}\r\n")),
        ),
        (
            "a jwk with a 1 MB n",
            request_with(
                addr,
                &bound(&thumbprint(&huge_n)),
                &format!("DPoP: {huge_n_proof}\r\n"),
            ),
        ),
        (
            "10,000 fields",
            request_with(addr, &token, &format!("DPoP: {good}\r\n{fillers}")),
        ),
        ("10,000 DPoP fields", request_with(addr, &token, &proofs)),
    ];
    for (attack, request) in attacks {
        let status = raw_status(addr, &request).await;
        assert!(
            status == 431 || status == 0,
            "{attack}: {status}, not 431 (Request Header Fields Too Large)"
        );
    }
    Conn::open(addr).await.serves(&key).await;
}

#[tokio::test]
async fn the_largest_keys_a_head_can_carry_are_refused_with_a_401() {
    let addr = serve(Dpop::new()).await;
    let rsa = Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256);
    let mut conn = Conn::open(addr).await;
    // A 240,000-bit modulus (40,000 characters: as large as a 64 KiB head holds), and a
    // 16,384-bit one, each with the top bit set.
    for (attack, bytes) in [("a 240,000-bit n", 30_000), ("a 16,384-bit n", 2_048)] {
        let mut n = vec![0xa7u8; bytes];
        n[0] = 0xf1;
        let jwk = json!({"kty": "RSA", "e": "AQAB", "n": b64(&n)});
        let token = bound(&thumbprint(&jwk));
        let header = rsa.header(&jwk).to_string();
        let message = format!(
            "{}.{}",
            b64(header),
            b64(claims(RESOURCE, &token).to_string())
        );
        let proof = format!("{message}.{}", b64([0x5au8; 256]));
        conn.all_refused(&token, &[(attack.into(), proof)], "invalid_dpop_proof")
            .await;
    }
    let rsa_key = Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256);
    conn.serves(&rsa_key).await;
}

#[tokio::test]
async fn rs256_ps256_es256_and_eddsa_proofs_are_each_accepted() {
    let addr = serve(Dpop::new()).await;
    let mut conn = Conn::open(addr).await;
    for key in [
        Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256),
        Key::rsa(RSA_2048, RSA_2048_N, Algorithm::PS256),
        Key::p256("each alg"),
        Key::ed25519(),
    ] {
        conn.serves(&key).await;
    }
}

#[tokio::test]
async fn every_header_member_of_the_wrong_json_type_is_refused_and_the_connection_serves_on() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("wrong types");
    let token = key.token();
    let good = key.header(&key.jwk);
    let jwk = key.jwk.clone();
    let with = |path: &[&str], value: Value| {
        let mut header = good.clone();
        match path {
            [member] => header[*member] = value,
            [outer, member] => header[*outer][*member] = value,
            _ => unreachable!(),
        }
        header
    };
    let without = |path: &[&str]| {
        let mut header = good.clone();
        let (object, member) = match path {
            [member] => (&mut header, *member),
            [outer, member] => (&mut header[*outer], *member),
            _ => unreachable!(),
        };
        object.as_object_mut().unwrap().remove(member);
        header
    };
    let headers = [
        ("jwk an array", with(&["jwk"], json!([jwk]))),
        ("jwk a string", with(&["jwk"], jwk.to_string().into())),
        ("jwk null", with(&["jwk"], Value::Null)),
        ("jwk a number", with(&["jwk"], 1.into())),
        ("jwk empty", with(&["jwk"], json!({}))),
        ("no jwk", without(&["jwk"])),
        ("typ a number", with(&["typ"], 1.into())),
        ("typ JWT", with(&["typ"], "JWT".into())),
        ("typ with a space", with(&["typ"], "dpop+jwt ".into())),
        ("no typ", without(&["typ"])),
        ("alg a number", with(&["alg"], 7.into())),
        ("alg null", with(&["alg"], Value::Null)),
        ("alg lowercase", with(&["alg"], "es256".into())),
        ("no alg", without(&["alg"])),
        ("kty a number", with(&["jwk", "kty"], 2.into())),
        ("kty lowercase", with(&["jwk", "kty"], "ec".into())),
        ("no kty", without(&["jwk", "kty"])),
        ("crv a number", with(&["jwk", "crv"], 256.into())),
        ("crv with a NUL", with(&["jwk", "crv"], "P-256\u{0}".into())),
        (
            "crv with U+2011",
            with(&["jwk", "crv"], "P\u{2011}256".into()),
        ),
        (
            "crv fullwidth",
            with(&["jwk", "crv"], "\u{ff30}-256".into()),
        ),
        ("x a number", with(&["jwk", "x"], 1.into())),
        ("x an array", with(&["jwk", "x"], json!([jwk["x"]]))),
        ("x null", with(&["jwk", "x"], Value::Null)),
        ("no y", without(&["jwk", "y"])),
        ("y a bool", with(&["jwk", "y"], true.into())),
        ("a header that is an array", json!([good])),
        ("a header that is a string", good.to_string().into()),
    ];
    let body = claims(RESOURCE, &token).to_string();
    let mut proofs: Vec<(String, String)> = headers
        .into_iter()
        .map(|(attack, header)| (attack.to_owned(), key.sign_text(&header.to_string(), &body)))
        .collect();
    let whole = key.proof(RESOURCE);
    let parts: Vec<&str> = whole.split('.').collect();
    for (attack, proof) in [
        ("two parts", format!("{}.{}", parts[0], parts[1])),
        ("four parts", format!("{whole}.{}", parts[2])),
        (
            "five parts (a JWE's shape)",
            format!("{whole}.{}.{}", parts[1], parts[2]),
        ),
        ("empty", String::new()),
        (
            "a header not base64",
            format!("!!!.{}.{}", parts[1], parts[2]),
        ),
        ("a header not JSON", key.sign_text("not json", &body)),
        (
            "claims not JSON",
            key.sign_text(&good.to_string(), "not json"),
        ),
        ("claims an array", key.sign_text(&good.to_string(), "[]")),
        (
            "a signature not base64",
            format!("{}.{}.***", parts[0], parts[1]),
        ),
    ] {
        proofs.push((attack.into(), proof));
    }
    let mut conn = Conn::open(addr).await;
    conn.all_refused(&token, &proofs, "invalid_dpop_proof")
        .await;
    conn.serves(&key).await;
}

#[tokio::test]
async fn duplicate_members_cannot_split_the_key_that_signs_from_the_key_bound() {
    let addr = serve(Dpop::new()).await;
    let attacker = Key::p256("attacker");
    let victim = Key::p256("victim");
    let token = victim.token();
    let (a, v) = (&attacker.jwk, &victim.jwk);
    let header = |jwk: String| format!(r#"{{"typ":"dpop+jwt","alg":"ES256","jwk":{jwk}}}"#);
    let members = |first: &Value, then: &Value| {
        format!(
            r#"{{"kty":"EC","crv":"P-256","x":{},"y":{},"x":{},"y":{}}}"#,
            first["x"], first["y"], then["x"], then["y"]
        )
    };
    let headers = [
        (
            "jwk x and y, the victim's then the attacker's",
            header(members(v, a)),
        ),
        (
            "jwk x and y, the attacker's then the victim's",
            header(members(a, v)),
        ),
        (
            "two jwk, the victim's then the attacker's",
            header(format!(r#"{v},"jwk":{a}"#)),
        ),
        (
            "two jwk, the attacker's then the victim's",
            header(format!(r#"{a},"jwk":{v}"#)),
        ),
    ];
    let proofs: Vec<(String, String)> = headers
        .into_iter()
        .map(|(attack, header)| {
            let body = claims(RESOURCE, &token).to_string();
            (attack.to_owned(), attacker.sign_text(&header, &body))
        })
        .collect();
    let mut conn = Conn::open(addr).await;
    conn.all_refused(&token, &proofs, "invalid_dpop_proof")
        .await;
    // And an alg of none after the signing one, without a signature.
    let unsigned = format!(r#"{{"typ":"dpop+jwt","alg":"ES256","jwk":{a},"alg":"none"}}"#);
    let body = claims(RESOURCE, &attacker.token()).to_string();
    let proof = format!("{}.{}.", b64(unsigned), b64(body));
    conn.all_refused(
        &attacker.token(),
        &[("alg ES256 then none".into(), proof)],
        "invalid_dpop_proof",
    )
    .await;
    conn.serves(&victim).await;
}

#[tokio::test]
async fn base64_with_padding_whitespace_or_the_standard_alphabet_is_refused() {
    let addr = serve(Dpop::new()).await;
    // A key whose x has a `-` or `_`, so that the standard alphabet writes it otherwise.
    let key = (0..)
        .map(|i| Key::p256(&format!("base64 {i}")))
        .find(|k| k.jwk["x"].as_str().unwrap().contains(['-', '_']))
        .unwrap();
    let x = URL_SAFE_NO_PAD
        .decode(key.jwk["x"].as_str().unwrap())
        .unwrap();
    let canonical = key.jwk["x"].as_str().unwrap().to_owned();
    let spaced = format!("{} {}", &canonical[..20], &canonical[20..]);
    let variants = [
        ("x padded", format!("{canonical}=")),
        ("x padded twice", URL_SAFE.encode(&x) + "="),
        ("x with a space", spaced),
        (
            "x with a newline",
            format!("{}\n{}", &canonical[..20], &canonical[20..]),
        ),
        (
            "x in the standard alphabet",
            STANDARD.encode(&x).trim_end_matches('=').to_owned(),
        ),
        ("x with trailing bits set", {
            // 43 characters carry 258 bits: the last two must be zero.
            let mut chars: Vec<char> = canonical.chars().collect();
            let last = chars.last_mut().unwrap();
            let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let i = alphabet.find(*last).unwrap();
            *last = alphabet.chars().nth(i ^ 1).unwrap();
            chars.into_iter().collect()
        }),
    ];
    let mut conn = Conn::open(addr).await;
    for (attack, written) in variants {
        let mut jwk = key.jwk.clone();
        jwk["x"] = written.into();
        // Bound to the thumbprint of the jwk as written, and to the key's own.
        for token in [bound(&thumbprint(&jwk)), key.token()] {
            let proof = key.sign(&key.header(&jwk), &claims(RESOURCE, &token));
            conn.all_refused(&token, &[(attack.into(), proof)], "invalid_dpop_proof")
                .await;
        }
    }
    let good = key.proof(RESOURCE);
    let (message, signature) = good.rsplit_once('.').unwrap();
    let (header, body) = message.split_once('.').unwrap();
    let segments = [
        (
            "a padded header segment",
            format!("{header}=.{body}.{signature}"),
        ),
        ("a padded signature", format!("{message}.{signature}==")),
        ("a signature in the standard alphabet", {
            let bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
            format!("{message}.{}", STANDARD.encode(bytes))
        }),
    ];
    let segments: Vec<(String, String)> = segments
        .into_iter()
        .map(|(a, p)| (a.to_owned(), p))
        .collect();
    // The standard alphabet may write this signature as the URL-safe one does.
    let differs: Vec<(String, String)> = segments.into_iter().filter(|(_, p)| p != &good).collect();
    conn.all_refused(&key.token(), &differs, "invalid_dpop_proof")
        .await;
    conn.serves(&key).await;
}

#[tokio::test]
async fn points_off_the_curve_compressed_or_short_are_refused() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("points");
    let x = URL_SAFE_NO_PAD
        .decode(key.jwk["x"].as_str().unwrap())
        .unwrap();
    let y = URL_SAFE_NO_PAD
        .decode(key.jwk["y"].as_str().unwrap())
        .unwrap();
    let mut off = y.clone();
    off[31] ^= 1;
    let mut compressed = vec![2 + (y[31] & 1)];
    compressed.extend_from_slice(&x);
    let mut long = vec![0u8];
    long.extend_from_slice(&x);
    let variants = [
        ("y off the curve", json!({"x": b64(&x), "y": b64(&off)})),
        ("x and y swapped", json!({"x": b64(&y), "y": b64(&x)})),
        ("a compressed point, no y", json!({"x": b64(&compressed)})),
        (
            "a compressed point, y empty",
            json!({"x": b64(&compressed), "y": ""}),
        ),
        ("x of 31 bytes", json!({"x": b64(&x[1..]), "y": b64(&y)})),
        ("x of 33 bytes", json!({"x": b64(&long), "y": b64(&y)})),
        (
            "x and y zero",
            json!({"x": b64([0u8; 32]), "y": b64([0u8; 32])}),
        ),
    ];
    let mut conn = Conn::open(addr).await;
    for (attack, point) in variants {
        let mut jwk = json!({"kty": "EC", "crv": "P-256"});
        for (member, value) in point.as_object().unwrap() {
            jwk[member] = value.clone();
        }
        let token = bound(&thumbprint(&jwk));
        let proof = key.sign(&key.header(&jwk), &claims(RESOURCE, &token));
        conn.all_refused(&token, &[(attack.into(), proof)], "invalid_dpop_proof")
            .await;
    }
    conn.serves(&key).await;
}

#[tokio::test]
async fn an_ed25519_key_of_small_order_is_refused() {
    let addr = serve(Dpop::new()).await;
    // Ed25519's identity point as the key, and a signature (R the identity, S zero)
    // that cofactorless verification takes for any message under it.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": b64(identity)});
    let token = bound(&thumbprint(&jwk));
    let header = json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": jwk});
    let mut signature = identity.to_vec();
    signature.extend_from_slice(&[0u8; 32]);
    let proof = format!(
        "{}.{}.{}",
        b64(header.to_string()),
        b64(claims(RESOURCE, &token).to_string()),
        b64(signature)
    );
    let answer = call(addr, &token, &proof).await;
    refused(
        &answer,
        "invalid_dpop_proof",
        "an Ed25519 key of small order",
    );
}

/// RSASSA-PKCS1-v1_5's encoding of SHA-256(`message`) for a 2,048-bit modulus: with a
/// public exponent of 1, the signature of `message` under any key.
fn pkcs1_encoded(message: &[u8]) -> Vec<u8> {
    let digest_info = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
        0x05, 0x00, 0x04, 0x20,
    ];
    let mut encoded = vec![0x00, 0x01];
    encoded.resize(256 - digest_info.len() - 32 - 1, 0xff);
    encoded.push(0x00);
    encoded.extend_from_slice(&digest_info);
    encoded.extend_from_slice(&sha2::Sha256::digest(message));
    encoded
}

#[tokio::test]
async fn rsa_exponents_of_zero_and_one_are_refused_even_with_the_forgery_one_allows() {
    let addr = serve(Dpop::new()).await;
    let mut conn = Conn::open(addr).await;
    for (attack, e) in [
        ("e = 1", "AQ"),
        ("e = 0", "AA"),
        ("e empty", ""),
        ("e = 2", "Ag"),
    ] {
        let jwk = json!({"kty": "RSA", "e": e, "n": RSA_2048_N});
        let token = bound(&thumbprint(&jwk));
        let header = json!({"typ": "dpop+jwt", "alg": "RS256", "jwk": jwk});
        let message = format!(
            "{}.{}",
            b64(header.to_string()),
            b64(claims(RESOURCE, &token).to_string())
        );
        let forged = format!("{message}.{}", b64(pkcs1_encoded(message.as_bytes())));
        conn.all_refused(&token, &[(attack.into(), forged)], "invalid_dpop_proof")
            .await;
    }
    conn.serves(&Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256))
        .await;
}

#[tokio::test]
async fn an_rsa_key_under_2048_bits_is_refused() {
    let addr = serve(Dpop::new()).await;
    let weak = Key::rsa(RSA_1024, RSA_1024_N, Algorithm::RS256);
    let answer = call(addr, &weak.token(), &weak.proof(RESOURCE)).await;
    refused(&answer, "invalid_dpop_proof", "a 1,024-bit key");
}

/// An ECDSA signature's `r || s` as ASN.1 DER (what JWS does not use).
fn der_signature(raw: &[u8]) -> Vec<u8> {
    let integer = |half: &[u8]| {
        let mut bytes: Vec<u8> = half.iter().copied().skip_while(|&b| b == 0).collect();
        if bytes.first().is_none_or(|&b| b >= 0x80) {
            bytes.insert(0, 0);
        }
        let mut der = vec![0x02, u8::try_from(bytes.len()).unwrap()];
        der.extend(bytes);
        der
    };
    let mut body = integer(&raw[..32]);
    body.extend(integer(&raw[32..]));
    let mut der = vec![0x30, u8::try_from(body.len()).unwrap()];
    der.extend(body);
    der
}

#[tokio::test]
async fn algorithm_confusion_is_refused() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("confusion");
    let rsa = Key::rsa(RSA_2048, RSA_2048_N, Algorithm::RS256);
    let token = key.token();
    let body = || claims(RESOURCE, &token).to_string();
    let header = |alg: &str| json!({"typ": "dpop+jwt", "alg": alg, "jwk": key.jwk}).to_string();
    let unsigned = |alg: &str| format!("{}.{}.", b64(header(alg)), b64(body()));
    let hmac = |secret: &[u8]| {
        signed(
            &header("HS256"),
            &body(),
            &EncodingKey::from_secret(secret),
            Algorithm::HS256,
        )
    };
    let sec1 = {
        let mut point = vec![4u8];
        for c in ["x", "y"] {
            point.extend(
                URL_SAFE_NO_PAD
                    .decode(key.jwk[c].as_str().unwrap())
                    .unwrap(),
            );
        }
        point
    };
    let mut with_d = key.jwk.clone();
    with_d["d"] = b64(sha2::Sha256::digest(b"confusion")).into();
    let mut crit = key.header(&key.jwk);
    crit["crit"] = json!(["urn:example:must-understand"]);
    crit["urn:example:must-understand"] = true.into();
    let mut unencoded = key.header(&key.jwk);
    unencoded["crit"] = json!(["b64"]);
    unencoded["b64"] = false.into();
    let proofs = [
        ("alg none", unsigned("none")),
        ("alg None", unsigned("None")),
        ("alg NONE", unsigned("NONE")),
        ("HS256 keyed with the SEC1 point", hmac(&sec1)),
        (
            "HS256 keyed with the jwk",
            hmac(key.jwk.to_string().as_bytes()),
        ),
        (
            "HS256 keyed with the thumbprint",
            hmac(key.thumbprint().as_bytes()),
        ),
        (
            "RS256 over an EC key",
            key.sign_text(&header("RS256"), &body()),
        ),
        (
            "ES384 over a P-256 key",
            key.sign_text(&header("ES384"), &body()),
        ),
        (
            "ES512 over a P-256 key",
            key.sign_text(&header("ES512"), &body()),
        ),
        (
            "EdDSA over an EC key",
            key.sign_text(&header("EdDSA"), &body()),
        ),
        (
            "a jwk carrying its private d",
            key.sign(&key.header(&with_d), &claims(RESOURCE, &token)),
        ),
        (
            "a crit extension not understood",
            key.sign(&crit, &claims(RESOURCE, &token)),
        ),
        (
            "b64 false, critical",
            key.sign(&unencoded, &claims(RESOURCE, &token)),
        ),
        ("a zero signature", {
            let good = key.proof(RESOURCE);
            format!("{}.{}", good.rsplit_once('.').unwrap().0, b64([0u8; 64]))
        }),
        ("a DER signature", {
            let good = key.proof(RESOURCE);
            let (message, signature) = good.rsplit_once('.').unwrap();
            let raw = URL_SAFE_NO_PAD.decode(signature).unwrap();
            format!("{message}.{}", b64(der_signature(&raw)))
        }),
    ];
    let proofs: Vec<(String, String)> =
        proofs.into_iter().map(|(a, p)| (a.to_owned(), p)).collect();
    // ES256 over an RSA key, for a token bound to the RSA key.
    let rsa_header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": rsa.jwk}).to_string();
    let for_rsa = claims(RESOURCE, &rsa.token()).to_string();
    let mut conn = Conn::open(addr).await;
    conn.all_refused(
        &rsa.token(),
        &[
            (
                "ES256 over an RSA key".into(),
                key.sign_text(&rsa_header, &for_rsa),
            ),
            (
                "PS256 named, RS256 signed".into(),
                rsa.sign_text(&rsa_header.replace("ES256", "PS256"), &for_rsa),
            ),
        ],
        "invalid_dpop_proof",
    )
    .await;
    conn.all_refused(&token, &proofs, "invalid_dpop_proof")
        .await;
    conn.serves(&key).await;
}

#[tokio::test]
async fn a_jwk_alg_that_disagrees_with_the_header_is_refused() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("jwk alg");
    let mut conn = Conn::open(addr).await;
    for alg in ["HS256", "RS256", "none"] {
        let mut jwk = key.jwk.clone();
        jwk["alg"] = alg.into();
        let proof = key.sign(&key.header(&jwk), &claims(RESOURCE, &key.token()));
        conn.all_refused(
            &key.token(),
            &[(format!("jwk alg {alg}"), proof)],
            "invalid_dpop_proof",
        )
        .await;
    }
    conn.serves(&key).await;
}

#[tokio::test]
async fn claims_of_the_wrong_type_or_out_of_range_are_refused() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("claims");
    let token = key.token();
    let good = claims(RESOURCE, &token);
    let with = |member: &str, value: Value| {
        let mut c = claims(RESOURCE, &token);
        c[member] = value;
        c
    };
    let without = |member: &str| {
        let mut c = claims(RESOURCE, &token);
        c.as_object_mut().unwrap().remove(member);
        c
    };
    let window = 60;
    let variants = [
        ("iat a string", with("iat", now().to_string().into())),
        ("iat 1e30", with("iat", json!(1e30))),
        ("iat i64::MAX", with("iat", i64::MAX.into())),
        ("iat u64::MAX", with("iat", u64::MAX.into())),
        ("iat i64::MIN", with("iat", i64::MIN.into())),
        ("iat -1", with("iat", (-1).into())),
        ("iat null", with("iat", Value::Null)),
        ("no iat", without("iat")),
        (
            "iat past the window ahead",
            with("iat", (now() + window + 5).into()),
        ),
        (
            "iat past the window behind",
            with("iat", (now() - window - 5).into()),
        ),
        ("jti of 10 KB", with("jti", "j".repeat(10_240).into())),
        ("jti of 257 bytes", with("jti", "j".repeat(257).into())),
        (
            "jti of 86 three-byte characters",
            with("jti", "\u{20ac}".repeat(86).into()),
        ),
        ("jti empty", with("jti", "".into())),
        ("jti a number", with("jti", 42.into())),
        ("no jti", without("jti")),
        ("htm lowercase", with("htm", "post".into())),
        ("htm with a space", with("htm", "POST ".into())),
        ("htm GET", with("htm", "GET".into())),
        ("htm a number", with("htm", 1.into())),
        ("no htm", without("htm")),
        ("htu a number", with("htu", 1.into())),
        ("htu an array", with("htu", json!([RESOURCE]))),
        ("no htu", without("htu")),
        (
            "ath padded",
            with("ath", format!("{}=", hash(&token)).into()),
        ),
        (
            "ath of another token",
            with("ath", hash("bound:another").into()),
        ),
        (
            "ath in hex",
            with("ath", hex(&sha2::Sha256::digest(&token)).into()),
        ),
        ("ath a number", with("ath", 1.into())),
        ("no ath", without("ath")),
        ("claims null", Value::Null),
    ];
    let mut proofs: Vec<(String, String)> = variants
        .into_iter()
        .map(|(attack, c)| (attack.to_owned(), key.sign(&key.header(&key.jwk), &c)))
        .collect();
    // The same claims with a member twice: a parser that keeps the first and one that
    // keeps the last would disagree.
    let text = good.to_string();
    let twice = text.replacen('{', r#"{"htu":"https://evil.example/mcp","#, 1);
    proofs.push((
        "htu twice".into(),
        key.sign_text(&key.header(&key.jwk).to_string(), &twice),
    ));
    let mut conn = Conn::open(addr).await;
    conn.all_refused(&token, &proofs, "invalid_dpop_proof")
        .await;

    // The longest jti, and one that is not ASCII, are taken once each.
    for jti in ["j".repeat(256), "\u{e9}t\u{e9} \u{1f600} \u{0}".to_owned()] {
        let proof = key.sign(&key.header(&key.jwk), &with("jti", jti.clone().into()));
        let first = conn.call(&token, &proof).await.unwrap();
        assert_eq!(first.status, 200, "{jti:?}: {}", said(&first));
        let again = conn.call(&token, &proof).await.unwrap();
        refused(&again, "invalid_dpop_proof", &format!("{jti:?} again"));
        assert!(said(&again).contains("used before"), "{}", said(&again));
    }
}

#[tokio::test]
async fn an_iat_with_a_fraction_is_a_numeric_date_like_any_other() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("fractional iat");
    let mut c = claims(RESOURCE, &key.token());
    c["iat"] = json!(now() as f64 + 0.5);
    let answer = call(addr, &key.token(), &key.sign(&key.header(&key.jwk), &c)).await;
    assert_eq!(answer.status, 200, "{}", said(&answer));
}

#[tokio::test]
async fn htu_in_hostile_forms_is_refused_and_rfc_3986_equivalents_are_accepted() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("hostile htu");
    let token = key.token();
    let refused_forms = [
        "https://user:pw@rs.example/mcp",
        "https://user@rs.example/mcp",
        "https://rs.example@evil.example/mcp",
        "https://evil.example/mcp#@rs.example/mcp",
        "https://[::1]/mcp",
        "https://[::ffff:rs.example]/mcp",
        "https://rs.ex\u{e4}mple/mcp",
        "https://rs.example./mcp",
        "https://rs.example/mcp/.",
        "https://rs.example/mcp%2F",
        "https://rs.example/mcp%00",
        "https://rs.example//mcp",
        "https://rs.example:65536/mcp",
        "https://rs.example:-443/mcp",
        "//rs.example/mcp",
        "rs.example/mcp",
        "https:rs.example/mcp",
        "https:///rs.example/mcp",
        "",
        "https://rs.example/mcp\u{0}",
        "wss://rs.example/mcp",
    ];
    let proofs: Vec<(String, String)> = refused_forms
        .iter()
        .map(|htu| (format!("htu {htu:?}"), key.proof(htu)))
        .collect();
    let mut conn = Conn::open(addr).await;
    conn.all_refused(&token, &proofs, "invalid_dpop_proof")
        .await;
    for htu in [
        "https://rs%2Eexample/mcp",
        "https://rs.example:/mcp",
        "https://rs.example/%6d%63%70",
        "https://rs.example/./mcp",
    ] {
        let answer = conn.call(&token, &key.proof(htu)).await.unwrap();
        assert_eq!(answer.status, 200, "{htu}: {}", said(&answer));
    }
}

#[tokio::test]
async fn a_proof_is_taken_once_across_keys_connections_and_malleated_signatures() {
    let addr = serve(Dpop::new()).await;
    let alice = Key::p256("alice");
    let bob = Key::p256("bob");

    // Alice's proof with Bob's token: the key is not the one his token is bound to.
    let answer = call(addr, &bob.token(), &alice.proof_for(RESOURCE, &bob.token())).await;
    refused(&answer, "invalid_dpop_proof", "alice's proof, bob's token");
    assert!(said(&answer).contains("not bound to"), "{}", said(&answer));

    // One proof raced on twenty connections at once: taken once.
    let proof = alice.proof(RESOURCE);
    let token = alice.token();
    let raced = (0..20).map(|_| {
        let (proof, token) = (proof.clone(), token.clone());
        tokio::spawn(async move { call(addr, &token, &proof).await })
    });
    let mut taken = 0;
    for answer in raced {
        let answer = answer.await.unwrap();
        match answer.status {
            200 => taken += 1,
            _ => refused(&answer, "invalid_dpop_proof", "a raced replay"),
        }
    }
    assert_eq!(taken, 1, "one of twenty raced copies");

    // The same proof with its ECDSA signature's s negated: valid too, and still a replay.
    let (message, signature) = proof.rsplit_once('.').unwrap();
    let bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
    let s = {
        use p256::elliptic_curve::PrimeField as _;
        let s = p256::Scalar::from_repr(*p256::FieldBytes::from_slice(&bytes[32..])).unwrap();
        (-s).to_repr()
    };
    let mut malleated = bytes[..32].to_vec();
    malleated.extend_from_slice(&s);
    let answer = call(addr, &token, &format!("{message}.{}", b64(malleated))).await;
    refused(&answer, "invalid_dpop_proof", "a malleated signature");
    assert!(said(&answer).contains("used before"), "{}", said(&answer));
}

#[tokio::test]
async fn nonces_are_a_fleets_and_a_proof_with_a_nonce_is_still_taken_once() {
    let secret = [9u8; 32];
    let store = Arc::new(MemoryReplayStore::new(1_000));
    let fleet = || {
        Dpop::new()
            .require_nonce()
            .nonce_secret(secret)
            .replay_store(store.clone())
    };
    let (here, there) = (serve(fleet()).await, serve(fleet()).await);
    let stranger = serve(Dpop::new().require_nonce()).await;
    let key = Key::p256("nonces");
    let token = key.token();

    let asked = call(here, &token, &key.proof(RESOURCE)).await;
    refused(&asked, "use_dpop_nonce", "no nonce");
    let nonce = asked
        .header("dpop-nonce")
        .expect("a nonce to use")
        .to_owned();
    let alien = call(stranger, &token, &key.proof(RESOURCE)).await;
    let alien = alien.header("dpop-nonce").unwrap().to_owned();

    let with_nonce = |nonce: &str| {
        let mut c = claims(RESOURCE, &token);
        c["nonce"] = nonce.into();
        key.sign(&key.header(&key.jwk), &c)
    };
    for (attack, nonce) in [
        ("another server's nonce", alien.as_str()),
        (
            "a nonce made up",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        ),
        ("a nonce of the far future", &b64([0xffu8; 24])),
        ("an empty nonce", ""),
    ] {
        let answer = call(there, &token, &with_nonce(nonce)).await;
        refused(&answer, "use_dpop_nonce", attack);
        assert!(answer.header("dpop-nonce").is_some(), "{attack}");
    }
    // A nonce given here is good there; the proof, once taken there, is a replay here.
    let proof = with_nonce(&nonce);
    assert_eq!(call(there, &token, &proof).await.status, 200);
    let replayed = call(here, &token, &proof).await;
    refused(
        &replayed,
        "invalid_dpop_proof",
        "a replay at another instance",
    );
    assert!(
        said(&replayed).contains("used before"),
        "{}",
        said(&replayed)
    );
}

#[tokio::test]
async fn a_nonce_two_windows_old_is_answered_with_a_fresh_one() {
    let addr = serve(Dpop::new().require_nonce().window(Duration::from_secs(1))).await;
    let key = Key::p256("stale nonce");
    let token = key.token();
    let asked = call(addr, &token, &key.proof(RESOURCE)).await;
    let nonce = asked.header("dpop-nonce").unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let mut c = claims(RESOURCE, &token);
    c["nonce"] = nonce.clone().into();
    let stale = call(addr, &token, &key.sign(&key.header(&key.jwk), &c)).await;
    refused(&stale, "use_dpop_nonce", "a nonce two windows old");
    let fresh = stale.header("dpop-nonce").unwrap();
    assert_ne!(fresh, nonce);
    c["nonce"] = fresh.into();
    c["jti"] = jti().into();
    let answer = call(addr, &token, &key.sign(&key.header(&key.jwk), &c)).await;
    assert_eq!(answer.status, 200, "{}", said(&answer));
}

/// Sleeps until `secs` whole seconds after the Unix epoch (plus `millis`).
async fn sleep_until(secs: i64, millis: u64) {
    let at =
        UNIX_EPOCH + Duration::from_secs(secs.try_into().unwrap()) + Duration::from_millis(millis);
    if let Ok(left) = at.duration_since(SystemTime::now()) {
        tokio::time::sleep(left).await;
    }
}

#[tokio::test]
async fn a_proof_dated_ahead_is_remembered_for_as_long_as_it_is_accepted() {
    // A one-second window: a proof dated T+1 is good while the clock reads T, T+1 and
    // T+2, three seconds; it must be remembered as long.
    let addr = serve(Dpop::new().window(Duration::from_secs(1))).await;
    let key = Key::p256("dated ahead");
    let token = key.token();
    let start = now() + 1;
    sleep_until(start, 0).await;
    let mut c = claims(RESOURCE, &token);
    c["iat"] = (start + 1).into();
    let proof = key.sign(&key.header(&key.jwk), &c);
    let first = call(addr, &token, &proof).await;
    assert_eq!(first.status, 200, "{}", said(&first));
    // Two and a half seconds later the clock reads T+2: still within the window.
    sleep_until(start + 2, 500).await;
    let replayed = call(addr, &token, &proof).await;
    refused(
        &replayed,
        "invalid_dpop_proof",
        "a replay in the proof's last second",
    );
}

#[tokio::test]
async fn a_zero_window_still_refuses_a_replay() {
    let addr = serve(Dpop::new().window(Duration::ZERO)).await;
    let key = Key::p256("zero window");
    // Made and sent within one clock second: a few tries at most.
    for _ in 0..5 {
        let proof = key.proof(RESOURCE);
        let first = call(addr, &key.token(), &proof).await;
        if first.status != 200 {
            continue;
        }
        let again = call(addr, &key.token(), &proof).await;
        if said(&again).contains("iat") {
            continue;
        }
        refused(&again, "invalid_dpop_proof", "a replay within the second");
        return;
    }
    panic!("no proof was accepted within its second");
}

/// `proofs` fresh proofs from each of `keys` keys, all at once (one connection per
/// key); the number each key had accepted.
async fn flood(addr: SocketAddr, keys: usize, proofs: usize, name: &str) -> Vec<usize> {
    let floods = (0..keys).map(|i| {
        let key = Key::p256(&format!("{name} {i}"));
        tokio::spawn(async move {
            let mut conn = Conn::open(addr).await;
            let mut accepted = 0;
            for _ in 0..proofs {
                let answer = conn.call(&key.token(), &key.proof(RESOURCE)).await.unwrap();
                match answer.status {
                    200 => accepted += 1,
                    _ => refused(&answer, "invalid_dpop_proof", "a flood"),
                }
            }
            accepted
        })
    });
    let mut accepted = Vec::new();
    for flood in floods {
        accepted.push(flood.await.unwrap());
    }
    accepted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_keys_at_once_are_each_served_and_a_strangers_first_proof_too() {
    let addr = serve(Dpop::new()).await;
    let accepted = flood(addr, 50, 3, "fifty").await;
    assert!(accepted.iter().all(|&n| n == 3), "{accepted:?}");
    let stranger = Key::p256("stranger");
    let first = call(addr, &stranger.token(), &stranger.proof(RESOURCE)).await;
    assert_eq!(first.status, 200, "{}", said(&first));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a known limit, documented at Dpop::max_proofs: ten keys fill the whole store, and every other user is refused for twice the window"]
async fn keys_flooding_together_cannot_lock_a_stranger_out() {
    // 100 proofs in all, 10 of any one key: ten keys of the twelve fill the whole.
    let addr = serve(Dpop::new().max_proofs(100)).await;
    let accepted = flood(addr, 12, 10, "sybil").await;
    assert!(accepted.iter().all(|&n| n <= 10), "{accepted:?}");
    let stranger = Key::p256("locked-out stranger");
    let first = call(addr, &stranger.token(), &stranger.proof(RESOURCE)).await;
    assert_eq!(first.status, 200, "{}", said(&first));
}

#[tokio::test]
#[ignore = "a known limit, left for a later stop: with a replay_store no key has a share: one key's flood fills it and every other user is refused"]
async fn one_keys_flood_into_a_shared_replay_store_leaves_room_for_another_user() {
    let store = Arc::new(MemoryReplayStore::new(40));
    let addr = serve(Dpop::new().max_proofs(40).replay_store(store)).await;
    let accepted = flood(addr, 1, 60, "shared-store flooder").await;
    let user = Key::p256("another user of the fleet");
    let first = call(addr, &user.token(), &user.proof(RESOURCE)).await;
    assert_eq!(first.status, 200, "{}", said(&first));
    assert!(accepted[0] <= 4, "one key's share of 40: {accepted:?}");
}

#[tokio::test]
async fn a_bound_token_needs_the_dpop_scheme_and_exactly_one_proof_on_every_request() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("schemes");
    let token = key.token();
    let (one, two) = (key.proof(RESOURCE), key.proof(RESOURCE));
    let joined = format!("{one}, {two}");
    let mut conn = Conn::open(addr).await;
    let body = read_body();
    let bearer = conn
        .send("POST", &headers("Bearer", &token, &[&one]), &body)
        .await;
    refused(
        &bearer.unwrap(),
        "invalid_token",
        "a bound token as a bearer one",
    );
    for (attack, proofs) in [
        ("no proof", vec![]),
        ("two DPoP fields", vec![one.as_str(), two.as_str()]),
        ("two proofs in one field", vec![joined.as_str()]),
        ("an empty DPoP field", vec![""]),
    ] {
        let answer = conn
            .send("POST", &headers("DPoP", &token, &proofs), &body)
            .await;
        refused(&answer.unwrap(), "invalid_dpop_proof", attack);
    }
    for verb in ["GET", "DELETE"] {
        let mut fields = headers("DPoP", &token, &[]);
        http_support::set(&mut fields, "Accept", Some("text/event-stream"));
        let answer = Conn::open(addr).await.send(verb, &fields, "").await;
        refused(
            &answer.unwrap(),
            "invalid_dpop_proof",
            &format!("{verb} without a proof"),
        );
        let bearer = headers("Bearer", &token, &[]);
        let answer = Conn::open(addr).await.send(verb, &bearer, "").await;
        refused(
            &answer.unwrap(),
            "invalid_token",
            &format!("{verb} as a bearer"),
        );
    }
    conn.serves(&key).await;
}

#[tokio::test]
async fn the_dpop_scheme_is_case_insensitive() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("scheme case");
    let fields = headers("dpop", &key.token(), &[&key.proof(RESOURCE)]);
    let answer = http_support::post(addr, &fields, &read_body()).await;
    assert_eq!(answer.status, 200, "{}", said(&answer));
}

#[tokio::test]
async fn an_unbound_token_presented_with_the_dpop_scheme_is_refused() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("unbound");
    let token = "plain:someone";
    let answer = call(addr, token, &key.proof_for(RESOURCE, token)).await;
    assert_eq!(answer.status, 401, "{answer:?}");
}

#[tokio::test]
async fn a_thumbprint_differing_in_casing_or_padding_is_another_keys() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("thumbprint casing");
    let jkt = key.thumbprint();
    let mut conn = Conn::open(addr).await;
    for (attack, jkt) in [
        ("uppercased", jkt.to_uppercase()),
        ("lowercased", jkt.to_lowercase()),
        ("padded", format!("{jkt}=")),
        (
            "in the standard alphabet",
            jkt.replace('-', "+").replace('_', "/"),
        ),
    ] {
        if jkt == key.thumbprint() {
            continue;
        }
        let token = bound(&jkt);
        let proof = key.proof_for(RESOURCE, &token);
        conn.all_refused(&token, &[(attack.into(), proof)], "invalid_dpop_proof")
            .await;
    }
    conn.serves(&key).await;
}

/// The parameters of a `DPoP` challenge as a client reads them (RFC 9110 §11.2:
/// `name=token` or `name="quoted-string"`, comma-separated, `\` escaping in quotes).
fn challenge_params(challenge: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut rest = challenge.strip_prefix("DPoP").unwrap_or_default();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some((name, after)) = rest.split_once('=') else {
            return params;
        };
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = if after.starts_with('"') {
            chars.next();
            let mut end = after.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next().map(|(_, c)| c)),
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            end
        } else {
            let end = after.find(',').unwrap_or(after.len());
            value.push_str(&after[..end]);
            end
        };
        params.push((name.trim().to_owned(), value));
        rest = &after[end..];
    }
}

#[tokio::test]
async fn what_a_proof_says_is_echoed_without_forging_challenge_parameters_or_fields() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("echoed");
    let token = key.token();
    let metadata = "https://rs.example/.well-known/oauth-protected-resource/mcp";
    let param = r#"", resource_metadata="https://evil.example/meta", nonce="x"#;
    let fields = "\r\nSet-Cookie: injected=1\r\nX-Injected: 1";
    let with = |member: &str, value: Value| {
        let mut c = claims(RESOURCE, &token);
        c[member] = value;
        key.sign(&key.header(&key.jwk), &c)
    };
    let mut alg = key.header(&key.jwk);
    alg["alg"] = format!("ES256{param}").into();
    let proofs = [
        (
            "htu closing the quote",
            with("htu", format!("https://rs.example/x{param}").into()),
        ),
        (
            "htu escaping the quote",
            with("htu", format!("https://rs.example/x\\{param}").into()),
        ),
        (
            "htu with CR LF",
            with("htu", format!("https://rs.example/x{fields}").into()),
        ),
        (
            "htu with a lone LF",
            with("htu", "https://rs.example/x\nX-Injected: 1".into()),
        ),
        (
            "htu not ASCII",
            with("htu", "https://rs.example/\u{2028}\u{e9}\u{7f}".into()),
        ),
        (
            "htm closing the quote",
            with("htm", format!("GET{param}").into()),
        ),
        ("htm with CR LF", with("htm", format!("GET{fields}").into())),
        ("iat a string closing the quote", with("iat", param.into())),
        ("iat a string with CR LF", with("iat", fields.into())),
        (
            "alg closing the quote",
            key.sign(&alg, &claims(RESOURCE, &token)),
        ),
    ];
    let mut conn = Conn::open(addr).await;
    for (attack, proof) in proofs {
        let answer = conn.call(&token, &proof).await;
        let answer = answer.unwrap_or_else(|| panic!("{attack}: the connection closed"));
        refused(&answer, "invalid_dpop_proof", attack);
        assert!(
            answer.header("set-cookie").is_none(),
            "{attack}: {answer:?}"
        );
        assert!(
            answer.header("x-injected").is_none(),
            "{attack}: {answer:?}"
        );
        let params = challenge_params(said(&answer));
        let named = |n: &str| -> Vec<&str> {
            params
                .iter()
                .filter(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
                .collect()
        };
        assert_eq!(
            named("error"),
            ["invalid_dpop_proof"],
            "{attack}: {params:?}"
        );
        assert_eq!(
            named("resource_metadata"),
            [metadata],
            "{attack}: {params:?}"
        );
        assert!(named("nonce").is_empty(), "{attack}: {params:?}");
    }
    conn.serves(&key).await;
}

/// `depth` nested JSON arrays.
fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test]
async fn deeply_nested_json_in_a_proof_never_exhausts_the_stack() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("nested");
    let token = key.token();
    let deep = nested(20_000);
    let header = key.header(&key.jwk).to_string();
    let body = claims(RESOURCE, &token).to_string();
    let jwk = key.jwk.to_string();
    let proofs = [
        (
            "in the header",
            key.sign_text(
                &header.replacen('{', &format!(r#"{{"deep":{deep},"#), 1),
                &body,
            ),
        ),
        (
            "in the jwk",
            key.sign_text(
                &header.replacen(
                    &jwk,
                    &jwk.replacen('{', &format!(r#"{{"deep":{deep},"#), 1),
                    1,
                ),
                &body,
            ),
        ),
        (
            "as the jwk",
            key.sign_text(&header.replacen(&jwk, &deep, 1), &body),
        ),
    ];
    let mut conn = Conn::open(addr).await;
    for (attack, proof) in proofs {
        let answer = conn.call(&token, &proof).await;
        let answer = answer.unwrap_or_else(|| panic!("{attack}: the connection closed"));
        refused(&answer, "invalid_dpop_proof", attack);
    }
    // A claim the server does not know is skipped however deep it is: the proof is good.
    let deep_claim = body.replacen('{', &format!(r#"{{"deep":{deep},"#), 1);
    let answer = conn
        .call(&token, &key.sign_text(&header, &deep_claim))
        .await;
    let answer = answer.expect("the connection serves on");
    assert_eq!(answer.status, 200, "{}", said(&answer));
    conn.serves(&key).await;
}

/// The figure for the brief's flood: fifty keys, a hundred proofs each, all at once
/// against the default store; then a stranger's first proof. Prints the counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "takes a while in a debug build: run it for the figure"]
async fn fifty_keys_of_a_hundred_proofs_each_at_once() {
    let addr = serve(Dpop::new()).await;
    let started = std::time::Instant::now();
    let accepted = flood(addr, 50, 100, "fifty by a hundred").await;
    let took = started.elapsed();
    let stranger = Key::p256("stranger after fifty by a hundred");
    let first = call(addr, &stranger.token(), &stranger.proof(RESOURCE)).await;
    println!(
        "50 keys x 100 proofs: {} accepted in {took:?}; the stranger's first proof: {}",
        accepted.iter().sum::<usize>(),
        first.status
    );
    assert!(accepted.iter().all(|&n| n == 100), "{accepted:?}");
    assert_eq!(first.status, 200, "{}", said(&first));
}

#[tokio::test]
async fn a_host_or_forwarded_field_naming_another_server_does_not_widen_the_htu_accepted() {
    // Any Host is let in, so that only the proof's check stands in the way.
    let addr = http_support::serve(notes(Dpop::new()).hosts(HostPolicy::Any)).await;
    let key = Key::p256("another host");
    let token = key.token();
    let mut conn = Conn::open(addr).await;
    for (field, value) in [
        ("Host", "evil.example"),
        ("X-Forwarded-Host", "evil.example"),
        ("Forwarded", "host=evil.example;proto=https"),
    ] {
        for htu in ["https://evil.example/mcp", "http://evil.example/mcp"] {
            let mut fields = headers("DPoP", &token, &[&key.proof(htu)]);
            fields.push((field.into(), value.into()));
            fields.push(("X-Forwarded-Proto".into(), "https".into()));
            let answer = conn.send("POST", &fields, &read_body()).await;
            let answer = answer.unwrap_or_else(|| panic!("{field}: the connection closed"));
            refused(
                &answer,
                "invalid_dpop_proof",
                &format!("{field}: {value}, htu {htu}"),
            );
        }
    }
    conn.serves(&key).await;
}

/// POSTs a `read` call over HTTP/2 (in clear, by prior knowledge) with `fields`; the
/// status and the challenge.
async fn h2_call(addr: SocketAddr, fields: &[(String, String)]) -> (u16, String) {
    use http_body_util::{BodyExt as _, Full};
    let io = hyper_util::rt::TokioIo::new(tokio::net::TcpStream::connect(addr).await.unwrap());
    let executor = hyper_util::rt::TokioExecutor::new();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(executor, io)
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut request = hyper::Request::post(format!("http://{addr}/mcp"));
    for (name, value) in fields {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(bytes::Bytes::from(read_body())))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let _ = response.into_body().collect().await;
    (status, challenge)
}

#[tokio::test]
async fn over_http2_a_proof_is_checked_alike_and_taken_once_across_versions() {
    let addr = serve(Dpop::new()).await;
    let key = Key::p256("over h2");
    let token = key.token();
    let (one, two) = (key.proof(RESOURCE), key.proof(RESOURCE));
    let (status, challenge) = h2_call(addr, &headers("DPoP", &token, &[&one, &two])).await;
    assert_eq!(status, 401, "two DPoP fields over h2");
    assert!(
        challenge.starts_with("DPoP error=\"invalid_dpop_proof\""),
        "{challenge}"
    );
    let (status, challenge) = h2_call(addr, &headers("Bearer", &token, &[&one])).await;
    assert_eq!(status, 401, "a bearer use over h2");
    assert!(
        challenge.starts_with("DPoP error=\"invalid_token\""),
        "{challenge}"
    );

    let (status, challenge) = h2_call(addr, &headers("DPoP", &token, &[&one])).await;
    assert_eq!(status, 200, "{challenge}");
    let replayed = call(addr, &token, &one).await;
    refused(
        &replayed,
        "invalid_dpop_proof",
        "taken over h2, replayed over HTTP/1.1",
    );
    assert!(
        said(&replayed).contains("used before"),
        "{}",
        said(&replayed)
    );
}

/// Serves `dpop` and has a good proof by `key` accepted, with the nonce it asks for.
async fn accepted_under(dpop: Dpop, key: &Key) {
    let described = format!("{dpop:?}");
    let token = key.token();
    let mut conn = Conn::open(serve(dpop).await).await;
    let first = conn.call(&token, &key.proof(RESOURCE)).await;
    let first = first.unwrap_or_else(|| panic!("{described}: the connection closed"));
    let Some(nonce) = first.header("dpop-nonce") else {
        assert_eq!(first.status, 200, "{described}: {}", said(&first));
        return;
    };
    let mut c = claims(RESOURCE, &token);
    c["nonce"] = nonce.into();
    let answer = conn
        .call(&token, &key.sign(&key.header(&key.jwk), &c))
        .await;
    let answer = answer.unwrap_or_else(|| panic!("{described}: the connection closed"));
    assert_eq!(answer.status, 200, "{described}: {}", said(&answer));
}

#[tokio::test]
async fn the_longest_window_is_served_without_overflowing_the_clock() {
    let longest = Duration::from_secs(u64::MAX);
    let key = Key::p256("longest window");
    accepted_under(Dpop::new().window(longest), &key).await;
    accepted_under(Dpop::new().window(longest).require_nonce(), &key).await;
}

#[tokio::test]
async fn the_longest_window_with_a_shared_replay_store_is_served_too() {
    let store = Arc::new(MemoryReplayStore::new(10));
    let dpop = Dpop::new()
        .window(Duration::from_secs(u64::MAX))
        .replay_store(store);
    accepted_under(dpop, &Key::p256("longest window, shared store")).await;
}
