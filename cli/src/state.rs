//! `--state-file` and `tern resume`: a call stopped at its questions, saved as the
//! SDK's `PendingCall` with the target beside it, and continued by another process. The
//! file is written whole and readable by its owner alone; `trust` decides whether a file
//! read back may be resumed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tern_mcp::client::{InputLoopMethod, PendingCall, Step};
use tern_mcp::types::rpc::Request as _;
use tern_mcp::types::v2026_07_28::{ElicitRequestParams, InputRequest, InputResponses, method};

use crate::answerer::Answerer;
use crate::cli::ResumeArgs;
use crate::connect::{builder, connect};
use crate::error::{CliError, Result};
use crate::notices::Ui;
use crate::render::{Kind, print_result};
use crate::wire::Tap;
use crate::{exit, safe, schema, trust};

/// The file's format version.
const VERSION: u32 = 1;

/// What the state file holds: where the server is, and the call.
#[derive(Debug, Serialize, Deserialize)]
struct Saved {
    tern_state_file: u32,
    target: String,
    pending: PendingCall,
    /// Answers already given to `pending`'s questions (typed before the connection
    /// failed): `tern resume` sends them without asking again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answers: Option<InputResponses>,
}

/// Where a paused call goes, and how a result is shown.
pub(crate) struct Saving<'a> {
    file: &'a Path,
    target: &'a str,
    ui: &'a Ui,
    json: bool,
    /// Resuming: the file is removed once the call completes.
    resuming: bool,
}

impl<'a> Saving<'a> {
    pub(crate) fn new(file: &'a Path, target: &'a str, ui: &'a Ui, json: bool) -> Self {
        Self {
            file,
            target,
            ui,
            json,
            resuming: false,
        }
    }
}

fn kind_of(method_name: &str) -> Kind {
    if method_name == method::GetPrompt::METHOD {
        Kind::Prompt
    } else if method_name == method::ReadResource::METHOD {
        Kind::Read
    } else {
        Kind::Call
    }
}

/// Where a step leaves the command: a result printed, or the questions saved (exit 4).
pub(crate) async fn settle<M>(step: Step<M::Complete>, saving: &Saving<'_>) -> Result<u8>
where
    M: InputLoopMethod,
    M::Complete: Serialize,
{
    match step {
        Step::Done(done) => {
            if saving.resuming {
                remove(saving.file)?;
            }
            print_result(saving.ui, kind_of(M::METHOD), &done, saving.json)
        }
        Step::NeedsInput(pending) => {
            save(saving.file, saving.target, &pending)?;
            describe(saving.file, saving.target, &pending);
            Ok(exit::PAUSED)
        }
        Step::Deferred(deferred) => {
            let result = tern_mcp::tasks::TaskHandle::of(deferred)?.wait().await?;
            if saving.resuming {
                remove(saving.file)?;
            }
            print_result(saving.ui, Kind::Call, &result, saving.json)
        }
        _ => Err(CliError::Prompt(
            "the SDK stopped in a way tern does not know".into(),
        )),
    }
}

/// `tern resume FILE`: answers the saved questions and sends the retry.
pub(crate) async fn resume(args: ResumeArgs, ui: Arc<Ui>) -> Result<u8> {
    let saved = load(&args.file)?;
    let credential = if args.connect.token.is_some() {
        Some("your --token")
    } else if args.connect.signs_in() {
        Some("your OAuth sign-in")
    } else {
        None
    };
    trust::confirm_command(&args.file, &saved.target, args.yes, credential)?;
    let answerer = Answerer::new(&args.answering, &saved.target, ui.clone())?;
    let (client, tap) = connect(&saved.target, &args.connect, answerer.register(builder())).await?;
    let answers = answerer
        .answer_all(
            client.server_name(),
            saved.pending.round,
            &saved.pending.input_requests,
            saved.answers.as_ref(),
        )
        .await?;
    let kept = Unsent {
        file: &args.file,
        target: &saved.target,
        pending: &saved.pending,
        answers: Some(&answers),
    };
    let saving = Saving {
        resuming: true,
        ..Saving::new(&args.file, &saved.target, &ui, args.json)
    };
    let name = saved.pending.method.clone();
    if name == method::CallTool::METHOD {
        let step = client
            .resume::<method::CallTool>(saved.pending.clone(), answers.clone())
            .await
            .map_err(|e| rejected(kept.keep(CliError::Sdk(e), &tap, &answerer), &saved.target))?;
        settle::<method::CallTool>(step, &saving).await
    } else if name == method::GetPrompt::METHOD {
        let step = client
            .resume::<method::GetPrompt>(saved.pending.clone(), answers.clone())
            .await
            .map_err(|e| rejected(kept.keep(CliError::Sdk(e), &tap, &answerer), &saved.target))?;
        settle::<method::GetPrompt>(step, &saving).await
    } else if name == method::ReadResource::METHOD {
        let step = client
            .resume::<method::ReadResource>(saved.pending.clone(), answers.clone())
            .await
            .map_err(|e| rejected(kept.keep(CliError::Sdk(e), &tap, &answerer), &saved.target))?;
        settle::<method::ReadResource>(step, &saving).await
    } else {
        Err(CliError::usage(format!(
            "{}: a saved `{name}` call cannot be resumed",
            args.file.display()
        )))
    }
}

/// A call whose retry did not get through: kept in `file` with the answers typed for
/// it, so that `tern resume FILE` sends them without asking again.
pub(crate) struct Unsent<'a> {
    pub(crate) file: &'a Path,
    pub(crate) target: &'a str,
    /// The round answered, when known here (`tern resume`); else the tap's.
    pub(crate) pending: &'a PendingCall,
    pub(crate) answers: Option<&'a InputResponses>,
}

impl Unsent<'_> {
    /// `error`, after the call was saved if the connection failed with typed answers in
    /// flight; its hint then says how to go on.
    pub(crate) fn keep(&self, error: CliError, tap: &Tap, answerer: &Answerer) -> CliError {
        if !error.is_connection() {
            return error;
        }
        let pending = tap.asked().unwrap_or_else(|| self.pending.clone());
        let answers = match self.answers {
            Some(answers) => Some(answers.clone()),
            None => answerer.typed_in(pending.round),
        };
        let Some(answers) = answers.filter(|a| a.iter().next().is_some()) else {
            return error;
        };
        keep_answers(error, self.file, self.target, &pending, answers)
    }
}

/// Saves `pending` and `answers` in `file`; `error` with the command that goes on.
pub(crate) fn keep_answers(
    error: CliError,
    file: &Path,
    target: &str,
    pending: &PendingCall,
    answers: InputResponses,
) -> CliError {
    match save_with(file, target, pending, Some(answers)) {
        Ok(()) => error.with_hint(format!(
            "your answers were not sent; they are saved with the call in {file}: continue \
             with: tern resume {file}",
            file = file.display()
        )),
        Err(e) => error.with_hint(format!("your answers could not be kept: {e}")),
    }
}

fn load(file: &Path) -> Result<Saved> {
    let text = trust::read_own(file)?;
    let saved: Saved = serde_json::from_str(&text).map_err(|source| CliError::Json {
        path: file.to_owned(),
        source,
    })?;
    if saved.tern_state_file != VERSION {
        return Err(CliError::usage(format!(
            "{}: a state file of version {}, this tern reads version {VERSION}",
            file.display(),
            saved.tern_state_file
        )));
    }
    Ok(saved)
}

/// Writes the file readable by its owner only (it holds the call's arguments), whatever
/// mode a file already there had: a new file, mode 0600, written beside it and renamed
/// over it, so a crash never leaves half a file either.
fn save(file: &Path, target: &str, pending: &PendingCall) -> Result<()> {
    save_with(file, target, pending, None)
}

fn save_with(
    file: &Path,
    target: &str,
    pending: &PendingCall,
    answers: Option<InputResponses>,
) -> Result<()> {
    let saved = Saved {
        tern_state_file: VERSION,
        target: target.to_owned(),
        pending: pending.clone(),
        answers,
    };
    let failed = |source| CliError::File {
        path: file.to_owned(),
        source,
    };
    let text = serde_json::to_string_pretty(&saved).map_err(|e| CliError::Prompt(e.to_string()))?;
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Dropped before it is renamed (a failed write), the new file is removed.
    let mut out = tempfile::Builder::new()
        .prefix(".tern-state-")
        .tempfile_in(dir)
        .map_err(failed)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let private = std::fs::Permissions::from_mode(0o600);
        out.as_file().set_permissions(private).map_err(failed)?;
    }
    out.write_all(text.as_bytes()).map_err(failed)?;
    out.write_all(b"\n").map_err(failed)?;
    out.as_file().sync_all().map_err(failed)?;
    out.persist(file).map_err(|e| failed(e.error))?;
    Ok(())
}

fn remove(file: &Path) -> Result<()> {
    match std::fs::remove_file(file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(CliError::File {
            path: PathBuf::from(file),
            source,
        }),
    }
}

/// The questions on stderr, and how to go on; the server's words shown, not run.
fn describe(file: &Path, target: &str, pending: &PendingCall) {
    eprintln!(
        "paused after round {}: the server asks {} question(s), saved to {}",
        pending.round,
        pending.input_requests.len(),
        file.display()
    );
    for (key, request) in &pending.input_requests.0 {
        eprintln!("  {}: {}", safe::line(key), safe::text(&question(request)));
    }
    eprintln!(
        "continue with: tern resume {} [--answer KEY.FIELD=VALUE ...]",
        file.display()
    );
    if on_stdio(target) {
        eprintln!("  {}", RESUME_ON_STDIO);
    }
}

/// What resuming a call of a stdio server takes, said where the call pauses and where
/// its resume is refused.
const RESUME_ON_STDIO: &str = "resume starts the server command again: it asks first on \
a terminal, and needs --yes without one; the new process accepts the saved state only if \
the server seals with a fixed key (for tern's examples, --state-key HEX), not one made \
at each start";

/// Whether `target` is a command line (a stdio server), not a URL.
fn on_stdio(target: &str) -> bool {
    !matches!(
        crate::connect::Target::parse(target),
        Ok(crate::connect::Target::Http(_))
    )
}

/// `error`, with what resuming on stdio takes when a stdio server refused the state.
fn rejected(error: CliError, target: &str) -> CliError {
    match &error {
        CliError::Sdk(tern_mcp::Error::StateRejected(_)) if on_stdio(target) => {
            error.with_hint(RESUME_ON_STDIO)
        }
        _ => error,
    }
}

fn question(request: &InputRequest) -> String {
    match request {
        InputRequest::Elicit(r) => match &r.params {
            ElicitRequestParams::Form(form) => {
                let schema = serde_json::to_value(&form.requested_schema).unwrap_or(Value::Null);
                let fields = schema::fields(&schema)
                    .map(|fields| {
                        fields
                            .iter()
                            .map(|f| {
                                let star = if f.required { "*" } else { "" };
                                format!("{}{star}", f.name)
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_else(|e| e);
                format!("form \"{}\" (fields: {fields})", form.message)
            }
            ElicitRequestParams::Url(url) => format!("url \"{}\" <{}>", url.message, url.url),
        },
        InputRequest::CreateMessage(r) => {
            format!("sampling \"{}\"", crate::sampling::prompt_text(&r.params))
        }
        InputRequest::ListRoots(_) => {
            "roots (answered from --root or the working directory)".into()
        }
    }
}
