//! Reaching the server: an HTTP endpoint (a bearer token, or OAuth) or a command
//! spawned on stdio; the era is discovered either way.

use std::path::PathBuf;
use std::sync::Arc;

use tern_mcp::client::{Client, ClientBuilder};
use tern_mcp::oauth::{FileStore, LoopbackRedirect, OAuthClient};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::stdio::{ChildProcessTransport, StderrSink};
use tern_mcp::types::v2026_07_28::LoggingLevel;

use crate::cli::Connect;
use crate::error::{CliError, Result};

/// A builder for tern's client.
pub(crate) fn builder() -> ClientBuilder {
    Client::builder("tern", env!("CARGO_PKG_VERSION"))
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
    /// An http(s) URL, else a command line split like a POSIX shell would.
    pub(crate) fn parse(text: &str) -> Result<Self> {
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(Self::Http(text.to_owned()));
        }
        match shlex::split(text) {
            Some(words) if !words.is_empty() => Ok(Self::Command(words)),
            _ => Err(CliError::usage(format!(
                "TARGET {text:?} is neither an http(s):// URL nor a command line"
            ))),
        }
    }
}

/// A client for `target`, its callbacks already on `builder`.
pub(crate) async fn connect(
    target: &str,
    options: &Connect,
    builder: ClientBuilder,
) -> Result<Client> {
    let builder = builder.log_level(log_level(&options.log_level));
    match Target::parse(target)? {
        Target::Http(url) => {
            let mut http = HttpClientTransport::builder(url);
            if let Some(token) = &options.token {
                http = http.bearer_token(token);
            }
            if options.oauth {
                http = http.authorizer(Arc::new(oauth(options)?));
            }
            Ok(builder.connect(Arc::new(http.build()?)).await?)
        }
        Target::Command(words) => {
            if options.token.is_some() || options.oauth {
                return Err(CliError::usage(
                    "--token and --oauth are for HTTP servers; a stdio server has no authorization",
                ));
            }
            let (program, args) = words
                .split_first()
                .ok_or_else(|| CliError::usage("TARGET is empty"))?;
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            let (lines, stderr) = tokio::sync::mpsc::unbounded_channel();
            let child =
                ChildProcessTransport::spawn_with_stderr(command, StderrSink::Channel(lines))
                    .map_err(|source| CliError::Spawn {
                        command: target.to_owned(),
                        source,
                    })?;
            tokio::spawn(show_stderr(stderr));
            Ok(builder.connect(child).await?)
        }
    }
}

/// The server's stderr, a line at a time, where the SDK would log it (`info`, shown with
/// `-vv`): through here, so what it writes is shown and not run.
async fn show_stderr(mut lines: tokio::sync::mpsc::UnboundedReceiver<String>) {
    while let Some(line) = lines.recv().await {
        tracing::info!(target: "tern_mcp::transport::stdio", "{}", crate::safe::line(&line));
    }
}

fn log_level(name: &str) -> LoggingLevel {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).unwrap_or(LoggingLevel::Info)
}

/// The OAuth client: the browser sent to the authorization server, the redirect caught
/// on 127.0.0.1, the credentials kept in a file.
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
    let agent = LoopbackRedirect::new(options.oauth_port, |url| {
        // The authorization server chose this URL: shown, not run.
        eprintln!("Sign in at {}", crate::safe::line(url.as_str()));
        if let Err(e) = open::that(url.as_str()) {
            tracing::warn!("could not open the browser: {e}");
        }
    });
    Ok(OAuthClient::builder("tern")
        .user_agent(agent)
        .store(Arc::new(FileStore::open(path)?))
        .build()?)
}

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
}
