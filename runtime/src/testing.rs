//! A kit for testing an MRTR server (feature `testing`): a client with scripted answers,
//! a record of every round, assertions that read like the behaviour, and a manual clock
//! ([`ManualClock`](crate::seal::ManualClock)) to cross a state's TTL.
//!
//! [`TestClient`] drives a call through [`Client::start`] and [`Client::resume`] over an
//! in-memory transport: each round that needs input is answered from the script (by the
//! question's key, or by its text) and recorded as a [`Round`] — what was asked, how
//! large the state was, what was sent back. A question the script does not answer ends
//! the call there, and the [`Transcript`] says which.
//!
//! A complete test of a two-round tool:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use serde_json::json;
//! use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, form_content};
//! use tern_mcp::testing::TestClient;
//! use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolResult};
//!
//! // Asks for a region, then for a confirmation (the region kept in its state), then
//! // provisions.
//! let mcp = McpServer::new("provisioner", "1.0.0");
//! mcp.tool("provision").run(|_: NoArgs, ctx: ToolContext| async move {
//!     let answer = |key: &str| ctx.input_responses()?.raw(key).and_then(form_content);
//!     let form = |message: &str, field: &str, kind: &str| {
//!         let schema = json!({"type": "object", "properties": {field: {"type": kind}}});
//!         tern_mcp::ask::elicit_form(message, schema)
//!     };
//!     if let Some(region) = ctx.request_state() {
//!         let ok = answer("confirm").and_then(|c| c.get("ok")?.as_bool()) == Some(true);
//!         let said = if ok { format!("Provisioned in {region}.") } else { "Cancelled.".into() };
//!         return Ok(CallToolOutcome::Complete(CallToolResult::new(vec![tern_mcp::ask::text(said)])));
//!     }
//!     let region = answer("region").and_then(|r| Some(r.get("region")?.as_str()?.to_owned()));
//!     Ok(match region {
//!         None => tern_mcp::ask::input_required([("region", form("Which region?", "region", "string")?)], None),
//!         Some(region) => tern_mcp::ask::input_required(
//!             [("confirm", form(&format!("Create it in {region}?"), "ok", "boolean")?)],
//!             Some(&region),
//!         ),
//!     }
//!     .into())
//! });
//!
//! let transcript = TestClient::new(&mcp).await
//!     .unwrap()
//!     .answer("region", json!({"region": "eu-west-1"}))
//!     .answer_question("Create it in", json!({"ok": true}))
//!     .call_tool("provision", json!({}))
//!     .await;
//! transcript
//!     .assert_rounds(2)
//!     .assert_asks_once("region")
//!     .assert_asks_once("confirm")
//!     .assert_text("Provisioned in eu-west-1.");
//! // The first round carried no state; the second, the region (sealed: larger).
//! assert_eq!(transcript.rounds[0].state_len, None);
//! assert!(transcript.rounds[1].state_len.unwrap() > "eu-west-1".len());
//!
//! // Without a scripted answer the call stops at the question, and says which.
//! let stopped = TestClient::new(&mcp).await.unwrap().call_tool("provision", json!({})).await;
//! assert!(stopped.to_string().contains("no scripted answer for `region`"));
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::client::{Client, PendingCall, Step};
use crate::mcp::McpServer;
use crate::server::Server;
use crate::transport::memory;
use crate::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ContentBlock, CreateMessageResult,
    ElicitRequestParams, InputRequest, InputResponses, ListRootsResult, Role, Root,
    SamplingMessageContent, SamplingMessageContentBlock, TextContent, ToolArguments, method,
};

/// What a question is answered with.
#[derive(Clone, Debug)]
enum Answer {
    /// An accepted form with this content.
    Accept(Map<String, Value>),
    /// A declined elicitation.
    Decline,
    /// A cancelled elicitation.
    Cancel,
    /// A sampling result of this text.
    Sample(String),
    /// A roots list.
    Roots(Vec<String>),
}

impl Answer {
    /// The answer as written on the wire.
    fn response(&self) -> Value {
        let written = match self {
            Self::Accept(content) => Ok(json!({"action": "accept", "content": content})),
            Self::Decline => Ok(json!({"action": "decline"})),
            Self::Cancel => Ok(json!({"action": "cancel"})),
            Self::Sample(text) => serde_json::to_value(CreateMessageResult::new(
                SamplingMessageContent::One(SamplingMessageContentBlock::Text(TextContent::new(
                    text.clone(),
                ))),
                "tern-testing",
                Role::Assistant,
            )),
            Self::Roots(uris) => {
                serde_json::to_value(ListRootsResult::new(uris.iter().map(Root::new).collect()))
            }
        };
        written.unwrap_or(Value::Null)
    }
}

/// Which questions an entry of the script answers.
#[derive(Clone, Debug)]
enum Matcher {
    Key(String),
    Text(String),
    Roots,
}

type Hook = Arc<dyn Fn(&Round) + Send + Sync>;
type Alter = Arc<dyn Fn(&mut String) + Send + Sync>;

/// A client with scripted answers, for testing a server's rounds.
#[derive(Clone)]
pub struct TestClient {
    client: Client,
    script: Vec<(Matcher, Answer)>,
    between_rounds: Option<Hook>,
    alter_state: Option<Alter>,
}

impl fmt::Debug for TestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient")
            .field("script", &self.script)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client of `server`, served in memory on a task of its own. It declares
    /// elicitation (form and URL), sampling and roots, so the server may ask any of them.
    pub async fn new(server: &McpServer) -> crate::Result<Self> {
        Self::over(server.server()?).await
    }

    /// A client of a low-level [`Server`], served in memory as [`new`](Self::new) does.
    pub async fn over(server: Server) -> crate::Result<Self> {
        let (client_end, server_end) = memory::pair();
        tokio::spawn(async move { server.serve(server_end).await });
        let capabilities: ClientCapabilities = serde_json::from_value(json!({
            "elicitation": {"form": {}, "url": {}},
            "sampling": {},
            "roots": {}
        }))
        .map_err(crate::Error::Encode)?;
        let client = Client::builder("tern-testing", env!("CARGO_PKG_VERSION"))
            .capabilities(capabilities)
            .era(crate::client::EraMode::Stateless)
            .connect(client_end)
            .await?;
        Ok(Self::with_client(client))
    }

    /// A test client over a client of your own (another transport, other capabilities).
    pub(crate) fn with_client(client: Client) -> Self {
        Self {
            client,
            script: Vec::new(),
            between_rounds: None,
            alter_state: None,
        }
    }

    /// Accepts the question keyed `key` with the form content `content` (an object).
    pub fn answer(self, key: &str, content: Value) -> Self {
        let content = content.as_object().cloned().unwrap_or_default();
        self.script_entry(Matcher::Key(key.to_owned()), Answer::Accept(content))
    }

    /// Accepts every form question whose message contains `text` with `content`.
    pub fn answer_question(self, text: &str, content: Value) -> Self {
        let content = content.as_object().cloned().unwrap_or_default();
        self.script_entry(Matcher::Text(text.to_owned()), Answer::Accept(content))
    }

    /// Declines the question keyed `key`.
    pub fn decline(self, key: &str) -> Self {
        self.script_entry(Matcher::Key(key.to_owned()), Answer::Decline)
    }

    /// Cancels the question keyed `key`.
    pub fn cancel(self, key: &str) -> Self {
        self.script_entry(Matcher::Key(key.to_owned()), Answer::Cancel)
    }

    /// Answers the sampling request keyed `key` with a model's reply of `text`.
    pub fn sample(self, key: &str, text: &str) -> Self {
        self.script_entry(
            Matcher::Key(key.to_owned()),
            Answer::Sample(text.to_owned()),
        )
    }

    /// Answers every roots request with these root URIs.
    pub fn roots<'a>(self, uris: impl IntoIterator<Item = &'a str>) -> Self {
        let uris = uris.into_iter().map(str::to_owned).collect();
        self.script_entry(Matcher::Roots, Answer::Roots(uris))
    }

    /// Runs `hook` after each round is answered and before its retry is sent: to move
    /// a [`ManualClock`](crate::seal::ManualClock) across a TTL, say.
    pub fn between_rounds(mut self, hook: impl Fn(&Round) + Send + Sync + 'static) -> Self {
        self.between_rounds = Some(Arc::new(hook));
        self
    }

    /// Changes the `requestState` before each retry: to test that a server refuses a
    /// state altered on the way.
    pub fn alter_state(mut self, alter: impl Fn(&mut String) + Send + Sync + 'static) -> Self {
        self.alter_state = Some(Arc::new(alter));
        self
    }

    fn script_entry(mut self, matcher: Matcher, answer: Answer) -> Self {
        self.script.push((matcher, answer));
        self
    }

    /// The scripted answer for one question; the first entry that matches wins.
    fn answer_for(&self, key: &str, request: &InputRequest) -> Option<&Answer> {
        let text = question_text(request);
        self.script.iter().find_map(|(matcher, answer)| {
            let hit = match matcher {
                Matcher::Key(k) => k == key,
                Matcher::Text(t) => text.as_deref().is_some_and(|q| q.contains(t.as_str())),
                Matcher::Roots => matches!(request, InputRequest::ListRoots(_)),
            };
            hit.then_some(answer)
        })
    }

    /// Calls the tool `name` with `arguments` (an object) and answers its rounds from
    /// the script, to the end or to the first question it does not answer.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Transcript {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = arguments.as_object().map(ToolArguments::from);
        let mut rounds = Vec::new();
        let mut step = self.client.start::<method::CallTool>(params).await;
        loop {
            let pending = match step {
                Ok(Step::Done(result)) => {
                    return Transcript::new(rounds, End::Complete(Box::new(result)));
                }
                Ok(Step::Deferred(_)) => return Transcript::new(rounds, End::Task),
                Ok(Step::NeedsInput(pending)) => pending,
                Err(e) => return Transcript::new(rounds, End::Failed(e.to_string())),
            };
            let (round, unanswered) = self.answer_round(&pending);
            if let Some((key, question)) = unanswered {
                rounds.push(round);
                return Transcript::new(rounds, End::Unanswered { key, question });
            }
            if let Some(hook) = &self.between_rounds {
                hook(&round);
            }
            let answers = responses(&round.sent);
            rounds.push(round);
            let pending = self.altered(pending);
            step = self
                .client
                .resume::<method::CallTool>(pending, answers)
                .await;
        }
    }

    /// One round answered from the script, and the first question it had no answer for.
    fn answer_round(&self, pending: &PendingCall) -> (Round, Option<(String, String)>) {
        let mut round = Round {
            number: pending.round,
            asked: Vec::new(),
            state_len: pending.request_state.as_deref().map(str::len),
            sent: Vec::new(),
        };
        let mut unanswered = None;
        for (key, request) in &pending.input_requests.0 {
            round.asked.push((key.clone(), request.clone()));
            match self.answer_for(key, request) {
                Some(answer) => round.sent.push((key.clone(), answer.response())),
                None if unanswered.is_none() => {
                    let question =
                        question_text(request).unwrap_or_else(|| kind_of(request).to_owned());
                    unanswered = Some((key.clone(), question));
                }
                None => {}
            }
        }
        (round, unanswered)
    }

    fn altered(&self, pending: PendingCall) -> PendingCall {
        match (&self.alter_state, pending.request_state.as_deref()) {
            (Some(alter), Some(state)) => {
                let mut state = state.to_owned();
                alter(&mut state);
                pending.with_request_state(Some(state))
            }
            _ => pending,
        }
    }
}

/// A question's text: a form's or URL step's message, a sampling request's first text.
/// The answers a round sent, as the retry carries them.
fn responses(sent: &[(String, Value)]) -> InputResponses {
    let mut answers = InputResponses::new();
    for (key, answer) in sent {
        // A `Value` always serialises, and a key is a string: neither can fail.
        if let Ok(raw) = serde_json::value::to_raw_value(answer) {
            let _ = answers.insert_raw(key.clone(), &raw);
        }
    }
    answers
}

fn question_text(request: &InputRequest) -> Option<String> {
    match request {
        InputRequest::Elicit(e) => Some(match &e.params {
            ElicitRequestParams::Form(f) => f.message.clone(),
            ElicitRequestParams::Url(u) => u.message.clone(),
        }),
        InputRequest::CreateMessage(m) => {
            serde_json::to_value(&m.params.messages).ok().and_then(|v| {
                v.pointer("/0/content/text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
        }
        InputRequest::ListRoots(_) => None,
    }
}

fn kind_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit(_) => "an elicitation",
        InputRequest::CreateMessage(_) => "a sampling request",
        InputRequest::ListRoots(_) => "a roots request",
    }
}

/// One round of a call that needed input.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Round {
    /// The round's number in the flow (1: the first answers).
    pub number: usize,
    /// The questions asked, by key.
    pub asked: Vec<(String, InputRequest)>,
    /// The size of the `requestState` the server returned, in bytes (`None`: none).
    pub state_len: Option<usize>,
    /// The answers sent back, by key, as written on the wire.
    pub sent: Vec<(String, Value)>,
}

/// How a call ended.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum End {
    /// It completed with this result.
    Complete(Box<CallToolResult>),
    /// The server asked a question the script does not answer.
    Unanswered {
        /// The question's key.
        key: String,
        /// Its text (or its kind, for a question without text).
        question: String,
    },
    /// It became a task (a result of an extension's type: [`Step::Deferred`]).
    Task,
    /// It failed with this error (a refusal, a protocol or transport error).
    Failed(String),
}

/// A call's rounds and how it ended, with assertions that read like the behaviour.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Transcript {
    /// The rounds that needed input, in order.
    pub rounds: Vec<Round>,
    /// How the call ended.
    pub end: End,
}

impl Transcript {
    fn new(rounds: Vec<Round>, end: End) -> Self {
        Self { rounds, end }
    }

    /// How many rounds asked the question keyed `key`.
    pub(crate) fn times_asked(&self, key: &str) -> usize {
        self.rounds
            .iter()
            .filter(|r| r.asked.iter().any(|(k, _)| k == key))
            .count()
    }

    /// Asserts that `key` was asked in exactly one round.
    #[track_caller]
    pub fn assert_asks_once(&self, key: &str) -> &Self {
        let n = self.times_asked(key);
        assert_eq!(n, 1, "`{key}` was asked in {n} rounds, not once: {self}");
        self
    }

    /// Asserts that the call needed input in exactly `n` rounds.
    #[track_caller]
    pub fn assert_rounds(&self, n: usize) -> &Self {
        assert_eq!(self.rounds.len(), n, "{self}");
        self
    }

    /// Asserts that the call completed, and returns its result.
    #[track_caller]
    #[allow(clippy::panic, reason = "an assertion: a test fails here, saying why")]
    pub fn assert_completes(&self) -> &CallToolResult {
        match &self.end {
            End::Complete(result) => result,
            _ => panic!("the call did not complete: {self}"),
        }
    }

    /// Asserts that the call completed with this text (its text blocks, joined).
    #[track_caller]
    pub fn assert_text(&self, expected: &str) -> &Self {
        let result = self.assert_completes();
        let text: String = result
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, expected, "{self}");
        self
    }

    /// Asserts that the call failed with an error whose message contains `part`.
    #[track_caller]
    #[allow(clippy::panic, reason = "an assertion: a test fails here, saying why")]
    pub fn assert_fails_with(&self, part: &str) -> &Self {
        match &self.end {
            End::Failed(message) if message.contains(part) => self,
            _ => panic!("expected a failure containing {part:?}: {self}"),
        }
    }
}

impl fmt::Display for Transcript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for round in &self.rounds {
            let keys: Vec<&str> = round.asked.iter().map(|(k, _)| k.as_str()).collect();
            write!(f, "round {} asked [{}]; ", round.number, keys.join(", "))?;
        }
        match &self.end {
            End::Complete(_) => write!(f, "completed"),
            End::Unanswered { key, question } => {
                write!(f, "stopped: no scripted answer for `{key}` ({question})")
            }
            End::Task => write!(f, "became a task"),
            End::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}
