//! `tern call` on a terminal against the SDK's `everything` example: forms asked field by
//! field, a decline, a URL-mode step, sampling, progress, and a call paused with
//! `--state-file` and finished by `tern resume` in other processes; each screen a snapshot.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use pty::{DOWN, ENTER, SPACE, Terminal};

fn normalise(screen: &str, url: &str) -> String {
    screen.replace(url, "URL")
}

#[test]
fn a_form_is_asked_field_by_field_and_a_number_out_of_bounds_is_asked_again() {
    let server = common::everything();
    let mut t = Terminal::tern(&["call", &server.url, "order_survey"]);
    t.expect("Answer").send(ENTER); // accept
    t.expect("Colour *").send(DOWN).send(ENTER); // Green
    t.expect("How many *").send("42").send(ENTER);
    t.expect("maximum").send("\x7f\x7f7").send(ENTER);
    t.expect("Extras").send(DOWN).send(SPACE).send(ENTER); // card
    t.expect("Name").send(ENTER); // the default
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains(r#"content={"colour":"green","count":7,"extras":["card"],"name":"Ada"}"#),
        "{screen}"
    );
    insta::assert_snapshot!("form", normalise(&screen, &server.url));
}

#[test]
fn a_question_is_declined() {
    let server = common::everything();
    let mut t = Terminal::tern(&[
        "call",
        &server.url,
        "test_elicitation",
        "message=Who are you?",
    ]);
    t.expect("Answer").send(DOWN).send(ENTER);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("action=decline"), "{screen}");
    insta::assert_snapshot!("declined", normalise(&screen, &server.url));
}

#[test]
fn a_url_mode_step_waits_for_enter() {
    let server = common::everything();
    let mut t = Terminal::tern(&["call", &server.url, "sign_in"]);
    t.expect("Press Enter").send(ENTER);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("action=accept"), "{screen}");
    insta::assert_snapshot!("url_mode", normalise(&screen, &server.url));
}

#[test]
fn sampling_goes_to_the_command_or_to_the_user() {
    let server = common::everything();
    let reply = r#"{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"four\"},\"model\":\"m\"}"#;
    let command = format!("sh -c 'cat > /dev/null; echo \"{reply}\"'");
    let t = Terminal::tern(&[
        "call",
        &server.url,
        "test_sampling",
        "prompt=What is 2+2?",
        "--sampling-cmd",
        &command,
    ]);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    insta::assert_snapshot!("sampling_cmd", normalise(&screen, &server.url));

    let mut t = Terminal::tern(&["call", &server.url, "test_sampling", "prompt=What is 2+2?"]);
    t.expect("Reply as the model").send("four").send(ENTER);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    insta::assert_snapshot!("sampling_typed", normalise(&screen, &server.url));
}

#[test]
fn progress_is_a_bar() {
    let server = common::everything();
    let t = Terminal::tern(&["call", &server.url, "test_tool_with_progress"]);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    insta::assert_snapshot!("progress", normalise(&screen, &server.url));
}

#[test]
fn without_a_terminal_a_url_step_is_named_or_accepted_with_accept() {
    let server = common::everything();
    let out = common::tern(&["call", &server.url, "sign_in"]);
    insta::assert_snapshot!(
        "url_mode_no_tty",
        common::transcript(&out, &[(server.url.as_str(), "URL")])
    );
    let out = common::tern(&["call", &server.url, "sign_in", "--accept", "login"]);
    insta::assert_snapshot!(
        "url_mode_accepted",
        common::transcript(&out, &[(server.url.as_str(), "URL")])
    );
}

#[test]
fn a_call_paused_in_one_terminal_is_finished_from_two_others() {
    let server = common::everything();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("call.json").to_string_lossy().into_owned();
    let shown = |screen: &str| normalise(screen, &server.url).replace(&path, "FILE");

    let t = Terminal::tern(&[
        "call",
        &server.url,
        "test_input_required_result_multi_round",
        "--state-file",
        &path,
    ]);
    let (code, paused) = t.finish();
    assert_eq!(code, 4, "{paused}");

    let mut t = Terminal::tern(&["resume", &path]);
    t.expect("Answer").send(ENTER);
    t.expect("name *").send("Ada").send(ENTER);
    let (code, asked_again) = t.finish();
    assert_eq!(code, 4, "{asked_again}");

    let mut t = Terminal::tern(&["resume", &path]);
    t.expect("Answer").send(ENTER);
    t.expect("color *").send("teal").send(ENTER);
    let (code, finished) = t.finish();
    assert_eq!(code, 0, "{finished}");
    assert!(finished.contains("Ada likes teal."), "{finished}");
    assert!(
        !std::path::Path::new(&path).exists(),
        "the file goes once the call is done"
    );
    insta::assert_snapshot!(
        "paused_and_resumed",
        [shown(&paused), shown(&asked_again), shown(&finished)].join("\n=== next process\n")
    );
}

#[test]
fn resume_shows_the_command_a_file_names_and_no_does_not_run_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (file, marker) = common::paused_on_stdio_behind_a_marker(dir.path());
    let path = file.to_string_lossy().into_owned();
    let mut t = Terminal::tern(&["resume", &path]);
    t.expect("Run it?").send("n");
    let (code, screen) = t.finish();
    assert_eq!(code, 2, "{screen}");
    assert!(!marker.exists(), "the command did not run:\n{screen}");
    assert!(file.exists(), "the file stays");
    insta::assert_snapshot!(
        "resume_command_declined",
        screen
            .replace(&path, "FILE")
            .replace(&*marker.to_string_lossy(), "MARKER")
            .replace(&*common::everything_bin().to_string_lossy(), "EVERYTHING")
    );
}
