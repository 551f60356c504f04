//! `tern proxy`: a gateway in front of the SDK's `everything` example, called through
//! with `tern` itself; a supervisor's SIGTERM drains it; its help names every flag.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{everything_stdio, serve, tern};

#[test]
fn a_named_upstreams_question_is_answered_through_the_gateway() {
    let upstream = format!("demo={}", everything_stdio());
    let gateway = serve(
        Path::new(common::tern_bin()),
        &["proxy", "--listen", "127.0.0.1:0", "--upstream", &upstream],
    );
    let out = tern(&["tools", &gateway.url]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("demo.test_simple_text"), "{listed}");
    let out = tern(&[
        "call",
        &gateway.url,
        "demo.test_input_required_result_elicitation",
        "--answer",
        "demo.user_name.name=Ann",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("Hello, Ann!"), "{said}");
}

#[test]
fn a_sigterm_sent_on_the_announcement_drains_the_gateway() {
    let upstream = format!("demo={}", everything_stdio());
    let mut gateway = serve(
        Path::new(common::tern_bin()),
        &["proxy", "--listen", "127.0.0.1:0", "--upstream", &upstream],
    );
    // Not killed by the signal: it stopped listening, drained and exited.
    let status = gateway.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn the_help_names_every_flag() {
    let out = tern(&["proxy", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--listen",
        "--upstream",
        "--state-key",
        "--deadline",
        "--config",
    ] {
        assert!(help.contains(flag), "{flag} in:\n{help}");
    }
}
