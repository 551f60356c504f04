//! `tern` says what to do: each failure on a terminal, with the `hint:` (or warning) a
//! person reads under it, and the exit code.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;

use pty::{DOWN, ENTER, Terminal};

/// Runs `tern args` on a terminal to its end: exit code and screen.
fn on_terminal(args: &[&str]) -> (i32, String) {
    Terminal::tern(args).finish()
}

/// An HTTP server on port 0 that answers every request with 401 and a bearer challenge.
fn wants_authorization() -> String {
    answering(
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\n",
        "",
    )
}

/// An HTTP server on port 0 that answers every request with `head` (its status line and
/// fields) and `body`.
fn answering(head: &'static str, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let answer = format!(
                "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

#[test]
fn a_401_names_oauth_and_token() {
    let url = wants_authorization();
    let (code, screen) = on_terminal(&["tools", &url]);
    assert_eq!(code, 3, "{screen}");
    assert!(screen.contains("HTTP 401"), "{screen}");
    assert!(
        screen.contains("hint: the server wants authorization: sign in with --oauth, or send a bearer token with --token TOKEN"),
        "{screen}"
    );
}

#[test]
fn a_refusal_shows_what_the_server_said_and_the_hint_follows_it() {
    // A Host check behind a proxy: a JSON-RPC error answered to no request (id null).
    let url = answering(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Host \"fleet\" is not allowed; set proxy_set_header Host $host"}}"#,
    );
    let (code, screen) = on_terminal(&["tools", &url]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen
            .contains(r#"Forbidden: Host "fleet" is not allowed; set proxy_set_header Host $host"#),
        "{screen}"
    );
    assert!(!screen.contains("credentials"), "{screen}");

    // A scope the token lacks, said only in the challenge.
    let url = answering(
        "HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer error=\"insufficient_scope\", \
         scope=\"notes:write\", error_description=\"the token lacks the scope this request needs (notes:write)\"\r\n",
        "",
    );
    let (code, screen) = on_terminal(&["tools", &url]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("the token lacks the scope this request needs (notes:write)"),
        "{screen}"
    );
    assert!(
        screen.contains("hint: the server refused these credentials"),
        "{screen}"
    );

    // A plain-text refusal, as a proxy in front writes one.
    let url = answering(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n",
        "upstream fleet is down\n",
    );
    let (code, screen) = on_terminal(&["tools", &url]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("Bad Gateway: upstream fleet is down"),
        "{screen}"
    );
}

#[test]
fn a_404_asks_whether_the_path_is_mcp() {
    let server = common::everything();
    let wrong = server.url.replace("/mcp", "/api");
    let (code, screen) = on_terminal(&["tools", &wrong]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: is the endpoint path /mcp? MCP servers usually serve it there: {}",
            server.url
        )),
        "{screen}"
    );
}

#[test]
fn an_address_without_a_scheme_is_not_run_as_a_command() {
    let server = common::everything();
    let bare = server.url.trim_start_matches("http://").to_owned();
    let (code, screen) = on_terminal(&["tools", &bare]);
    assert_eq!(code, 2, "{screen}");
    assert!(!screen.contains("could not start"), "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: add the scheme: http://{bare} (or https://)"
        )),
        "{screen}"
    );
}

#[test]
fn an_address_without_a_path_is_told_the_endpoint_path_too() {
    let server = common::everything();
    let bare = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let (code, screen) = on_terminal(&["tools", &bare]);
    assert_eq!(code, 2, "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: add the scheme and the endpoint path: {} (or https://)",
            server.url
        )),
        "{screen}"
    );
}

#[test]
fn a_url_of_another_scheme_is_a_usage_error_not_a_command() {
    let (code, screen) = on_terminal(&["tools", "ftp://127.0.0.1:3000/mcp"]);
    assert_eq!(code, 2, "{screen}");
    assert!(!screen.contains("could not start"), "{screen}");
    assert!(
        screen.contains("is a ftp:// URL: tern reaches a server over http(s)://"),
        "{screen}"
    );
}

#[test]
fn an_upstream_name_with_a_dot_is_a_usage_error_not_a_command() {
    let (code, screen) = on_terminal(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "my.ev=http://127.0.0.1:1/mcp",
    ]);
    assert_eq!(code, 2, "{screen}");
    assert!(!screen.contains("could not start"), "{screen}");
    assert!(
        screen.contains("hint: name it with those: --upstream my_ev=http://127.0.0.1:1/mcp"),
        "{screen}"
    );
}

#[test]
fn a_refused_connection_asks_whether_the_server_is_running() {
    // A port that was free a moment ago: nothing listens there now.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, screen) = on_terminal(&["tools", &url]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: nothing is listening at http://127.0.0.1:{port}: is the server running, and is the port right?"
        )),
        "{screen}"
    );
}

#[test]
fn a_trailing_slash_after_mcp_is_named() {
    let server = common::everything();
    let slashed = format!("{}/", server.url);
    let (code, screen) = on_terminal(&["tools", &slashed]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: is the endpoint path /mcp, without the trailing slash? try {}",
            server.url
        )),
        "{screen}"
    );
}

#[test]
fn https_to_a_plain_http_server_suggests_http() {
    let server = common::everything();
    let tls = server.url.replace("http://", "https://");
    let (code, screen) = on_terminal(&["tools", &tls]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains(&format!(
            "hint: the server does not speak TLS here: try {}",
            server.url
        )),
        "{screen}"
    );
}

#[test]
fn a_mistyped_tool_gets_the_nearest_names() {
    let server = common::everything();
    let (code, screen) = on_terminal(&["call", &server.url, "test_elicitaton"]);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("did you mean `test_elicitation`?"),
        "{screen}"
    );
}

#[test]
fn an_argument_the_schema_does_not_take_is_refused_before_sending() {
    let server = common::everything();
    let (code, screen) = on_terminal(&["call", &server.url, "test_elicitation", "mesage=hi"]);
    assert_eq!(code, 2, "{screen}");
    assert!(
        screen.contains(
            "tern: tool `test_elicitation` has no argument `mesage` (its arguments: message); nothing was sent"
        ),
        "{screen}"
    );
    assert!(screen.contains("hint: did you mean `message`?"), "{screen}");
}

#[test]
fn a_missing_required_argument_is_refused_before_sending() {
    let server = common::everything();
    let (code, screen) = on_terminal(&["call", &server.url, "test_elicitation"]);
    assert_eq!(code, 2, "{screen}");
    assert!(
        screen.contains(
            "tern: tool `test_elicitation` needs the argument `message`; nothing was sent"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("hint: give each after the tool's name: message=VALUE"),
        "{screen}"
    );
}

#[test]
fn an_answer_for_a_question_never_asked_is_a_warning_naming_the_asked_keys() {
    let server = common::everything();
    let (code, screen) = on_terminal(&[
        "call",
        &server.url,
        "test_elicitation",
        "message=Who are you?",
        "--answer",
        "user_input.username=ada",
        "--answer",
        "user_input.email=ada@example.com",
        "--answer",
        "usr_input.username=ada",
    ]);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("tern: warning: no question asked for `usr_input`, which an answer was given for (the questions asked: user_input); did you mean `user_input`?"),
        "{screen}"
    );
}

#[test]
fn a_stdio_server_that_dies_shows_its_stderr_and_exit_status() {
    let command = "sh -c 'echo boom >&2; exit 7'";
    let (code, screen) = on_terminal(&["tools", command]);
    assert_eq!(code, 3, "{screen}");
    let boom = screen.find("boom").expect("the server's stderr is shown");
    let status = screen
        .find("the server command `sh -c 'echo boom >&2; exit 7'` exited with status 7")
        .expect("the exit status is named");
    assert!(boom < status, "stderr first, then the error:\n{screen}");
}

#[test]
fn a_missing_answers_file_is_a_usage_error() {
    let server = common::everything();
    let (code, screen) = on_terminal(&[
        "call",
        &server.url,
        "test_elicitation",
        "message=hi",
        "--answers",
        "/nonexistent/answers.json",
    ]);
    assert_eq!(code, 2, "{screen}");
    assert!(
        screen.contains("tern: --answers /nonexistent/answers.json: No such file"),
        "{screen}"
    );
}

#[test]
fn ctrl_c_at_the_choice_shows_the_cursor_again_and_says_nothing_was_sent() {
    let server = common::everything();
    let mut t = Terminal::tern(&["call", &server.url, "test_elicitation", "message=hi"]);
    t.expect("Answer").send(DOWN).send("\x03");
    let (code, screen, bytes) = t.finish_raw();
    assert_eq!(code, 2, "{screen}");
    assert!(
        screen.contains("tern: interrupted: no answer was sent"),
        "{screen}"
    );
    let text = String::from_utf8_lossy(&bytes);
    let hidden = text.rfind("\x1b[?25l").expect("the list hides the cursor");
    let shown = text.rfind("\x1b[?25h").expect("the cursor is shown again");
    assert!(shown > hidden, "the cursor is left hidden");
}

#[test]
fn answers_typed_for_a_retry_that_never_got_through_are_kept_for_resume() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = common::serve(
        common::everything_bin(),
        &["--port", "0", "--state-key", common::STATE_KEY],
    );
    let mut command = std::process::Command::new(common::tern_bin());
    command.current_dir(dir.path()).args([
        "call",
        &server.url,
        "test_elicitation",
        "message=Who are you?",
    ]);
    let mut t = Terminal::spawn(command);
    t.expect("Answer").send(ENTER);
    t.expect("email *").send("ada@example.com").send(ENTER);
    drop(server); // the server goes before the answers are sent
    t.expect("username *").send("ada").send(ENTER);
    let (code, screen) = t.finish();
    assert_eq!(code, 3, "{screen}");
    let hint = screen
        .lines()
        .skip_while(|l| !l.starts_with("hint: your answers were not sent"))
        .collect::<Vec<_>>()
        .join("");
    let file = hint
        .rsplit("tern resume ")
        .next()
        .expect("the command to go on")
        .trim()
        .to_owned();
    let path = dir.path().join(&file);
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the call is kept"))
            .expect("JSON");
    assert_eq!(
        saved["answers"]["user_input"]["content"],
        serde_json::json!({"email": "ada@example.com", "username": "ada"})
    );

    // Another instance with the same key takes the retry; nothing is asked again.
    let again = common::serve(
        common::everything_bin(),
        &["--port", "0", "--state-key", common::STATE_KEY],
    );
    saved["target"] = again.url.clone().into();
    std::fs::write(&path, saved.to_string()).expect("rewritten");
    let out = std::process::Command::new(common::tern_bin())
        .current_dir(dir.path())
        .args(["resume", &file])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("tern runs");
    let shown = common::transcript(&out, &[]);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains(r#"content={"email":"ada@example.com","username":"ada"}"#),
        "{shown}"
    );
}

/// The `--trace` lines of `stderr`: each `> ` or `< ` and one JSON object.
fn frames(stderr: &str) -> Vec<(char, serde_json::Value)> {
    stderr
        .lines()
        .filter_map(|line| {
            let (arrow, json) = (line.chars().next()?, line.get(2..)?);
            let frame = serde_json::from_str(json).ok()?;
            (matches!(arrow, '>' | '<') && line.get(1..2) == Some(" ")).then_some((arrow, frame))
        })
        .collect()
}

#[test]
fn trace_prints_each_frame_sent_and_received_in_order_over_stdio_and_http() {
    let server = common::everything();
    for target in [common::everything_stdio(), server.url.clone()] {
        let out = common::tern(&["call", &target, "test_simple_text", "--trace"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let traced = frames(&stderr);
        assert_eq!(
            traced.len(),
            stderr.lines().count(),
            "every line a frame:\n{stderr}"
        );
        let call = traced
            .iter()
            .position(|(a, f)| *a == '>' && f["method"] == "tools/call")
            .expect("the call is traced");
        let (arrow, answer) = &traced[call + 1];
        assert_eq!(*arrow, '<', "{stderr}");
        assert_eq!(answer["id"], traced[call].1["id"], "{stderr}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "This is a simple text response for testing."
        );
        for ((_, frame), line) in traced.iter().zip(stderr.lines()) {
            let compact = serde_json::to_string(frame).expect("JSON");
            assert!(
                line[2..] == compact,
                "not compact: {}",
                &line[..line.len().min(80)]
            );
        }
    }
}

#[test]
fn json_errors_are_one_line_of_json_on_stderr() {
    let server = common::everything();
    let wrong = server.url.replace("/mcp", "/api");
    let out = common::tern(&["tools", &wrong, "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let error: serde_json::Value = serde_json::from_str(&stderr).expect("JSON");
    assert_eq!(error["error"]["kind"], "transport");
    assert_eq!(error["error"]["exitCode"], 3);
    assert!(
        error["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("/mcp")),
        "{error}"
    );
}
