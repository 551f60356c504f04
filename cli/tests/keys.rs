//! `tern keys gen` and `tern keys rotate-plan`.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{tern, transcript};

const OLD: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const NEW: &str = "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f";

#[test]
fn gen_prints_a_fresh_secret_each_time() {
    let first = tern(&["keys", "gen"]);
    let second = tern(&["keys", "gen"]);
    let (a, b) = (
        String::from_utf8_lossy(&first.stdout).trim().to_owned(),
        String::from_utf8_lossy(&second.stdout).trim().to_owned(),
    );
    assert_eq!(a.len(), 64);
    assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    assert_ne!(a, b);
    let b64 = tern(&["keys", "gen", "--base64"]);
    assert_eq!(String::from_utf8_lossy(&b64.stdout).trim().len(), 44);
}

#[test]
fn rotate_plan_prints_the_three_phases() {
    let out = tern(&["keys", "rotate-plan", OLD, NEW]);
    insta::assert_snapshot!("rotate_plan", transcript(&out, &[]));
}

#[test]
fn rotate_plan_with_one_key_generates_the_new_one() {
    let out = tern(&["keys", "rotate-plan", OLD]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("new, generated now"), "{text}");
    assert!(
        text.contains(&format!("--state-key {OLD} --state-key ")),
        "{text}"
    );
}

#[test]
fn rotate_plan_refuses_short_or_repeated_keys() {
    let out = tern(&["keys", "rotate-plan", "abcd", NEW]);
    assert_eq!(out.status.code(), Some(2));
    let out = tern(&["keys", "rotate-plan", OLD, OLD]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("same secret"));
}
