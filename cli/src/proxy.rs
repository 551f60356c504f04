//! `tern proxy`: a gateway on tern's `proxy` module, served over Streamable HTTP in
//! front of the upstreams the command line names.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::seal::{RequestStateSecurity, parse_secret};
use tern_mcp::transport::http::client::HttpClientTransport;

use crate::child;
use crate::cli::ProxyArgs;
use crate::connect::Target;
use crate::error::{CliError, Result};
use crate::exit;

/// Connects to every upstream, then serves the gateway until Ctrl-C.
pub(crate) async fn run(args: ProxyArgs) -> Result<u8> {
    let deadline = seconds("--deadline", args.deadline)?;
    let config = match &args.config {
        Some(path) => Config::read(path)?,
        None => Config::default(),
    };
    let flags = args
        .upstream
        .iter()
        .map(|spec| {
            let (name, target) = split_upstream(spec)?;
            Ok(UpstreamConfig {
                name: name.map(str::to_owned),
                target: target.to_owned(),
                ..UpstreamConfig::default()
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut gateway = Gateway::new("tern-proxy", env!("CARGO_PKG_VERSION"));
    for spec in config.upstreams.into_iter().chain(flags) {
        let deadline = match spec.deadline {
            Some(own) => seconds("an upstream's deadline", own)?,
            None => deadline,
        };
        let mut upstream = connect(&spec).await?;
        if let Some(name) = &spec.name {
            upstream = upstream.named(name).map_err(tern_mcp::Error::from)?;
        }
        gateway = gateway.upstream(upstream.deadline(deadline));
    }
    let keys: Vec<&String> = config.state_keys.iter().chain(&args.state_key).collect();
    if !keys.is_empty() {
        let mut secrets = Vec::new();
        for (index, text) in keys.iter().enumerate() {
            let secret = parse_secret(text).map_err(|_| {
                CliError::usage(format!(
                    "state key #{}: not a hex or base64 secret (make one with `tern keys gen`)",
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
    // SIGTERM (a supervisor's restart) drains like ctrl-c, from the announcement on.
    let stop = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(serve_error)?;
    let address = listener.local_addr().map_err(serve_error)?;
    println!("listening on http://{address}/mcp");
    HttpServer::new(server)
        .serve(listener, stop)
        .await
        .map_err(serve_error)?;
    Ok(exit::DONE)
}

/// `NAME=TARGET` when the text before the first `=` is a name (letters, digits, `_`,
/// `-`), else the whole text is the target. A word before the `=` that is meant as a
/// name (no space, `/` or `:` in it) but is not one is refused, not run as a command.
fn split_upstream(spec: &str) -> Result<(Option<&str>, &str)> {
    let is_name = |name: &str| {
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let meant_as_name =
        |name: &str| !name.contains(|c: char| c.is_whitespace() || c == '/' || c == ':');
    match spec.split_once('=') {
        Some((name, target)) if !name.is_empty() && !target.is_empty() && is_name(name) => {
            Ok((Some(name), target))
        }
        Some((name, target)) if !name.is_empty() && !target.is_empty() && meant_as_name(name) => {
            Err(CliError::usage(format!(
                "the upstream name {name:?} may hold only letters, digits, '_' and '-'"
            ))
            .with_hint(format!(
                "name it with those: --upstream {}={target}",
                name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_")
            )))
        }
        _ => Ok((None, spec)),
    }
}

/// A positive number of seconds, as a duration.
fn seconds(what: &str, value: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::usage(format!("{what} is a positive number of seconds")))
}

/// The largest `--config` file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// The most upstreams a gateway is given.
const MAX_UPSTREAMS: usize = 256;

/// `--config FILE`: the upstreams and the state keys, as JSON.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    upstreams: Vec<UpstreamConfig>,
    #[serde(default)]
    state_keys: Vec<String>,
}

/// One upstream of `--config` (or of `--upstream`, which names only the target).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpstreamConfig {
    name: Option<String>,
    target: String,
    /// Seconds, instead of `--deadline`.
    deadline: Option<f64>,
    /// The environment variable holding the gateway's own bearer token for it.
    token_env: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl Config {
    fn read(path: &Path) -> Result<Self> {
        let file = |source| CliError::File {
            path: path.to_owned(),
            source,
        };
        // Bounded by what is read: a device says it holds 0 bytes and never ends.
        let text = crate::files::read_text(path, MAX_CONFIG_BYTES).map_err(|source| {
            if source.kind() == std::io::ErrorKind::InvalidData {
                CliError::usage(format!(
                    "{}: {source}; a gateway's configuration is at most 1 MiB",
                    path.display()
                ))
            } else {
                file(source)
            }
        })?;
        let config: Self = serde_json::from_str(&text).map_err(|source| CliError::Json {
            path: path.to_owned(),
            source,
        })?;
        if config.upstreams.len() > MAX_UPSTREAMS {
            return Err(CliError::usage(format!(
                "{}: at most {MAX_UPSTREAMS} upstreams",
                path.display()
            )));
        }
        Ok(config)
    }
}

/// The upstream `spec` names, connected (its era discovered).
async fn connect(spec: &UpstreamConfig) -> Result<Upstream> {
    let target = spec.target.as_str();
    Ok(match Target::parse(target)? {
        Target::Http(url) => {
            let mut http = HttpClientTransport::builder(url);
            if let Some(var) = &spec.token_env {
                let token = std::env::var(var).map_err(|_| {
                    CliError::usage(format!("the upstream {target}: ${var} is not set"))
                })?;
                http = http.bearer_token(token);
            }
            for (name, value) in &spec.headers {
                http = http.header(name, value);
            }
            Upstream::http(http).await?
        }
        Target::Command(words) => {
            if spec.token_env.is_some() || !spec.headers.is_empty() {
                return Err(CliError::usage(format!(
                    "the upstream {target}: tokenEnv and headers are for HTTP upstreams"
                )));
            }
            let lines = child::spawn(target, &words, &[], None)?;
            let builder = Client::builder("tern-proxy", env!("CARGO_PKG_VERSION"))
                .extension(tern_mcp::tasks::ClientTasks);
            Upstream::new(builder.connect(lines).await?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::split_upstream;

    #[test]
    fn an_upstream_is_named_only_by_a_name_before_its_first_equals_sign() {
        let split = |spec| split_upstream(spec).unwrap();
        assert_eq!(
            split("weather=http://127.0.0.1:8001/mcp"),
            (Some("weather"), "http://127.0.0.1:8001/mcp")
        );
        assert_eq!(
            split("http://127.0.0.1:8001/mcp?a=b"),
            (None, "http://127.0.0.1:8001/mcp?a=b")
        );
        assert_eq!(
            split("files=python server.py --root=/tmp"),
            (Some("files"), "python server.py --root=/tmp")
        );
        assert_eq!(split("=x"), (None, "=x"));
        assert_eq!(split("a b=c"), (None, "a b=c"));
    }

    #[test]
    fn a_name_that_is_not_one_is_refused_not_run_as_a_command() {
        let e = split_upstream("my.ev=http://127.0.0.1:8001/mcp").unwrap_err();
        assert_eq!(e.exit_code(), crate::exit::USAGE);
        assert!(e.message().contains(r#""my.ev""#), "{}", e.message());
        assert_eq!(
            e.hint(),
            Some("name it with those: --upstream my_ev=http://127.0.0.1:8001/mcp")
        );
    }

    #[test]
    fn a_config_file_names_upstreams_and_keys_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("tern-proxy-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(
            &good,
            r#"{"upstreams": [{"name": "w", "target": "http://127.0.0.1:1/mcp", "deadline": 5,
                "tokenEnv": "W_TOKEN", "headers": {"X-Team": "a"}}, {"target": "srv --stdio"}],
                "stateKeys": ["00"]}"#,
        )
        .unwrap();
        let config = super::Config::read(&good).unwrap();
        assert_eq!(config.upstreams.len(), 2);
        assert_eq!(config.upstreams[0].name.as_deref(), Some("w"));
        assert_eq!(config.upstreams[0].token_env.as_deref(), Some("W_TOKEN"));
        assert_eq!(config.state_keys, ["00"]);
        let unknown = dir.join("unknown.json");
        std::fs::write(
            &unknown,
            r#"{"upstreams": [{"target": "x", "token": "secret"}]}"#,
        )
        .unwrap();
        assert!(
            super::Config::read(&unknown).is_err(),
            "a token is never written in the file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
