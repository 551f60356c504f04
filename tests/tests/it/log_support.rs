//! The warnings a test's code logs, captured on the test's thread (a test's runtime is
//! one thread) so a test can say what was logged.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::Field;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

/// The warnings logged while a capture lasts, one line each of their fields.
#[derive(Clone, Default)]
pub(crate) struct Warnings(pub(crate) Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() != tracing::Level::WARN {
            return;
        }
        let mut line = String::new();
        event.record(&mut |field: &Field, value: &dyn std::fmt::Debug| {
            let _ = write!(line, "{}={value:?} ", field.name());
        });
        self.0.lock().unwrap().push(line);
    }
}

impl Warnings {
    /// Starts capturing this thread's warnings until the guard drops. While a process
    /// has one dispatcher alone, tracing asks only the registering thread's about a new
    /// callsite (and another test's thread says no for good); a second one, kept for
    /// the process's life, has it ask them all.
    pub(crate) fn capture(&self) -> tracing::subscriber::DefaultGuard {
        static SECOND: OnceLock<tracing::Dispatch> = OnceLock::new();
        SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
        tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()))
    }

    /// The warnings that mention every one of `words`.
    pub(crate) fn mentioning(&self, words: &[&str]) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter(|l| words.iter().all(|w| l.contains(w)))
            .cloned()
            .collect()
    }
}
