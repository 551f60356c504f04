//! `--state-file` then `tern resume`, each round in a process of its own; the file kept
//! private, and resume refusing what someone else could have written.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use common::{everything, paused_on_stdio_behind_a_marker, tern, transcript};

/// The permission bits of `path`.
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("the file")
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `tern call URL test_elicitation --state-file FILE`: paused at its question.
fn pause(url: &str, file: &Path) {
    let out = tern(&[
        "call",
        url,
        "test_elicitation",
        "message=hi",
        "--state-file",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", transcript(&out, &[]));
}

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
    assert_eq!(mode(&file), 0o600, "written again, still private");

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

#[test]
fn a_state_file_is_left_private_even_when_it_was_not() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("call.json");
    std::fs::write(&file, "an older file").expect("written");
    set_mode(&file, 0o666);
    pause(&server.url, &file);
    assert_eq!(mode(&file), 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(leftovers, ["call.json"], "nothing else is left beside it");
}

#[test]
fn resume_refuses_a_file_its_group_or_everyone_can_write() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("call.json");
    pause(&server.url, &file);
    for (bits, writers) in [
        (0o666, "its group and everyone"),
        (0o602, "everyone"),
        (0o620, "its group"),
    ] {
        set_mode(&file, bits);
        let out = tern(&["resume", &file.to_string_lossy(), "--accept", "user_input"]);
        let text = transcript(&out, &[(&file.to_string_lossy(), "FILE")]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(
            text.contains(&format!("can be written by {writers} (mode {bits:03o})"))
                && text.contains("chmod 600 FILE"),
            "{text}"
        );
        assert!(out.stdout.is_empty(), "nothing was resumed: {text}");
    }
    set_mode(&file, 0o600);
    let out = tern(&["resume", &file.to_string_lossy(), "--decline", "user_input"]);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &[]));
}

#[test]
fn resume_refuses_a_file_of_another_user() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("call.json");
    pause(&server.url, &file);
    // Giving a file away takes root; the tests run as root where this matters.
    if let Err(e) = std::os::unix::fs::chown(&file, Some(65534), Some(65534)) {
        eprintln!("skipped: the file cannot be given to uid 65534 ({e})");
        return;
    }
    let out = tern(&["resume", &file.to_string_lossy(), "--decline", "user_input"]);
    let text = transcript(&out, &[(&file.to_string_lossy(), "FILE")]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("belongs to uid 65534, not to you") && text.contains("chown"),
        "{text}"
    );
    assert!(out.stdout.is_empty(), "nothing was resumed: {text}");
}

#[test]
fn resume_runs_the_command_a_file_names_only_when_told_to() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (file, marker) = paused_on_stdio_behind_a_marker(dir.path());
    let path = file.to_string_lossy().into_owned();
    let replace = [
        (path.as_str(), "FILE"),
        (&*marker.to_string_lossy(), "MARKER"),
        (&*common::everything_bin().to_string_lossy(), "EVERYTHING"),
    ];

    // No terminal to ask on, and no --yes: shown, refused, not run.
    let out = tern(&["resume", &path, "--accept", "user_input"]);
    insta::assert_snapshot!("stdio_command_refused", transcript(&out, &replace));
    assert!(!marker.exists(), "the command did not run");
    assert!(file.exists(), "the file stays, to be resumed once trusted");

    let out = tern(&[
        "resume",
        &path,
        "--yes",
        "--answer",
        "user_input.username=ada",
        "--answer",
        "user_input.email=ada@example.com",
    ]);
    let text = transcript(&out, &replace);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(marker.exists(), "with --yes the command ran: {text}");
    assert!(text.contains("action=accept"), "{text}");
}

#[test]
fn resume_says_where_a_token_goes_when_the_file_chose_the_url() {
    let server = everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("call.json");
    pause(&server.url, &file);
    let path = file.to_string_lossy().into_owned();
    let out = tern(&[
        "resume",
        &path,
        "--token",
        "secret",
        "--decline",
        "user_input",
    ]);
    let text = transcript(
        &out,
        &[(path.as_str(), "FILE"), (server.url.as_str(), "URL")],
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("FILE resumes against URL; your --token is sent there"),
        "{text}"
    );
    // Without a credential, nothing to say.
    pause(&server.url, &file);
    let out = tern(&["resume", &path, "--decline", "user_input"]);
    assert!(!transcript(&out, &[]).contains("is sent there"));
}

#[test]
fn a_stdio_call_says_what_its_resume_takes_and_why_a_new_key_refuses_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("call.json");
    let file_arg = file.to_string_lossy();
    // A server making a key at each start: the next process cannot open the state.
    let target = common::everything_stdio();
    let out = tern(&[
        "call",
        &target,
        "test_input_required_result_multi_round",
        "--state-file",
        &file_arg,
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", transcript(&out, &[]));
    let paused = String::from_utf8_lossy(&out.stderr);
    assert!(paused.contains("needs --yes without one"), "{paused}");
    assert!(paused.contains("--state-key"), "{paused}");
    let out = tern(&["resume", &file_arg, "--yes", "--answer", "step1.name=Ada"]);
    assert_eq!(out.status.code(), Some(3), "{}", transcript(&out, &[]));
    let refused = String::from_utf8_lossy(&out.stderr);
    let hint = refused
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint: {refused}"));
    assert!(
        hint.contains("fixed key") && hint.contains("--state-key"),
        "{hint}"
    );

    // Over HTTP the pause says nothing of commands or keys.
    let server = everything();
    let out = tern(&[
        "call",
        &server.url,
        "test_elicitation",
        "message=hi",
        "--state-file",
        &file_arg,
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", transcript(&out, &[]));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("--yes"),
        "{out:?}"
    );
}
