//! The README says what a newcomer types and what they see: the install lines build a
//! new project, the feature table is the crate documentation's and names every
//! feature, and the main example prints what its transcript shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use tern_tests::workspace_root;

fn readme() -> String {
    std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md reads")
}

/// The text between a README line `start` and the next line `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("README has no {start:?}"))
        + start.len();
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("README has no {end:?}"));
    &text[from..from + to]
}

pub(crate) fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

#[test]
fn the_feature_table_is_the_crate_docs_one_and_names_every_feature() {
    let table = std::fs::read_to_string(workspace_root().join("runtime/src/features.md"))
        .expect("features.md reads");
    let readme = readme();
    let shown = between(
        &readme,
        "<!-- features: runtime/src/features.md -->\n",
        "<!-- /features -->",
    );
    assert_eq!(
        shown, table,
        "the README's feature table differs from runtime/src/features.md"
    );

    let manifest = std::fs::read_to_string(workspace_root().join("runtime/Cargo.toml"))
        .expect("runtime/Cargo.toml reads");
    let features = between(&manifest, "[features]\n", "\n[");
    let missing: Vec<&str> = features
        .lines()
        .filter_map(|line| line.split_once(" = ").map(|(name, _)| name.trim()))
        .filter(|name| *name != "default" && !table.contains(&format!("| `{name}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "features the table does not describe: {missing:?}"
    );
}

/// The README's transcript of a command: its lines after `$ command`, up to the fence.
fn transcript(readme: &str, command: &str) -> Vec<String> {
    between(readme, &format!("$ {command}\n"), "```")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Everything after `sealed: ` up to `...` is a fresh token each run: kept only if it
/// is one (base64url with the version's dots), so plaintext cannot pass for it.
fn normalized(line: &str) -> String {
    match line.split_once("sealed: ") {
        Some((head, token)) => {
            let token = token.trim_end_matches("...");
            assert!(
                token.len() >= 16
                    && token
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "not a sealed token's start: {token:?}"
            );
            format!("{head}sealed: <token>...")
        }
        None => line.to_owned(),
    }
}

fn example(name: &str) -> PathBuf {
    tern_tests::built("tern-mcp", "--example", name)
}

#[test]
fn the_main_example_prints_its_readme_transcript_with_a_sealed_state() {
    let expected = transcript(&readme(), "cargo run -q -p tern-mcp --example hello_http");
    let out = Command::new(example("hello_http"))
        .output()
        .expect("hello_http runs");
    assert!(
        out.status.success(),
        "hello_http failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(normalized)
        .collect();
    let expected: Vec<String> = expected.iter().map(|l| normalized(l)).collect();
    assert_eq!(
        printed, expected,
        "hello_http's output differs from the README's transcript"
    );
}

/// The README's `[dependencies]` block, with the path of this checkout instead of the
/// registry (the crate is not on crates.io from here).
fn install_block(readme: &str, runtime: &Path) -> String {
    let block = between(readme, "```toml\n[dependencies]\n", "```");
    assert!(
        block.contains("tern-mcp = \"0.1\""),
        "the install block names tern-mcp 0.1: {block}"
    );
    block.replace(
        "tern-mcp = \"0.1\"",
        &format!(
            "tern-mcp = {{ version = \"0.1\", path = {:?} }}",
            runtime.display()
        ),
    )
}

/// This workspace's debug-info settings, so that the new project's build stays small on
/// a shared disk; what a newcomer types is the `[dependencies]` block.
const LEAN_PROFILE: &str =
    "[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n";

/// A new project in `dir` with `dependencies` (lines of its `[dependencies]`), a
/// `main` that builds an `McpServer`, and the workspace's lock file: the same versions,
/// so its build reuses what is built.
pub(crate) fn new_project(dir: &Path, dependencies: &str) {
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"newcomer\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [workspace]\n\n[dependencies]\n{dependencies}\n{LEAN_PROFILE}"
        ),
    )
    .expect("Cargo.toml writes");
    std::fs::create_dir(dir.join("src")).expect("src");
    std::fs::write(
        dir.join("src/main.rs"),
        "#[tokio::main]\nasync fn main() -> Result<(), Box<dyn std::error::Error>> {\n    \
         let mcp = tern_mcp::mcp::McpServer::new(\"newcomer\", \"0.1.0\");\n    \
         mcp.server()?;\n    Ok(())\n}\n",
    )
    .expect("main.rs writes");
    std::fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock");
}

/// Cargo in the new project `dir`, building into a target directory of its own.
pub(crate) fn in_project(dir: &Path) -> Command {
    let mut command = cargo();
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace_root().join("target/newcomer"));
    command
}

#[test]
fn the_install_lines_build_a_new_project() {
    let project = tempfile::tempdir().expect("a temporary directory");
    let dependencies = install_block(&readme(), &workspace_root().join("runtime"));
    new_project(project.path(), &dependencies);
    let status = in_project(project.path())
        .args(["run", "-q", "--offline"])
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "a new project with the README's install lines does not build"
    );
}

#[test]
fn the_preflight_names_everything_missing_at_once_before_compiling() {
    // A machine with nothing on its PATH but `id`: no redis-server, npm or python3 (and
    // no nginx, unless Debian's is in /usr/sbin, where the fleet finds it).
    let bin = tempfile::tempdir().expect("a temporary directory");
    std::os::unix::fs::symlink("/usr/bin/id", bin.path().join("id")).expect("id linked");
    let out = Command::new("/bin/bash")
        .arg(workspace_root().join("scripts/preflight"))
        .env_clear()
        .env("PATH", bin.path())
        .env("TERN_NO_INSTALL", "1")
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let mut expected = vec!["redis-server", "npm (Node.js)", "python3 with venv"];
    if !Path::new("/usr/sbin/nginx").exists() {
        expected.push("nginx");
    }
    for name in expected {
        assert!(
            said.contains(&format!("  {name} ")),
            "{name} is not named:\n{said}"
        );
    }
    assert!(
        said.contains("apt-get install redis-server="),
        "the pinned package is named:\n{said}"
    );
}

/// The code blocks of the README section headed `heading`.
fn code_blocks(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README has no section {heading:?}"));
    let section = &readme[start + 1..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 3)];
    section
        .split("```rust\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_readmes_rust_code_is_code_the_doctests_compile_and_run() {
    let readme = readme();
    for (heading, source) in [
        ("What it looks like", "runtime/src/lib.rs"),
        ("MCP Apps", "runtime/src/guide/apps.md"),
        ("Skills", "runtime/src/guide/skills.md"),
        (
            "Authorization (OAuth 2.1)",
            "runtime/src/guide/authorization.md",
        ),
    ] {
        let text = std::fs::read_to_string(workspace_root().join(source)).expect("it reads");
        // The crate's documentation is `//!` lines, a hidden line `# ...`.
        let page: String = text
            .lines()
            .map(|l| l.strip_prefix("//!").unwrap_or(l))
            .map(|l| l.trim_start().strip_prefix("# ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        let blocks = code_blocks(&readme, heading);
        assert!(!blocks.is_empty(), "the {heading} section shows no code");
        for block in blocks {
            for line in block.lines().filter(|l| !l.trim().is_empty()) {
                assert!(
                    page.lines().any(|p| p.trim() == line.trim()),
                    "README's {heading} line {line:?} is not in {source}, whose code the doctests run"
                );
            }
        }
    }
}
