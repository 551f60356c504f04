//! `tern call` on a terminal: forms asked field by field, a decline, a URL-mode step,
//! sampling and progress; each final screen a snapshot.
// A test fails by panicking: expect and panic are how these say what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "common/pty.rs"]
mod pty;

use std::future::Future;

use pty::{DOWN, ENTER, SPACE, Terminal};
use serde_json::json;
use tern::ask;
use tern::server::http::HttpServer;
use tern::server::{McpServer, NoArgs, ToolContext};
use tern::types::v2026_07_28::{CallToolOutcome, CallToolResult, method};

/// Questions the `everything` example does not ask: a bounded number, a titled enum, a
/// default, a multi-select; a URL-mode step. Served in this process over HTTP.
struct Fixture {
    _runtime: tokio::runtime::Runtime,
    url: String,
}

fn answered(ctx: &ToolContext, key: &str) -> Option<String> {
    let answer = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    Some(format!(
        "action={} content={}",
        json!(answer.action).as_str().unwrap_or_default(),
        json!(answer.content.unwrap_or_default())
    ))
}

fn done(text: String) -> CallToolOutcome {
    CallToolOutcome::Complete(CallToolResult::new(vec![ask::text(text)]))
}

fn fixture() -> Fixture {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let mcp = McpServer::new("fixture", "1.0.0");
    mcp.tool("survey")
        .description("A form of every kind of field")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if let Some(text) = answered(&ctx, "survey") {
                return Ok(done(text));
            }
            let form = ask::elicit_form(
                "Tell us about your order",
                json!({
                    "type": "object",
                    "properties": {
                        "colour": {"type": "string", "title": "Colour", "oneOf": [
                            {"const": "red", "title": "Red"},
                            {"const": "green", "title": "Green"},
                            {"const": "blue", "title": "Blue"}
                        ]},
                        "count": {"type": "integer", "title": "How many", "minimum": 1, "maximum": 10},
                        "extras": {"type": "array", "title": "Extras", "items": {"type": "string", "enum": ["gift wrap", "card", "ribbon"]}},
                        "name": {"type": "string", "title": "Name", "default": "Ada"}
                    },
                    "required": ["colour", "count"]
                }),
            )?;
            Ok(ask::input_required([("survey", form)], None).into())
        });
    mcp.tool("sign_in")
        .description("A step the user takes in the browser")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if let Some(text) = answered(&ctx, "login") {
                return Ok(done(text));
            }
            let step = ask::elicit_url(
                "Sign in to the example service",
                "https://example.com/login",
            );
            Ok(ask::input_required([("login", step)], None).into())
        });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bound");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let server = mcp.server().expect("the server builds");
    runtime.spawn(HttpServer::new(server).serve(listener, never()));
    Fixture {
        _runtime: runtime,
        url,
    }
}

fn never() -> impl Future<Output = ()> + Send + 'static {
    std::future::pending()
}

fn normalise(screen: &str, url: &str) -> String {
    screen.replace(url, "URL")
}

#[test]
fn a_form_is_asked_field_by_field_and_a_number_out_of_bounds_is_asked_again() {
    let fixture = fixture();
    let mut t = Terminal::tern(&["call", &fixture.url, "survey"]);
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
    insta::assert_snapshot!("form", normalise(&screen, &fixture.url));
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
    let fixture = fixture();
    let mut t = Terminal::tern(&["call", &fixture.url, "sign_in"]);
    t.expect("Press Enter").send(ENTER);
    let (code, screen) = t.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("action=accept"), "{screen}");
    insta::assert_snapshot!("url_mode", normalise(&screen, &fixture.url));
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
    let fixture = fixture();
    let out = common::tern(&["call", &fixture.url, "sign_in"]);
    insta::assert_snapshot!(
        "url_mode_no_tty",
        common::transcript(&out, &[(fixture.url.as_str(), "URL")])
    );
    let out = common::tern(&["call", &fixture.url, "sign_in", "--accept", "login"]);
    insta::assert_snapshot!(
        "url_mode_accepted",
        common::transcript(&out, &[(fixture.url.as_str(), "URL")])
    );
}
