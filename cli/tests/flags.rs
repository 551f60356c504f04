//! What the global flags mean wherever they are written, what `-v` narrates, and that
//! nothing colours a pipe: `--json`, `--trace` and `-v` before or after the subcommand,
//! refused where they shape nothing; a call that becomes a task said under `-v`; colour
//! only on a terminal without `NO_COLOR`, from tern and from the examples.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Stdio};

use common::{everything_bin, everything_stdio, tern, transcript};

#[test]
fn json_and_trace_are_global_before_or_after_the_subcommand() {
    let target = everything_stdio();
    for args in [
        vec!["--json", "call", &target, "test_simple_text"],
        vec!["call", &target, "test_simple_text", "--json"],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
        let result: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("the result is JSON");
        assert_eq!(result["resultType"], "complete", "{result}");
    }
    for args in [
        vec!["--trace", "tools", &target],
        vec!["tools", &target, "--trace"],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("> {") && l.contains("tools/list")),
            "{stderr}"
        );
    }
    let out = tern(&["--json", "tools", "http://127.0.0.1:9/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let error: serde_json::Value = serde_json::from_str(stderr.trim()).expect("a JSON error");
    assert_eq!(error["error"]["exitCode"], 3, "{stderr}");
}

#[test]
fn json_and_trace_are_usage_errors_where_they_shape_nothing() {
    for args in [
        ["--json", "keys", "gen"],
        ["keys", "gen", "--trace"],
        ["--trace", "proxy", "--upstream=http://127.0.0.1:9/mcp"],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(2), "{}", transcript(&out, &[]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not tern "), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing ran: {out:?}");
    }
}

#[test]
fn verbose_help_says_what_it_shows_wherever_it_is_listed() {
    let out = tern(&["keys", "gen", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("Narrate the rounds of a call"), "{help}");
    assert!(help.contains("-v, --verbose"), "{help}");
    assert!(help.contains("tern's own logs"), "{help}");
}

#[test]
fn verbose_says_when_a_call_becomes_a_task() {
    let target = everything_stdio();
    let out = tern(&["-v", "call", &target, "slow_compute", "seconds=0"]);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("the server made the call task ")
                && l.ends_with("; following it to its end")),
        "{stderr}"
    );
    // A task reached after a round says so too.
    let out = tern(&[
        "-v",
        "call",
        &target,
        "test_tool_with_task",
        "--answer",
        "user_name.name=Ada",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("after 1 input round(s) the server made the call task "),
        "{stderr}"
    );
    // Without -v, nothing.
    let out = tern(&["call", &target, "slow_compute", "seconds=0"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("task"),
        "{out:?}"
    );
}

/// Runs `program args` with stderr piped (not a terminal) and `NO_COLOR` unset.
fn stderr_in_a_pipe(program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env("TERN_LOG", "debug")
        .output()
        .expect("it runs");
    out.stderr
}

#[test]
fn logs_written_into_a_pipe_carry_no_colour() {
    // tern's own logs (-vvv).
    let target = everything_stdio();
    let stderr = stderr_in_a_pipe(common::tern_bin(), &["-vvv", "tools", &target]);
    let shown = String::from_utf8_lossy(&stderr);
    assert!(shown.contains("DEBUG"), "tern logged: {shown}");
    assert!(
        !stderr.contains(&0x1b),
        "an escape reached the pipe: {shown}"
    );

    // The everything example's: it logs its drain on SIGTERM.
    let mut server = Command::new(everything_bin())
        .args(["--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("NO_COLOR")
        .spawn()
        .expect("everything starts");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().expect("piped")),
        &mut line,
    )
    .expect("it says where it listens");
    assert!(line.starts_with("listening on "), "{line}");
    signal(&server, "TERM");
    let out = server.wait_with_output().expect("it ends");
    let shown = String::from_utf8_lossy(&out.stderr);
    assert!(
        shown.contains("INFO") && shown.contains("draining"),
        "{shown}"
    );
    assert!(!out.stderr.contains(&0x1b), "{shown}");
}

#[test]
fn a_stdio_servers_colours_are_dropped_not_shown_as_escapes() {
    let target = "sh -c 'printf \"\\033[2mdim\\033[0m \\033[31mred\\033[0m \\033]0;title\\007\\n\" >&2; exit 3'";
    let out = tern(&["tools", target]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dim red "), "{stderr}");
    assert!(!stderr.contains("\\u{1b}[2m"), "{stderr}");
    // What is not a colour is still made visible, never run.
    assert!(stderr.contains("\\u{1b}]0;title"), "{stderr}");
    assert!(!out.stderr.contains(&0x1b), "{stderr}");
}

#[test]
fn ctrl_c_while_waiting_on_the_server_exits_130() {
    // A stdio "server" that says when it has started, then never answers, and goes when
    // tern's end of its stdin closes.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let started = dir.path().join("started");
    let target = format!("sh -c 'touch {}; cat >/dev/null'", started.display());
    let child = Command::new(common::tern_bin())
        .args(["tools", &target])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tern starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    signal(&child, "INT");
    let out = child.wait_with_output().expect("tern ends");
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "{out:?}"
    );
}

/// Sends `process` the signal `name` (`TERM`, `INT`).
fn signal(process: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), process.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}
