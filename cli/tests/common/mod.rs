//! What the tests of the `tern` binary share: the SDK's `everything` example and the
//! CLI's own `hostile` one, built once per test binary and served over HTTP on port 0 per
//! test (or spawned on stdio), the binary run with stdin closed, and transcripts
//! normalised for snapshots.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// The `tern` binary under test.
pub(crate) fn tern_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tern")
}

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_owned()
}

/// The SDK's `everything` example, built (or found up to date) by cargo once per test
/// binary: its path as cargo reports it.
pub(crate) fn everything_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| example("tern-mcp", "everything"))
}

/// The CLI's `hostile` example (a server whose every text carries terminal controls),
/// built once per test binary.
pub(crate) fn hostile_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| example("tern-mcp-cli", "hostile"))
}

/// The SDK's `provision` example (the low-level provisioning server), built once per
/// test binary.
pub(crate) fn provision_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| example("tern-mcp", "provision"))
}

/// Builds example `name` of `package`: its path as cargo reports it.
fn example(package: &str, name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(workspace())
        .args(["build", "-q", "-p", package, "--example", name])
        .arg("--message-format=json")
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "building the {name} example failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the example's executable")
}

/// A server process, killed when dropped.
pub(crate) struct Server {
    child: Child,
    /// Its MCP endpoint.
    pub(crate) url: String,
}

impl Server {
    /// Sends it SIGTERM and waits for it to end.
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        self.child.wait().expect("it ends")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `program args` started; ready once it printed `listening on URL` (the socket is
/// bound and accepting by then).
pub(crate) fn serve(program: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server announces itself");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server said {line:?}"))
        .to_owned();
    Server { child, url }
}

/// The `everything` example over HTTP, on a port of its own.
pub(crate) fn everything() -> Server {
    serve(everything_bin(), &["--port", "0"])
}

/// The `everything` example as a stdio TARGET.
pub(crate) fn everything_stdio() -> String {
    format!("{} --stdio", everything_bin().display())
}

/// The first character a terminal would act on in `bytes`, if any: a C0 control other
/// than a line feed or tab, DEL, a C1 control, or a bidi override or isolate.
pub(crate) fn acted_on(bytes: &[u8]) -> Option<char> {
    String::from_utf8_lossy(bytes).chars().find(|&c| {
        matches!(c,
            '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
            | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// Runs `tern args` with stdin closed (not a terminal).
pub(crate) fn tern(args: &[&str]) -> Output {
    Command::new(tern_bin())
        .args(args)
        .stdin(Stdio::null())
        .env_remove("TERN_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("tern runs")
}

/// Exit code, stdout and stderr as one text, with `replace` pairs applied (ports,
/// paths).
pub(crate) fn transcript(out: &Output, replace: &[(&str, &str)]) -> String {
    let mut text = format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for (from, to) in replace {
        text = text.replace(from, to);
    }
    text
}

/// A requestState sealing secret for `everything --state-key`: a call paused by one
/// server process is then resumed by another.
pub(crate) const STATE_KEY: &str =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// A call to `everything` on stdio paused in `dir/call.json`, whose target was then
/// changed to a command that first creates `dir/marker`, as anyone able to write the file
/// could do: the file and the marker.
pub(crate) fn paused_on_stdio_behind_a_marker(dir: &Path) -> (PathBuf, PathBuf) {
    let file = dir.join("call.json");
    let marker = dir.join("marker");
    let server = format!(
        "{} --stdio --state-key {STATE_KEY}",
        everything_bin().display()
    );
    let out = tern(&[
        "call",
        &server,
        "test_elicitation",
        "message=hi",
        "--state-file",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", transcript(&out, &[]));
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("saved")).expect("JSON");
    saved["target"] = format!("sh -c 'touch {} && exec {server}'", marker.display()).into();
    std::fs::write(&file, saved.to_string()).expect("rewritten");
    (file, marker)
}
