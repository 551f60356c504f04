//! The HTTP client over TLS: a tern server serving TLS itself (`HttpServer::tls`) on
//! loopback with a self-signed certificate for `localhost`. The client completes the flow when it trusts
//! that certificate, and refuses the server when it does not.

use std::net::SocketAddr;
use std::sync::Arc;
use tern_mcp::http::HttpLimits;

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::EraMode;
use tern_mcp::http::HttpServer;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{CallToolResult, method};
use tern_tests::{Asked, recording_client, text_of};

/// A tool that asks for a region the MRTR way, then answers.
pub(crate) fn server() -> Server {
    Server::builder("tls", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, params| async move {
            let answered = params
                .input_responses
                .as_ref()
                .and_then(|r| r.get::<method::Elicit>("region"))
                .and_then(Result::ok);
            Ok(match answered {
                None => {
                    let form = ask::elicit_form(
                        "Which region?",
                        json!({"type": "object", "properties": {"region": {"type": "string"}}}),
                    )
                    .map_err(|e| tern_mcp::jsonrpc::RpcError::internal(e.to_string()))?;
                    ask::input_required([("region", form)], None).into()
                }
                Some(_) => {
                    let text = format!("done over {}", ctx.meta().protocol_version);
                    CallToolResult::new(vec![ask::text(text)]).into()
                }
            })
        })
        .build()
        .unwrap()
}

/// A rustls configuration with a fresh self-signed certificate for `localhost`, and the
/// certificate a client must trust (PEM, and DER).
pub(crate) fn tls_config() -> (
    rustls::ServerConfig,
    String,
    rustls::pki_types::CertificateDer<'static>,
) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert_pem = certified.cert.pem();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![certified.cert.der().clone()], key)
    .unwrap();
    (config, cert_pem, certified.cert.der().clone())
}

/// Serves `http` on loopback until the test ends; returns its address.
/// A TLS client trusting `cert` alone, offering `alpn`.
pub(crate) fn tls_connector(
    cert: rustls::pki_types::CertificateDer<'static>,
    alpn: &[u8],
) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

pub(crate) async fn serve_on_loopback(http: HttpServer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http.serve(listener, std::future::pending()));
    addr
}

/// Serves the MRTR tool over TLS (tern's own accept loop) on loopback; returns the
/// address and the certificate (PEM).
async fn tls_endpoint() -> (SocketAddr, String) {
    let (config, cert_pem, _) = tls_config();
    let addr = serve_on_loopback(HttpServer::new(server()).tls(config)).await;
    (addr, cert_pem)
}

fn client() -> tern_mcp::client::ClientBuilder {
    recording_client(&Asked::default())
}

#[tokio::test]
async fn the_flow_completes_over_https_with_a_trusted_certificate() {
    let (addr, cert) = tls_endpoint().await;
    let url = format!("https://localhost:{}/mcp", addr.port());
    let transport = HttpClientTransport::builder(&url)
        .root_certificates_pem(cert.as_bytes())
        .unwrap()
        .build()
        .unwrap();
    let client = client()
        .era(EraMode::Auto)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "done over 2026-07-28");
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let (addr, _cert) = tls_endpoint().await;
    let url = format!("https://localhost:{}/mcp", addr.port());
    let transport = HttpClientTransport::builder(&url).build().unwrap();
    let client = client()
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    let err = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap_err();
    // The reason reaches the caller, not only hyper's "client error (Connect)".
    let message = err.to_string();
    assert!(message.contains("invalid peer certificate"), "{message}");
}

#[tokio::test]
async fn root_certificates_must_be_pem_certificates() {
    let err = HttpClientTransport::builder("https://localhost/mcp")
        .root_certificates_pem(b"not a certificate")
        .unwrap_err();
    assert!(err.to_string().contains("no CERTIFICATE"), "{err}");
    let bad = b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
    assert!(
        HttpClientTransport::builder("https://localhost/mcp")
            .root_certificates_pem(bad)
            .is_err()
    );
}

#[tokio::test]
async fn a_tls_handshake_never_finished_is_closed_at_the_header_budget() {
    use tokio::io::AsyncReadExt as _;
    let (config, _, _) = tls_config();
    let http = HttpServer::new(server())
        .tls(config)
        .limits(tern_tests::tuned(|l: &mut HttpLimits| {
            l.header_timeout = std::time::Duration::from_millis(300)
        }));
    let addr = serve_on_loopback(http).await;
    // Connected, and not a byte of a ClientHello.
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let start = std::time::Instant::now();
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), tcp.read(&mut [0; 64]))
        .await
        .expect("the server kept a silent TLS connection open");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}
