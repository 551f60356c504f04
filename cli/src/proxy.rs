//! `tern proxy`: a gateway on tern's `proxy` module, served over Streamable HTTP in
//! front of the upstreams the command line names.

use std::time::Duration;

use tern_mcp::client::Client;
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::seal::{RequestStateSecurity, parse_secret};
use tern_mcp::server::http::HttpServer;
use tern_mcp::transport::http::client::HttpClientTransport;

use crate::child;
use crate::cli::ProxyArgs;
use crate::connect::Target;
use crate::error::{CliError, Result};
use crate::exit;

/// Connects to every upstream, then serves the gateway until Ctrl-C.
pub(crate) async fn run(args: ProxyArgs) -> Result<u8> {
    let deadline = Duration::try_from_secs_f64(args.deadline)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::usage("--deadline is a positive number of seconds"))?;
    let mut gateway = Gateway::new("tern-proxy", env!("CARGO_PKG_VERSION"));
    for spec in &args.upstream {
        let (name, target) = split_upstream(spec);
        let mut upstream = connect(target).await?;
        if let Some(name) = name {
            upstream = upstream.named(name).map_err(tern_mcp::Error::from)?;
        }
        gateway = gateway.upstream(upstream.deadline(deadline));
    }
    if !args.state_key.is_empty() {
        let mut secrets = Vec::new();
        for (index, text) in args.state_key.iter().enumerate() {
            let secret = parse_secret(text).map_err(|_| {
                CliError::usage(format!(
                    "--state-key #{}: not a hex or base64 secret (make one with `tern keys gen`)",
                    index + 1
                ))
            })?;
            secrets.push(secret.to_vec());
        }
        let security = RequestStateSecurity::keys(secrets).map_err(tern_mcp::Error::from)?;
        gateway = gateway.seal(security);
    }
    let server = gateway.build().map_err(tern_mcp::Error::from)?;
    let serve_error = |source| CliError::Serve {
        address: args.listen.to_string(),
        source,
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(serve_error)?;
    let address = listener.local_addr().map_err(serve_error)?;
    println!("listening on http://{address}/mcp");
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    HttpServer::new(server)
        .serve(listener, stop)
        .await
        .map_err(serve_error)?;
    Ok(exit::DONE)
}

/// `NAME=TARGET` when the text before the first `=` is a name (letters, digits, `_`,
/// `-`), else the whole text is the target.
fn split_upstream(spec: &str) -> (Option<&str>, &str) {
    let is_name = |name: &str| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    match spec.split_once('=') {
        Some((name, target)) if is_name(name) && !target.is_empty() => (Some(name), target),
        _ => (None, spec),
    }
}

/// The upstream at `target`, connected (its era discovered).
async fn connect(target: &str) -> Result<Upstream> {
    Ok(match Target::parse(target)? {
        Target::Http(url) => Upstream::http(HttpClientTransport::builder(url)).await?,
        Target::Command(words) => {
            let lines = child::spawn(target, &words, &[], None)?;
            let builder = Client::builder("tern-proxy", env!("CARGO_PKG_VERSION"));
            Upstream::new(builder.connect(lines).await?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::split_upstream;

    #[test]
    fn an_upstream_is_named_only_by_a_name_before_its_first_equals_sign() {
        assert_eq!(
            split_upstream("weather=http://127.0.0.1:8001/mcp"),
            (Some("weather"), "http://127.0.0.1:8001/mcp")
        );
        assert_eq!(
            split_upstream("http://127.0.0.1:8001/mcp?a=b"),
            (None, "http://127.0.0.1:8001/mcp?a=b")
        );
        assert_eq!(
            split_upstream("files=python server.py --root=/tmp"),
            (Some("files"), "python server.py --root=/tmp")
        );
        assert_eq!(split_upstream("=x"), (None, "=x"));
        assert_eq!(split_upstream("a b=c"), (None, "a b=c"));
    }
}
