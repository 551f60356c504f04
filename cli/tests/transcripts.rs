//! The README's "`tern` in the terminal" transcripts, run: each `$ tern ...` line of
//! its ```text blocks, with the real binary for `tern`, the `everything` example (for
//! `http://127.0.0.1:3000/mcp`, started as the section's ```sh line says, on port 0, one
//! per block; built, for the `cargo run` stdio command) and a temporary directory as the
//! working directory (state files), its output compared line by line with the lines under it. A command whose
//! output has an `Answer:` line runs on a terminal: each line from there up to the last
//! is a prompt, `LABEL: ANSWER`, answered by typing ANSWER once LABEL is shown (a
//! choice by moving to it); the rest run with stdin closed. Only the server's address
//! is normalised.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use std::process::{Command, Stdio};

use pty::{DOWN, ENTER, Terminal};

/// The address the README writes.
const README_ADDRESS: &str = "127.0.0.1:3000";
/// The stdio command the README writes.
const README_STDIO: &str = "cargo run -q -p tern-mcp --example everything -- --stdio";

/// One `$ ` command and the lines it prints.
struct Step {
    command: String,
    output: Vec<String>,
}

/// The README's `tern` section.
fn section() -> String {
    let readme = std::fs::read_to_string(common::workspace().join("README.md")).expect("README.md");
    let start = readme
        .find("## `tern` in the terminal")
        .expect("the section");
    let section = &readme[start..];
    section[3..]
        .find("\n## ")
        .map_or(section, |end| &section[..end + 3])
        .to_owned()
}

/// How the section says to start the server at `http://127.0.0.1:3000/mcp`: the
/// arguments of the everything example (its ```sh line `cargo run -q -p tern-mcp
/// --example everything -- ARGS`), the port 0 for 3000.
fn server_args() -> Vec<String> {
    let section = section();
    let start = "```sh\ncargo run -q -p tern-mcp --example everything -- ";
    let from = section
        .find(start)
        .expect("the section says how to start everything")
        + start.len();
    let line = section[from..].lines().next().expect("a line");
    let args = shlex::split(line).expect("it splits");
    args.into_iter()
        .map(|a| if a == "3000" { "0".to_owned() } else { a })
        .collect()
}

/// The ```text blocks of the README's `tern` section, each as its steps.
fn transcripts() -> Vec<Vec<Step>> {
    let section = section();
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line != "```text" {
            continue;
        }
        let mut steps: Vec<Step> = Vec::new();
        for line in lines.by_ref().take_while(|l| *l != "```") {
            match line.strip_prefix("$ ") {
                Some(command) => steps.push(Step {
                    command: command.to_owned(),
                    output: Vec::new(),
                }),
                None => steps
                    .last_mut()
                    .expect("a transcript starts with `$ `")
                    .output
                    .push(line.to_owned()),
            }
        }
        blocks.push(steps);
    }
    blocks
}

/// The command's words, `tern` and the stdio server replaced, `< /dev/null` dropped
/// (stdin is closed anyway).
fn words(command: &str, address: &str) -> Vec<String> {
    let stdio = format!("{} --stdio", common::everything_bin().display());
    let command = command
        .replace(README_STDIO, &stdio)
        .replace(README_ADDRESS, address);
    let mut words = shlex::split(&command).expect("a shell-like command line");
    assert_eq!(words.remove(0), "tern", "{command}");
    if words.ends_with(&["<".to_owned(), "/dev/null".to_owned()]) {
        words.truncate(words.len() - 2);
    }
    words
}

/// Runs an interactive step on a terminal, answering its prompts: the screen.
fn on_terminal(args: &[String], dir: &std::path::Path, output: &[String]) -> Vec<String> {
    let mut command = Command::new(common::tern_bin());
    command.args(args).current_dir(dir);
    let mut t = Terminal::spawn(command);
    let first = output
        .iter()
        .position(|l| l.starts_with("Answer: "))
        .expect("an Answer: line");
    for prompt in &output[first..output.len() - 1] {
        let (label, answer) = prompt.split_once(": ").expect("LABEL: ANSWER");
        t.expect(label);
        if label == "Answer" {
            let at = ["accept", "decline", "cancel"]
                .iter()
                .position(|a| *a == answer)
                .expect("a choice");
            for _ in 0..at {
                t.send(DOWN);
            }
            t.send(ENTER);
        } else {
            t.send(answer).send(ENTER);
        }
    }
    let (_, screen) = t.finish();
    screen.lines().map(str::to_owned).collect()
}

/// Runs a step with stdin closed: what it printed, stdout then stderr (the README's
/// commands print on one of them).
fn without_terminal(args: &[String], dir: &std::path::Path) -> Vec<String> {
    let out = Command::new(common::tern_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env_remove("TERN_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("tern runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines().map(str::to_owned).collect()
}

#[test]
fn the_readme_transcripts_are_what_tern_prints() {
    let blocks = transcripts();
    assert!(blocks.len() >= 4, "the section's transcripts are found");
    for steps in blocks {
        let args = server_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(
            args,
            ["--port", "0"],
            "the README starts everything on a port"
        );
        let server = common::serve(common::everything_bin(), &args);
        let address = server
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let dir = tempfile::tempdir().expect("a temporary directory");
        for step in steps {
            let args = words(&step.command, &address);
            let printed = if step.output.iter().any(|l| l.starts_with("Answer: ")) {
                on_terminal(&args, dir.path(), &step.output)
            } else {
                without_terminal(&args, dir.path())
            };
            let printed: Vec<String> = printed
                .iter()
                .map(|l| l.replace(&address, README_ADDRESS))
                .filter(|l| !l.is_empty())
                .collect();
            assert_eq!(
                printed, step.output,
                "`$ {}` printed (left) what README.md does not say (right)",
                step.command
            );
        }
    }
}
