//! Enterprise-managed authorization and workload identity end to end, with an identity
//! provider and an authorization server of the test's own (oidc-provider has neither the
//! ID-JAG token exchange nor the JWT bearer grant): tern's client exchanges the user's ID
//! token at the IdP for an ID-JAG and presents it to the MCP server's authorization
//! server; a workload presents the token in its file, read again when it changed; a
//! refused grant is said once, never retried. tern's resource server checks the issued
//! JWT access tokens against the authorization server's JWKS.

use crate::oauth_machine::connect;
use crate::oauth_server::{SigningKey, notes, now, signing_key};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde_json::{Value, json};
use tern_mcp::auth::JwtVerifier;
use tern_mcp::client::Client;
use tern_mcp::http::{HttpServer, ProtectedResource};
use tern_mcp::oauth::{
    IdentityProvider, OAuthClient, OAuthClientBuilder, Registration, TokenSource,
};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_tests::text_of;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const WORKLOAD_ISSUER: &str = "https://workloads.test";

/// The IdP and the authorization server, one HTTP server at two paths.
struct Authority {
    /// The IdP's key: ID tokens, ID-JAGs and workload tokens.
    idp: SigningKey,
    /// The authorization server's key: access tokens.
    issuer_key: SigningKey,
    issuer: String,
    resource: String,
    /// Token requests at the authorization server.
    grants: AtomicUsize,
    /// How long access tokens live.
    ttl: u64,
}

type Shared = Arc<Authority>;

fn json_answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn refuse(error: &str, why: &str) -> Response {
    json_answer(
        StatusCode::BAD_REQUEST,
        json!({"error": error, "error_description": why}),
    )
}

fn form(body: &[u8]) -> std::collections::HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn sign(key: &SigningKey, typ: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

/// `jwt`'s claims, verified with `key` for `audience`.
fn verified(key: &SigningKey, jwt: &str, audience: &str) -> Option<Value> {
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(key.jwk.clone()).unwrap();
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[audience]);
    jsonwebtoken::decode::<Value>(jwt, &DecodingKey::from_jwk(&jwk).unwrap(), &validation)
        .ok()
        .map(|d| d.claims)
}

/// RFC 8693 at the IdP: the user's ID token for an ID-JAG naming the authorization
/// server (`audience`) and the resource.
async fn exchange(State(a): State<Shared>, body: Bytes) -> Response {
    let f = form(&body);
    let Some(id_token) = f
        .get("subject_token")
        .and_then(|t| verified(&a.idp, t, "idp-client"))
    else {
        return refuse(
            "invalid_grant",
            "not an ID token of this IdP for idp-client",
        );
    };
    if f.get("requested_token_type").map(String::as_str) != Some(ID_JAG)
        || f.get("audience") != Some(&a.issuer)
        || f.get("resource") != Some(&a.resource)
    {
        return refuse(
            "invalid_request",
            "an ID-JAG for this server and resource only",
        );
    }
    let jag = json!({"iss": "https://idp.test", "sub": id_token["sub"], "aud": a.issuer,
        "resource": a.resource, "client_id": "mcp-client", "exp": now() + 300, "iat": now(),
        "jti": now().to_string()});
    json_answer(
        StatusCode::OK,
        json!({"access_token": sign(&a.idp, Some("oauth-id-jag+jwt"), &jag),
            "issued_token_type": ID_JAG, "token_type": "N_A"}),
    )
}

/// The JWT bearer grant at the authorization server: an ID-JAG from a client that
/// authenticates (`client_secret_basic`), or a workload's token on its own.
async fn token(State(a): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    a.grants.fetch_add(1, Ordering::Relaxed);
    let f = form(&body);
    if f.get("grant_type").map(String::as_str) != Some(JWT_BEARER) {
        return refuse("unsupported_grant_type", "jwt-bearer only");
    }
    let assertion = f.get("assertion").cloned().unwrap_or_default();
    let Some(claims) = verified(&a.idp, &assertion, &a.issuer) else {
        return refuse(
            "invalid_grant",
            "the assertion does not verify for this issuer",
        );
    };
    let typ = jsonwebtoken::decode_header(&assertion)
        .ok()
        .and_then(|h| h.typ);
    let client_id = if typ.as_deref() == Some("oauth-id-jag+jwt") {
        let basic = base64::engine::general_purpose::STANDARD.encode("mcp-client:mcp-secret");
        let authorization = headers.get("authorization").and_then(|v| v.to_str().ok());
        if authorization != Some(&format!("Basic {basic}")) || claims["resource"] != a.resource {
            return refuse("invalid_client", "the ID-JAG's client, with its secret");
        }
        "mcp-client"
    } else if claims["iss"] == WORKLOAD_ISSUER {
        "workload"
    } else {
        return refuse("invalid_grant", "an assertion from nobody trusted");
    };
    let access = json!({"iss": a.issuer, "aud": a.resource, "sub": claims["sub"],
        "client_id": client_id, "scope": "files:read", "iat": now(), "exp": now() + a.ttl});
    json_answer(
        StatusCode::OK,
        json!({"access_token": sign(&a.issuer_key, None, &access), "token_type": "Bearer",
            "expires_in": a.ttl}),
    )
}

/// The authorization server, the IdP and the notes server behind a JWT verifier.
struct World {
    authority: Shared,
    resource: String,
}

async fn world(ttl: u64) -> World {
    let as_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", as_listener.local_addr().unwrap());
    let rs_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", rs_listener.local_addr().unwrap());
    let authority = Arc::new(Authority {
        idp: signing_key("idp"),
        issuer_key: signing_key("as"),
        issuer: issuer.clone(),
        resource: resource.clone(),
        grants: AtomicUsize::new(0),
        ttl,
    });
    let metadata = json!({"issuer": issuer, "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"), "grant_types_supported": [JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"]});
    let jwks = json!({"keys": [authority.issuer_key.jwk]});
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || async move { json_answer(StatusCode::OK, metadata) }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || async move { json_answer(StatusCode::OK, jwks) }),
        )
        .route("/token", axum::routing::post(token))
        .route("/idp/token", axum::routing::post(exchange))
        .with_state(Arc::clone(&authority));
    tokio::spawn(async move { axum::serve(as_listener, app).await });
    let verifier = JwtVerifier::new(format!("{issuer}/jwks"), &issuer, &resource)
        .unwrap()
        .leeway(Duration::ZERO);
    let http = HttpServer::new(notes().server().unwrap())
        .token_verifier(Arc::new(verifier))
        .protected_resource(ProtectedResource::new(&resource, &issuer));
    tokio::spawn(http.serve(rs_listener, std::future::pending()));
    World {
        authority,
        resource,
    }
}

/// What refuses to connect a client authorized by `oauth` to `w`'s server.
async fn refusal(w: &World, oauth: OAuthClientBuilder) -> String {
    let transport = HttpClientTransport::builder(w.resource.as_str())
        .authorizer(Arc::new(oauth.build().unwrap()))
        .build()
        .unwrap();
    Client::builder("agent", "1")
        .connect(Arc::new(transport))
        .await
        .expect_err("refused")
        .to_string()
}

/// A workload token for `sub`, for the authorization server `audience`.
fn workload_token(w: &World, sub: &str, audience: &str) -> String {
    let claims = json!({"iss": WORKLOAD_ISSUER, "sub": sub, "aud": audience,
        "iat": now(), "exp": now() + 300});
    sign(&w.authority.idp, None, &claims)
}

#[tokio::test]
async fn an_enterprise_user_reaches_the_server_through_an_id_jag() {
    let w = world(3600).await;
    let claims = json!({"iss": "https://idp.test", "sub": "alice@example.com",
        "aud": "idp-client", "iat": now(), "exp": now() + 3600});
    let id_token = sign(&w.authority.idp, None, &claims);
    let idp = IdentityProvider::new(
        format!("{}/idp/token", w.authority.issuer),
        TokenSource::from_fn(move || {
            let id_token = id_token.clone();
            async move { Ok(id_token) }
        }),
    )
    .client(Registration::new("idp-client"));
    let oauth = OAuthClient::builder("agent")
        .pre_registered(Registration::new("mcp-client").with_secret("mcp-secret"))
        .enterprise(idp);
    let client = connect(&w.resource, oauth).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice@example.com");
    assert_eq!(w.authority.grants.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_workload_presents_the_token_in_its_file_read_again_when_a_grant_is_needed() {
    let w = world(1).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    let issuer = w.authority.issuer.clone();
    std::fs::write(&file, workload_token(&w, "workload-a", &issuer)).unwrap();
    let oauth = OAuthClient::builder("job").workload_identity(TokenSource::file(&file));
    let client = connect(&w.resource, oauth).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by workload-a");

    // The platform rotates the token; once the access token expires, the new one goes.
    std::fs::write(&file, workload_token(&w, "workload-b", &issuer)).unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by workload-b");
    assert_eq!(w.authority.grants.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_refused_workload_grant_is_said_once_and_not_retried() {
    let w = world(3600).await;
    let wrong = workload_token(&w, "workload-a", "https://another.test");
    let oauth = OAuthClient::builder("job").workload_identity(TokenSource::value(wrong));
    let said = refusal(&w, oauth).await;
    assert!(said.contains("invalid_grant"), "{said}");
    assert_eq!(
        w.authority.grants.load(Ordering::Relaxed),
        1,
        "no retry, no other grant"
    );

    // A command that fails says so, with its first line of stderr.
    let failing = TokenSource::command("sh", ["-c", "echo no token here >&2; exit 3"]);
    let said = refusal(&w, OAuthClient::builder("job").workload_identity(failing)).await;
    assert!(said.contains("no token here"), "{said}");
    assert_eq!(w.authority.grants.load(Ordering::Relaxed), 1);
}

#[test]
fn a_machine_grant_is_checked_when_the_client_is_built() {
    let said = |b: OAuthClientBuilder| b.build().expect_err("refused").to_string();
    let no_secret = OAuthClient::builder("svc").client_credentials(Registration::new("svc"));
    assert!(said(no_secret).contains("a secret or a signing key"));
    let unregistered = OAuthClient::builder("svc").enterprise(IdentityProvider::new(
        "https://idp.test/token",
        TokenSource::value("t"),
    ));
    assert!(said(unregistered).contains("pre-registered"));
    assert!(said(OAuthClient::builder("nothing")).contains("a user agent or a machine grant"));
}
