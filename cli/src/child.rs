//! A stdio server's process: started with `-e` and `--cwd`, its stderr passed through to
//! ours as it comes (controls made visible), and, when the connection fails, its exit
//! status named in the error.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tern_mcp::transport::stdio::LineTransport;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::error::{CliError, Result};
use crate::safe;

/// How long a failed connection waits for the server to finish its stderr and exit
/// before the error is shown without its status.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// The most of a stderr line shown as one line: a longer one is shown in pieces this long.
const STDERR_PIECE: u64 = 64 * 1024;

/// The server process of this run (a run speaks to one server).
static SERVER: OnceLock<Server> = OnceLock::new();

/// What is known of the server process: its command line, and whether (how) it ended.
struct Server {
    command: String,
    /// `Some` once the process exited and its stderr was read to the end.
    ended: watch::Receiver<Option<ExitStatus>>,
}

/// Starts `words` (program and arguments) with `env` added and in `cwd`: the transport
/// over its stdin and stdout.
pub(crate) fn spawn(
    command_line: &str,
    words: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> Result<LineTransport<ChildStdout, ChildStdin>> {
    let (program, args) = words
        .split_first()
        .ok_or_else(|| CliError::usage("TARGET is empty"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        if !cwd.is_dir() {
            return Err(CliError::usage(format!(
                "--cwd {}: not a directory",
                cwd.display()
            )));
        }
        command.current_dir(cwd);
    }
    let spawned = |source| CliError::Spawn {
        command: command_line.to_owned(),
        source,
    };
    let mut child = command.spawn().map_err(spawned)?;
    let missing = |what: &str| spawned(std::io::Error::other(format!("no {what} pipe")));
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let (tx, ended) = watch::channel(None);
    tokio::spawn(async move {
        let mut stderr = tokio::io::BufReader::new(stderr);
        let mut line = Vec::new();
        // Read to its end whatever it holds (bytes that are not UTF-8, a line with no
        // end), or the server would block on a full pipe: a line at most a bounded
        // piece at a time.
        loop {
            line.clear();
            let mut piece = (&mut stderr).take(STDERR_PIECE);
            match piece.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            // The server's words, shown and not run; its colours (written into a pipe
            // by a server that did not check) dropped rather than shown as escapes.
            eprintln!("{}", safe::line(&safe::without_colour(text)));
        }
        // The child is killed with the runtime if it outlives the connection.
        if let Ok(status) = child.wait().await {
            let _ = tx.send(Some(status));
        }
    });
    let _ = SERVER.set(Server {
        command: command_line.to_owned(),
        ended,
    });
    Ok(LineTransport::new(stdout, stdin))
}

/// A failed connection to the stdio server, with how the server ended: its stderr is
/// through by then, and the error says its exit status.
pub(crate) async fn account_for(error: CliError) -> CliError {
    let Some(server) = SERVER.get() else {
        return error;
    };
    if !error.is_connection() {
        return error;
    }
    let mut ended = server.ended.clone();
    let status = tokio::time::timeout(EXIT_WAIT, ended.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| *s));
    let Some(status) = status else {
        return error;
    };
    let how = match (status.code(), signal(&status)) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended ({status})"),
    };
    CliError::Context {
        context: format!("the server command `{}` {how}", safe::line(&server.command)),
        source: Box::new(error),
    }
}

#[cfg(unix)]
fn signal(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

#[cfg(not(unix))]
fn signal(_: &ExitStatus) -> Option<i32> {
    None
}
