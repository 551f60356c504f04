//! A server whose every text carries terminal controls (the `hostile` example): whatever
//! `tern` shows of it reaches stdout and stderr with those controls made visible, on a
//! terminal or not, and `--json` stays JSON that reads back to what the server sent.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use std::process::Output;

use common::{hostile_bin, serve, tern, transcript};
use pty::{ENTER, Terminal};

/// What the server puts in every text (the same as the example's): an OSC 0 title, an
/// OSC 52 clipboard write, CSI colour and cursor moves, a C1 CSI clearing the screen, a
/// right-to-left override, DEL and a lone carriage return.
const HOSTILE: &str = "<\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[31m\u{1b}[2A\u{1b}[2K\u{9b}2J\u{202e}\u{7f}\r>";

/// The same, as `tern` shows it.
const VISIBLE: &str = r"<\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[31m\u{1b}[2A\u{1b}[2K\u{9b}2J\u{202e}\u{7f}\u{d}>";

/// The hostile server as a stdio TARGET.
fn target() -> String {
    hostile_bin().display().to_string()
}

/// Asserts that `out` holds no raw control on stdout or stderr, that it shows `shown`,
/// and that it exited with `code`; its transcript.
fn neutralized(what: &str, out: &Output, code: i32, shown: &[&str]) -> String {
    let text = transcript(out, &[]);
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(c) = common::acted_on(bytes) {
            panic!("{what}: {stream} has a raw {c:?}:\n{text}");
        }
    }
    assert_eq!(out.status.code(), Some(code), "{what}:\n{text}");
    for part in shown {
        assert!(
            text.contains(part),
            "{what}: {part:?} is not shown:\n{text}"
        );
    }
    text
}

fn visible(prefix: &str) -> String {
    format!("{prefix}{VISIBLE}")
}

#[test]
fn lists_show_names_descriptions_uris_and_mime_types_neutralized() {
    let target = target();
    let cases = [
        ("tools", vec![visible("name"), visible("description")]),
        ("prompts", vec![visible("description")]),
        (
            "resources",
            vec![visible("resource"), visible("text/plain")],
        ),
        (
            "templates",
            vec![visible("test://t/{id}"), visible("template")],
        ),
    ];
    for (list, shown) in cases {
        let out = tern(&[list, &target]);
        let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
        neutralized(list, &out, 0, &shown);
    }
}

#[test]
fn results_show_every_kind_of_content_neutralized() {
    let target = target();
    let out = tern(&["call", &target, "show"]);
    let text = neutralized(
        "call show",
        &out,
        0,
        &[
            &visible("text"),
            &format!("[link] {} <{}>", visible("link"), visible("file:///link")),
            &format!("[image {}, 3 bytes]", visible("image/png")),
            &visible("embedded"),
        ],
    );
    // Structured content is JSON: the controls serde leaves raw become JSON escapes too.
    assert!(
        text.contains(r#""note": "structured<\u001b]0;pwned\u0007"#)
            && text.contains(r"\u009b2J\u202e\u007f\r>"),
        "{text}"
    );
    let out = tern(&["prompt", &target, "hostile"]);
    neutralized("prompt", &out, 0, &[&visible("user: prompt text")]);
    let out = tern(&["read", &target, "test://hostile"]);
    neutralized("read", &out, 0, &[&visible("contents")]);
}

#[test]
fn json_stays_json_and_reads_back_to_what_the_server_sent() {
    let target = target();
    let out = tern(&["call", &target, "show", "--json"]);
    neutralized("call --json", &out, 0, &[]);
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(result["content"][0]["text"], format!("text{HOSTILE}"));
    assert_eq!(
        result["structuredContent"]["note"],
        format!("structured{HOSTILE}")
    );
    let out = tern(&["tools", &target, "--json"]);
    neutralized("tools --json", &out, 0, &[]);
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(tools[0]["description"], format!("description{HOSTILE}"));
}

#[test]
fn errors_of_the_tool_and_of_the_protocol_are_neutralized() {
    let target = target();
    let out = tern(&["call", &target, "tool_error"]);
    neutralized("tool error", &out, 1, &[&visible("tool error")]);
    let out = tern(&["call", &target, "rpc_error"]);
    neutralized(
        "JSON-RPC error",
        &out,
        3,
        &[&format!(
            "the server answered with an error: {}",
            visible("rpc error")
        )],
    );
}

#[test]
fn logs_and_progress_are_neutralized() {
    // Over HTTP: on stdio the SDK hands a call no log entries (they name no request).
    let server = serve(hostile_bin(), &["--port", "0"]);
    let out = tern(&["call", &server.url, "noisy"]);
    neutralized(
        "logs and progress",
        &out,
        0,
        &[
            &format!("[info] {}", visible("log")),
            r#"[warning] {"detail":"log data<\u001b]0;pwned\u0007"#,
            &format!("progress: 1/2 {}", visible("progress")),
        ],
    );
}

#[test]
fn the_refusal_without_a_terminal_names_each_question_neutralized() {
    let target = target();
    let out = tern(&["call", &target, "form"]);
    neutralized(
        "form refusal",
        &out,
        2,
        &[
            &format!("question `{}`", visible("form")),
            &format!("from server `{}`", visible("server")),
            &format!("\"{}\"", visible("message")),
            &visible("field"),
        ],
    );
    let out = tern(&["call", &target, "url"]);
    neutralized(
        "url refusal",
        &out,
        2,
        &[&visible("visit"), &visible("https://example.com/")],
    );
    let out = tern(&["call", &target, "sample"]);
    neutralized("sampling refusal", &out, 2, &[&visible("prompt")]);
}

#[test]
fn the_state_file_summary_is_neutralized() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("call.json").to_string_lossy().into_owned();
    let out = tern(&["call", &target(), "all", "--state-file", &path]);
    let text = neutralized(
        "state-file summary",
        &out,
        4,
        &[&visible("form"), &visible("url"), &visible("sample")],
    );
    insta::assert_snapshot!("state_file_summary", text.replace(&path, "FILE"));
}

#[test]
fn the_server_stderr_is_neutralized() {
    let out = tern(&["-vv", "tools", &target()]);
    // Its colour (`ESC [31m`) is dropped, as colours a server writes into a pipe are;
    // everything else is shown.
    let without_colour = visible("stderr").replace("\\u{1b}[31m", "");
    neutralized("server stderr", &out, 0, &[&without_colour]);
}

/// Byte strings of the hostile text a terminal would act on.
const RAW_PARTS: [&str; 6] = [
    "\u{1b}]0;pwned",
    "\u{1b}]52;",
    "\u{1b}[31m",
    "\u{9b}",
    "\u{202e}",
    "\u{7}",
];

/// Asserts that what a terminal session received holds none of the hostile controls raw.
fn no_raw_parts(what: &str, raw: &[u8], screen: &str) {
    let raw = String::from_utf8_lossy(raw);
    for part in RAW_PARTS {
        assert!(
            !raw.contains(part),
            "{what}: {part:?} reached the terminal raw:\n{screen}"
        );
    }
}

#[test]
fn questions_on_a_terminal_show_the_servers_words_neutralized() {
    let target = target();
    let mut t = Terminal::tern(&["call", &target, "form"]);
    t.expect("Answer").send(ENTER);
    t.expect("Pick").send(ENTER); // the first choice, whose label is hostile
    t.expect("field").send(ENTER); // an optional field, left empty
    t.expect("Note").send(ENTER); // the default, shown neutralized
    let (code, screen, raw) = t.finish_raw();
    no_raw_parts("the form", &raw, &screen);
    assert_eq!(code, 0, "{screen}");
    // The default the terminal showed neutralized went back as the server wrote it.
    assert!(
        screen.contains("the note kept its default: true"),
        "{screen}"
    );
    for part in [r"\u{1b}]0;pwned", r"\u{9b}2J\u{202e}"] {
        assert!(screen.contains(part), "{part} not shown:\n{screen}");
    }

    let mut t = Terminal::tern(&["call", &target, "url"]);
    t.expect("Press Enter").send(ENTER);
    let (code, screen, raw) = t.finish_raw();
    no_raw_parts("the URL step", &raw, &screen);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains(&visible("open: https://example.com/")),
        "{screen}"
    );

    let mut t = Terminal::tern(&["call", &target, "sample"]);
    t.expect("Reply as the model").send("four").send(ENTER);
    let (code, screen, raw) = t.finish_raw();
    no_raw_parts("the sampling request", &raw, &screen);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains(&visible("> prompt")), "{screen}");
}
