//! tern's HTTP server as an OAuth 2.1 resource server over loopback sockets: its
//! Protected Resource Metadata, JWT access tokens checked by `JwtVerifier` against a
//! JWKS served here (signature, issuer, audience, expiry, an unknown key fetched again),
//! 403 `insufficient_scope` for a tool's required scope, and sealed `requestState`
//! bound to the token's subject.

use crate::http_support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tern_mcp::ask;
use tern_mcp::auth::JwtVerifier;
use tern_mcp::http::{HttpServer, ProtectedResource};
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolResult};
use tokio::net::TcpListener;

use http_support::{body, mcp_headers, post, send, set};

const ISSUER: &str = "https://auth.test";
const CLIENT: &str = "notes-app";

/// A signing key, its id and its public half as a JWK.
pub(crate) struct SigningKey {
    pub(crate) kid: String,
    pub(crate) encoding: EncodingKey,
    pub(crate) jwk: Value,
}

pub(crate) fn signing_key(kid: &str) -> SigningKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let encoding = EncodingKey::from_ec_der(&pair.serialize_der());
    let point = pair.public_key_raw();
    // An uncompressed P-256 point: 0x04, then x and y, 32 bytes each.
    let (x, y) = point[1..].split_at(32);
    let jwk = json!({"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)});
    SigningKey {
        kid: kid.into(),
        encoding,
        jwk,
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token signed with `key`: `claims` over the defaults (this issuer, `audience`, an
/// hour to live, the notes app, subject alice).
fn token(key: &SigningKey, audience: &str, claims: Value) -> String {
    let mut all = json!({"iss": ISSUER, "aud": audience, "exp": now() + 3600, "iat": now(),
        "client_id": CLIENT, "sub": "alice", "scope": "files:read"});
    for (k, v) in claims.as_object().unwrap() {
        all[k] = v.clone();
    }
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, &all, &key.encoding).unwrap()
}

/// The JWKS the verifier fetches, changeable while the test runs.
type Jwks = Arc<Mutex<Value>>;

/// How the JWKS endpoint behaves: how long it takes to answer, and a count of the
/// fetches it has begun to answer.
#[derive(Clone, Default)]
struct Issuer {
    stall: Arc<Mutex<Duration>>,
    fetches: Arc<tokio::sync::watch::Sender<usize>>,
}

async fn serve_jwks(jwks: Jwks, issuer: Issuer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = Arc::clone(&jwks);
            let issuer = issuer.clone();
            async move {
                issuer.fetches.send_modify(|n| *n += 1);
                let stall = *issuer.stall.lock().unwrap();
                tokio::time::sleep(stall).await;
                let text = jwks.lock().unwrap().to_string();
                ([("content-type", "application/json")], text)
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/jwks")
}

/// The notes server: `read` needs `files:read`, `write` needs `files:write`, `confirm`
/// asks a question and keeps sealed state across the round; the prompt `draft` needs
/// `files:write`. The end-to-end tests serve it too.
pub(crate) fn notes() -> McpServer {
    let mcp = McpServer::new("notes", "1");
    mcp.tool("read").required_scopes(["files:read"]).run(
        |_: NoArgs, ctx: ToolContext| async move {
            let who = ctx
                .auth()
                .and_then(|a| a.subject.clone())
                .unwrap_or_default();
            Ok(format!("read by {who}"))
        },
    );
    mcp.tool("write")
        .required_scopes(["files:write"])
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("written") });
    mcp.prompt("draft")
        .required_scopes(["files:write"])
        .run(|_: NoArgs, _ctx| async { Ok("Draft a note.".to_owned()) });
    mcp.tool("confirm")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if ctx.request_state() == Some("asked") {
                let done = CallToolResult::new(vec![ask::text("confirmed")]);
                return Ok(CallToolOutcome::Complete(done));
            }
            let form = ask::elicit_form(
                "Sure?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            )?;
            Ok(ask::input_required([("ok", form)], Some("asked")).into())
        });
    mcp
}

struct Protected {
    addr: SocketAddr,
    audience: String,
    jwks: Jwks,
    issuer: Issuer,
    key: SigningKey,
}

async fn protected_server() -> Protected {
    let key = signing_key("k1");
    let jwks: Jwks = Arc::new(Mutex::new(json!({"keys": [key.jwk.clone()]})));
    let issuer = Issuer::default();
    let jwks_uri = serve_jwks(Arc::clone(&jwks), issuer.clone()).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let audience = format!("http://{addr}/mcp");
    let mcp = notes();
    let verifier = JwtVerifier::new(jwks_uri, ISSUER, audience.clone()).unwrap();
    let http = HttpServer::new(mcp.server().unwrap())
        .token_verifier(Arc::new(verifier))
        .protected_resource(
            ProtectedResource::new(audience.clone(), ISSUER).with_scopes(["files:read"]),
        );
    tokio::spawn(http.serve(listener, std::future::pending()));
    Protected {
        addr,
        audience,
        jwks,
        issuer,
        key,
    }
}

fn with_token(headers: &[(String, String)], token: &str) -> Vec<(String, String)> {
    let mut h = headers.to_vec();
    set(&mut h, "Authorization", Some(&format!("Bearer {token}")));
    h
}

fn call(name: &str) -> (Vec<(String, String)>, String) {
    let args = json!({"name": name, "arguments": {}});
    (
        mcp_headers("tools/call", Some(name)),
        body(1, "tools/call", args),
    )
}

#[tokio::test]
async fn without_a_token_the_client_is_pointed_to_the_protected_resource_metadata() {
    let s = protected_server().await;
    let (headers, body) = call("read");
    let r = post(s.addr, &headers, &body).await;
    assert_eq!(r.status, 401, "{r:?}");
    let challenge = r.header("www-authenticate").unwrap();
    let metadata_url = format!("http://{}/.well-known/oauth-protected-resource/mcp", s.addr);
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = get(s.addr, path).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
        let metadata = r.json();
        assert_eq!(metadata["resource"], s.audience);
        assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
        assert_eq!(metadata["scopes_supported"], json!(["files:read"]));
    }
}

/// GETs `path` on the server (the helpers speak to `/mcp`).
async fn get(addr: SocketAddr, path: &str) -> http_support::Raw {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    http_support::parse_raw(&raw)
}

#[tokio::test]
async fn a_valid_token_is_served_and_every_bad_one_is_401() {
    let s = protected_server().await;
    let (headers, body) = call("read");
    let good = token(&s.key, &s.audience, json!({}));
    let r = post(s.addr, &with_token(&headers, &good), &body).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "read by alice");

    let other = signing_key("k1"); // the same key id, another key: a forgery
    let bad = [
        (
            "expired",
            token(&s.key, &s.audience, json!({"exp": now() - 3600})),
        ),
        (
            "not yet valid",
            token(&s.key, &s.audience, json!({"nbf": now() + 3600})),
        ),
        (
            "another audience",
            token(&s.key, "http://elsewhere/mcp", json!({})),
        ),
        (
            "another issuer",
            token(&s.key, &s.audience, json!({"iss": "https://evil.test"})),
        ),
        ("another key", token(&other, &s.audience, json!({}))),
        ("not a JWT", "opaque-token".to_owned()),
    ];
    for (what, bad) in bad {
        let r = post(s.addr, &with_token(&headers, &bad), &body).await;
        assert_eq!(r.status, 401, "{what}: {r:?}");
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
    }
}

#[tokio::test]
async fn a_token_signed_with_a_key_published_later_is_accepted_once_the_keys_are_fetched_again() {
    let s = protected_server().await;
    let (headers, body) = call("read");
    // The first token makes the verifier fetch the set (k1 only).
    let first = token(&s.key, &s.audience, json!({}));
    assert_eq!(
        post(s.addr, &with_token(&headers, &first), &body)
            .await
            .status,
        200
    );
    // The issuer rotates: k2 is published, and signs the next token.
    let rotated = signing_key("k2");
    s.jwks.lock().unwrap()["keys"]
        .as_array_mut()
        .unwrap()
        .push(rotated.jwk.clone());
    // An unknown key fetches the set again, at most once a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let next = token(&rotated, &s.audience, json!({}));
    let r = post(s.addr, &with_token(&headers, &next), &body).await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_valid_token_is_not_held_up_while_the_issuer_is_slow_to_send_its_keys() {
    let s = protected_server().await;
    let (headers, body) = call("read");
    let valid = with_token(&headers, &token(&s.key, &s.audience, json!({})));
    assert_eq!(post(s.addr, &valid, &body).await.status, 200);

    // The issuer now takes 8 s to answer, and a token naming a key nobody published
    // makes the verifier fetch the set again (a second after the last fetch).
    *s.issuer.stall.lock().unwrap() = Duration::from_secs(8);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut fetches = s.issuer.fetches.subscribe();
    let made_up = with_token(&headers, &token(&signing_key("k9"), &s.audience, json!({})));
    let stalled = tokio::spawn({
        let (addr, body) = (s.addr, body.clone());
        async move { post(addr, &made_up, &body).await }
    });
    tokio::time::timeout(Duration::from_secs(5), fetches.wait_for(|n| *n == 2))
        .await
        .expect("the made-up key fetched the set again")
        .unwrap();

    // While that fetch hangs, a token whose key is known is served at once.
    let started = std::time::Instant::now();
    let r = post(s.addr, &valid, &body).await;
    println!(
        "a valid token while the JWKS stalls: answered in {:?}",
        started.elapsed()
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        !stalled.is_finished(),
        "the made-up key's fetch was over before the valid token was answered"
    );
    // Further made-up keys wait for the fetch under way instead of starting more.
    let again = with_token(&headers, &token(&signing_key("k8"), &s.audience, json!({})));
    let also = tokio::spawn({
        let (addr, body) = (s.addr, body.clone());
        async move { post(addr, &again, &body).await }
    });
    assert_eq!(stalled.await.unwrap().status, 401);
    assert_eq!(also.await.unwrap().status, 401);
    assert_eq!(*fetches.borrow(), 2, "one fetch served both made-up keys");
}

#[tokio::test]
async fn a_token_without_a_tools_scope_is_403_naming_the_scope() {
    let s = protected_server().await;
    let (headers, body) = call("write");
    let reader = token(&s.key, &s.audience, json!({"scope": "files:read"}));
    let r = post(s.addr, &with_token(&headers, &reader), &body).await;
    assert_eq!(r.status, 403, "{r:?}");
    let challenge = r.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"files:write\""), "{challenge}");
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    let writer = token(
        &s.key,
        &s.audience,
        json!({"scope": "files:read files:write"}),
    );
    let r = post(s.addr, &with_token(&headers, &writer), &body).await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn sealed_state_is_bound_to_the_subject_of_the_token() {
    let s = protected_server().await;
    let (headers, first) = call("confirm");
    let alice = token(&s.key, &s.audience, json!({"sub": "alice"}));
    let bob = token(&s.key, &s.audience, json!({"sub": "bob"}));
    let r = post(s.addr, &with_token(&headers, &alice), &first).await;
    assert_eq!(r.status, 200, "{r:?}");
    let asked = r.json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = body(
        2,
        "tools/call",
        json!({"name": "confirm", "arguments": {}, "requestState": state,
            "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}}),
    );
    // The same client, another user: the state is not theirs.
    let r = post(s.addr, &with_token(&headers, &bob), &retry).await;
    assert_eq!(r.json()["error"]["code"], -32602, "{r:?}");
    let r = post(s.addr, &with_token(&headers, &alice), &retry).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "confirmed",
        "{r:?}"
    );
}

#[tokio::test]
async fn the_metadata_is_not_served_where_no_resource_is_protected() {
    let addr = http_support::serve_default(notes().server().unwrap()).await;
    let r = get(addr, "/.well-known/oauth-protected-resource").await;
    assert_eq!(r.status, 404, "{r:?}");
    let r = send(addr, "GET", &[], "").await;
    assert_ne!(r.status, 200);
}

#[tokio::test]
async fn the_lists_leave_out_what_the_token_may_not_use_and_a_prompt_checks_its_scope_too() {
    let s = protected_server().await;
    let reader = token(&s.key, &s.audience, json!({"scope": "files:read"}));
    let list = |method: &str| (mcp_headers(method, None), body(1, method, json!({})));
    let (headers, request) = list("tools/list");
    let r = post(s.addr, &with_token(&headers, &reader), &request).await;
    let names: Vec<String> = r.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["read", "confirm"], "{r:?}");
    let (headers, request) = list("prompts/list");
    let r = post(s.addr, &with_token(&headers, &reader), &request).await;
    assert_eq!(r.json()["result"]["prompts"], json!([]), "{r:?}");
    let get = body(2, "prompts/get", json!({"name": "draft"}));
    let r = post(
        s.addr,
        &with_token(&mcp_headers("prompts/get", Some("draft")), &reader),
        &get,
    )
    .await;
    assert_eq!(r.status, 403, "{r:?}");
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("scope=\"files:write\"")
    );
}

/// An authorizer that always has a new token (none of which the server takes), counting
/// the refusals it was shown.
#[derive(Debug, Default)]
struct Hopeful {
    asked: std::sync::atomic::AtomicUsize,
}

impl tern_mcp::transport::http::client::Authorizer for Hopeful {
    fn authorize<'a>(
        &'a self,
        _challenge: tern_mcp::transport::http::client::Challenge<'a>,
    ) -> tern_mcp::transport::BoxFuture<
        'a,
        Result<Option<String>, tern_mcp::transport::TransportError>,
    > {
        let n = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { Ok(Some(format!("not-a-jwt-{n}"))) })
    }
}

#[tokio::test]
async fn a_client_retries_a_refused_authorization_three_times_then_the_refusal_stands() {
    let s = protected_server().await;
    let hopeful = Arc::new(Hopeful::default());
    let transport = tern_mcp::transport::http::client::HttpClientTransport::builder(&s.audience)
        .authorizer(hopeful.clone())
        .build()
        .unwrap();
    let client = tern_mcp::client::Client::builder("hopeful", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    let refused =
        tokio::time::timeout(Duration::from_secs(10), client.call_tool("read", json!({})))
            .await
            .expect("the retries end")
            .unwrap_err();
    assert_eq!(
        hopeful.asked.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "one request and three authorized retries, then the last 401 stands"
    );
    assert!(
        matches!(&refused, tern_mcp::Error::Transport(e) if e.http_status() == Some(401)),
        "{refused:?}"
    );
}
