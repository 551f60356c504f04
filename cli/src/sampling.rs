//! Sampling requests: answered by `--sampling-cmd` (params in as JSON, a
//! `CreateMessageResult` out as JSON), or typed by the user as the model.

use std::process::Stdio;
use std::time::Duration;

use console::Term;
use dialoguer::Input;
use dialoguer::theme::SimpleTheme;
use serde_json::{Value, json};
use tern_mcp::types::v2026_07_28::{CreateMessageRequestParams, CreateMessageResult};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::error::{CliError, Result};
use crate::safe;

/// How long the sampling command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);
/// The most the command may print.
const MAX_REPLY: u64 = 4 << 20;

/// The text of a sampling request's messages, for a message or a prompt.
pub(crate) fn prompt_text(params: &CreateMessageRequestParams) -> String {
    let value = serde_json::to_value(params).unwrap_or(Value::Null);
    let texts: Vec<String> = value["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| match &m["content"] {
            Value::Array(blocks) => blocks.clone(),
            block => vec![block.clone()],
        })
        .map(|block| match block["text"].as_str() {
            Some(text) => text.to_owned(),
            None => format!("[{}]", block["type"].as_str().unwrap_or("content")),
        })
        .collect();
    texts.join("\n")
}

/// A reply of `text` from the user standing in for the model.
pub(crate) fn reply(text: &str) -> Result<CreateMessageResult> {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "human",
        "stopReason": "endTurn"
    }))
    .map_err(|e| CliError::Sampling(format!("reply: {e}")))
}

/// Runs the sampling command on `params`.
pub(crate) async fn run_command(
    command: &str,
    params: &CreateMessageRequestParams,
) -> Result<CreateMessageResult> {
    let words = shlex::split(command)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            CliError::usage(format!("--sampling-cmd {command:?}: not a command line"))
        })?;
    let (program, args) = words
        .split_first()
        .ok_or_else(|| CliError::usage("--sampling-cmd is empty"))?;
    let spawn_error = |source| CliError::Spawn {
        command: command.to_owned(),
        source,
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(spawn_error)?;
    let input = serde_json::to_vec(params).map_err(|e| CliError::Sampling(e.to_string()))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| CliError::Sampling("has no stdin".into()))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| CliError::Sampling("has no stdout".into()))?;
    let talk = async {
        // A command that does not read its input must not block the reply.
        let write = async {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let mut out = Vec::new();
        let mut limited = (&mut stdout).take(MAX_REPLY);
        let read = limited.read_to_end(&mut out);
        let ((), read) = tokio::join!(write, read);
        read.map_err(spawn_error)?;
        let status = child.wait().await.map_err(spawn_error)?;
        Ok::<_, CliError>((status, out))
    };
    let (status, out) = tokio::time::timeout(COMMAND_TIMEOUT, talk)
        .await
        .map_err(|_| CliError::Sampling(format!("`{command}` took over {COMMAND_TIMEOUT:?}")))??;
    if !status.success() {
        return Err(CliError::Sampling(format!("`{command}` failed ({status})")));
    }
    serde_json::from_slice(&out).map_err(|e| {
        CliError::Sampling(format!(
            "`{command}` printed no CreateMessageResult JSON: {e}"
        ))
    })
}

/// Shows the request and asks the user to reply as the model.
pub(crate) fn ask(
    server: &str,
    key: &str,
    params: &CreateMessageRequestParams,
) -> Result<CreateMessageResult> {
    let term = Term::stderr();
    term.write_line(&format!(
        "\n{} asks the model ({}):",
        safe::line(server),
        safe::line(key)
    ))?;
    for line in prompt_text(params).lines() {
        term.write_line(&format!("  > {}", safe::line(line)))?;
    }
    let text = Input::<String>::with_theme(&SimpleTheme)
        .with_prompt("Reply as the model")
        .interact_text_on(&term)?;
    reply(&text)
}
