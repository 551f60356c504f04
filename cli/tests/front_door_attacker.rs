//! Attacks on the front door: hostile stdio servers' stderr (colour stripping, invalid
//! UTF-8, huge lines), task ids and question keys holding controls, `--trace` of a hostile
//! server, `--json`/`--trace`/`-v` in every position, `NO_COLOR` on a pty and a pipe, the
//! resume hint.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{everything_bin, everything_stdio, hostile_bin, tern, tern_bin, transcript};
use pty::Terminal;

/// Asserts no raw control on stdout or stderr, no panic, exit `code`, and that every
/// part of `shown` is in the transcript; the transcript.
fn clean(what: &str, out: &Output, code: i32, shown: &[&str]) -> String {
    let text = transcript(out, &[]);
    let short: String = text.chars().take(4000).collect();
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(c) = common::acted_on(bytes) {
            let s = String::from_utf8_lossy(bytes);
            let at = s.find(c).unwrap_or(0);
            let near: String = s[..at]
                .chars()
                .rev()
                .take(200)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .chain(s[at..].chars().take(20))
                .collect();
            panic!("{what}: {stream} has a raw {c:?} near: {near:?}\n{short}");
        }
    }
    assert!(!text.contains("panicked"), "{what}: panic:\n{short}");
    assert_eq!(out.status.code(), Some(code), "{what}:\n{short}");
    for part in shown {
        assert!(text.contains(part), "{what}: {part:?} not shown:\n{short}");
    }
    text
}

/// A stdio TARGET that writes the bytes of `file` to its stderr, then either exits 3 or
/// (when `then_serve`) becomes the `everything` server.
fn stderr_server(file: &Path, then_serve: bool) -> String {
    if then_serve {
        format!(
            "sh -c 'cat {} >&2; exec {} --stdio'",
            file.display(),
            everything_bin().display()
        )
    } else {
        format!("sh -c 'cat {} >&2; exit 3'", file.display())
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("written");
    path
}

#[test]
fn crafted_escapes_in_a_stdio_servers_stderr_never_survive_colour_stripping_raw() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = b"long\x1b[".to_vec();
    long.extend(b"1;".repeat(100_000));
    long.extend(b"31mX\x1b[2J\n");
    let lines: Vec<(&[u8], &str)> = vec![
        // A CSI opened inside another: stripping the inner colour leaves `ESC [ m` text.
        (b"n1\x1b[\x1b[31mm|\n", r"n1\u{1b}[m|"),
        (b"n2\x1b\x1b[31mm|\n", r"n2\u{1b}m|"),
        (b"n3\x1b[1;\x1b[31mb|\n", r"n3\u{1b}[1;b|"),
        // ESC [ at the end of a line, and before multibyte UTF-8.
        (b"eol\x1b[\n", r"eol\u{1b}["),
        (b"mb\x1b[\xc3\xa9m|\n", "mb\\u{1b}[\u{e9}m|"),
        // The C1 CSI as UTF-8, NEL, bidi overrides and isolates, DEL, CR, NUL.
        (b"c1\xc2\x9b2J\xc2\x85|\n", r"c1\u{9b}2J\u{85}|"),
        (
            b"bidi\xe2\x80\xae\xe2\x81\xa6\x7f\r\x00|\n",
            r"bidi\u{202e}\u{2066}\u{7f}\u{d}\u{0}|",
        ),
        // Colon subparameters are colour; private modes are not.
        (b"sub\x1b[38:2:255:0:0mrgb\x1b[0m|\n", "subrgb|"),
        (
            b"priv\x1b[?25l\x1b[?1049h|\n",
            r"priv\u{1b}[?25l\u{1b}[?1049h|",
        ),
        (b"huge\x1b[99999999999999999999999999m|\n", "huge|"),
        (
            b"osc\x1b]52;c;cHduZWQ=\x1b\\|\n",
            r"osc\u{1b}]52;c;cHduZWQ=\u{1b}\|",
        ),
        // Past 64 KiB a line is shown in pieces: the sequence it began is cut, and
        // shown as text rather than taken for colour.
        (&long, r"31mX\u{1b}[2J"),
        // The last line without a newline.
        (b"noeol\x1b]0;t\x07", r"noeol\u{1b}]0;t\u{7}"),
    ];
    let mut all = Vec::new();
    for (bytes, _) in &lines {
        all.extend_from_slice(bytes);
    }
    let file = write(dir.path(), "stderr", &all);
    let shown: Vec<&str> = lines.iter().map(|(_, s)| *s).collect();
    let out = tern(&["tools", &stderr_server(&file, false)]);
    clean("crafted stderr, server exits", &out, 3, &shown);
    // The same from a server that then serves, under -vv (its last line, unended until
    // the server ends, is left out).
    let out = tern(&["-vv", "tools", &stderr_server(&file, true)]);
    clean(
        "crafted stderr, server serves",
        &out,
        0,
        &shown[..shown.len() - 1],
    );
}

#[test]
fn a_ten_megabyte_stderr_line_is_shown_neutralized_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut line = b"big".to_vec();
    line.extend(b"\x1b[31mA\x07\xc2\x9b".repeat(1_400_000));
    line.extend(b"END\n");
    assert!(line.len() > 10_000_000);
    let file = write(dir.path(), "stderr", &line);
    let out = tern(&["tools", &stderr_server(&file, false)]);
    let text = clean("10 MB line", &out, 3, &["END"]);
    assert!(text.contains(r"bigA\u{7}\u{9b}A\u{7}"), "{}", &text[..200]);
}

// Found by this attack: one invalid UTF-8 byte on a stdio server's stderr (a raw 8-bit
// CSI 0x9b, or 0xff) ended the pass-through, that line and every later one never shown.
#[test]
fn stderr_lines_after_invalid_utf8_or_an_8bit_csi_are_still_shown() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("ff", &b"before\none\xff\ntwo after\n"[..]),
        ("csi8", &b"before\nx\x9b2J\ntwo after\n"[..]),
    ] {
        let file = write(dir.path(), name, bytes);
        let out = tern(&["tools", &stderr_server(&file, false)]);
        clean(name, &out, 3, &["before", "two after"]);
        let text = transcript(&out, &[]);
        assert!(text.contains("one") || text.contains("x"), "{text}");
    }
}

// Found by this attack: after one invalid UTF-8 byte tern stopped draining the server's
// stderr, so a server that then wrote more than a pipe holds (64 KiB) blocked, and tern
// with it.
#[test]
fn a_server_whose_stderr_holds_invalid_utf8_is_still_drained_and_does_not_hang_tern() {
    let target = format!(
        "sh -c 'printf \"bad\\377\\n\" >&2; yes | head -c 300000 >&2; exec {} --stdio'",
        everything_bin().display()
    );
    let out = Command::new("timeout")
        .args(["4", tern_bin(), "tools", &target])
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env_remove("TERN_LOG")
        .output()
        .expect("timeout runs");
    assert_ne!(
        out.status.code(),
        Some(124),
        "tern hung: the server's stderr pipe filled"
    );
    clean("drained", &out, 0, &["test_simple_text"]);
}

// Found by this attack: --trace wrote the server's JSON messages with the C1 controls,
// bidi overrides and isolates and DEL raw (JSON leaves them unescaped; ESC and BEL it
// escapes).
#[test]
fn trace_shows_a_hostile_servers_messages_without_raw_controls() {
    let hostile = hostile_bin().display().to_string();
    for args in [
        vec!["--trace", "tools", &hostile],
        vec!["tools", &hostile, "--trace"],
    ] {
        let out = tern(&args);
        clean(&format!("{args:?}"), &out, 0, &["< {"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_server(dir.path(), "task");
    let out = tern(&["call", &fake, "t", "--trace"]);
    clean("trace of a task", &out, 0, &["done"]);
}

/// A minimal MCP server in Python whose task ids and question keys hold every control.
const FAKE: &str = r#"
import sys, json
BAD = "<\x1b]0;pwned\x07\x1b[31m\x9b2J\u202e\u2066\x7f\r\x00\x85>"
mode = sys.argv[1]
def send(o):
    sys.stdout.write(json.dumps(o, ensure_ascii=False) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m: continue
    i, meth, p = m["id"], m["method"], m.get("params", {})
    if meth == "server/discover":
        send({"jsonrpc":"2.0","id":i,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}})
    elif meth == "tools/list":
        send({"jsonrpc":"2.0","id":i,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object"}}]}})
    elif meth == "tools/call":
        if mode == "task" or (mode == "roundtask" and "inputResponses" in p):
            send({"jsonrpc":"2.0","id":i,"result":{"resultType":"task","status":"working","taskId":"id"+BAD,"pollIntervalMs":1,"ttlMs":60000,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}})
        elif mode == "refuse" and "inputResponses" in p:
            send({"jsonrpc":"2.0","id":i,"error":{"code":-32602,"message":"Invalid or expired requestState"}})
        elif mode == "refusebad" and "inputResponses" in p:
            send({"jsonrpc":"2.0","id":i,"error":{"code":-32602,"message":"Invalid or expired requestState"+BAD}})
        else:
            key = "key"+BAD if mode == "ask" else "q"
            send({"jsonrpc":"2.0","id":i,"result":{"resultType":"input_required","requestState":"s","inputRequests":{key:{"method":"elicitation/create","params":{"mode":"form","message":"msg","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}})
    elif meth == "tasks/get":
        send({"jsonrpc":"2.0","id":i,"result":{"resultType":"complete","status":"completed","taskId":p.get("taskId"),"pollIntervalMs":1,"ttlMs":60000,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","statusMessage":"sm"+BAD,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}})
    else:
        send({"jsonrpc":"2.0","id":i,"error":{"code":-32601,"message":"no"}})
"#;

/// The fake server as a stdio TARGET in `mode` (task, roundtask, ask, refuse).
fn fake_server(dir: &Path, mode: &str) -> String {
    let script = write(dir, "fake.py", FAKE.as_bytes());
    format!("python3 {} {mode}", script.display())
}

const BAD_SHOWN: &str =
    r"<\u{1b}]0;pwned\u{7}\u{1b}[31m\u{9b}2J\u{202e}\u{2066}\u{7f}\u{d}\u{0}\u{85}>";

#[test]
fn a_task_id_holding_controls_is_neutralized_wherever_verbose_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_server(dir.path(), "task");
    let said = format!("the server made the call task id{BAD_SHOWN}; following it to its end");
    for args in [
        vec!["-v", "call", &fake, "t"],
        vec!["call", "-v", &fake, "t"],
        vec!["call", &fake, "t", "-v"],
        vec!["-v", "call", &fake, "t", "--json"],
        vec!["--json", "call", &fake, "t", "-v"],
    ] {
        let out = tern(&args);
        clean(&format!("{args:?}"), &out, 0, &[&said]);
    }
    let out = tern(&["call", &fake, "t"]);
    let text = clean("without -v", &out, 0, &["done"]);
    assert!(!text.contains("task"), "{text}");
    // A task reached after a round.
    let fake = fake_server(dir.path(), "roundtask");
    let out = tern(&["call", &fake, "t", "-v", "--answer", "q.name=Ada"]);
    clean(
        "after a round",
        &out,
        0,
        &[&format!(
            "after 1 input round(s) the server made the call task id{BAD_SHOWN}; following it to its end"
        )],
    );
}

#[test]
fn a_question_key_holding_controls_is_neutralized_in_rounds_refusals_and_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_server(dir.path(), "ask");
    let out = tern(&["-v", "call", &fake, "t"]);
    clean(
        "-v refusal",
        &out,
        2,
        &[
            &format!("round 1: the server asks for key{BAD_SHOWN}"),
            &format!("question `key{BAD_SHOWN}`"),
        ],
    );
    for args in [
        vec!["--json", "call", &fake, "t"],
        vec!["call", &fake, "t", "--json"],
    ] {
        let out = tern(&args);
        clean("--json refusal", &out, 2, &[]);
        let error: serde_json::Value = serde_json::from_slice(&out.stderr).expect("JSON error");
        assert_eq!(error["error"]["exitCode"], 2, "{error}");
    }
    let file = dir.path().join("call.json");
    let out = tern(&["call", &fake, "t", "--state-file", &file.to_string_lossy()]);
    clean(
        "state-file summary",
        &out,
        4,
        &[
            &format!("  key{BAD_SHOWN}: form"),
            "resume starts the server command again",
        ],
    );
}

#[test]
fn a_refused_resume_hints_at_a_fixed_key_and_neutralizes_the_servers_message() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_server(dir.path(), "refuse");
    let file = dir.path().join("call.json");
    let file_arg = file.to_string_lossy().into_owned();
    let out = tern(&["call", &fake, "t", "--state-file", &file_arg]);
    clean(
        "pause",
        &out,
        4,
        &[
            "continue with: tern resume",
            "needs --yes without one",
            "--state-key",
        ],
    );
    for args in [
        vec!["resume", &file_arg, "--yes", "--answer", "q.name=x"],
        vec![
            "-v", "resume", &file_arg, "--answer", "q.name=x", "--yes", "-v",
        ],
    ] {
        let out = tern(&args);
        let text = clean(&format!("{args:?}"), &out, 3, &["hint: "]);
        let hint = text.lines().find(|l| l.starts_with("hint: ")).unwrap();
        assert!(
            hint.contains("fixed key") && hint.contains("--state-key"),
            "{hint}"
        );
    }
    for args in [
        vec![
            "--json", "resume", &file_arg, "--yes", "--answer", "q.name=x",
        ],
        vec![
            "resume", &file_arg, "--yes", "--answer", "q.name=x", "--json",
        ],
    ] {
        let out = tern(&args);
        clean(&format!("{args:?}"), &out, 3, &[]);
        let last = String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap()
            .to_owned();
        let error: serde_json::Value = serde_json::from_str(&last).expect("a JSON error");
        assert!(
            error["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("--state-key"),
            "{error}"
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState"),
            "{error}"
        );
    }
    // A refusal whose message holds controls is shown neutralized.
    let fake = fake_server(dir.path(), "refusebad");
    let file = dir.path().join("bad.json");
    let file_arg = file.to_string_lossy().into_owned();
    let out = tern(&["call", &fake, "t", "--state-file", &file_arg]);
    assert_eq!(out.status.code(), Some(4), "{}", transcript(&out, &[]));
    let out = tern(&["resume", &file_arg, "--yes", "--answer", "q.name=x"]);
    clean(
        "hostile refusal",
        &out,
        3,
        &[&format!("requestState{BAD_SHOWN}")],
    );
}

#[test]
fn json_and_trace_mean_the_same_before_after_and_between_the_operands() {
    let target = everything_stdio();
    let reference = tern(&["call", &target, "test_simple_text", "--json"]);
    assert_eq!(reference.status.code(), Some(0));
    for args in [
        vec!["--json", "call", &target, "test_simple_text"],
        vec!["call", "--json", &target, "test_simple_text"],
        vec!["call", &target, "--json", "test_simple_text"],
        vec!["-v", "call", &target, "test_simple_text", "--json"],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(out.stdout, reference.stdout, "{args:?}");
    }
    // After `--` it is an argument of the tool, not the flag.
    let out = tern(&["call", &target, "test_simple_text", "--", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", transcript(&out, &[]));
    assert!(out.stdout.is_empty());
    for args in [
        vec!["--trace", "--json", "tools", &target],
        vec!["tools", &target, "--json", "--trace"],
        vec!["--json", "tools", "--trace", &target],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("> {"),
            "{args:?}"
        );
    }
}

// Found by this attack: a global flag written twice was a usage error when both were
// before the subcommand or both after it, and accepted when one was before and one after.
#[test]
fn a_global_flag_given_twice_is_treated_alike_wherever_the_two_are_written() {
    let target = everything_stdio();
    for flag in ["--json", "--trace"] {
        let mut codes = Vec::new();
        for args in [
            vec![flag, flag, "tools", &target],
            vec!["tools", &target, flag, flag],
            vec![flag, "tools", &target, flag],
            vec!["tools", flag, &target, flag],
        ] {
            let out = tern(&args);
            assert!(!transcript(&out, &[]).contains("panicked"));
            codes.push((args.join(" "), out.status.code()));
        }
        let first = codes[0].1;
        assert!(codes.iter().all(|(_, c)| *c == first), "{flag}: {codes:#?}");
    }
}

#[test]
fn json_and_trace_given_to_keys_or_proxy_are_usage_errors_in_every_position() {
    let k1 = "a".repeat(64);
    let k2 = "b".repeat(64);
    for flag in ["--json", "--trace"] {
        for args in [
            vec![flag, "keys", "rotate-plan", &k1, &k2],
            vec!["keys", flag, "rotate-plan", &k1, &k2],
            vec!["keys", "rotate-plan", flag, &k1, &k2],
            vec!["keys", "rotate-plan", &k1, &k2, flag],
            vec!["-v", "keys", "gen", flag],
            vec![flag, "proxy", "--upstream=http://127.0.0.1:9/mcp"],
            vec!["proxy", flag, "--upstream=http://127.0.0.1:9/mcp"],
            vec!["proxy", "--upstream=http://127.0.0.1:9/mcp", flag],
        ] {
            let out = tern(&args);
            let text = transcript(&out, &[]);
            assert_eq!(out.status.code(), Some(2), "{args:?}\n{text}");
            assert!(out.stdout.is_empty(), "{args:?} ran:\n{text}");
            assert!(text.contains(&format!("{flag} shapes")), "{args:?}\n{text}");
        }
    }
    // Without them, and with -v anywhere, keys runs.
    for args in [
        vec!["-v", "keys", "rotate-plan", &k1, &k2],
        vec!["keys", "rotate-plan", &k1, &k2, "-vvv"],
    ] {
        let out = tern(&args);
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
    }
    // After `--` a flag is a key, refused as one.
    let out = tern(&["keys", "rotate-plan", &k1, "--", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("key #2"));
    // A usage error, whatever the position, never runs the server command of resume.
    let out = tern(&["--json", "--json", "resume", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `tern args` on a pty with NO_COLOR unset, empty or "1": exit code and raw bytes.
fn on_a_pty(no_color: Option<&str>, args: &[&str]) -> (i32, Vec<u8>, String) {
    let mut command = Command::new("env");
    match no_color {
        None => command.args(["-u", "NO_COLOR"]),
        Some(v) => command.arg(format!("NO_COLOR={v}")),
    };
    command.arg(tern_bin()).args(args);
    let t = Terminal::spawn(command);
    let (code, screen, raw) = t.finish_raw();
    (code, raw, screen)
}

#[test]
fn tern_colours_its_logs_only_on_a_pty_without_no_colour_and_never_the_servers_controls() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "stderr",
        b"S<\x1b]0;pwned\x07\x1b[38;5;99mC\x1b[2J\xc2\x9bZ\xe2\x80\xae>\n",
    );
    let target = stderr_server(&file, true);
    for (no_color, coloured) in [(None, true), (Some(""), true), (Some("1"), false)] {
        let (code, raw, screen) = on_a_pty(no_color, &["-vvv", "tools", &target]);
        assert_eq!(code, 0, "{screen}");
        let text = String::from_utf8_lossy(&raw);
        assert_eq!(
            text.contains("\u{1b}[34mDEBUG"),
            coloured,
            "NO_COLOR={no_color:?}: {text:?}"
        );
        for part in [
            "\u{1b}]0;pwned",
            "\u{1b}[38;5;99m",
            "\u{1b}[2J",
            "\u{9b}",
            "\u{202e}",
        ] {
            assert!(!text.contains(part), "NO_COLOR={no_color:?}: raw {part:?}");
        }
        assert!(
            text.contains(r"S<\u{1b}]0;pwned\u{7}C\u{1b}[2J\u{9b}Z\u{202e}>"),
            "{text:?}"
        );
    }
    // Into a pipe, NO_COLOR empty or unset: no escape at all.
    for no_color in [None, Some("")] {
        let mut command = Command::new(tern_bin());
        command
            .args(["-vvv", "tools", &target])
            .stdin(Stdio::null())
            .env_remove("TERN_LOG");
        match no_color {
            None => command.env_remove("NO_COLOR"),
            Some(v) => command.env("NO_COLOR", v),
        };
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            !out.stderr.contains(&0x1b),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        clean("pipe", &out, 0, &["DEBUG"]);
    }
}
