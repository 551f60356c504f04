//! The README's "Behind nginx" and "A fleet, no sticky routing" configurations, run as
//! written in Debian's nginx in front of the everything example: the `location /mcp`
//! block serves a call of several rounds; the `upstream` block, its three addresses
//! those of three instances sharing their `requestState` key, serves each round
//! wherever it lands; and a plain `proxy_pass http://fleet;` is refused with a reason
//! that names the setting. Only addresses and ports are normalised.
//!
//! Needs nginx: `#[ignore]`d in a plain `cargo test`, run by `scripts/fleet` (which
//! `scripts/test` runs).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use tern_tests::{built, tern_bin, workspace_root};

use super::fleet::Nginx;

/// The README's ```nginx blocks of its Deploying section.
fn nginx_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("reads");
    let start = readme.find("\n## Deploying\n").expect("the section");
    let section = &readme[start + 4..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .split("```nginx\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

/// An everything instance on port 0 (killed when dropped) and its address.
struct Instance(Child, String);

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const STATE_KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

fn everything() -> Instance {
    let mut child = Command::new(built("tern-mcp", "--example", "everything"))
        .args(["--port", "0", "--state-key", STATE_KEY])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("everything starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("it says where it listens");
    let address = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("everything said {line:?}"))
        .to_owned();
    Instance(child, address)
}

/// `tern args` with stdin closed: exit code, stdout, stderr.
fn tern(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(tern_bin())
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .output()
        .expect("tern runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The everything example's call of two rounds, through `url`.
fn two_rounds(url: &str) {
    let (code, stdout, stderr) = tern(&[
        "call",
        url,
        "test_input_required_result_multi_round",
        "--answer",
        "step1.name=Ada",
        "--answer",
        "step2.color=teal",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "Ada likes teal.", "{stderr}");
}

/// A server block on `listen` holding `location`.
fn server(listen: u16, location: &str) -> String {
    format!("server {{\n    listen 127.0.0.1:{listen};\n{location}\n}}\n")
}

#[tokio::test]
#[ignore = "needs nginx: run by scripts/fleet"]
async fn the_readmes_location_block_serves_the_endpoint_behind_nginx() {
    let [location, _] = &nginx_blocks()[..] else {
        panic!("two nginx blocks in Deploying");
    };
    assert!(
        location.contains("proxy_pass http://127.0.0.1:3000;"),
        "{location}"
    );
    let instance = everything();
    let location = location.replace("127.0.0.1:3000", &instance.1);
    let nginx = Nginx::serving(|listen| server(listen, &location)).await;
    two_rounds(&nginx.url);
}

#[tokio::test]
#[ignore = "needs nginx: run by scripts/fleet"]
async fn the_readmes_upstream_block_serves_each_round_on_any_instance() {
    let [location, upstream] = &nginx_blocks()[..] else {
        panic!("two nginx blocks in Deploying");
    };
    assert!(
        upstream
            .contains("in the server block: location /mcp { proxy_pass http://mcp; ... } as above")
    );
    let instances = [everything(), everything(), everything()];
    let mut upstream = upstream.clone();
    for (n, instance) in instances.iter().enumerate() {
        let written = format!("10.0.0.{}:3000", n + 1);
        assert!(upstream.contains(&written), "{upstream}");
        upstream = upstream.replace(&written, &instance.1);
    }
    let location = location.replace("http://127.0.0.1:3000", "http://mcp");
    let nginx = Nginx::serving(|listen| format!("{upstream}\n{}", server(listen, &location))).await;
    // Three calls of two rounds each, round-robin over three instances: most rounds
    // land on an instance that did not seal the state they carry.
    for _ in 0..3 {
        two_rounds(&nginx.url);
    }
}

#[tokio::test]
#[ignore = "needs nginx: run by scripts/fleet"]
async fn a_plain_proxy_pass_is_refused_with_the_setting_named() {
    let instance = everything();
    let nginx = Nginx::serving(|listen| {
        format!(
            "upstream fleet {{ server {}; }}\n{}",
            instance.1,
            server(listen, "location /mcp { proxy_pass http://fleet; }")
        )
    })
    .await;
    let (code, _, stderr) = tern(&["tools", &nginx.url]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("\"fleet\""),
        "the refused Host is named: {stderr}"
    );
    assert!(
        stderr.contains("proxy_set_header Host"),
        "the setting is named: {stderr}"
    );
}
