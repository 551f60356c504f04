//! `--state-file` then `tern resume`, each round in a process of its own.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{everything, tern, transcript};

#[test]
fn a_call_saved_at_its_questions_is_completed_by_other_processes() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("call.json");
    let path = file.to_string_lossy().into_owned();
    let replace = [(server.url.as_str(), "URL"), (path.as_str(), "FILE")];

    let out = tern(&[
        "call",
        &server.url,
        "test_input_required_result_multi_round",
        "--state-file",
        &path,
    ]);
    insta::assert_snapshot!("paused", transcript(&out, &replace));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("saved")).expect("JSON");
    assert_eq!(saved["target"], server.url.as_str());
    assert!(
        saved["pending"]["inputRequests"]["step1"].is_object(),
        "{saved}"
    );

    let out = tern(&["resume", &path, "--answer", "step1.name=Ada"]);
    insta::assert_snapshot!("resumed_and_asked_again", transcript(&out, &replace));

    let out = tern(&["resume", &path, "--answer", "step2.color=teal"]);
    insta::assert_snapshot!("resumed_to_the_end", transcript(&out, &replace));
    assert!(!file.exists(), "the file goes once the call is done");
}

#[test]
fn resuming_without_an_answer_and_no_terminal_names_the_question() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("call.json").to_string_lossy().into_owned();
    let out = tern(&[
        "call",
        &server.url,
        "test_elicitation",
        "message=hi",
        "--state-file",
        &path,
    ]);
    assert_eq!(out.status.code(), Some(4));
    let out = tern(&["resume", &path]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`user_input`") && stderr.contains("\"hi\""),
        "{stderr}"
    );
}
