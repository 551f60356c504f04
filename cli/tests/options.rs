//! The options that shape the connection itself: `--header` on every HTTP request,
//! `-e KEY=VALUE` and `--cwd DIR` for a stdio server's process.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::mpsc;

/// An HTTP server on port 0 that sends the first request's head to the test, then
/// refuses it (401), so the CLI stops there.
fn records_one_head() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let _ = tx.send(head);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, rx)
}

#[test]
fn a_header_option_goes_on_the_http_request() {
    let (url, heads) = records_one_head();
    let out = common::tern(&["tools", &url, "--header", "X-Api-Key: abc123"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let head = heads
        .recv()
        .expect("the server saw a request")
        .to_ascii_lowercase();
    assert!(head.contains("x-api-key: abc123\r\n"), "{head}");
}

#[test]
fn a_header_without_a_colon_is_a_usage_error() {
    let out = common::tern(&[
        "tools",
        "http://127.0.0.1:9/mcp",
        "--header",
        "X-Api-Key abc",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_stdio_server_gets_the_env_and_working_directory_it_is_given() {
    let dir = tempfile::tempdir().expect("a directory");
    // Not a server: it says what it was given on stderr, which tern passes through.
    let command = "sh -c 'echo \"given $TERN_TEST_KEY in $(pwd)\" >&2; exit 1'";
    let out = common::tern(&[
        "tools",
        command,
        "-e",
        "TERN_TEST_KEY=fourty-two",
        "--cwd",
        dir.path().to_str().expect("a UTF-8 path"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let real = dir.path().canonicalize().expect("the directory exists");
    assert!(
        stderr.contains(&format!("given fourty-two in {}", real.display())),
        "{stderr}"
    );
    assert_ne!(out.status.code(), Some(0), "{stderr}");
}
