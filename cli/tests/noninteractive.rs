//! `tern` run as a script would: answers on the command line, stdin not a terminal,
//! against the SDK's `everything` example over HTTP and over stdio.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{everything, everything_stdio, tern, transcript};

/// Runs `tern` against a fresh HTTP `everything` and snapshots the transcript.
fn http_case(name: &str, args: &[&str]) {
    let server = everything();
    let mut full = vec![args[0], server.url.as_str()];
    full.extend_from_slice(&args[1..]);
    let out = tern(&full);
    insta::assert_snapshot!(name, transcript(&out, &[(server.url.as_str(), "URL")]));
}

#[test]
fn lists_are_tables() {
    http_case("tools", &["tools"]);
    http_case("prompts", &["prompts"]);
    http_case("resources", &["resources"]);
    http_case("templates", &["templates"]);
}

#[test]
fn a_list_prints_json_with_json() {
    let server = everything();
    let out = tern(&["prompts", &server.url, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let prompts: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = prompts
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"test_prompt_with_arguments"), "{names:?}");
}

#[test]
fn content_of_every_kind_is_printed_readably() {
    http_case("text", &["call", "test_simple_text"]);
    http_case("image", &["call", "test_image_content"]);
    http_case("audio", &["call", "test_audio_content"]);
    http_case("mixed", &["call", "test_multiple_content_types"]);
}

#[test]
fn json_prints_the_raw_result() {
    http_case("text_json", &["call", "test_simple_text", "--json"]);
}

#[test]
fn a_tool_error_exits_1_and_a_protocol_error_exits_3() {
    http_case("tool_error", &["call", "test_error_handling"]);
    http_case("protocol_error", &["call", "protocol_error_job"]);
    http_case("unknown_tool", &["call", "no_such_tool"]);
}

#[test]
fn a_form_is_answered_with_answer_flags() {
    http_case(
        "elicitation_answered",
        &[
            "call",
            "test_elicitation",
            "message=Who are you?",
            "--answer",
            "user_input.username=ada",
            "--answer",
            "user_input.email=ada@example.com",
            "-v",
        ],
    );
}

#[test]
fn answers_are_read_by_the_schema_and_defaults_fill_the_rest() {
    http_case(
        "defaults",
        &[
            "call",
            "test_elicitation_sep1034_defaults",
            "--answer",
            "defaults.age=41",
            "--answer",
            "defaults.verified=no",
        ],
    );
    http_case(
        "enums",
        &[
            "call",
            "test_elicitation_sep1330_enums",
            "--answer",
            "enums.untitledSingle=option2",
            "--answer",
            "enums.titledSingle=Third Option",
            "--answer",
            "enums.legacyEnum=opt1",
            "--answer",
            "enums.untitledMulti=option1,option3",
            "--answer",
            "enums.titledMulti=value2",
        ],
    );
}

#[test]
fn a_bad_answer_is_a_usage_error_naming_the_field() {
    http_case(
        "bad_answer",
        &[
            "call",
            "test_elicitation_sep1034_defaults",
            "--answer",
            "defaults.age=forty",
        ],
    );
    http_case(
        "bad_choice",
        &[
            "call",
            "test_elicitation_sep1330_enums",
            "--answer",
            "enums.untitledSingle=option9",
        ],
    );
}

#[test]
fn answers_come_from_a_file_and_keys_are_declined_or_cancelled() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("answers.json");
    std::fs::write(
        &file,
        r#"{"user_input": {"username": "grace", "email": "grace@example.com"}}"#,
    )
    .expect("written");
    let file = file.to_string_lossy().into_owned();
    http_case(
        "answers_file",
        &["call", "test_elicitation", "message=hi", "--answers", &file],
    );
    http_case(
        "declined",
        &[
            "call",
            "test_elicitation",
            "message=hi",
            "--decline",
            "user_input",
        ],
    );
    http_case(
        "cancelled",
        &[
            "call",
            "test_elicitation",
            "message=hi",
            "--cancel",
            "user_input",
        ],
    );
}

#[test]
fn without_a_terminal_an_unanswered_question_fails_naming_it() {
    http_case(
        "no_tty",
        &["call", "test_elicitation", "message=Who are you?"],
    );
    http_case(
        "no_tty_sampling",
        &["call", "test_sampling", "prompt=What is 2+2?"],
    );
}

#[test]
fn sampling_goes_to_the_sampling_command() {
    let reply =
        r#"{"role":"assistant","content":{"type":"text","text":"four"},"model":"test-model"}"#;
    let command = format!("sh -c 'cat > /dev/null; echo {}'", shell_quote(reply));
    http_case(
        "sampling_cmd",
        &[
            "call",
            "test_sampling",
            "prompt=What is 2+2?",
            "--sampling-cmd",
            &command,
        ],
    );
}

fn shell_quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\\\""))
}

#[test]
fn roots_are_the_root_flags() {
    http_case(
        "roots",
        &[
            "call",
            "test_input_required_result_list_roots",
            "--root",
            "/srv/a",
            "--root",
            "/srv/b",
        ],
    );
}

#[test]
fn logs_and_progress_go_to_stderr() {
    http_case("logs", &["call", "test_tool_with_logging"]);
    http_case("progress", &["call", "test_tool_with_progress"]);
}

#[test]
fn prompts_and_resources_are_printed() {
    http_case(
        "prompt",
        &[
            "prompt",
            "test_prompt_with_arguments",
            "arg1=paris",
            "arg2=rome",
        ],
    );
    http_case(
        "prompt_asks",
        &[
            "prompt",
            "test_input_required_result_prompt",
            "--answer",
            "user_context.context=a sunny day",
        ],
    );
    http_case("read_text", &["read", "test://static-text"]);
    http_case("read_blob", &["read", "test://static-binary"]);
}

#[test]
fn a_task_is_followed_to_its_result() {
    http_case(
        "task",
        &[
            "call",
            "confirm_delete",
            "filename=notes.txt",
            "--answer",
            "confirm.confirm=yes",
        ],
    );
}

#[test]
fn a_stdio_server_is_spawned_from_a_quoted_command() {
    let target = everything_stdio();
    let out = tern(&["call", &target, "test_simple_text"]);
    insta::assert_snapshot!("stdio_text", transcript(&out, &[]));
    let out = tern(&[
        "call",
        &target,
        "test_input_required_result_elicitation",
        "--answer",
        "user_name.name=Ada",
    ]);
    insta::assert_snapshot!("stdio_elicitation", transcript(&out, &[]));
}

#[test]
fn usage_errors_exit_2() {
    let out = tern(&["call"]);
    assert_eq!(out.status.code(), Some(2));
    let out = tern(&["call", "'unclosed", "tool"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither an http(s):// URL"));
}

#[test]
fn help_documents_targets_and_exit_codes() {
    let out = tern(&["call", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("TARGET"), "{help}");
    let out = tern(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Exit codes:") && help.contains("4  paused"),
        "{help}"
    );
}

#[test]
fn oauth_is_consulted_only_when_the_server_asks_for_authorization() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let credentials = dir.path().join("tern").join("credentials.json");
    let credentials = credentials.to_string_lossy().into_owned();
    let out = tern(&[
        "call",
        &server.url,
        "test_simple_text",
        "--oauth",
        "--credentials",
        &credentials,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = tern(&[
        "call",
        &common::everything_stdio(),
        "test_simple_text",
        "--token",
        "t",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("for HTTP servers"));
}

/// The text of a call's result (stdout), with its exit code checked.
fn said(args: &[&str], code: i32) -> String {
    let out = tern(args);
    assert_eq!(out.status.code(), Some(code), "{}", transcript(&out, &[]));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn the_examples_take_a_declined_question_as_an_answer() {
    let target = everything_stdio();
    // Asked once, declined once: the file stays, and nobody asks `confirm#2`.
    let kept = said(
        &[
            "call",
            &target,
            "confirm_delete",
            "filename=a.txt",
            "--decline",
            "confirm",
        ],
        0,
    );
    assert_eq!(kept, "kept 'a.txt'");
    let cancelled = said(
        &["call", &target, "confirm_delete", "--cancel", "confirm"],
        0,
    );
    assert_eq!(cancelled, "kept 'important.txt'");
    let declined = said(
        &[
            "call",
            &target,
            "multi_input",
            "--answer",
            "name.name=Ada",
            "--decline",
            "confirm",
        ],
        0,
    );
    assert_eq!(declined, "nothing done: a question was declined");

    let provision = format!("{} serve --stdio", common::provision_bin().display());
    let out = tern(&[
        "call",
        &provision,
        "provision",
        "name=orders",
        "--decline",
        "region",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", transcript(&out, &[]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no region was given"), "{stderr}");
}

#[test]
fn the_provision_example_refuses_a_tool_it_does_not_have_before_asking() {
    let provision = format!("{} serve --stdio", common::provision_bin().display());
    // No answer is given: a server that asked would fail this on the question instead.
    let out = tern(&["call", &provision, "bogus", "name=orders"]);
    assert_eq!(out.status.code(), Some(3), "{}", transcript(&out, &[]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown tool \\\"bogus\\\"") || stderr.contains("unknown tool \"bogus\""),
        "{stderr}"
    );
    assert!(!stderr.contains("region"), "{stderr}");
}
