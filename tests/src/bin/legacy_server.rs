//! A scripted MCP server that knows only 2025-11-25, on stdio, for era discovery over a
//! real child process: `server/discover` (and anything before `initialize`) is -32601,
//! as to an SDK of that era; after `initialize`, `tools/call` asks the client with
//! `elicitation/create` and answers with the region it got.
//!
//! It writes what it saw to stderr, one line per message, for tests to read.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut send = |message: Value| -> std::io::Result<()> {
        writeln!(out, "{message}")?;
        out.flush()
    };
    let mut initialized = false;
    // The id of the call waiting for the client's answer to our elicitation.
    let mut waiting: Option<Value> = None;
    for line in stdin.lock().lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message["method"].as_str().unwrap_or("");
        eprintln!(
            "legacy server got: {}",
            if method.is_empty() {
                "response"
            } else {
                method
            }
        );
        let id = message.get("id").cloned();
        match (method, id) {
            ("initialize", Some(id)) => {
                initialized = true;
                send(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "old", "version": "0.9"}
                }}))?;
            }
            ("tools/call", Some(id)) if initialized => {
                waiting = Some(id);
                send(
                    json!({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                    "params": {"message": "Which region?", "requestedSchema":
                        {"type": "object", "properties": {"region": {"type": "string"}}}}}),
                )?;
            }
            ("", Some(answer_id)) if answer_id == "ask-1" => {
                let region = message["result"]["content"]["region"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned();
                if let Some(call) = waiting.take() {
                    send(json!({"jsonrpc": "2.0", "id": call, "result": {"content": [
                        {"type": "text", "text": format!("legacy ok: region={region}")}]}}))?;
                }
            }
            (_, Some(id)) if !method.is_empty() => {
                send(json!({"jsonrpc": "2.0", "id": id, "error":
                    {"code": -32601, "message": format!("Method not found: {method}")}}))?;
            }
            _ => {}
        }
    }
    Ok(())
}
