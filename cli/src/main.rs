//! `tern`: a command-line client for MCP servers, built on the tern SDK's public API.
//!
//! ```text
//! tern tools     TARGET [--json]                  every page of tools/list, as a table
//! tern prompts   TARGET [--json]
//! tern resources TARGET [--json]
//! tern templates TARGET [--json]
//! tern call   TARGET TOOL [KEY=VALUE ...] [--args JSON] [--json]
//! tern prompt TARGET NAME [KEY=VALUE ...] [--json]
//! tern read   TARGET URI [--json]
//! tern resume FILE [answers ...]
//! tern keys gen [--base64]
//! tern keys rotate-plan KEY...
//! ```
//!
//! `TARGET` is an `http://` or `https://` URL of a Streamable HTTP endpoint, or the
//! command that starts a server on stdio, given as one quoted string and split the way a
//! POSIX shell would (no shell runs it):
//!
//! ```text
//! tern tools http://127.0.0.1:3000/mcp
//! tern call "cargo run -q -p tern-mcp --example everything -- --stdio" test_simple_text
//! ```
//!
//! The protocol era (2026-07-28, or a 2025-11-25 session) is discovered by the SDK.
//! `--token TOKEN` sends a bearer token; `--oauth` signs in through the SDK's OAuth
//! client (the browser, a redirect to 127.0.0.1 on `--oauth-port`, the credentials kept
//! in `--credentials FILE`). With no user at hand, `--client-credentials CLIENT_ID`
//! authorizes as a service (its secret in `$TERN_CLIENT_SECRET`, or its key in
//! `--client-key FILE`), and `--workload-token FILE` as a workload (the JWT bearer grant
//! with the platform's token, read again each time). `--dpop` binds the tokens to a key
//! kept with the credentials, where the authorization server offers it.
//!
//! # Answering questions
//!
//! A tool (or prompt, or resource) that needs input returns questions keyed by the
//! server; `tern` answers each from, in order:
//!
//! - `--answer KEY.FIELD=VALUE` (repeatable; VALUE read as the field's schema type, a
//!   multi-select as a comma-separated list), `--answers FILE` (`{"KEY": {"FIELD":
//!   VALUE}}`), `--accept KEY` (defaults only; a URL-mode step done), `--decline KEY`,
//!   `--cancel KEY`;
//! - the terminal: accept / decline / cancel, then each form field by its schema
//!   (strings with their format, bounded numbers, booleans, single and multi-select
//!   enums, defaults pre-filled, required fields marked with `*`), asked again until the
//!   answer fits; a URL-mode question shows the URL (`--open` opens it) and waits for
//!   Enter;
//! - when stdin is not a terminal: an error that names the server, the key and the
//!   question (exit 2), never a hang.
//!
//! Sampling requests go to `--sampling-cmd CMD` (the request's params as JSON on its
//! stdin, a `CreateMessageResult` as JSON on its stdout), or to the user, who replies as
//! the model. Roots are the working directory, or each `--root PATH`.
//!
//! Progress is a bar on stderr (plain lines when stderr is not a terminal), server logs
//! are shown with their level (`--log-level`), and `-v` narrates the rounds.
//!
//! `--state-file FILE` stops at the first round that needs input and saves the SDK's
//! `PendingCall` with the target (exit 4), readable by the user alone; `tern resume FILE
//! --answer ...` answers and continues it from another process (the server must accept
//! its own state: the same process, or instances sharing their requestState keys). Resume
//! refuses a file of another user or one others can write, and shows a stdio command
//! before it runs it: confirmed on the terminal, or `--yes`.
//!
//! Whatever a server says (results, questions, logs, errors, a stdio server's stderr,
//! passed through) is shown with its terminal controls made visible (ESC as `\u{1b}`);
//! `--json` stays JSON.
//!
//! # When something fails
//!
//! An error is `tern: MESSAGE` on stderr, with a `hint: ...` line when there is advice: a
//! 401 names `--oauth` and `--token`, a 404 asks whether the endpoint path is `/mcp`,
//! `https://` to a plain-HTTP server suggests `http://`, a mistyped tool gets the nearest
//! names. A stdio server that dies is named with its exit status, after its stderr. An
//! answer given ahead (`--answer KEY...`) for a KEY no question asked is a warning
//! naming the keys asked. Answers typed for a retry that never got through (the
//! connection failed) are saved with the call in a state file (the file `tern resume`
//! read, else `./tern-call-PID.json`) and the hint names the `tern resume FILE`
//! that sends them. With `--json`, an error is one line on stderr:
//! `{"error":{"kind":...,"message":...,"hint":...,"exitCode":N}}`.
//!
//! `--trace` prints every JSON-RPC frame of the connection on stderr, one a line, in
//! order: `> ` and the compact JSON of each frame tern sends, `< ` and each it receives
//! (over HTTP, each request, answer and notification written as the frame it carries).
//! `--header NAME:VALUE` adds a header to every HTTP request; `-e KEY=VALUE` and `--cwd
//! DIR` set a stdio server's environment and working directory.
//!
//! # Exit codes
//!
//! - `0`: done.
//! - `1`: the tool reported an error (`isError: true`); its content is printed.
//! - `2`: usage error (a bad flag value, a file named on the command line that cannot
//!   be read, an argument key the tool's `inputSchema` does not take, a TARGET written
//!   `host:port` without its scheme), or a question had no answer and stdin is not a
//!   terminal, or Ctrl-C at a prompt (the cursor is shown again; no answer was sent), or
//!   `tern resume` refused its state file (another user's, or writable by others) or the
//!   command it names was not confirmed.
//! - `3`: the server refused or failed the request (a JSON-RPC error, a protocol or
//!   connection failure, a rejected `requestState`).
//! - `4`: paused: `--state-file` written; continue with `tern resume FILE`.
//! - `130`: Ctrl-C while waiting on the server (not at a prompt), as a shell reports a
//!   process SIGINT ended.

mod answerer;
mod answers;
mod child;
mod cli;
mod connect;
mod error;
mod exit;
mod files;
mod form;
mod hints;
mod keys;
mod list;
mod notices;
mod proxy;
mod render;
mod run;
mod safe;
mod sampling;
mod schema;
mod state;
mod trust;
mod wire;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::DONE
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let level = match cli.verbose {
        0 | 1 => "warn",
        2 => "info",
        _ => "debug",
    };
    // Colour only for a person at a terminal who has not asked for none (NO_COLOR).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TERN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level)),
        )
        .without_time()
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tern: could not start the runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    runtime.spawn(form::end_on_ctrl_c());
    let json = cli.json();
    let target = cli.target().map(str::to_owned);
    let code = match runtime.block_on(run::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            report(&e, target.as_deref(), json);
            e.exit_code()
        }
    };
    // The child server (stdio) and open connections go with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(3));
    ExitCode::from(code)
}

/// An error on stderr: `tern: MESSAGE` and a `hint: ...` line below it when there is
/// advice; with `--json`, one line `{"error":{"kind","message","hint"?,"exitCode"}}`.
fn report(error: &error::CliError, target: Option<&str>, json: bool) {
    let hint = hints::for_error(error, target);
    if json {
        let mut body = serde_json::Map::new();
        body.insert("kind".into(), error.kind().into());
        body.insert("message".into(), error.message().into());
        if let Some(hint) = &hint {
            body.insert("hint".into(), hint.as_str().into());
        }
        body.insert("exitCode".into(), error.exit_code().into());
        // serde escapes the C0 controls, `safe::json` the rest: nothing the server wrote
        // reaches the terminal raw.
        let line = serde_json::json!({ "error": body }).to_string();
        eprintln!("{}", safe::json(&line));
        return;
    }
    // An error can quote the server (a JSON-RPC error, a question it asked).
    eprintln!("tern: {}", safe::text(&error.message()));
    if let Some(hint) = hint {
        eprintln!("hint: {}", safe::text(&hint));
    }
}
