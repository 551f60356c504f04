//! Reaching the server: an HTTP endpoint (a bearer token, or OAuth) or a command
//! spawned on stdio; the era is discovered either way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_mcp::client::{Client, ClientBuilder};
use tern_mcp::oauth::{
    ClientKey, FileStore, LoopbackRedirect, OAuthClient, OAuthClientBuilder, Registration,
    TokenSource,
};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::LoggingLevel;

use crate::child;
use crate::cli::Connect;
use crate::error::{CliError, Result};
use crate::wire::{Tap, Watched, WatchedHttp};

/// A builder for tern's client: it speaks the tasks extension, following to its end a
/// call a server makes a task.
pub(crate) fn builder() -> ClientBuilder {
    Client::builder("tern", env!("CARGO_PKG_VERSION")).extension(tern_mcp::tasks::ClientTasks)
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A program and its arguments, spoken to over its stdin and stdout.
    Command(Vec<String>),
}

impl Target {
    /// An http(s) URL, else a command line split like a POSIX shell would; a
    /// `host:port[/path]` without a scheme is refused, not run.
    pub(crate) fn parse(text: &str) -> Result<Self> {
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(Self::Http(text.to_owned()));
        }
        if let Some(scheme) = other_scheme(text) {
            return Err(CliError::usage(format!(
                "TARGET {text:?} is a {scheme}:// URL: tern reaches a server over http(s):// \
                 or runs a command"
            ))
            .with_hint("an MCP server's Streamable HTTP endpoint is an http:// or https:// URL"));
        }
        if looks_like_an_address(text) {
            let hint = if text.contains('/') {
                format!("add the scheme: http://{text} (or https://)")
            } else {
                format!("add the scheme and the endpoint path: http://{text}/mcp (or https://)")
            };
            return Err(CliError::usage(format!(
                "TARGET {text:?} looks like a server's address, not a command"
            ))
            .with_hint(hint));
        }
        match shlex::split(text) {
            Some(words) if !words.is_empty() => Ok(Self::Command(words)),
            _ => Err(CliError::usage(format!(
                "TARGET {text:?} is neither an http(s):// URL nor a command line"
            ))),
        }
    }
}

/// The scheme of a URL that is not http(s) (`ftp` of `ftp://host/mcp`): a word of
/// letters, digits, `+`, `-` or `.` before `://`, starting with a letter.
fn other_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first.is_ascii_alphabetic() && rest_ok).then_some(scheme)
}

/// `host:port` or `host:port/path` (a name, an IPv4 address or a bracketed IPv6 one):
/// what a URL without its scheme looks like.
fn looks_like_an_address(text: &str) -> bool {
    let authority = text.split('/').next().unwrap_or(text);
    let Some((host, port)) = authority.rsplit_once(':') else {
        return false;
    };
    let host_ok = (host.starts_with('[') && host.ends_with(']'))
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    host_ok && !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit())
}

/// A client for `target`, its callbacks already on `builder`, and the tap its frames
/// go past (`--trace`, the last round that asked).
pub(crate) async fn connect(
    target: &str,
    options: &Connect,
    builder: ClientBuilder,
) -> Result<(Client, Arc<Tap>)> {
    let builder = builder.log_level(log_level(&options.log_level));
    let tap = Tap::new(options.trace);
    let client = match Target::parse(target)? {
        Target::Http(url) => {
            if !options.env.is_empty() || options.cwd.is_some() {
                return Err(CliError::usage(
                    "-e and --cwd are for a server tern starts (a command TARGET), not a URL",
                ));
            }
            let mut http = HttpClientTransport::builder(url);
            if let Some(token) = &options.token {
                http = http.bearer_token(token);
            }
            for (name, value) in &options.headers {
                http = http.header(name, value);
            }
            if options.signs_in() {
                http = http.authorizer(Arc::new(oauth(options)?));
            }
            let watched = WatchedHttp {
                inner: Arc::new(http.build()?),
                tap: tap.clone(),
            };
            builder.connect(Arc::new(watched)).await?
        }
        Target::Command(words) => {
            if options.token.is_some() || options.signs_in() || !options.headers.is_empty() {
                return Err(CliError::usage(
                    "--token, --oauth, --client-credentials, --workload-token and --header are \
                     for HTTP servers; a stdio server has no authorization or headers (give it \
                     -e KEY=VALUE instead)",
                ));
            }
            let lines = child::spawn(target, &words, &options.env, options.cwd.as_deref())?;
            let watched = Watched {
                inner: lines,
                tap: tap.clone(),
            };
            builder
                .connect(watched)
                .await
                .map_err(|e| not_for_stdio(e.into(), &tap))?
        }
    };
    Ok((client, tap))
}

/// `error`, with a hint when the server printed lines that are not JSON-RPC: a server
/// started for another transport, writing its logs on stdout.
fn not_for_stdio(error: CliError, tap: &Tap) -> CliError {
    match tap.strays() {
        Some((count, first)) if error.is_connection() => error.with_hint(format!(
            "the server printed {count} line(s) on stdout that are not JSON-RPC (the first: \
             \"{}\"); is it started for stdio? A stdio server writes JSON-RPC alone on its \
             stdout, its logs on stderr",
            crate::safe::line(&first)
        )),
        _ => error,
    }
}

fn log_level(name: &str) -> LoggingLevel {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).unwrap_or(LoggingLevel::Info)
}

impl Connect {
    /// Whether an OAuth client authorizes the requests (a user's sign-in or a machine
    /// grant).
    pub(crate) fn signs_in(&self) -> bool {
        self.oauth || self.client_credentials.is_some() || self.workload_token.is_some()
    }
}

/// The OAuth client, its credentials kept in a file: for a user, the browser sent to
/// the authorization server and the redirect caught on 127.0.0.1; for a service or a
/// workload, its grant.
fn oauth(options: &Connect) -> Result<OAuthClient> {
    let path = match &options.credentials {
        Some(path) => path.clone(),
        None => default_credentials()?,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::File {
            path: dir.to_owned(),
            source,
        })?;
    }
    let mut oauth = OAuthClient::builder("tern").store(Arc::new(FileStore::open(path)?));
    if options.dpop {
        oauth = oauth.dpop();
    }
    oauth = if let Some(client_id) = &options.client_credentials {
        machine(oauth, client_id, options.client_key.as_deref())?
    } else if let Some(file) = &options.workload_token {
        oauth.workload_identity(TokenSource::file(file))
    } else {
        oauth.user_agent(LoopbackRedirect::new(options.oauth_port, |url| {
            // The authorization server chose this URL: shown, not run.
            eprintln!("Sign in at {}", crate::safe::line(url.as_str()));
            if let Err(e) = open::that(url.as_str()) {
                tracing::warn!("could not open the browser: {e}");
            }
        }))
    };
    Ok(oauth.build()?)
}

/// The client credentials grant as `client_id`, with the key in `key_file`, else the
/// secret in `$TERN_CLIENT_SECRET`.
fn machine(
    oauth: OAuthClientBuilder,
    client_id: &str,
    key_file: Option<&Path>,
) -> Result<OAuthClientBuilder> {
    let registration = Registration::new(client_id);
    if let Some(file) = key_file {
        let pem =
            crate::files::read_text(file, MAX_KEY_BYTES).map_err(|source| CliError::File {
                path: file.to_owned(),
                source,
            })?;
        let key = ClientKey::from_pkcs8_pem(&pem).map_err(|e| {
            CliError::usage(format!("--client-key {}: {}", file.display(), e.message()))
        })?;
        return Ok(oauth.client_credentials(registration).signing_key(key));
    }
    match std::env::var("TERN_CLIENT_SECRET") {
        Ok(secret) if !secret.is_empty() => {
            Ok(oauth.client_credentials(registration.with_secret(secret)))
        }
        _ => Err(CliError::usage(
            "--client-credentials needs the client's secret in $TERN_CLIENT_SECRET, or its \
             key: --client-key FILE",
        )),
    }
}

/// The most a `--client-key` PEM file may hold (an RSA key of 16,384 bits is under 13 KiB).
const MAX_KEY_BYTES: u64 = 64 << 10;

fn default_credentials() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| CliError::usage("no $XDG_CONFIG_HOME or $HOME: give --credentials FILE"))?;
    Ok(base.join("tern").join("credentials.json"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_url_or_a_quoted_command() {
        assert_eq!(
            Target::parse("http://127.0.0.1:1/mcp").unwrap(),
            Target::Http("http://127.0.0.1:1/mcp".into())
        );
        assert_eq!(
            Target::parse("srv --name 'a b'").unwrap(),
            Target::Command(vec!["srv".into(), "--name".into(), "a b".into()])
        );
        assert!(Target::parse("'unclosed").is_err());
    }

    #[test]
    fn a_url_of_another_scheme_is_refused_not_run() {
        for url in [
            "ftp://example.com/mcp",
            "ws://127.0.0.1:3000/mcp",
            "HTTPX://a",
        ] {
            let e = Target::parse(url).unwrap_err();
            assert_eq!(e.exit_code(), crate::exit::USAGE, "{url}");
            assert!(
                e.message()
                    .contains("tern reaches a server over http(s)://"),
                "{url}"
            );
        }
        assert!(matches!(
            Target::parse("python3 -c 'print(\"a://b\")'").unwrap(),
            Target::Command(_)
        ));
    }

    #[test]
    fn a_host_and_port_without_a_scheme_is_refused_with_the_url_to_write() {
        for address in ["127.0.0.1:3000/mcp", "localhost:8080/", "[::1]:3000/mcp"] {
            let e = Target::parse(address).unwrap_err();
            assert_eq!(e.exit_code(), crate::exit::USAGE);
            assert_eq!(
                e.hint(),
                Some(format!("add the scheme: http://{address} (or https://)").as_str())
            );
        }
        // Without a path, the path MCP servers serve their endpoint at.
        let e = Target::parse("localhost:8080").unwrap_err();
        assert_eq!(
            e.hint(),
            Some("add the scheme and the endpoint path: http://localhost:8080/mcp (or https://)")
        );
        assert!(matches!(
            Target::parse("python3 server.py:3").unwrap(),
            Target::Command(_)
        ));
    }
}
