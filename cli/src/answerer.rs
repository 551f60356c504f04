//! Answering the server's questions: from the answers given in advance, else on the
//! terminal, else (no terminal) an error that names the question. The same answerer
//! serves the SDK's callbacks (the automatic loop, 2025-11-25 sessions, tasks) and
//! `tern resume` (a manual round).

use std::collections::BTreeSet;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tern_mcp::ask;
use tern_mcp::client::{ClientBuilder, InputContext};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::types::v2026_07_28::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestUrlParams, ElicitResult, ElicitValue, InputRequest, InputRequests, InputResponse,
    InputResponses, ListRootsResult,
};

use crate::answers::{Preset, Presets};
use crate::cli::Answering;
use crate::error::{CliError, Result};
use crate::notices::Ui;
use crate::{form, safe, sampling, schema};

/// Answers questions; one at a time, so two never share the terminal.
pub(crate) struct Answerer {
    presets: Presets,
    interactive: bool,
    open: bool,
    sampling_cmd: Option<String>,
    roots: Vec<PathBuf>,
    /// Who asks, when the server gave no name.
    target: String,
    ui: Arc<Ui>,
    /// The first failure of a callback: the SDK sees only a JSON-RPC error, the user
    /// gets this.
    failure: Mutex<Option<CliError>>,
    turn: tokio::sync::Mutex<()>,
    /// Every question key asked so far (to tell the user of a given answer none asked).
    asked: Mutex<BTreeSet<String>>,
    /// The answers of the latest round that asked, kept should the retry not get
    /// through.
    given: Mutex<Given>,
}

/// The answers of one round.
#[derive(Debug, Default)]
struct Given {
    round: usize,
    answers: InputResponses,
    /// Whether any of them was typed on the terminal (and so would be lost).
    typed: bool,
}

/// Who asks what: for messages.
#[derive(Debug, Clone)]
struct Asker {
    server: String,
    key: String,
    round: usize,
}

impl Answerer {
    pub(crate) fn new(options: &Answering, target: &str, ui: Arc<Ui>) -> Result<Arc<Self>> {
        Ok(Arc::new(Self {
            presets: Presets::from_options(options)?,
            interactive: std::io::stdin().is_terminal(),
            open: options.open,
            sampling_cmd: options.sampling_cmd.clone(),
            roots: options.roots.clone(),
            target: target.to_owned(),
            ui,
            failure: Mutex::new(None),
            turn: tokio::sync::Mutex::new(()),
            asked: Mutex::new(BTreeSet::new()),
            given: Mutex::new(Given::default()),
        }))
    }

    /// `builder` with the three callbacks, all answered here.
    pub(crate) fn register(self: &Arc<Self>, builder: ClientBuilder) -> ClientBuilder {
        let (a, b, c) = (self.clone(), self.clone(), self.clone());
        builder
            .elicitation_url(true)
            .on_elicitation(move |ctx, params| {
                let this = a.clone();
                async move {
                    let asker = this.asker(&ctx);
                    this.failed(this.elicit(asker, params).await)
                }
            })
            .on_sampling(move |ctx, params| {
                let this = b.clone();
                async move {
                    let asker = this.asker(&ctx);
                    this.failed(this.sample(asker, params).await)
                }
            })
            .on_list_roots(move |_ctx, _params| {
                let this = c.clone();
                async move { this.failed(this.roots()) }
            })
    }

    /// The failure a callback recorded, if any: what the user should read instead of
    /// the SDK's "callback failed".
    pub(crate) fn take_failure(&self) -> Option<CliError> {
        self.failure.lock().ok()?.take()
    }

    fn failed<T>(&self, result: Result<T>) -> std::result::Result<T, RpcError> {
        result.map_err(|e| {
            let error = RpcError::internal(e.to_string());
            if let Ok(mut slot) = self.failure.lock() {
                slot.get_or_insert(e);
            }
            error
        })
    }

    fn asker(&self, ctx: &InputContext) -> Asker {
        Asker {
            server: ctx
                .server
                .as_deref()
                .map(|s| format!("server `{s}`"))
                .unwrap_or_else(|| self.target.clone()),
            key: ctx.key.clone().unwrap_or_else(|| "-".into()),
            round: ctx.round,
        }
    }

    /// Notes that question `asker.key` was asked, and (once answered) its answer.
    fn note(&self, asker: &Asker, answer: Option<InputResponse>, typed: bool) {
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(asker.key.clone());
        }
        let (Some(answer), Ok(mut given)) = (answer, self.given.lock()) else {
            return;
        };
        if given.round != asker.round {
            *given = Given {
                round: asker.round,
                ..Given::default()
            };
        }
        if given.answers.insert(asker.key.clone(), answer).is_ok() {
            given.typed |= typed;
        }
    }

    /// The answers given in round `round`, if any of them was typed on the terminal.
    pub(crate) fn typed_in(&self, round: usize) -> Option<InputResponses> {
        let given = self.given.lock().ok()?;
        (given.round == round && given.typed).then(|| given.answers.clone())
    }

    /// Answers given ahead (`--answer`, `--accept`, ...) for keys no question asked,
    /// and the keys that were asked.
    pub(crate) fn unasked(&self) -> Option<(Vec<String>, Vec<String>)> {
        let asked = self.asked.lock().ok()?;
        let stray: Vec<String> = self
            .presets
            .keys()
            .filter(|k| !asked.contains(*k))
            .cloned()
            .collect();
        (!stray.is_empty()).then(|| (stray, asked.iter().cloned().collect()))
    }

    /// Answers every question of a round, in key order (for `tern resume`).
    pub(crate) async fn answer_all(
        &self,
        server: Option<&str>,
        round: usize,
        requests: &InputRequests,
        saved: Option<&InputResponses>,
    ) -> Result<InputResponses> {
        let mut out = InputResponses::new();
        for (key, request) in &requests.0 {
            let asker = Asker {
                server: server
                    .map(|s| format!("server `{s}`"))
                    .unwrap_or_else(|| self.target.clone()),
                key: key.clone(),
                round,
            };
            // Answers typed before a connection failed, kept in the state file.
            if let Some((_, answer)) = saved.and_then(|s| s.iter().find(|(k, _)| k == key)) {
                out.insert_raw(key.clone(), answer)
                    .map_err(|e| CliError::Prompt(e.to_string()))?;
                self.note(&asker, None, false);
                continue;
            }
            let response = match request.clone() {
                InputRequest::Elicit(r) => {
                    InputResponse::Elicit(self.elicit(asker, r.params).await?)
                }
                InputRequest::CreateMessage(r) => {
                    InputResponse::CreateMessage(self.sample(asker, r.params).await?)
                }
                InputRequest::ListRoots(_) => InputResponse::ListRoots(self.roots()?),
            };
            out.insert(key.clone(), response)
                .map_err(|e| CliError::Prompt(e.to_string()))?;
        }
        Ok(out)
    }

    async fn elicit(&self, asker: Asker, params: ElicitRequestParams) -> Result<ElicitResult> {
        let _turn = self.turn.lock().await;
        self.note(&asker, None, false);
        let preset = self.presets.get(&asker.key).cloned();
        let interactive = self.interactive;
        if interactive {
            self.ui.clear();
        }
        let typed = interactive && preset.is_none();
        let who = asker.clone();
        let result = match params {
            ElicitRequestParams::Form(form) => {
                blocking(move || answer_form(&asker, &form, preset, interactive)).await
            }
            ElicitRequestParams::Url(url) => {
                let open = self.open;
                blocking(move || answer_url(&asker, &url, preset, interactive, open)).await
            }
        }?;
        self.note(&who, Some(InputResponse::Elicit(result.clone())), typed);
        Ok(result)
    }

    async fn sample(
        &self,
        asker: Asker,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult> {
        let _turn = self.turn.lock().await;
        self.note(&asker, None, false);
        if let Some(command) = &self.sampling_cmd {
            return sampling::run_command(command, &params).await;
        }
        if let Some(Preset::Accept(fields)) = self.presets.get(&asker.key) {
            if let Some(text) = fields.get("text").and_then(Value::as_str) {
                return sampling::reply(text);
            }
        }
        if !self.interactive {
            return Err(CliError::NoAnswer {
                message: sampling::prompt_text(&params),
                hint: format!("--sampling-cmd CMD or --answer {}.text=REPLY", asker.key),
                server: asker.server,
                key: asker.key,
            });
        }
        self.ui.clear();
        let who = asker.clone();
        let result = blocking(move || sampling::ask(&asker.server, &asker.key, &params)).await?;
        self.note(
            &who,
            Some(InputResponse::CreateMessage(result.clone())),
            true,
        );
        Ok(result)
    }

    fn roots(&self) -> Result<ListRootsResult> {
        let roots = if self.roots.is_empty() {
            vec![std::env::current_dir().map_err(|source| CliError::File {
                path: ".".into(),
                source,
            })?]
        } else {
            self.roots.clone()
        };
        let roots: Vec<Value> = roots
            .iter()
            .map(|path| {
                let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                json!({"uri": format!("file://{}", path.display()), "name": name})
            })
            .collect();
        serde_json::from_value(json!({ "roots": roots }))
            .map_err(|e| CliError::Prompt(format!("roots: {e}")))
    }
}

/// Runs a prompt off the async threads: the terminal blocks.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(move || form::prompting(f))
        .await
        .map_err(|e| CliError::Prompt(e.to_string()))?
}

/// A form question: the preset's fields read against the schema, the rest asked on the
/// terminal (or left to their defaults, or an error naming the missing field).
fn answer_form(
    asker: &Asker,
    form: &ElicitRequestFormParams,
    preset: Option<Preset>,
    interactive: bool,
) -> Result<ElicitResult> {
    let schema = serde_json::to_value(&form.requested_schema)
        .map_err(|e| CliError::Prompt(e.to_string()))?;
    let fields = schema::fields(&schema).map_err(|e| {
        CliError::Prompt(format!(
            "question `{}` from {}: {e}",
            asker.key, asker.server
        ))
    })?;
    let given = match preset {
        Some(Preset::Decline) => return Ok(ask::decline()),
        Some(Preset::Cancel) => return Ok(ask::cancel()),
        Some(Preset::Accept(given)) => given,
        None if interactive => {
            match form::choose_action(&asker.server, &asker.key, &form.message)? {
                form::Action::Accept => Map::new(),
                form::Action::Decline => return Ok(ask::decline()),
                form::Action::Cancel => return Ok(ask::cancel()),
            }
        }
        None => {
            return Err(CliError::NoAnswer {
                server: asker.server.clone(),
                key: asker.key.clone(),
                message: form.message.clone(),
                hint: format!(
                    "--answer {}.FIELD=VALUE (fields: {}), --answers FILE, or --accept, \
                     --decline or --cancel {}",
                    asker.key,
                    fields
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    asker.key
                ),
            });
        }
    };
    if let Some(stray) = given.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
        return Err(CliError::usage(format!(
            "question `{}` has no field `{stray}` (its fields: {})",
            asker.key,
            fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut content: Vec<(String, ElicitValue)> = Vec::new();
    for field in &fields {
        let value = match given.get(&field.name) {
            Some(raw) => Some(field.read_json(raw).map_err(|e| {
                CliError::usage(format!("--answer {}.{}: {e}", asker.key, field.name))
            })?),
            None if interactive => form::ask_field(field)?,
            None => match field.default_value() {
                Some(default) => Some(default),
                None if field.required => {
                    return Err(CliError::NoAnswer {
                        server: asker.server.clone(),
                        key: asker.key.clone(),
                        message: form.message.clone(),
                        hint: format!(
                            "--answer {}.{}=VALUE (the field is required)",
                            asker.key, field.name
                        ),
                    });
                }
                None => None,
            },
        };
        if let Some(value) = value {
            content.push((field.name.clone(), value));
        }
    }
    Ok(ask::accept(content))
}

/// A URL-mode question: the URL shown (opened with `--open`), then the user's word
/// that the step is done.
fn answer_url(
    asker: &Asker,
    url: &ElicitRequestUrlParams,
    preset: Option<Preset>,
    interactive: bool,
    open: bool,
) -> Result<ElicitResult> {
    match preset {
        Some(Preset::Decline) => return Ok(ask::decline()),
        Some(Preset::Cancel) => return Ok(ask::cancel()),
        Some(Preset::Accept(_)) => return Ok(ask::accept::<String, ElicitValue>([])),
        None if !interactive => {
            return Err(CliError::NoAnswer {
                server: asker.server.clone(),
                key: asker.key.clone(),
                message: format!("{} ({})", url.message, url.url),
                hint: format!(
                    "--accept {key} once the step at the URL is done, or --decline or \
                     --cancel {key}",
                    key = asker.key
                ),
            });
        }
        None => {}
    }
    if open {
        if let Err(e) = open::that(&url.url) {
            tracing::warn!("could not open {}: {e}", safe::line(&url.url));
        }
    }
    Ok(
        match form::wait_for_url(&asker.server, &asker.key, &url.message, &url.url)? {
            form::Action::Accept => ask::accept::<String, ElicitValue>([]),
            form::Action::Decline => ask::decline(),
            form::Action::Cancel => ask::cancel(),
        },
    )
}
