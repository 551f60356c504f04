//! Restartable tasks: a tool registered with [`TaskSupport::restartable`] keeps in its
//! task's record what any instance needs to run it again (the tool, its arguments, the
//! client's capabilities) and, after each round the client answered, that round's
//! answers and state: its last durable round. When the instance running it stops, the
//! first instance to read the task once its lease lapsed takes it over and runs the
//! body again from there, instead of marking it `failed`.
//!
//! The body runs again from the start of that round: whatever it did since is done
//! again, so a restartable tool's work after an answer must bear repeating.

use serde::{Deserialize, Serialize};

use super::TaskSupport;
use crate::mcp::ToolBody;
use crate::types::v2026_07_28::{ClientCapabilities, InputResponses, ToolArguments};

/// A tool whose tasks another instance runs again when theirs stops: what
/// [`TaskSupport::restartable`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restartable(pub TaskSupport);

impl TaskSupport {
    /// This support, for a tool whose task is taken over by another instance of a
    /// fleet when the instance running it stops: run again from its last round the
    /// client answered (its answers kept in the task store), instead of failing.
    pub const fn restartable(self) -> Restartable {
        Restartable(self)
    }
}

impl crate::mcp::ToolSetting for Restartable {
    const EXTENSION: &'static str = crate::protocol::tasks::EXTENSION;
}

/// Where a restartable task's body starts again: kept as the task's `resume`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Resume {
    pub(crate) tool: String,
    pub(crate) arguments: ToolArguments,
    pub(crate) capabilities: ClientCapabilities,
    /// The answers and state of the round to run again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) responses: Option<InputResponses>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<String>,
    /// The task keys its rounds used so far, and how many rounds it took.
    #[serde(default)]
    pub(crate) used: Vec<String>,
    #[serde(default)]
    pub(crate) rounds: u32,
}

impl Resume {
    /// The first round of `body`'s call.
    pub(crate) fn new(
        body: &ToolBody,
        capabilities: &ClientCapabilities,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Self {
        Self {
            tool: body.name().to_owned(),
            arguments: body.arguments().clone(),
            capabilities: capabilities.clone(),
            responses,
            state,
            used: Vec::new(),
            rounds: 0,
        }
    }

    /// The same call, at the round that answers carry on.
    pub(crate) fn at(&self, responses: &InputResponses, state: Option<&str>) -> Self {
        Self {
            responses: Some(responses.clone()),
            state: state.map(str::to_owned),
            ..self.clone()
        }
    }

    pub(crate) fn to_text(&self) -> Option<String> {
        serde_json::to_string(self)
            .inspect_err(|e| tracing::error!(error = %e, "could not write a task's restart point"))
            .ok()
    }
}
