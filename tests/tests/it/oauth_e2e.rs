//! tern's OAuth client and resource server end to end against a real authorization
//! server, oidc-provider (`tests/oidc/provider.mjs`, started by each test): the client
//! discovers the server's authorization server, registers dynamically, sends the user
//! through the provider's login and consent pages (filled in over HTTP here, no
//! browser), calls a tool on a tern server that checks the JWT against the provider's
//! JWKS, refreshes the token once it expires without the user, and steps up when a tool
//! needs a scope the token lacks. Runs when `TERN_OIDC_NODE` and `TERN_OIDC_PROVIDER`
//! are set: `scripts/oidc` installs the pinned provider and runs these, which are
//! `#[ignore]`d in a plain `cargo test`.

use crate::http_support;
use crate::oauth_server::notes;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tern_mcp::auth::JwtVerifier;
use tern_mcp::client::Client;
use tern_mcp::http::{HttpServer, ProtectedResource};
use tern_mcp::oauth::{OAuthClient, UserAgent};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::{BoxFuture, TransportError};
use tern_tests::text_of;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use url::Url;

/// How long the provider's access tokens live (`ACCESS_TTL`).
pub(crate) const ACCESS_TTL: u64 = 2;

/// The provider in a child process, killed on drop.
pub(crate) struct Provider {
    _child: tokio::process::Child,
    pub(crate) issuer: String,
}

async fn provider(resources: &[&str]) -> Option<Provider> {
    provider_with(resources, false).await
}

/// The provider for `resources`, requiring DPoP nonces when `dpop_nonce`; `None` when the
/// environment does not say where it is (outside `scripts/oidc`).
pub(crate) async fn provider_with(resources: &[&str], dpop_nonce: bool) -> Option<Provider> {
    let node = std::env::var("TERN_OIDC_NODE").ok()?;
    let script = std::env::var("TERN_OIDC_PROVIDER").ok()?;
    let mut child = tokio::process::Command::new(node)
        .arg(script)
        .args(resources)
        .env("ACCESS_TTL", ACCESS_TTL.to_string())
        .env("DPOP_NONCE", if dpop_nonce { "1" } else { "0" })
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the provider starts")
        .unwrap()
        .unwrap();
    let issuer = line.strip_prefix("listening on ").unwrap().to_owned();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Some(Provider {
        _child: child,
        issuer,
    })
}

/// A user at the provider's development login and consent pages: follows redirects,
/// keeps the provider's cookies, logs in as `alice` and consents, and hands back the
/// redirect to the client's `redirect_uri`.
#[derive(Debug, Default)]
pub(crate) struct ConsentingUser {
    cookies: Mutex<Vec<(String, String)>>,
    /// How many times the user was sent to authorize.
    pub(crate) visits: AtomicUsize,
    /// How many pages they filled in (logins and consents).
    forms: AtomicUsize,
}

const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// A raw HTTP/1.1 exchange with `url`: the status, the headers, the body.
async fn fetch(
    url: &Url,
    cookies: &str,
    form: Option<&str>,
) -> Result<http_support::Raw, TransportError> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let mut stream = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| TransportError::new(e.to_string()))?;
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let verb = if form.is_some() { "POST" } else { "GET" };
    let mut head =
        format!("{verb} {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n");
    if !cookies.is_empty() {
        head.push_str(&format!("Cookie: {cookies}\r\n"));
    }
    let body = form.unwrap_or_default();
    if form.is_some() {
        head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| TransportError::new(e.to_string()))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .await
        .map_err(|e| TransportError::new(e.to_string()))?;
    Ok(http_support::parse_raw(&raw))
}

impl ConsentingUser {
    fn cookie_header(&self) -> String {
        let jar = self.cookies.lock().unwrap();
        jar.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep_cookies(&self, answer: &http_support::Raw) {
        let mut jar = self.cookies.lock().unwrap();
        for (name, value) in &answer.headers {
            if !name.eq_ignore_ascii_case("set-cookie") {
                continue;
            }
            let pair = value.split(';').next().unwrap_or_default();
            if let Some((k, v)) = pair.split_once('=') {
                jar.retain(|(old, _)| old != k);
                jar.push((k.trim().to_owned(), v.trim().to_owned()));
            }
        }
    }

    async fn walk(&self, mut url: Url) -> Result<Url, TransportError> {
        let mut form: Option<String> = None;
        for _ in 0..20 {
            let answer = fetch(&url, &self.cookie_header(), form.as_deref()).await?;
            self.keep_cookies(&answer);
            form = None;
            if (300..400).contains(&answer.status) {
                let location = answer.header("location").unwrap_or_default().to_owned();
                let next = url
                    .join(&location)
                    .map_err(|e| TransportError::new(e.to_string()))?;
                if next.as_str().starts_with(REDIRECT_URI) {
                    return Ok(next);
                }
                url = next;
                continue;
            }
            // The development interaction pages: a login form, then a consent form.
            let page = &answer.body;
            let prompt = if page.contains("name=\"prompt\" value=\"login\"") {
                "prompt=login&login=alice&password=secret"
            } else if page.contains("name=\"prompt\" value=\"consent\"") {
                "prompt=consent"
            } else {
                return Err(TransportError::new(format!(
                    "an unexpected page at {url}: HTTP {} {}",
                    answer.status,
                    &page[..page.len().min(300)]
                )));
            };
            self.forms.fetch_add(1, Ordering::Relaxed);
            form = Some(prompt.to_owned());
        }
        Err(TransportError::new("the provider kept redirecting"))
    }
}

/// The test's handle on the user it hands the client.
#[derive(Debug, Clone)]
pub(crate) struct User(pub(crate) Arc<ConsentingUser>);

impl UserAgent for User {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.into()
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, TransportError>> {
        self.0.visits.fetch_add(1, Ordering::Relaxed);
        Box::pin(self.0.walk(url))
    }
}

/// `verifier` guarding the notes server on `listener` (metadata naming `issuer`), and a
/// tern client signing in through `user`.
async fn notes_behind(
    listener: tokio::net::TcpListener,
    resource: &str,
    issuer: &str,
    verifier: Arc<dyn tern_mcp::auth::TokenVerifier>,
    user: &User,
) -> Client {
    let mcp = notes();
    let http = HttpServer::new(mcp.server().unwrap())
        .token_verifier(verifier)
        .protected_resource(ProtectedResource::new(resource, issuer).with_scopes(["files:read"]));
    tokio::spawn(http.serve(listener, std::future::pending()));
    let oauth = OAuthClient::builder("tern end to end")
        .user_agent(user.clone())
        .build()
        .unwrap();
    let transport = HttpClientTransport::builder(resource)
        .authorizer(Arc::new(oauth))
        .build()
        .unwrap();
    Client::builder("e2e", "1")
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn tern_authorizes_refreshes_and_steps_up_against_oidc_provider() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let Some(provider) = provider(&[&resource]).await else {
        return;
    };
    let verifier = JwtVerifier::new(
        format!("{}/jwks", provider.issuer),
        &provider.issuer,
        &resource,
    )
    .unwrap()
    .leeway(Duration::ZERO);
    let user = User(Arc::default());
    let client = notes_behind(
        listener,
        &resource,
        &provider.issuer,
        Arc::new(verifier),
        &user,
    )
    .await;
    assert_eq!(client.protocol_version(), "2026-07-28");

    // Discovered, registered and authorized on the first request: one visit, a login
    // and a consent.
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    assert_eq!(user.0.visits.load(Ordering::Relaxed), 1);
    assert_eq!(user.0.forms.load(Ordering::Relaxed), 2);

    // The access token expires; the refresh token gets another without the user.
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL + 2)).await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    assert_eq!(
        user.0.visits.load(Ordering::Relaxed),
        1,
        "a refresh asks nothing of the user"
    );

    // `write` needs files:write: 403, a step-up (consent to the new scope only), done.
    let wrote = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(text_of(&wrote), "written");
    assert_eq!(user.0.visits.load(Ordering::Relaxed), 2);
    // And the stepped-up token still reads: the union of the scopes was asked.
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
}

#[tokio::test]
#[ignore = "needs TERN_OIDC_NODE: run scripts/oidc"]
async fn a_server_that_introspects_opaque_tokens_serves_tern_signed_in_through_oidc_provider() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    // The JWT resource is another (unused here); this one gets opaque tokens.
    let Some(provider) = provider(&["http://127.0.0.1:9/unused", &resource]).await else {
        return;
    };
    let verifier = tern_mcp::auth::IntrospectionVerifier::new(
        format!("{}/token/introspection", provider.issuer),
        "notes-server",
        "notes-server-secret",
        resource.clone(),
    )
    .unwrap();
    let user = User(Arc::default());
    let client = notes_behind(
        listener,
        &resource,
        &provider.issuer,
        Arc::new(verifier),
        &user,
    )
    .await;
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(text_of(&read), "read by alice");
    // An opaque token without files:write: the introspected scopes say so (403, step-up).
    let wrote = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(text_of(&wrote), "written");
    assert_eq!(user.0.visits.load(Ordering::Relaxed), 2);
}
