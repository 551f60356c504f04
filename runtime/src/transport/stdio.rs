//! stdio: newline-delimited JSON-RPC over a byte stream pair.
//!
//! A server reads requests from its stdin and writes answers to its stdout
//! ([`stdio()`]); logs must go to stderr, which is not part of the protocol. A client
//! spawns the server as a child process ([`ChildProcessTransport`]) and forwards the
//! child's stderr lines to tracing or to a channel of its own.
//!
//! ```no_run
//! # async fn demo(server: tern_mcp::server::Server) -> tern_mcp::Result<()> {
//! server.serve(tern_mcp::transport::stdio::stdio()).await
//! # }
//! ```

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, mpsc};

use super::{BoxFuture, MessageSink, MessageSource, MessageTransport, TransportError};

/// The largest message a stdio peer may send: 64 MiB.
pub(crate) const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// How long a child gets to exit after its stdin closes, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Newline-delimited JSON-RPC over any reader and writer.
#[derive(Debug)]
pub struct LineTransport<R, W> {
    reader: R,
    writer: W,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Messages are read from `reader` one line each and written to `writer` the same way.
    pub fn new(reader: R, writer: W) -> Self {
        Self { reader, writer }
    }
}

/// The server's end of stdio: reads stdin, writes stdout.
pub(crate) type StdioServerTransport = LineTransport<tokio::io::Stdin, tokio::io::Stdout>;

/// This process's stdin and stdout, for `server.serve(stdio())`.
pub fn stdio() -> StdioServerTransport {
    LineTransport::new(tokio::io::stdin(), tokio::io::stdout())
}

struct LineSink<W> {
    writer: Mutex<W>,
    /// Keeps a child process alive as long as we can write to it.
    _child: Option<ChildGuard>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> MessageSink for LineSink<W> {
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            if message.contains('\n') {
                return Err(TransportError::new(
                    "a stdio message must not contain a newline",
                ));
            }
            let mut writer = self.writer.lock().await;
            let mut line = message.into_bytes();
            line.push(b'\n');
            writer
                .write_all(&line)
                .await
                .map_err(|e| TransportError::new(format!("stdio write failed: {e}")))?;
            writer
                .flush()
                .await
                .map_err(|e| TransportError::new(format!("stdio flush failed: {e}")))
        })
    }
}

struct LineSource<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// A message past the budget was said skipped; the rest of its line is dropped
    /// before the next is read.
    skipping: bool,
}

impl<R: AsyncRead + Unpin + Send + 'static> LineSource<R> {
    /// Discards input up to and including the next newline (or the end).
    async fn skip_line(&mut self) -> std::io::Result<()> {
        loop {
            let buffered = self.reader.fill_buf().await?;
            if buffered.is_empty() {
                return Ok(());
            }
            match buffered.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    self.reader.consume(i + 1);
                    return Ok(());
                }
                None => {
                    let n = buffered.len();
                    self.reader.consume(n);
                }
            }
        }
    }

    async fn next_line(&mut self) -> Option<Result<String, TransportError>> {
        if std::mem::take(&mut self.skipping) {
            if let Err(e) = self.skip_line().await {
                return Some(Err(TransportError::new(format!("stdio read failed: {e}"))));
            }
        }
        loop {
            self.line.clear();
            let read = (&mut self.reader)
                .take(MAX_MESSAGE_BYTES as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .await;
            match read {
                Err(e) => return Some(Err(TransportError::new(format!("stdio read failed: {e}")))),
                Ok(0) => return None,
                Ok(_) => {}
            }
            if self.line.len() > MAX_MESSAGE_BYTES && self.line.last() != Some(&b'\n') {
                // Said at once (the line may never end), its rest dropped unkept before
                // the next message is read.
                self.line = Vec::new();
                self.skipping = true;
                return Some(Err(TransportError::skipped(format!(
                    "a message larger than 64 MiB ({MAX_MESSAGE_BYTES} bytes) was skipped"
                ))));
            }
            let text = String::from_utf8_lossy(&self.line);
            let text = text.trim();
            if !text.is_empty() {
                return Some(Ok(text.to_owned()));
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> MessageSource for LineSource<R> {
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>> {
        Box::pin(self.next_line())
    }
}

impl<R, W> MessageTransport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        split_lines(self.reader, self.writer, None)
    }
}

fn split_lines<R, W>(
    reader: R,
    writer: W,
    child: Option<ChildGuard>,
) -> (Box<dyn MessageSink>, Box<dyn MessageSource>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    (
        Box::new(LineSink {
            writer: Mutex::new(writer),
            _child: child,
        }),
        Box::new(LineSource {
            reader: BufReader::new(reader),
            line: Vec::new(),
            skipping: false,
        }),
    )
}

/// Where a child's stderr lines go.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum StderrSink {
    /// To tracing, at `info` level, target `tern_mcp::transport::stdio`.
    #[default]
    Tracing,
    /// To this channel, one line each.
    Channel(mpsc::UnboundedSender<String>),
    /// To this process's stderr, untouched.
    Inherit,
}

/// A server spawned as a child process, spoken to over its stdin and stdout: give it to
/// [`ClientBuilder::connect`](crate::client::ClientBuilder::connect).
///
/// The child is killed if it outlives the transport: when the connection is dropped its
/// stdin closes, it gets two seconds to exit, then it is killed (`kill_on_drop` covers a
/// process that is torn down with no runtime left).
#[derive(Debug)]
pub struct ChildProcessTransport {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

impl ChildProcessTransport {
    /// Spawns `command`, forwarding its stderr to tracing.
    pub fn spawn(command: Command) -> std::io::Result<Self> {
        Self::spawn_with_stderr(command, StderrSink::Tracing)
    }

    /// Spawns `command`, sending its stderr lines to `stderr`.
    pub fn spawn_with_stderr(mut command: Command, stderr: StderrSink) -> std::io::Result<Self> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        command.stderr(match stderr {
            StderrSink::Inherit => Stdio::inherit(),
            _ => Stdio::piped(),
        });
        let mut child = command.spawn()?;
        let missing = |what| std::io::Error::other(format!("the child's {what} was not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        if let Some(err) = child.stderr.take() {
            let pid = child.id();
            tokio::spawn(forward_stderr(err, stderr, pid));
        }
        Ok(Self {
            child,
            stdin,
            stdout,
        })
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

async fn forward_stderr(err: tokio::process::ChildStderr, sink: StderrSink, pid: Option<u32>) {
    let mut lines = BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        match &sink {
            StderrSink::Channel(tx) => {
                if tx.send(line).is_err() {
                    break;
                }
            }
            _ => tracing::info!(target: "tern_mcp::transport::stdio", pid, "{line}"),
        }
    }
}

/// Ends the child when the sending half goes: its stdin is already closed by then.
struct ChildGuard(Option<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let Some(mut child) = self.0.take() else {
            return;
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.kill().await;
                }
            });
        }
        // Without a runtime, dropping `child` kills it (kill_on_drop).
    }
}

impl MessageTransport for ChildProcessTransport {
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        // Field order in LineSink drops the writer (closing stdin) before the guard.
        split_lines(self.stdout, self.stdin, Some(ChildGuard(Some(self.child))))
    }
}
