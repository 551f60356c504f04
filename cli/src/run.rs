//! The commands that talk to a server: lists, `call`, `prompt`, `read`.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use tern_mcp::types::v2026_07_28::method::ListTools;

use serde::Serialize;
use serde_json::{Map, Value};
use tern_mcp::client::{Client, InputLoopMethod, Notice};
use tern_mcp::types::v2026_07_28::{GetPromptRequestParams, ReadResourceRequestParams, method};
use tokio::sync::mpsc;

use crate::answerer::Answerer;
use crate::cli::{CallArgs, Cli, Command, ListArgs, Output, PromptArgs, ReadArgs};
use crate::connect::{builder, connect};
use crate::error::{CliError, Result};
use crate::list::{What, list};
use crate::notices::Ui;
use crate::render::{Kind, print_result};
use crate::{exit, keys, safe, state};

/// Runs the command; the exit code on success.
pub(crate) async fn run(cli: Cli) -> Result<u8> {
    let ui = Arc::new(Ui::new(cli.verbose));
    match cli.command {
        Command::Tools(args) => lists(args, What::Tools).await,
        Command::Prompts(args) => lists(args, What::Prompts).await,
        Command::Resources(args) => lists(args, What::Resources).await,
        Command::Templates(args) => lists(args, What::Templates).await,
        Command::Call(args) => call(args, ui).await,
        Command::Prompt(args) => prompt(args, ui).await,
        Command::Read(args) => read(args, ui).await,
        Command::Resume(args) => state::resume(args, ui).await,
        Command::Keys(command) => keys::run(command),
    }
}

async fn lists(args: ListArgs, what: What) -> Result<u8> {
    let client = connect(&args.target, &args.connect, builder()).await?;
    list(&client, what, args.json).await?;
    Ok(exit::DONE)
}

async fn call(args: CallArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let client = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let arguments = tool_arguments(&client, &args).await?;
    if let Some(file) = &args.output.state_file {
        let mut params = tern_mcp::types::v2026_07_28::CallToolRequestParams::new(&args.tool);
        params.arguments = Some((&arguments).into());
        return pause::<method::CallTool>(&client, params, file, &args.target, &args.output, &ui)
            .await;
    }
    // Not the generic loop: a call that becomes a task is followed to its result.
    let result = observed(&ui, &answerer, |tx| {
        client.call_tool_with_notices(&args.tool, Value::Object(arguments), tx)
    })
    .await?;
    print_result(&ui, Kind::Call, &result, args.output.json)
}

async fn prompt(args: PromptArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let client = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let mut params = GetPromptRequestParams::new(&args.name);
    let mut arguments = BTreeMap::new();
    for pair in &args.arguments {
        let (key, value) = split_pair(pair)?;
        arguments.insert(key.to_owned(), value.to_owned());
    }
    params.arguments = Some(arguments.into_iter().collect());
    let ending = Ending::new(&client, &answerer, &args.target, &args.output, &ui);
    ending
        .finish::<method::GetPrompt>(params, Kind::Prompt)
        .await
}

async fn read(args: ReadArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let client = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let params = ReadResourceRequestParams::new(&args.uri);
    let ending = Ending::new(&client, &answerer, &args.target, &args.output, &ui);
    ending
        .finish::<method::ReadResource>(params, Kind::Read)
        .await
}

/// What a prompt or read ends with: its client, answers, target and output.
struct Ending<'a> {
    client: &'a Client,
    answerer: &'a Answerer,
    target: &'a str,
    output: &'a Output,
    ui: &'a Arc<Ui>,
}

impl<'a> Ending<'a> {
    fn new(
        client: &'a Client,
        answerer: &'a Answerer,
        target: &'a str,
        output: &'a Output,
        ui: &'a Arc<Ui>,
    ) -> Self {
        Self {
            client,
            answerer,
            target,
            output,
            ui,
        }
    }

    /// Paused in the state file when one is given; otherwise the loop to its end,
    /// printed.
    async fn finish<M>(&self, params: M::Params, kind: Kind) -> Result<u8>
    where
        M: InputLoopMethod,
        M::Complete: Serialize,
    {
        if let Some(file) = &self.output.state_file {
            return pause::<M>(self.client, params, file, self.target, self.output, self.ui).await;
        }
        let result = observed(self.ui, self.answerer, |tx| {
            self.client
                .run_input_loop_with_notices::<M>(params, Some(tx))
        })
        .await?;
        print_result(self.ui, kind, &result, self.output.json)
    }
}

/// `--state-file`: the call sent once, stopped at its first questions and saved.
async fn pause<M>(
    client: &Client,
    params: M::Params,
    file: &Path,
    target: &str,
    output: &Output,
    ui: &Arc<Ui>,
) -> Result<u8>
where
    M: InputLoopMethod,
    M::Complete: Serialize,
{
    let step = client.start::<M>(params).await?;
    state::settle::<M>(step, &state::Saving::new(file, target, ui, output.json)).await
}

/// Runs a call whose notices go to `tx`, showing them as they come; a failure a
/// callback recorded replaces the SDK's error.
async fn observed<T, F>(
    ui: &Ui,
    answerer: &Answerer,
    start: impl FnOnce(mpsc::UnboundedSender<Notice>) -> F,
) -> Result<T>
where
    F: Future<Output = tern_mcp::Result<T>>,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    let call = start(tx);
    tokio::pin!(call);
    let mut open = true;
    let outcome = loop {
        tokio::select! {
            biased;
            notice = rx.recv(), if open => match notice {
                Some(notice) => ui.notice(notice),
                None => open = false,
            },
            outcome = &mut call => break outcome,
        }
    };
    while let Ok(notice) = rx.try_recv() {
        ui.notice(notice);
    }
    outcome.map_err(|e| answerer.take_failure().unwrap_or(CliError::Sdk(e)))
}

fn split_pair(pair: &str) -> Result<(&str, &str)> {
    pair.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| CliError::usage(format!("argument {pair:?}: write it KEY=VALUE")))
}

/// The call's arguments: `--args` JSON, then each `key=value`, its value read as the
/// type the tool's listed `inputSchema` gives the key.
async fn tool_arguments(client: &Client, args: &CallArgs) -> Result<Map<String, Value>> {
    let mut arguments = match &args.args_json {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            _ => return Err(CliError::usage("--args takes a JSON object")),
        },
        None => Map::new(),
    };
    if args.arguments.is_empty() {
        return Ok(arguments);
    }
    let schema = match client.list_all::<ListTools>().await {
        Ok(tools) => tools
            .into_iter()
            .find(|t| t.name == args.tool)
            .map(|t| t.input_schema),
        Err(e) => {
            tracing::warn!(
                "could not list the tools to read the arguments' types: {}",
                safe::text(&e.to_string())
            );
            None
        }
    };
    for pair in &args.arguments {
        let (key, text) = split_pair(pair)?;
        let declared = schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match declared {
            Some("string") => Value::String(text.to_owned()),
            _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        };
        arguments.insert(key.to_owned(), value);
    }
    Ok(arguments)
}
