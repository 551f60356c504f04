//! The README's shell blocks that build: the install commands make a new project that
//! builds, `tern` installs from the checkout, the guide's commands are the test command's
//! own steps, and the benchmarks run (criterion's once each, in its test mode).

use std::process::{Command, Stdio};

use tern_tests::workspace_root;

use super::readme::{cargo, in_project, new_project};
use super::readme_run::{cargo_turn, commands, section_blocks};

#[test]
fn the_install_commands_build_a_new_project() {
    let [block] = &section_blocks("Install", "sh")[..] else {
        panic!("one shell block in the install section");
    };
    let project = tempfile::tempdir().expect("a temporary directory");
    new_project(project.path(), "");
    let _turn = cargo_turn();
    let runtime = workspace_root().join("runtime");
    for command in commands(block) {
        let mut words = shlex::split(&command).expect("it splits");
        assert_eq!(words[..2], ["cargo", "add"], "{command}");
        // The crate comes from this checkout: it is not on crates.io from here.
        if words[2] == "tern-mcp" {
            words.extend(["--path".into(), runtime.display().to_string()]);
        }
        let status = in_project(project.path())
            .args(&words[1..])
            .arg("--offline")
            .stderr(Stdio::null())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "`{command}` failed");
    }
    let status = in_project(project.path())
        .args(["run", "-q", "--offline"])
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "the project the install commands made does not build"
    );
}

#[test]
fn tern_installs_from_the_checkout() {
    let block = section_blocks("`tern` in the terminal", "sh")
        .into_iter()
        .find(|b| b.starts_with("cargo install"))
        .expect("the install block");
    let [command] = &commands(&block)[..] else {
        panic!("one command: {block}");
    };
    let root = tempfile::tempdir().expect("a temporary directory");
    let words = shlex::split(command).expect("it splits");
    let _turn = cargo_turn();
    // Installed under a directory of the test's, not ~/.cargo/bin; built in this
    // workspace's target directory, beside the release builds of the benchmarks.
    let status = cargo()
        .args(&words[1..])
        .arg("--root")
        .arg(root.path())
        .args(["--offline", "--locked", "-q"])
        .env("CARGO_TARGET_DIR", workspace_root().join("target"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "`{command}` failed");
    let out = Command::new(root.path().join("bin/tern"))
        .arg("--version")
        .output()
        .expect("the installed tern runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("tern {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_guide_commands_are_the_test_commands_docs_and_doctests() {
    let [block] = &section_blocks("The guide", "sh")[..] else {
        panic!("one shell block in the guide section");
    };
    // `cargo doc --open` opens a browser and the doctests take minutes: the test command
    // builds the same documentation and runs every doctest (the guide's among them).
    let script = std::fs::read_to_string(workspace_root().join("scripts/test")).expect("reads");
    for (readme, step) in [
        ("cargo doc -p tern-mcp", "cargo doc --no-deps --workspace"),
        (
            "cargo test --doc -p tern-mcp guide",
            "cargo test --workspace",
        ),
    ] {
        assert!(block.contains(readme), "{block}");
        assert!(script.contains(step), "scripts/test has no `{step}`");
    }
}

#[test]
fn the_benchmarks_run() {
    let [block] = &section_blocks("Benchmarks", "sh")[..] else {
        panic!("one shell block in the benchmarks section");
    };
    let _turn = cargo_turn();
    for command in commands(block) {
        let words = shlex::split(&command).expect("it splits");
        assert_eq!(words[..2], ["cargo", "bench"], "{command}");
        // Each benchmark once, to see it runs: measuring is scripts/bench-sitting's.
        let out = cargo()
            .args(&words[1..])
            .args(["-q", "--", "--test"])
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "`{command}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Criterion's benches say `Success` for each; http_flow, its own harness, runs
        // its short measurement and prints a line for each.
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("Success") || said.contains("http_flow/sequential: median"),
            "`{command}` ran no benchmark: {said}"
        );
    }
}
