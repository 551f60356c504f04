//! Questions on the terminal (stderr, so stdout stays the result's): the first choice
//! (accept, decline, cancel), each form field by its schema, a URL-mode step. Every text
//! the server wrote (who asks, the key, the message, labels, descriptions, choices,
//! defaults, the URL) goes through `safe` before it reaches a prompt.

use console::Term;
use dialoguer::theme::SimpleTheme;
use dialoguer::{Confirm, Input, MultiSelect, Select};
use tern_mcp::types::v2026_07_28::ElicitValue;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{CliError, Result};
use crate::safe;
use crate::schema::{Field, Kind};

/// What the user does with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Accept,
    Decline,
    Cancel,
}

/// How many prompts are open (on the blocking threads): Ctrl-C while one is says no
/// answer was sent.
static PROMPTS: AtomicUsize = AtomicUsize::new(0);

/// A prompt's key read came back interrupted: that prompt's error ends the process.
static READ_INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Runs `ask`, a prompt, counted as open while it runs; an interrupted one stays
/// counted, so that the SIGINT it raised is read as Ctrl-C at a prompt.
pub(crate) fn prompting<T>(ask: impl FnOnce() -> Result<T>) -> Result<T> {
    PROMPTS.fetch_add(1, Ordering::SeqCst);
    let answer = ask();
    if matches!(answer, Err(CliError::Interrupted)) {
        READ_INTERRUPTED.store(true, Ordering::SeqCst);
    } else {
        PROMPTS.fetch_sub(1, Ordering::SeqCst);
    }
    answer
}

/// Ends the process on Ctrl-C (SIGINT: raised by a prompt's raw-mode key read after it
/// restored the terminal, or sent by the terminal between reads): the cursor a
/// selection list hid shown again, and a line saying what was not done. At a prompt
/// that is exit 2, as a question left unanswered (when the prompt's own read saw the
/// key, its error says so and ends the process); elsewhere 130, what a shell reports
/// for a process SIGINT ended.
pub(crate) async fn end_on_ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    let _ = term().show_cursor();
    if PROMPTS.load(Ordering::SeqCst) > 0 {
        // The prompt's read, if it saw the key, is returning its error now.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        if READ_INTERRUPTED.load(Ordering::SeqCst) {
            return;
        }
        eprintln!("\ntern: {}", CliError::Interrupted);
        std::process::exit(i32::from(crate::exit::USAGE));
    }
    eprintln!("\ntern: interrupted");
    std::process::exit(i32::from(crate::exit::INTERRUPTED));
}

fn term() -> Term {
    Term::stderr()
}

/// Shows who asks what, then asks accept, decline or cancel.
pub(crate) fn choose_action(server: &str, key: &str, message: &str) -> Result<Action> {
    let term = term();
    term.write_line(&asks(server, key, message))?;
    let choice = Select::with_theme(&SimpleTheme)
        .with_prompt("Answer")
        .items(["accept", "decline", "cancel"])
        .default(0)
        .interact_on(&term)?;
    Ok(match choice {
        0 => Action::Accept,
        1 => Action::Decline,
        _ => Action::Cancel,
    })
}

/// Who asks what, the line above a question.
fn asks(server: &str, key: &str, message: &str) -> String {
    format!(
        "\n{} asks ({}): {}",
        safe::line(server),
        safe::line(key),
        safe::text(message)
    )
}

/// The prompt line of a field: its label, whether it is required, what it takes; on one
/// line, since the prompts redraw themselves by counting lines.
fn prompt(field: &Field) -> String {
    let mut line = field.label.clone();
    if field.required {
        line.push_str(" *");
    }
    if let Some(description) = &field.description {
        line.push_str(&format!(" ({description})"));
    }
    if let Some(hint) = field
        .hint()
        .filter(|_| !matches!(field.kind, Kind::Multi { .. }))
    {
        line.push_str(&format!(" [{hint}]"));
    }
    safe::line(&line).into_owned()
}

/// The choices as the user sees them.
fn shown(choices: &[crate::schema::Choice]) -> Vec<String> {
    choices
        .iter()
        .map(|c| safe::line(&c.shown()).into_owned())
        .collect()
}

/// Asks one field until the answer fits its schema; `None` for an optional field left
/// empty.
pub(crate) fn ask_field(field: &Field) -> Result<Option<ElicitValue>> {
    let term = term();
    let theme = SimpleTheme;
    let default = field.default_value();
    match &field.kind {
        Kind::Boolean if field.required || default.is_some() => {
            let yes = Confirm::with_theme(&theme)
                .with_prompt(prompt(field))
                .default(matches!(default, Some(ElicitValue::Boolean(true))))
                .interact_on(&term)?;
            Ok(Some(ElicitValue::Boolean(yes)))
        }
        Kind::Boolean => {
            let choice = Select::with_theme(&theme)
                .with_prompt(prompt(field))
                .items(["yes", "no", "(no answer)"])
                .default(2)
                .interact_on(&term)?;
            Ok(match choice {
                0 => Some(ElicitValue::Boolean(true)),
                1 => Some(ElicitValue::Boolean(false)),
                _ => None,
            })
        }
        Kind::Choice(choices) => {
            let mut items = shown(choices);
            let optional = !field.required && default.is_none();
            if optional {
                items.push("(no answer)".into());
            }
            let preselected = match &default {
                Some(ElicitValue::String(v)) => choices.iter().position(|c| &c.value == v),
                _ => None,
            };
            let choice = Select::with_theme(&theme)
                .with_prompt(prompt(field))
                .items(&items)
                .default(preselected.unwrap_or(0))
                .interact_on(&term)?;
            Ok(choices
                .get(choice)
                .map(|c| ElicitValue::String(c.value.clone())))
        }
        Kind::Multi { choices, .. } => {
            let picked_by_default: Vec<bool> = choices
                .iter()
                .map(|c| matches!(&default, Some(ElicitValue::List(l)) if l.contains(&c.value)))
                .collect();
            let items = shown(choices);
            loop {
                let picked = MultiSelect::with_theme(&theme)
                    .with_prompt(format!(
                        "{} (space to pick, enter when done)",
                        prompt(field)
                    ))
                    .items(&items)
                    .defaults(&picked_by_default)
                    .interact_on(&term)?;
                let values: Vec<serde_json::Value> = picked
                    .iter()
                    .filter_map(|i| choices.get(*i))
                    .map(|c| c.value.clone().into())
                    .collect();
                match field.read_json(&serde_json::Value::Array(values)) {
                    Ok(value) => return Ok(Some(value)),
                    Err(e) => term.write_line(&format!("  {}", safe::line(&e)))?,
                }
            }
        }
        Kind::Text { .. } | Kind::Number { .. } => ask_text(field, &term),
    }
}

/// Asks a text or number field, its default pre-filled.
fn ask_text(field: &Field, term: &Term) -> Result<Option<ElicitValue>> {
    let default = field.default.as_ref().map(|default| match default {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    // The default is shown neutralized, and the prompt hands back what it showed: that
    // text taken as is stands for the server's own default.
    let shown_default = default.as_deref().map(|d| safe::line(d).into_owned());
    let restore = |text: &str| -> String {
        match (&default, &shown_default) {
            (Some(default), Some(shown)) if text == shown => default.clone(),
            _ => text.to_owned(),
        }
    };
    let mut input = Input::<String>::with_theme(&SimpleTheme)
        .with_prompt(prompt(field))
        .allow_empty(true);
    if let Some(shown) = &shown_default {
        input = input.default(shown.clone());
    }
    let required = field.required;
    let text = input
        .validate_with(|text: &String| -> std::result::Result<(), String> {
            if text.trim().is_empty() {
                return if required {
                    Err("an answer is required".into())
                } else {
                    Ok(())
                };
            }
            field
                .parse(&restore(text))
                .map(|_| ())
                .map_err(|e| safe::line(&e).into_owned())
        })
        .interact_text_on(term)?;
    let text = restore(&text);
    if text.trim().is_empty() {
        return Ok(None);
    }
    field
        .parse(&text)
        .map(Some)
        .map_err(crate::error::CliError::Prompt)
}

/// A URL-mode question: the URL shown, then Enter once the step is done (or `d` to
/// decline, `c` to cancel).
pub(crate) fn wait_for_url(server: &str, key: &str, message: &str, url: &str) -> Result<Action> {
    let term = term();
    term.write_line(&asks(server, key, message))?;
    term.write_line(&format!("  open: {}", safe::line(url)))?;
    let answer = Input::<String>::with_theme(&SimpleTheme)
        .with_prompt("Press Enter when done (d to decline, c to cancel)")
        .allow_empty(true)
        .validate_with(|text: &String| -> std::result::Result<(), String> {
            match text.trim() {
                "" | "d" | "c" => Ok(()),
                _ => Err("Enter, d or c".into()),
            }
        })
        .interact_text_on(&term)?;
    Ok(match answer.trim() {
        "d" => Action::Decline,
        "c" => Action::Cancel,
        _ => Action::Accept,
    })
}
