//! Machine authorization and DPoP end to end against oidc-provider (started by each
//! test, as in `oauth_e2e`): tern's client gets tokens with the client credentials grant
//! (a secret, and a `private_key_jwt` assertion), binds them to its DPoP key (with the
//! provider's and the resource server's nonces), refreshes a user's bound token with the
//! same key, also after a restart; and tern's resource server refuses a replayed proof,
//! one for another URL or method, one too old, one by another key, and a bearer use of a
//! bound token, each with its `WWW-Authenticate: DPoP` challenge. Runs under
//! `scripts/oidc`; `#[ignore]`d in a plain `cargo test`.

use crate::http_support;
use crate::oauth_e2e::{ACCESS_TTL, Provider, User, provider_with};
use crate::oauth_server::notes;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::Digest as _;
use tern_mcp::auth::JwtVerifier;
use tern_mcp::client::Client;
use tern_mcp::http::{Dpop, HttpServer, ProtectedResource};
use tern_mcp::oauth::{
    ClientKey, CredentialStore, FileStore, MemoryStore, OAuthClient, OAuthClientBuilder,
    Registration,
};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_tests::text_of;

/// The private key oidc-provider's `machine-jwt` client is registered with.
const MACHINE_KEY: &str = include_str!("../../oidc/machine-key.pem");

/// The notes server behind a JWT verifier for the provider's tokens, with `dpop`'s rules.
struct Resource {
    addr: SocketAddr,
    url: String,
    issuer: String,
    /// The provider, kept running (by the first handle on the resource).
    _provider: Option<Provider>,
}

async fn resource(dpop: Dpop, nonce_at_the_provider: bool) -> Option<Resource> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let provider = provider_with(&[&url], nonce_at_the_provider).await?;
    serve_resource(listener, &url, &provider.issuer, dpop);
    Some(Resource {
        addr,
        url,
        issuer: provider.issuer.clone(),
        _provider: Some(provider),
    })
}

/// The notes server on `listener` as the resource `url` (its public URL, which proofs
/// name), checking the provider's JWTs and their proofs by `dpop`'s rules.
fn serve_resource(listener: tokio::net::TcpListener, url: &str, issuer: &str, dpop: Dpop) {
    let verifier = JwtVerifier::new(format!("{issuer}/jwks"), issuer, url)
        .unwrap()
        .leeway(Duration::ZERO);
    let http = HttpServer::new(notes().server().unwrap())
        .token_verifier(Arc::new(verifier))
        .dpop(dpop)
        .protected_resource(ProtectedResource::new(url, issuer).with_scopes(["files:read"]));
    tokio::spawn(http.serve(listener, std::future::pending()));
}

/// A client connected to `url`, authorized by `oauth`.
pub(crate) async fn connect(url: &str, oauth: OAuthClientBuilder) -> Client {
    let transport = HttpClientTransport::builder(url)
        .authorizer(Arc::new(oauth.build().unwrap()))
        .build()
        .unwrap();
    Client::builder("machine", "1")
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

/// The claims of a JWT, unverified.
fn claims(jwt: &str) -> Value {
    let part = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn a_service_gets_tokens_with_a_secret_and_with_a_signed_assertion() {
    let Some(rs) = resource(Dpop::new(), false).await else {
        return;
    };
    let basic = OAuthClient::builder("billing")
        .client_credentials(Registration::new("machine-basic").with_secret("machine-basic-secret"));
    let client = connect(&rs.url, basic).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by machine-basic");

    let store = Arc::new(MemoryStore::default());
    let jwt = OAuthClient::builder("billing")
        .client_credentials(Registration::new("machine-jwt"))
        .signing_key(ClientKey::from_pkcs8_pem(MACHINE_KEY).unwrap())
        .store(store.clone());
    let client = connect(&rs.url, jwt).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by machine-jwt");
    let held = store.tokens(&rs.url).unwrap();
    assert_eq!(held.token_type, "Bearer", "no DPoP unless asked for");

    // When the token expires, the grant runs again: no refresh token, no user.
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL + 2)).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by machine-jwt");
    assert_ne!(
        store.tokens(&rs.url).unwrap().access_token,
        held.access_token
    );
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn dpop_binds_a_service_token_through_both_servers_nonces() {
    let Some(rs) = resource(Dpop::new().require_nonce(), true).await else {
        return;
    };
    let (client, store) = bound_service(&rs).await;
    // The provider asks for its nonce, the resource server for its own: each answered.
    for _ in 0..3 {
        let read = client.call_tool("read", json!({})).await.unwrap();
        assert_eq!(text_of(&read), "read by machine-basic");
    }
    let held = store.tokens(&rs.url).unwrap();
    assert_eq!(held.token_type, "DPoP");
    let jkt = claims(&held.access_token)["cnf"]["jkt"].clone();
    assert_eq!(jkt, json!(thumbprint(&store.dpop_key().unwrap())));

    // A proof without the server's nonce: 401 use_dpop_nonce, and a nonce to use.
    let key = store.dpop_key().unwrap();
    let refused = post_with(
        &rs,
        &held.access_token,
        &proof(&key, "POST", &rs.url, &held.access_token, 0, None),
    )
    .await;
    assert_eq!(refused.status, 401);
    let challenge = refused
        .header("www-authenticate")
        .unwrap_or_default()
        .to_owned();
    assert!(
        challenge.starts_with("DPoP error=\"use_dpop_nonce\""),
        "{challenge}"
    );
    let nonce = refused
        .header("dpop-nonce")
        .expect("a nonce to use")
        .to_owned();
    let with_nonce = proof(&key, "POST", &rs.url, &held.access_token, 0, Some(&nonce));
    assert_eq!(
        post_with(&rs, &held.access_token, &with_nonce).await.status,
        200
    );
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn a_users_dpop_bound_token_is_refreshed_with_the_same_key_even_after_a_restart() {
    let Some(rs) = resource(Dpop::new(), false).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let user = User(Arc::default());
    let signed_in = |user: &User| {
        OAuthClient::builder("tern end to end")
            .user_agent(user.clone())
            .dpop()
            .store(Arc::new(FileStore::open(&path).unwrap()))
    };
    let client = connect(&rs.url, signed_in(&user)).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    let first = FileStore::open(&path).unwrap().tokens(&rs.url).unwrap();
    assert_eq!(first.token_type, "DPoP");
    let jkt = claims(&first.access_token)["cnf"]["jkt"].clone();

    // Expired: the refresh (a proof by the same key; the provider checks it) binds the
    // new token to the same key, and the user is not asked again.
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL + 2)).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    let second = FileStore::open(&path).unwrap().tokens(&rs.url).unwrap();
    assert_ne!(second.access_token, first.access_token);
    assert_eq!(claims(&second.access_token)["cnf"]["jkt"], jkt);
    assert_eq!(user.0.visits.load(Ordering::Relaxed), 1);
    drop(client);

    // A new process: the key comes back from the store with the tokens bound to it.
    let restarted = connect(&rs.url, signed_in(&user)).await;
    let read = restarted.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    assert_eq!(user.0.visits.load(Ordering::Relaxed), 1, "no new sign-in");
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn the_resource_server_refuses_proofs_that_are_not_for_this_request() {
    let Some(rs) = resource(Dpop::new(), false).await else {
        return;
    };
    let (client, store) = bound_service(&rs).await;
    client.call_tool("read", json!({})).await.unwrap();
    let token = store.tokens(&rs.url).unwrap().access_token;
    let key = store.dpop_key().unwrap();
    let refused = |raw: &http_support::Raw| {
        assert_eq!(raw.status, 401, "{}", raw.body);
        raw.header("www-authenticate")
            .unwrap_or_default()
            .to_owned()
    };

    let good = proof(&key, "POST", &rs.url, &token, 0, None);
    assert_eq!(post_with(&rs, &token, &good).await.status, 200);
    let replayed = refused(&post_with(&rs, &token, &good).await);
    assert!(
        replayed.starts_with("DPoP error=\"invalid_dpop_proof\""),
        "{replayed}"
    );
    assert!(replayed.contains("used before"), "{replayed}");

    let elsewhere = proof(&key, "POST", "http://127.0.0.1:9/mcp", &token, 0, None);
    let said = refused(&post_with(&rs, &token, &elsewhere).await);
    assert!(
        said.contains("invalid_dpop_proof") && said.contains("is for http://127.0.0.1:9/mcp"),
        "{said}"
    );

    let other_method = proof(&key, "GET", &rs.url, &token, 0, None);
    let said = refused(&post_with(&rs, &token, &other_method).await);
    assert!(
        said.contains("invalid_dpop_proof") && said.contains("is for GET, not POST"),
        "{said}"
    );

    let too_old = proof(&key, "POST", &rs.url, &token, -600, None);
    let said = refused(&post_with(&rs, &token, &too_old).await);
    assert!(
        said.contains("invalid_dpop_proof") && said.contains("iat"),
        "{said}"
    );

    let (_, stranger) = p256_key();
    let by_another_key = proof(&stranger, "POST", &rs.url, &token, 0, None);
    let said = refused(&post_with(&rs, &token, &by_another_key).await);
    assert!(said.contains("not bound to"), "{said}");

    let mut headers = http_support::mcp_headers("tools/call", Some("read"));
    headers.push(("Authorization".into(), format!("Bearer {token}")));
    let said = refused(&http_support::post(rs.addr, &headers, &read_body()).await);
    assert!(said.starts_with("DPoP error=\"invalid_token\""), "{said}");
    assert!(said.contains("bound to a DPoP key"), "{said}");
    // Each refusal names the metadata, as every challenge does.
    assert!(said.contains("resource_metadata="), "{said}");
}

/// A service (`machine-basic`) with DPoP, connected to `rs`, and its store.
async fn bound_service(rs: &Resource) -> (Client, Arc<MemoryStore>) {
    let store = Arc::new(MemoryStore::default());
    let oauth = OAuthClient::builder("billing")
        .client_credentials(Registration::new("machine-basic").with_secret("machine-basic-secret"))
        .dpop()
        .store(store.clone());
    (connect(&rs.url, oauth).await, store)
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn the_cli_calls_as_a_service_with_a_secret_or_a_key_and_with_dpop() {
    let Some(rs) = resource(Dpop::new(), false).await else {
        return;
    };
    let cli = std::env::var("TERN_CLI").expect("scripts/oidc names the tern CLI");
    let dir = tempfile::tempdir().unwrap();
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/oidc/machine-key.pem");
    let credentials = dir.path().join("credentials.json");
    let credentials = credentials.to_str().unwrap();
    let runs: [(&[&str], &str); 2] = [
        (
            &["--client-credentials", "machine-basic", "--dpop"],
            "machine-basic",
        ),
        (
            &["--client-credentials", "machine-jwt", "--client-key", key],
            "machine-jwt",
        ),
    ];
    for (flags, who) in runs {
        let out = tokio::process::Command::new(&cli)
            .args(["call", &rs.url, "read", "--credentials", credentials])
            .args(flags)
            .env("TERN_CLIENT_SECRET", "machine-basic-secret")
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{flags:?}: {out:?}");
        assert!(stdout.contains(&format!("read by {who}")), "{stdout}");
    }
    // The DPoP run kept its key and its bound token in the credentials file.
    let kept = FileStore::open(credentials).unwrap();
    assert!(kept.dpop_key().is_some());
    // And without a secret or a key, the CLI says what is missing.
    let out = tokio::process::Command::new(&cli)
        .args([
            "call",
            &rs.url,
            "read",
            "--client-credentials",
            "machine-basic",
        ])
        .env_remove("TERN_CLIENT_SECRET")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("TERN_CLIENT_SECRET"));
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn a_fleet_of_resource_servers_shares_its_nonces_and_the_proofs_it_has_seen() {
    let Some(rs) = resource(Dpop::new(), false).await else {
        return;
    };
    // Two more instances of one resource (its public URL is the first one's), sharing
    // the nonce secret and where proofs are remembered.
    let seen: Arc<dyn tern_mcp::server::replay::ReplayStore> =
        Arc::new(tern_mcp::server::replay::MemoryReplayStore::new(1_000));
    let fleet = || {
        Dpop::new()
            .require_nonce()
            .nonce_secret([9; 32])
            .replay_store(Arc::clone(&seen))
    };
    let mut instances = Vec::new();
    for _ in 0..2 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        instances.push(listener.local_addr().unwrap());
        serve_resource(listener, &rs.url, &rs.issuer, fleet());
    }
    let (client, store) = bound_service(&rs).await;
    client.call_tool("read", json!({})).await.unwrap();
    let token = store.tokens(&rs.url).unwrap().access_token;
    let key = store.dpop_key().unwrap();
    let to = |addr: SocketAddr| Resource {
        addr,
        url: rs.url.clone(),
        issuer: rs.issuer.clone(),
        _provider: None,
    };
    // A nonce the first instance gives...
    let first = to(instances[0]);
    let asked = post_with(
        &first,
        &token,
        &proof(&key, "POST", &rs.url, &token, 0, None),
    )
    .await;
    assert_eq!(asked.status, 401);
    let nonce = asked.header("dpop-nonce").unwrap().to_owned();
    // ... is good at the second.
    let second = to(instances[1]);
    let good = proof(&key, "POST", &rs.url, &token, 0, Some(&nonce));
    assert_eq!(post_with(&second, &token, &good).await.status, 200);
    // And the proof the second has seen is a replay at the first.
    let replayed = post_with(&first, &token, &good).await;
    assert_eq!(replayed.status, 401);
    let said = replayed
        .header("www-authenticate")
        .unwrap_or_default()
        .to_owned();
    assert!(said.contains("used before"), "{said}");
}

fn read_body() -> String {
    http_support::body(7, "tools/call", json!({"name": "read", "arguments": {}}))
}

async fn post_with(rs: &Resource, token: &str, proof: &str) -> http_support::Raw {
    let mut headers = http_support::mcp_headers("tools/call", Some("read"));
    headers.push(("Authorization".into(), format!("DPoP {token}")));
    headers.push(("DPoP".into(), proof.to_owned()));
    http_support::post(rs.addr, &headers, &read_body()).await
}

/// A new P-256 key: its signing half and its PKCS#8 PEM.
fn p256_key() -> (p256::SecretKey, String) {
    use p256::pkcs8::EncodePrivateKey as _;
    let secret = p256::SecretKey::from_slice(&sha2::Sha256::digest(b"a stranger's key")).unwrap();
    let pem = secret.to_pkcs8_pem(p256::pkcs8::LineEnding::LF).unwrap();
    (secret, pem.to_string())
}

fn encoding_key(pem: &str) -> jsonwebtoken::EncodingKey {
    use p256::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _};
    let secret = p256::SecretKey::from_pkcs8_pem(pem).unwrap();
    jsonwebtoken::EncodingKey::from_ec_der(secret.to_pkcs8_der().unwrap().as_bytes())
}

fn thumbprint(pem: &str) -> String {
    let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(
        &encoding_key(pem),
        jsonwebtoken::Algorithm::ES256,
    )
    .unwrap();
    jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
}

/// A DPoP proof by the key in `pem` for `htm` `htu`, presenting `token`, made
/// `iat_offset` seconds from now, with `nonce` if given.
fn proof(
    pem: &str,
    htm: &str,
    htu: &str,
    token: &str,
    iat_offset: i64,
    nonce: Option<&str>,
) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let key = encoding_key(pem);
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.typ = Some("dpop+jwt".into());
    header.jwk = Some(
        jsonwebtoken::jwk::Jwk::from_encoding_key(&key, jsonwebtoken::Algorithm::ES256).unwrap(),
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mut claims = json!({
        "jti": format!("test-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)),
        "htm": htm,
        "htu": htu,
        "iat": now + iat_offset,
        "ath": URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes())),
    });
    if let Some(nonce) = nonce {
        claims["nonce"] = nonce.into();
    }
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}
