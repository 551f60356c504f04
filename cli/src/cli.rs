//! The command line, as clap derives it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const TARGET_HELP: &str = "The server: an http:// or https:// URL of its MCP endpoint, or the \
command that starts it on stdio, as one quoted string split like a POSIX shell would (no \
shell runs it), e.g. \"cargo run -q -p tern-mcp --example everything -- --stdio\"";

const AFTER_HELP: &str = concat!(
    "\
TARGET is an http(s):// URL (Streamable HTTP) or a quoted command line that starts the
server on stdio. The protocol era (2026-07-28, or a 2025-11-25 session) is discovered.

Answers: a question the server asks (an `inputRequests` entry, by its KEY) is answered
from --answer KEY.FIELD=VALUE, --answers FILE ({\"KEY\": {\"FIELD\": VALUE}}),
--accept/--decline/--cancel KEY; what is left is asked on the terminal, field by field.
When stdin is not a terminal, an unanswered question fails the command, naming it.

",
    crate::exit::exit_help!()
);

/// A command-line client for MCP servers: lists, calls, prompts and reads, answering
/// the questions of multi round-trip requests on the terminal or from the command line.
#[derive(Debug, Parser)]
#[command(name = "tern", version, about, after_help = crate::exit::exit_help!())]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Say more on stderr: each round of a call, prompt or read and when it becomes a
    /// task (-v); tern's own logs too (-vv, -vvv).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Print the result (and an error) as JSON: lists, call, prompt, read, resume.
    #[arg(long, global = true, overrides_with = "json")]
    pub(crate) json: bool,
    /// Print every JSON-RPC frame of the connection on stderr, one per line: `> ` and
    /// the compact JSON of each frame sent, `< ` and each frame received, in order
    /// (lists, call, prompt, read, resume).
    #[arg(long, global = true, overrides_with = "trace")]
    pub(crate) trace: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the server's tools (every page).
    Tools(ListArgs),
    /// List the server's prompts (every page).
    Prompts(ListArgs),
    /// List the server's resources (every page).
    Resources(ListArgs),
    /// List the server's resource templates (every page).
    Templates(ListArgs),
    /// Call a tool: `tern call TARGET TOOL key=value ...`.
    #[command(after_help = AFTER_HELP)]
    Call(CallArgs),
    /// Get a prompt: `tern prompt TARGET NAME key=value ...`.
    #[command(after_help = AFTER_HELP)]
    Prompt(PromptArgs),
    /// Read a resource: `tern read TARGET URI`.
    #[command(after_help = AFTER_HELP)]
    Read(ReadArgs),
    /// Continue a call saved with --state-file, answering its questions.
    #[command(after_help = AFTER_HELP)]
    Resume(ResumeArgs),
    /// requestState sealing keys: generate one, plan a rotation.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Serve one MCP endpoint in front of upstream servers (a gateway).
    #[command(after_help = PROXY_HELP)]
    Proxy(ProxyArgs),
}

const PROXY_HELP: &str = "\
Each upstream is an http(s):// URL or a quoted command line started on stdio, of either
protocol era (discovered). A named upstream (NAME=TARGET) has its tools and prompts served
as NAME.tool and its questions keyed NAME.key; without a name, under their own names.
Resource URIs are served as the upstreams write them.

The gateway seals its requestState (the upstreams' own nested inside, never shown to
clients) under --state-key, or a key made for this run; instances sharing keys serve
each other's retries. A 2025-11-25 upstream over HTTP gets a session of each call's own,
held between rounds in the instance that opened it. It prints `listening on URL` once
it serves.

--config FILE, e.g.:
  {\"upstreams\": [{\"name\": \"weather\", \"target\": \"https://weather.example/mcp\",
                  \"deadline\": 30, \"tokenEnv\": \"WEATHER_TOKEN\"},
                 {\"name\": \"hello\",
                  \"target\": \"cargo run -q -p tern-mcp --example hello_stdio\"}],
   \"stateKeys\": [\"...\"]}";

/// `tern proxy`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// The address to serve on (port 0: any free port, printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:3000")]
    pub(crate) listen: std::net::SocketAddr,
    /// An upstream server: [NAME=]TARGET (repeat for several). NAME is letters,
    /// digits, '_' or '-'.
    #[arg(long, value_name = "[NAME=]TARGET", required_unless_present = "config")]
    pub(crate) upstream: Vec<String>,
    /// Upstreams and state keys from a JSON file, before those of the flags:
    /// {"upstreams": [{"name", "target", "deadline", "tokenEnv", "headers"}],
    /// "stateKeys": ["..."]}. tokenEnv names the environment variable holding the
    /// gateway's own bearer token for that upstream (never the token itself).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<std::path::PathBuf>,
    /// A requestState sealing key, hex or base64 (repeat to rotate: the first seals,
    /// every one opens). Without one, a key made for this run.
    #[arg(long, value_name = "KEY")]
    pub(crate) state_key: Vec<String>,
    /// How long, in seconds, an upstream has to answer one request (a config file's
    /// upstream may set its own).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub(crate) deadline: f64,
}

/// How to reach the server.
#[derive(Debug, Args, Clone)]
#[command(group = clap::ArgGroup::new("sign_in").args(["oauth", "client_credentials", "workload_token"]))]
pub(crate) struct Connect {
    /// A bearer token for an HTTP server.
    #[arg(long, value_name = "TOKEN", conflicts_with = "sign_in")]
    pub(crate) token: Option<String>,
    /// Sign in with OAuth when an HTTP server asks for authorization (a browser window,
    /// a redirect to 127.0.0.1).
    #[arg(long)]
    pub(crate) oauth: bool,
    /// Authorize as a service, with no user: the client credentials grant as the
    /// client ID, authenticated by the secret in $TERN_CLIENT_SECRET or by a key
    /// (--client-key).
    #[arg(long, value_name = "CLIENT_ID")]
    pub(crate) client_credentials: Option<String>,
    /// The client's private key (a PKCS#8 PEM file: P-256 or RSA), signing its
    /// assertions at the token endpoint (private_key_jwt) instead of a secret.
    #[arg(long, value_name = "FILE", requires = "client_credentials")]
    pub(crate) client_key: Option<PathBuf>,
    /// Authorize as a workload: the platform-issued JWT in FILE (a projected token,
    /// read again each time a token is needed) presented with the JWT bearer grant
    /// (workload identity federation).
    #[arg(long, value_name = "FILE")]
    pub(crate) workload_token: Option<PathBuf>,
    /// Bind tokens to a key of tern's (DPoP) where the authorization server offers it:
    /// a proof with every request. The key is kept with the credentials.
    #[arg(long, requires = "sign_in")]
    pub(crate) dpop: bool,
    /// Where OAuth registrations, tokens and the DPoP key are kept (default
    /// $XDG_CONFIG_HOME/tern/credentials.json, else ~/.config/tern/credentials.json).
    #[arg(long, value_name = "FILE", requires = "sign_in")]
    pub(crate) credentials: Option<PathBuf>,
    /// The local port of the OAuth redirect.
    #[arg(long, value_name = "PORT", default_value_t = 8976, requires = "oauth")]
    pub(crate) oauth_port: u16,
    /// An HTTP header sent with every request to an HTTP server (repeatable), e.g.
    /// `--header "X-Api-Key: abc"`.
    #[arg(long = "header", value_name = "NAME:VALUE", value_parser = parse_header)]
    pub(crate) headers: Vec<(String, String)>,
    /// An environment variable for a stdio server's command (repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,
    /// The working directory of a stdio server's command.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// The global `--trace`, set by [`Cli::parse_args`].
    #[arg(skip)]
    pub(crate) trace: bool,
    /// The least severe server log entries shown on stderr.
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = [
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
    ])]
    pub(crate) log_level: String,
}

/// A list command.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[arg(help = TARGET_HELP)]
    pub(crate) target: String,
    /// The global `--json`, set by [`Cli::parse_args`].
    #[arg(skip)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) connect: Connect,
}

/// Where the answers to a call's questions come from.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct Answering {
    /// Answer field FIELD of question KEY (repeatable; the last dot before `=` ends
    /// KEY); VALUE is read as the field's schema type (a multi-select takes a
    /// comma-separated list).
    #[arg(long = "answer", value_name = "KEY.FIELD=VALUE")]
    pub(crate) answers: Vec<String>,
    /// Answers as JSON: {"KEY": {"FIELD": VALUE}}.
    #[arg(long = "answers", value_name = "FILE")]
    pub(crate) answers_file: Option<PathBuf>,
    /// Accept question KEY as is (defaults filled in; a URL-mode question counts as done).
    #[arg(long, value_name = "KEY")]
    pub(crate) accept: Vec<String>,
    /// Decline question KEY.
    #[arg(long, value_name = "KEY")]
    pub(crate) decline: Vec<String>,
    /// Cancel question KEY.
    #[arg(long, value_name = "KEY")]
    pub(crate) cancel: Vec<String>,
    /// Answer sampling requests with CMD (a quoted command line): the request's params
    /// as JSON on its stdin, a CreateMessageResult as JSON on its stdout.
    #[arg(long, value_name = "CMD")]
    pub(crate) sampling_cmd: Option<String>,
    /// A root to offer the server (repeatable; default: the working directory).
    #[arg(long = "root", value_name = "PATH")]
    pub(crate) roots: Vec<PathBuf>,
    /// Open the URL of a URL-mode question in the browser.
    #[arg(long)]
    pub(crate) open: bool,
}

/// `tern call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    #[arg(help = TARGET_HELP)]
    pub(crate) target: String,
    /// The tool's name.
    pub(crate) tool: String,
    /// Arguments, key=value; a value is read as the type the tool's inputSchema gives
    /// the key (JSON for numbers, booleans, arrays and objects).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) arguments: Vec<String>,
    /// The arguments as one JSON object (merged under key=value ones).
    #[arg(long = "args", value_name = "JSON")]
    pub(crate) args_json: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) answering: Answering,
    #[command(flatten)]
    pub(crate) connect: Connect,
}

/// Where a call, prompt or read ends: printed, or paused in a state file.
#[derive(Debug, Args)]
pub(crate) struct Output {
    /// The global `--json`, set by [`Cli::parse_args`].
    #[arg(skip)]
    pub(crate) json: bool,
    /// Stop at the first round that needs input and save the call to FILE (exit 4),
    /// readable by you alone (mode 0600, the file replaced whole); `tern resume FILE`
    /// continues it, from any process.
    #[arg(long, value_name = "FILE")]
    pub(crate) state_file: Option<PathBuf>,
}

/// `tern prompt`.
#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    #[arg(help = TARGET_HELP)]
    pub(crate) target: String,
    /// The prompt's name.
    pub(crate) name: String,
    /// Arguments, key=value (prompt arguments are strings).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) arguments: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) answering: Answering,
    #[command(flatten)]
    pub(crate) connect: Connect,
}

/// `tern read`.
#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    #[arg(help = TARGET_HELP)]
    pub(crate) target: String,
    /// The resource's URI.
    pub(crate) uri: String,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) answering: Answering,
    #[command(flatten)]
    pub(crate) connect: Connect,
}

/// `tern resume`.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The file --state-file wrote; written again if the server asks again, removed
    /// once the call completes. It holds the target, not --token or --oauth: give
    /// those again. A file that is not yours, or that others can write, is refused.
    pub(crate) file: PathBuf,
    /// The global `--json`, set by [`Cli::parse_args`].
    #[arg(skip)]
    pub(crate) json: bool,
    /// Run the server command the file names (a stdio target) without asking. The
    /// command is shown first either way; on a terminal you are asked (default no), and
    /// without a terminal resume refuses a command target unless this is given.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    #[command(flatten)]
    pub(crate) answering: Answering,
    #[command(flatten)]
    pub(crate) connect: Connect,
}

/// `tern keys`.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Print a new requestState sealing secret (32 random bytes).
    Gen {
        /// As standard base64 instead of hex.
        #[arg(long)]
        base64: bool,
    },
    /// Print the three phases that rotate a server fleet's requestState keys.
    ///
    /// KEYS are the keys deployed now, the sealing one first, then the new key last;
    /// with a single key a new one is generated. Keys are hex or base64 secrets.
    RotatePlan {
        /// The current keys (sealing key first), then the new key.
        #[arg(required = true, value_name = "KEY")]
        keys: Vec<String>,
    },
}

/// `--header NAME:VALUE`: a token name, its value trimmed.
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?}: write it NAME:VALUE"))?;
    let name = name.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!("{name:?} is not an HTTP header name"));
    }
    let value = value.trim();
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!(
            "the value of header {name} has a control character"
        ));
    }
    Ok((name.to_owned(), value.to_owned()))
}

/// `-e KEY=VALUE`: an environment variable.
fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !key.contains('\0') && !value.contains('\0') => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err(format!("{text:?}: write it KEY=VALUE")),
    }
}

impl Cli {
    /// The TARGET named on the command line (not `resume`'s, which its file holds).
    pub(crate) fn target(&self) -> Option<&str> {
        match &self.command {
            Command::Tools(a)
            | Command::Prompts(a)
            | Command::Resources(a)
            | Command::Templates(a) => Some(&a.target),
            Command::Call(a) => Some(&a.target),
            Command::Prompt(a) => Some(&a.target),
            Command::Read(a) => Some(&a.target),
            Command::Resume(_) | Command::Keys(_) | Command::Proxy(_) => None,
        }
    }

    /// The command line, parsed, with the global `--json` and `--trace` handed to the
    /// command they shape; given to a command they do not shape (`keys`, `proxy`), a
    /// usage error.
    pub(crate) fn parse_args() -> Result<Self, clap::Error> {
        let mut cli = Self::try_parse()?;
        let (json, trace) = (cli.json, cli.trace);
        let (json_to, connect) = match &mut cli.command {
            Command::Tools(a)
            | Command::Prompts(a)
            | Command::Resources(a)
            | Command::Templates(a) => (&mut a.json, &mut a.connect),
            Command::Call(a) => (&mut a.output.json, &mut a.connect),
            Command::Prompt(a) => (&mut a.output.json, &mut a.connect),
            Command::Read(a) => (&mut a.output.json, &mut a.connect),
            Command::Resume(a) => (&mut a.json, &mut a.connect),
            Command::Keys(_) | Command::Proxy(_) => {
                let flag = match (json, trace) {
                    (true, _) => "--json",
                    (_, true) => "--trace",
                    _ => return Ok(cli),
                };
                let name = if matches!(cli.command, Command::Keys(_)) {
                    "keys"
                } else {
                    "proxy"
                };
                return Err(<Self as clap::CommandFactory>::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "{flag} shapes what a command says of a server (tools, prompts, \
                         resources, templates, call, prompt, read, resume), not tern {name}"
                    ),
                ));
            }
        };
        *json_to = json;
        connect.trace = trace;
        Ok(cli)
    }

    /// Whether the command prints JSON (`--json`): then its errors are JSON too.
    pub(crate) fn json(&self) -> bool {
        self.json
    }
}
