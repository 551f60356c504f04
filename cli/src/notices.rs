//! What the server says besides the result, on stderr: progress as a bar (plain lines
//! when stderr is not a terminal), log entries with their level, and with `-v` the
//! rounds of the call.

use std::io::IsTerminal as _;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use tern_mcp::client::{Notice, RoundEvent};
use tern_mcp::types::ext_tasks::{CreateTaskResult, EXTENSION_ID};
use tern_mcp::types::v2026_07_28::{LoggingMessageNotificationParams, ProgressNotificationParams};

use crate::safe;

/// The stderr side of a command.
pub(crate) struct Ui {
    verbose: u8,
    terminal: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Ui {
    pub(crate) fn new(verbose: u8) -> Self {
        Self {
            verbose,
            terminal: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    /// Shows one notice.
    pub(crate) fn notice(&self, notice: Notice) {
        match notice {
            Notice::Progress(p) => self.progress(&p),
            Notice::Log(entry) => self.line(&log_line(&entry)),
            Notice::Round(event) if self.verbose > 0 => {
                if let Some(line) = round_line(&event) {
                    self.line(&line);
                }
            }
            _ => {}
        }
    }

    /// A line on stderr, above the bar if there is one; what the server wrote in it is
    /// shown, not run.
    pub(crate) fn line(&self, line: &str) {
        let line = safe::text(line);
        match self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Takes the bar off the screen (before a prompt, or at the end).
    pub(crate) fn clear(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }

    /// Leaves the bar where it is, finished, at the end of a command; what follows
    /// starts on a line of its own.
    pub(crate) fn finish(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish();
            eprintln!();
        }
    }

    fn progress(&self, p: &ProgressNotificationParams) {
        let done = p.progress.as_f64().unwrap_or(0.0);
        let total = p.total.as_ref().and_then(serde_json::Number::as_f64);
        let message = safe::line(p.message.as_deref().unwrap_or_default()).into_owned();
        if !self.terminal {
            let of = total.map(|t| format!("/{t}")).unwrap_or_default();
            eprintln!("progress: {done}{of} {message}");
            return;
        }
        let Ok(mut slot) = self.bar.lock() else {
            return;
        };
        let bar = slot.get_or_insert_with(|| new_bar(total));
        if let Some(total) = total {
            bar.set_length(total.max(0.0) as u64);
        }
        bar.set_position(done.max(0.0) as u64);
        bar.set_message(message);
    }
}

fn new_bar(total: Option<f64>) -> ProgressBar {
    let bar = match total {
        Some(total) => {
            ProgressBar::with_draw_target(Some(total.max(0.0) as u64), ProgressDrawTarget::stderr())
        }
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = if total.is_some() {
        "[{bar:30}] {pos}/{len} {msg}"
    } else {
        "{spinner} {pos} {msg}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn log_line(entry: &LoggingMessageNotificationParams) -> String {
    let level = serde_json::to_value(entry.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let data = match &entry.data {
        Value::String(s) => s.clone(),
        other => safe::json(&other.to_string()).into_owned(),
    };
    match &entry.logger {
        Some(logger) => format!("[{level}] {logger}: {data}"),
        None => format!("[{level}] {data}"),
    }
}

fn round_line(event: &RoundEvent) -> Option<String> {
    Some(match event {
        RoundEvent::NeedsInput { round, keys } => {
            format!("round {round}: the server asks for {}", keys.join(", "))
        }
        RoundEvent::BackingOff { round, delay } => {
            format!(
                "round {round}: the server asks to call again; waiting {} ms",
                delay.as_millis()
            )
        }
        RoundEvent::Rejected { round } => {
            format!("round {round}: the server refused the state; starting over")
        }
        RoundEvent::Deferred {
            rounds,
            extension,
            result,
        } => {
            let what = match serde_json::from_str::<CreateTaskResult>(result) {
                Ok(task) if *extension == EXTENSION_ID => format!("task {}", task.task_id),
                _ => format!("a result of {extension}"),
            };
            match rounds {
                0 => format!("the server made the call {what}; following it to its end"),
                n => format!(
                    "after {n} input round(s) the server made the call {what}; \
                     following it to its end"
                ),
            }
        }
        RoundEvent::Done { rounds } => format!("done after {rounds} input round(s)"),
        _ => return None,
    })
}
