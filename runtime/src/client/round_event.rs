//! The events a call's rounds give a UI ([`RoundEvent`]): what the automatic loop is
//! doing, carried on the call's notice stream.

use std::time::Duration;

/// What the automatic loop is doing, round by round, for a UI that shows it: handed to
/// a call's notice stream (as [`Notice::Round`](super::Notice::Round)) in order with
/// the server's notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoundEvent {
    /// The server asked; the callbacks are answering these keys.
    NeedsInput {
        /// The round: 1 for the first input-required answer.
        round: usize,
        /// The keys of its input requests.
        keys: Vec<String>,
    },
    /// The server answered with state and no questions; the loop waits this long
    /// before retrying.
    BackingOff {
        /// The round.
        round: usize,
        /// How long the loop waits.
        delay: Duration,
    },
    /// The server refused the state of this round's retry (a restarted server, an
    /// instance with another key): the call starts over from its first round.
    Rejected {
        /// The round whose retry was refused.
        round: usize,
    },
    /// The server answered with a result of an extension's type after this many
    /// input-required rounds (a task it made of the call): the loop has the extension
    /// follow it (a task's questions asked through the callbacks).
    Deferred {
        /// The input-required rounds before it (0: none).
        rounds: usize,
        /// The extension whose type it is ([`ClientExtension::id`](super::ClientExtension::id)).
        extension: &'static str,
        /// The result, as the server wrote it (a task's holds its `taskId`).
        result: String,
    },
    /// The call completed after this many input-required rounds.
    Done {
        /// The rounds it took (0: none).
        rounds: usize,
    },
}
