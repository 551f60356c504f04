//! The commands that talk to a server: lists, `call`, `prompt`, `read`.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tern_mcp::types::v2026_07_28::method::ListTools;

use serde::Serialize;
use serde_json::{Map, Value};
use tern_mcp::client::{Client, InputLoopMethod, Notice};
use tern_mcp::types::v2026_07_28::{
    GetPromptRequestParams, ReadResourceRequestParams, Tool, method,
};
use tokio::sync::mpsc;

use crate::answerer::Answerer;
use crate::cli::{CallArgs, Cli, Command, ListArgs, Output, PromptArgs, ReadArgs};
use crate::connect::{builder, connect};
use crate::error::{CliError, Result};
use crate::list::{What, list};
use crate::notices::Ui;
use crate::render::{Kind, print_result};
use crate::wire::Tap;
use crate::{exit, keys, safe, state};

/// Runs the command; the exit code on success.
pub(crate) async fn run(cli: Cli) -> Result<u8> {
    let ui = Arc::new(Ui::new(cli.verbose));
    let outcome = command(cli, ui).await;
    // A stdio server that failed says how it ended, its stderr shown by then.
    match outcome {
        Err(e) => Err(crate::child::account_for(e).await),
        done => done,
    }
}

async fn command(cli: Cli, ui: Arc<Ui>) -> Result<u8> {
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
        Command::Proxy(args) => crate::proxy::run(args).await,
    }
}

async fn lists(args: ListArgs, what: What) -> Result<u8> {
    let (client, _) = connect(&args.target, &args.connect, builder()).await?;
    list(&client, what, args.json).await?;
    Ok(exit::DONE)
}

async fn call(args: CallArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let (client, tap) = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let listed = listed_tools(&client).await;
    let arguments = tool_arguments(&args, listed.as_deref())?;
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
    .await;
    let result = settled(result, &answerer, &tap, &args.target, args.output.json)
        .map_err(|e| unknown_tool(e, &args.tool, &args.target, listed.as_deref()))?;
    print_result(&ui, Kind::Call, &result, args.output.json)
}

/// A call's outcome once it is over: the answers given ahead for questions never
/// asked named (a warning: the key may be a typo), and answers typed for a retry that
/// did not get through kept in a state file.
fn settled<T>(
    outcome: Result<T>,
    answerer: &Answerer,
    tap: &Tap,
    target: &str,
    json: bool,
) -> Result<T> {
    if let Some((stray, asked)) = answerer.unasked() {
        warn_unasked(&stray, &asked, json);
    }
    outcome.map_err(|error| {
        let Some(pending) = tap.asked() else {
            return error;
        };
        let file = PathBuf::from(format!("tern-call-{}.json", std::process::id()));
        state::Unsent {
            file: &file,
            target,
            pending: &pending,
            answers: None,
        }
        .keep(error, tap, answerer)
    })
}

/// `--answer KEY...` for a KEY no question of the flow asked: a warning naming the keys
/// that were asked (the call is over by then: a key may belong to a round that never
/// came).
fn warn_unasked(stray: &[String], asked: &[String], json: bool) {
    let asked = if asked.is_empty() {
        "none".to_owned()
    } else {
        asked.join(", ")
    };
    for key in stray {
        let mut message = format!(
            "no question asked for `{}`, which an answer was given for (the questions asked: {})",
            safe::line(key),
            safe::line(&asked)
        );
        let near = crate::hints::nearest(key, asked.split(", "));
        if let Some(did) = crate::hints::did_you_mean(&near) {
            message.push_str(&format!("; {did}"));
        }
        if json {
            eprintln!(
                "{}",
                serde_json::json!({ "warning": { "message": message } })
            );
        } else {
            eprintln!("tern: warning: {message}");
        }
    }
}

/// The server refused a call to a tool it does not list: the names nearest the one
/// typed.
fn unknown_tool(error: CliError, tool: &str, target: &str, listed: Option<&[Tool]>) -> CliError {
    let Some(listed) = listed else {
        return error;
    };
    if listed.iter().any(|t| t.name == tool) || error.hint().is_some() {
        return error;
    }
    let CliError::Sdk(sdk) = &error else {
        return error;
    };
    if sdk.rpc().is_none() {
        return error;
    }
    let near = crate::hints::nearest(tool, listed.iter().map(|t| t.name.as_str()));
    let list = format!("`tern tools {}` lists them", shown_target(target));
    let hint = match crate::hints::did_you_mean(&near) {
        Some(did) => format!(
            "the server lists no tool `{}`: {did} ({list})",
            safe::line(tool)
        ),
        None => format!("the server lists no tool `{}` ({list})", safe::line(tool)),
    };
    error.with_hint(hint)
}

/// A TARGET as the user would type it again: quoted when it is a command line.
fn shown_target(target: &str) -> String {
    if target.contains(char::is_whitespace) {
        shlex::try_quote(target).map_or_else(|_| format!("{target:?}"), |q| q.into_owned())
    } else {
        target.to_owned()
    }
}

async fn prompt(args: PromptArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let (client, tap) = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let mut params = GetPromptRequestParams::new(&args.name);
    let mut arguments = BTreeMap::new();
    for pair in &args.arguments {
        let (key, value) = split_pair(pair)?;
        arguments.insert(key.to_owned(), value.to_owned());
    }
    params.arguments = Some(arguments.into_iter().collect());
    let ending = Ending::new(&client, &tap, &answerer, &args.target, &args.output, &ui);
    ending
        .finish::<method::GetPrompt>(params, Kind::Prompt)
        .await
}

async fn read(args: ReadArgs, ui: Arc<Ui>) -> Result<u8> {
    let answerer = Answerer::new(&args.answering, &args.target, ui.clone())?;
    let (client, tap) = connect(&args.target, &args.connect, answerer.register(builder())).await?;
    let params = ReadResourceRequestParams::new(&args.uri);
    let ending = Ending::new(&client, &tap, &answerer, &args.target, &args.output, &ui);
    ending
        .finish::<method::ReadResource>(params, Kind::Read)
        .await
}

/// What a prompt or read ends with: its client, answers, target and output.
struct Ending<'a> {
    client: &'a Client,
    tap: &'a Tap,
    answerer: &'a Answerer,
    target: &'a str,
    output: &'a Output,
    ui: &'a Arc<Ui>,
}

impl<'a> Ending<'a> {
    fn new(
        client: &'a Client,
        tap: &'a Tap,
        answerer: &'a Answerer,
        target: &'a str,
        output: &'a Output,
        ui: &'a Arc<Ui>,
    ) -> Self {
        Self {
            client,
            tap,
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
        .await;
        let result = settled(
            result,
            self.answerer,
            self.tap,
            self.target,
            self.output.json,
        )?;
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

/// The server's tools, if it lists them (a server that does not is still called).
async fn listed_tools(client: &Client) -> Option<Vec<Tool>> {
    match client.list_all::<ListTools>().await {
        Ok(tools) => Some(tools),
        Err(e) => {
            tracing::warn!(
                "could not list the tools to check the call against: {}",
                safe::text(&e.to_string())
            );
            None
        }
    }
}

/// The call's arguments: `--args` JSON, then each `key=value`, its value read as the
/// type the tool's listed `inputSchema` gives the key; a key the schema does not take
/// is refused before anything is sent.
fn tool_arguments(args: &CallArgs, listed: Option<&[Tool]>) -> Result<Map<String, Value>> {
    let mut arguments = match &args.args_json {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            _ => return Err(CliError::usage("--args takes a JSON object")),
        },
        None => Map::new(),
    };
    let schema = listed
        .and_then(|tools| tools.iter().find(|t| t.name == args.tool))
        .map(|t| &t.input_schema);
    for pair in &args.arguments {
        let (key, text) = split_pair(pair)?;
        let declared = schema
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
    if let Some(schema) = schema {
        check_keys(&args.tool, &arguments, schema)?;
        check_required(&args.tool, &arguments, schema)?;
    }
    Ok(arguments)
}

/// Every argument the schema's `required` names is given.
fn check_required<S>(tool: &str, arguments: &Map<String, Value>, schema: &S) -> Result<()>
where
    S: serde::Serialize,
{
    let Ok(Value::Object(schema)) = serde_json::to_value(schema) else {
        return Ok(());
    };
    let missing: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|key| !arguments.contains_key(*key))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = missing
        .iter()
        .map(|key| format!("`{}`", safe::line(key)))
        .collect();
    let example: Vec<String> = missing
        .iter()
        .map(|key| format!("{}=VALUE", safe::line(key)))
        .collect();
    Err(CliError::usage(format!(
        "tool `{}` needs the argument{} {}; nothing was sent",
        safe::line(tool),
        if missing.len() == 1 { "" } else { "s" },
        named.join(", ")
    ))
    .with_hint(format!(
        "give each after the tool's name: {}",
        example.join(" ")
    )))
}

/// Every argument's key is one the schema's `properties` names, unless the schema
/// takes others (`additionalProperties`) or says more than one flat object can
/// (combinators, references, patterns: then the server judges).
fn check_keys<S>(tool: &str, arguments: &Map<String, Value>, schema: &S) -> Result<()>
where
    S: serde::Serialize,
{
    let Ok(Value::Object(schema)) = serde_json::to_value(schema) else {
        return Ok(());
    };
    let open = |k: &str| schema.get(k).is_some();
    if open("allOf") || open("anyOf") || open("oneOf") || open("$ref") || open("patternProperties")
    {
        return Ok(());
    }
    if schema
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return Ok(());
    }
    let known: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let Some(stray) = arguments.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let takes = if known.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("its arguments: {}", known.join(", "))
    };
    let error = CliError::usage(format!(
        "tool `{}` has no argument `{}` ({takes}); nothing was sent",
        safe::line(tool),
        safe::line(stray)
    ));
    Err(
        match crate::hints::did_you_mean(&crate::hints::nearest(stray, known)) {
            Some(did) => error.with_hint(did),
            None => error,
        },
    )
}
