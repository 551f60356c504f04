//! Every shell block and transcript of the README is run by the test command, as
//! written: each block is claimed by the test that runs it (a block no test claims fails
//! here), the gateway's commands start the servers they name and its transcript is what
//! `tern` prints through them, and the oauth example says how to start each side (the
//! blocks that build: `readme_builds`). Only ports (a server started on port 0, and the
//! address it announced put back) are normalised; and nothing in the README names an
//! example, a script, a file or a `tern` flag that does not exist.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Output, Stdio};

use tern_tests::{tern_bin, workspace_root};

fn readme() -> String {
    std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md reads")
}

/// A fenced block of the README: its language, the `## ` section it is in, its text.
struct Block {
    lang: String,
    section: String,
    text: String,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.to_owned();
        } else if let Some(lang) = line.strip_prefix("```") {
            let text: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            out.push(Block {
                lang: lang.to_owned(),
                section: section.clone(),
                text: text.join("\n") + "\n",
            });
        }
    }
    out
}

/// The blocks of `lang` in `section`.
pub(crate) fn section_blocks(section: &str, lang: &str) -> Vec<String> {
    blocks(&readme())
        .into_iter()
        .filter(|b| b.section == section && b.lang == lang)
        .map(|b| b.text)
        .collect()
}

/// Who runs the README's shell blocks, transcripts and configurations: (section,
/// language, how many blocks, what runs them).
const RUN: &[(&str, &str, usize, &str)] = &[
    (
        "Install",
        "sh",
        1,
        "readme_builds::the_install_commands_build_a_new_project",
    ),
    (
        "Install",
        "toml",
        1,
        "readme::the_install_lines_build_a_new_project",
    ),
    (
        "Two commands",
        "text",
        1,
        "readme::the_main_example_prints_its_readme_transcript_with_a_sealed_state",
    ),
    (
        "Two commands",
        "sh",
        1,
        "scripts/test is the test command itself (.ci/run runs it)",
    ),
    (
        "The guide",
        "sh",
        1,
        "readme_builds::the_guide_commands_are_the_test_commands_docs_and_doctests",
    ),
    (
        "A gateway",
        "sh",
        1,
        "readme_run::the_gateway_runs_as_the_readme_shows",
    ),
    (
        "A gateway",
        "text",
        1,
        "readme_run::the_gateway_runs_as_the_readme_shows",
    ),
    (
        "Authorization (OAuth 2.1)",
        "sh",
        1,
        "readme_run::the_oauth_example_says_how_to_start_each_side",
    ),
    (
        "Deploying",
        "nginx",
        2,
        "readme_deploying (scripts/fleet): nginx in front of the everything example",
    ),
    (
        "`tern` in the terminal",
        "sh",
        2,
        "readme_builds::tern_installs_from_the_checkout; cli/tests/transcripts.rs (everything)",
    ),
    (
        "`tern` in the terminal",
        "text",
        4,
        "cli/tests/transcripts.rs",
    ),
    ("Benchmarks", "sh", 1, "readme_builds::the_benchmarks_run"),
];

#[test]
fn every_shell_block_transcript_and_config_is_run_by_a_test() {
    let found = blocks(&readme());
    let runnable = |lang: &str| matches!(lang, "sh" | "text" | "toml" | "nginx");
    for block in found.iter().filter(|b| runnable(&b.lang)) {
        assert!(
            RUN.iter()
                .any(|(section, lang, _, _)| *section == block.section && *lang == block.lang),
            "a ```{} block in {:?} is run by no test: give it one, and a line in RUN\n{}",
            block.lang,
            block.section,
            block.text
        );
    }
    for (section, lang, count, by) in RUN {
        let n = found
            .iter()
            .filter(|b| b.section == *section && b.lang == *lang)
            .count();
        assert_eq!(
            n, *count,
            "README's {section:?} has {n} ```{lang} block(s), RUN says {count} ({by})"
        );
    }
}

#[test]
fn nothing_named_in_the_readme_is_missing() {
    let readme = readme();
    let root = workspace_root();
    let words: Vec<&str> = readme
        .split(|c: char| c.is_whitespace() || "`()[]<>\"',;|".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    for pair in words.windows(2) {
        if pair[0] == "--example" {
            let name = pair[1];
            assert!(
                root.join(format!("runtime/examples/{name}.rs")).exists(),
                "the README runs an example `{name}` that does not exist"
            );
        }
    }
    for word in &words {
        let word = word.trim_end_matches(['.', ':']);
        let is_path = [
            "scripts/", "runtime/", "cli/", "bench/", "schema/", "tests/",
        ]
        .iter()
        .any(|p| word.starts_with(p));
        if is_path && !word.contains('{') && !word.contains('*') {
            let path = word.split('#').next().unwrap_or(word);
            assert!(
                root.join(path).exists(),
                "the README names {path}, which does not exist"
            );
        }
    }
    // What a section tells the reader to pass to `tern`, tern takes.
    let mut help = String::new();
    for command in [
        &["--help"][..],
        &["call", "--help"],
        &["resume", "--help"],
        &["proxy", "--help"],
        &["keys", "rotate-plan", "--help"],
    ] {
        let out = Command::new(tern_bin())
            .args(command)
            .output()
            .expect("tern runs");
        help.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    for section in ["`tern` in the terminal", "A gateway"] {
        let start = readme
            .find(&format!("\n## {section}\n"))
            .expect("the section");
        let text = &readme[start + 4..];
        let text = &text[..text.find("\n## ").unwrap_or(text.len())];
        for flag in text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            // cargo's (`cargo install --path`, `cargo run ... --example`) and the
            // everything example's own, which the runs below pass.
            let others = ["--path", "--example", "--port", "--stdio", "--features"];
            assert!(
                others.contains(&flag) || help.contains(&format!("{flag} ")),
                "the README's {section:?} names {flag}, which tern does not take"
            );
        }
    }
}

/// The servers a block started, killed when dropped, and the addresses the README
/// writes for them mapped to the ones they announced.
#[derive(Default)]
struct Started {
    children: Vec<Child>,
    addresses: Vec<(String, String)>,
}

impl Drop for Started {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Started {
    /// `line` with the README's addresses replaced by the real ones.
    fn real(&self, line: &str) -> String {
        self.addresses
            .iter()
            .fold(line.to_owned(), |line, (readme, real)| {
                line.replace(readme, real)
            })
    }

    /// The README's addresses back in `text`.
    fn as_written(&self, text: &str) -> String {
        self.addresses
            .iter()
            .fold(text.to_owned(), |text, (readme, real)| {
                text.replace(real, readme)
            })
    }

    /// The words of a command line: the README's addresses real, `tern` the binary
    /// under test, `$(tern keys gen)` its output.
    fn words(&self, line: &str) -> Vec<String> {
        let mut line = self.real(line);
        if line.contains("\"$(tern keys gen)\"") {
            let key = run(&["tern", "keys", "gen"]);
            let key = String::from_utf8_lossy(&key.stdout).trim().to_owned();
            line = line.replace("\"$(tern keys gen)\"", &key);
        }
        let mut words = shlex::split(&line).unwrap_or_else(|| panic!("{line:?} splits"));
        if words[0] == "tern" {
            words[0] = tern_bin().display().to_string();
        }
        words
    }

    /// Starts `line` (a server, `&` at its end) on port 0 instead of the one written:
    /// `--port N` or `--listen HOST:N`; ready once it printed `listening on URL`, whose
    /// address then stands for the written one.
    fn start(&mut self, line: &str) {
        let line = line.trim_end_matches('&').trim();
        let mut words = self.words(line);
        let mut written = None;
        for i in 1..words.len() {
            let (flag, value) = (words[i - 1].as_str(), words[i].as_str());
            if flag == "--port" {
                written = Some(format!("127.0.0.1:{value}"));
                words[i] = "0".into();
            } else if flag == "--listen" {
                let (host, _) = value.rsplit_once(':').expect("HOST:PORT");
                written = Some(value.to_owned());
                words[i] = format!("{host}:0");
            }
        }
        let written = written.unwrap_or_else(|| panic!("{line:?} names no port"));
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .current_dir(workspace_root())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{line:?} starts: {e}"));
        let mut said = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut said)
            .expect("it says where it listens");
        self.children.push(child);
        let url = said
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("{line:?} said {said:?}"));
        let real = url.split('/').next().expect("an address").to_owned();
        self.addresses.push((written, real));
    }
}

/// Runs `words` from the workspace root with stdin closed.
fn run(words: &[&str]) -> Output {
    let program = if words[0] == "tern" {
        tern_bin().display().to_string()
    } else {
        words[0].to_owned()
    };
    Command::new(program)
        .args(&words[1..])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env_remove("TERN_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{words:?} runs: {e}"))
}

/// The shell block's commands, `\` continuations joined, comments dropped.
pub(crate) fn commands(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in block.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head.trim());
                current.push(' ');
            }
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// Held by the tests here that run cargo: a server started through `cargo run` (the
/// gateway's stdio upstream) must not wait on another's build past its deadline.
static CARGO: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn cargo_turn() -> std::sync::MutexGuard<'static, ()> {
    CARGO
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs a transcript's `$ ` commands with the servers `started`, each printing (stdout
/// then stderr, the README's addresses put back) the lines under it.
fn check_transcript(transcript: &str, started: &Started) {
    let mut lines = transcript.lines().peekable();
    while let Some(line) = lines.next() {
        let command = line
            .strip_prefix("$ ")
            .expect("a transcript starts with `$ `");
        let mut expected = Vec::new();
        while let Some(next) = lines.next_if(|l| !l.starts_with("$ ")) {
            expected.push(next.to_owned());
        }
        let words = started.words(command);
        let out = run(&words.iter().map(String::as_str).collect::<Vec<_>>());
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let printed: Vec<String> = started
            .as_written(&printed)
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(
            printed, expected,
            "`$ {command}` printed (left) what README.md does not say (right)"
        );
    }
}

#[test]
fn the_gateway_runs_as_the_readme_shows() {
    let [setup] = &section_blocks("A gateway", "sh")[..] else {
        panic!("one shell block in the gateway section");
    };
    let _turn = cargo_turn();
    let mut started = Started::default();
    for command in commands(setup) {
        assert!(command.ends_with('&'), "{command:?}: each starts a server");
        started.start(&command);
    }
    for transcript in section_blocks("A gateway", "text") {
        check_transcript(&transcript, &started);
    }
}

#[test]
fn the_oauth_example_says_how_to_start_each_side() {
    let [block] = &section_blocks("Authorization (OAuth 2.1)", "sh")[..] else {
        panic!("one shell block in the authorization section");
    };
    let [command] = &commands(block)[..] else {
        panic!("one command: {block}");
    };
    let words = shlex::split(command).expect("it splits");
    let _turn = cargo_turn();
    let out = run(&words.iter().map(String::as_str).collect::<Vec<_>>());
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    let lines: Vec<&str> = said.lines().collect();
    assert!(lines[0].starts_with("usage: oauth serve "), "{said}");
    assert!(
        lines.iter().any(|l| l.trim().starts_with("oauth call ")),
        "{said}"
    );
    assert!(!said.contains("\\n"), "a line break shown as \\n: {said}");
}
