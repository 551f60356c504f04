//! The server's side of a 2025-11-25 session: what `initialize` said about the client,
//! the requests the server sends it (answered through the serve loop), and the policy
//! its fulfilment of an `InputRequiredResult` keeps to (`SessionInput`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::server::Outbound;

use crate::jsonrpc::{self, RpcError};
use crate::protocol::{RequestMeta, SESSION_PROTOCOL_VERSION};
use crate::types::rpc::Notification;
use crate::types::v2025_11_25 as old;
use crate::types::v2026_07_28::{
    ClientCapabilities, Implementation, LoggingLevel, ProgressToken, RequestId, ServerCapabilities,
    method,
};
use crate::util::{IdKey, lock};

type Reply = oneshot::Sender<Result<Value, RpcError>>;

#[derive(Default)]
struct Pending {
    waiting: HashMap<IdKey, Reply>,
    closed: bool,
}

/// How many resource URIs one session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1_000;

/// What the server offers a session beyond its methods, from its capabilities.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Offers {
    /// `logging`: the session may choose a level with `logging/setLevel`.
    pub(crate) logging: bool,
    /// `resources.subscribe`: `resources/subscribe` and `resources/unsubscribe`.
    pub(crate) subscribe: bool,
    /// `listChanged` of tools, prompts and resources.
    pub(crate) tools_changed: bool,
    pub(crate) prompts_changed: bool,
    pub(crate) resources_changed: bool,
}

impl Offers {
    pub(crate) fn of(capabilities: &ServerCapabilities) -> Self {
        let on = |flag: Option<bool>| flag == Some(true);
        Self {
            logging: capabilities.logging.is_some(),
            subscribe: on(capabilities.resources.as_ref().and_then(|r| r.subscribe)),
            tools_changed: on(capabilities.tools.as_ref().and_then(|t| t.list_changed)),
            prompts_changed: on(capabilities.prompts.as_ref().and_then(|p| p.list_changed)),
            resources_changed: on(capabilities.resources.as_ref().and_then(|r| r.list_changed)),
        }
    }
}

/// What the client chose for its session after `initialize`.
#[derive(Default)]
struct Choices {
    /// `logging/setLevel`: the least severe level the client wants; none chosen, all.
    log_level: Option<LoggingLevel>,
    /// `resources/subscribe`: the URIs whose updates the client hears.
    subscriptions: HashSet<String>,
}

/// One client's 2025-11-25 session on one connection.
pub(crate) struct SessionState {
    client_capabilities: Arc<ClientCapabilities>,
    client_info: Option<Arc<Implementation>>,
    pending: Mutex<Pending>,
    next_id: AtomicI64,
    /// In a fleet, the name of the instance serving the session here: the ids of the
    /// requests it sends start with it, so an answer that reaches another instance is
    /// relayed to this one.
    instance: std::sync::OnceLock<Arc<str>>,
    pub(crate) offers: Offers,
    /// How an `InputRequiredResult` is fulfilled over the session, if the server opted
    /// in.
    pub(crate) input: Option<SessionInput>,
    choices: Mutex<Choices>,
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("client_info", &self.client_info)
            .finish_non_exhaustive()
    }
}

/// The length of `value` as compact JSON, counted without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

impl SessionState {
    /// Opens a session from an `initialize` request's params, refusing capabilities and
    /// client info that would take more than `budget` bytes of JSON to keep: the session
    /// holds them for its whole life.
    pub(crate) fn open(
        params: Option<&Value>,
        budget: usize,
        offers: Offers,
        input: Option<SessionInput>,
    ) -> Result<Self, RpcError> {
        if let Some(params) = params {
            let kept = ["capabilities", "clientInfo"]
                .iter()
                .filter_map(|key| params.get(key))
                .map(json_len)
                .sum::<usize>();
            if kept > budget {
                return Err(RpcError::invalid_params(format!(
                    "Invalid initialize params: capabilities and clientInfo take {kept} bytes; \
                     a session keeps at most {budget}"
                )));
            }
        }
        let params: old::InitializeRequestParams =
            serde_json::from_value(params.cloned().unwrap_or(Value::Null))
                .map_err(|e| RpcError::invalid_params(format!("Invalid initialize params: {e}")))?;
        // The eras describe the same client features with the same JSON, so the session's
        // capabilities are read once here as 2026-07-28 values, for handlers to check
        // exactly as they check a stateless request's.
        let client_capabilities = recode(&params.capabilities).map_err(|e| {
            RpcError::invalid_params(format!("Invalid initialize capabilities: {e}"))
        })?;
        let client_info = recode(&params.client_info).ok();
        tracing::debug!(
            requested = %params.protocol_version,
            "a 2025-11-25 session opened"
        );
        Ok(Self {
            client_capabilities: Arc::new(client_capabilities),
            client_info: client_info.map(Arc::new),
            pending: Mutex::default(),
            next_id: AtomicI64::new(1),
            instance: std::sync::OnceLock::new(),
            offers,
            input,
            choices: Mutex::default(),
        })
    }

    /// Whether a message at `level` reaches the client: at or above the level it set
    /// with `logging/setLevel`, or any when it set none.
    pub(crate) fn logs(&self, level: LoggingLevel) -> bool {
        lock(&self.choices)
            .log_level
            .is_none_or(|wanted| level >= wanted)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        lock(&self.choices).log_level = Some(level);
    }

    /// Subscribes to `uri`; refused past [`MAX_SUBSCRIPTIONS`].
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), RpcError> {
        let mut choices = lock(&self.choices);
        if choices.subscriptions.len() >= MAX_SUBSCRIPTIONS && !choices.subscriptions.contains(&uri)
        {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources"
            )));
        }
        choices.subscriptions.insert(uri);
        Ok(())
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.choices).subscriptions.remove(uri);
    }

    #[cfg(feature = "http-server")]
    pub(crate) fn choices(&self) -> (Option<LoggingLevel>, Vec<String>) {
        let choices = lock(&self.choices);
        let mut subscriptions: Vec<String> = choices.subscriptions.iter().cloned().collect();
        subscriptions.sort();
        (choices.log_level, subscriptions)
    }

    /// Takes on `log_level` and `subscriptions` (at most [`MAX_SUBSCRIPTIONS`] of them).
    #[cfg(feature = "http-server")]
    pub(crate) fn restore(&self, log_level: Option<LoggingLevel>, subscriptions: Vec<String>) {
        let mut choices = lock(&self.choices);
        choices.log_level = log_level;
        choices.subscriptions = subscriptions.into_iter().take(MAX_SUBSCRIPTIONS).collect();
    }

    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        lock(&self.choices).subscriptions.contains(uri)
    }

    /// What a handler sees of a request on this session: the session's version,
    /// capabilities and client, and the request's own progress token.
    pub(crate) fn request_meta(&self, progress_token: Option<ProgressToken>) -> RequestMeta {
        RequestMeta::on_session(
            SESSION_PROTOCOL_VERSION,
            Arc::clone(&self.client_capabilities),
            self.client_info.clone(),
            progress_token,
        )
    }

    /// Sends a request to the client on `out` (the stream of the request being served)
    /// and waits for its answer. Dropping the future withdraws the request
    /// (`notifications/cancelled`, on the same stream).
    pub(crate) async fn request(
        &self,
        out: &Outbound,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let id = match self.instance.get() {
            Some(instance) => RequestId::String(format!("{instance}.{n}")),
            None => RequestId::Integer(n),
        };
        let key = IdKey::from(&id);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if pending.closed {
                return Err(gone());
            }
            pending.waiting.insert(key.clone(), tx);
        }
        let mut guard = Withdraw {
            session: self,
            out,
            id: &id,
            key,
            answered: false,
        };
        out.send(jsonrpc::request(&id, method, Some(params)))
            .map_err(|_| gone())?;
        let answer = rx.await.unwrap_or_else(|_| Err(gone()));
        guard.answered = true;
        answer
    }

    /// Hands the client's response to the request waiting for it.
    /// Hands `result` to the request `id` waiting for it; `result` back when none is.
    pub(crate) fn resolve(
        &self,
        id: &RequestId,
        result: Result<Value, RpcError>,
    ) -> Result<(), Result<Value, RpcError>> {
        match lock(&self.pending).waiting.remove(&IdKey::from(id)) {
            Some(tx) => {
                let _ = tx.send(result);
                Ok(())
            }
            None => Err(result),
        }
    }

    /// Names the requests this session sends after `instance` (see the field).
    #[cfg(feature = "http-server")]
    pub(crate) fn name_requests(&self, instance: Arc<str>) {
        let _ = self.instance.set(instance);
    }

    /// Fails every waiting request: the client is gone.
    pub(crate) fn close(&self) {
        let mut pending = lock(&self.pending);
        pending.closed = true;
        for (_, tx) in pending.waiting.drain() {
            let _ = tx.send(Err(gone()));
        }
    }
}

fn gone() -> RpcError {
    RpcError::internal("the client closed the session")
}

fn recode<T: serde::Serialize, U: serde::de::DeserializeOwned>(
    value: &T,
) -> Result<U, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(value)?)
}

/// Removes an unanswered request and tells the client it was withdrawn.
struct Withdraw<'a> {
    session: &'a SessionState,
    out: &'a Outbound,
    id: &'a RequestId,
    key: IdKey,
    answered: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let was_waiting = lock(&self.session.pending)
            .waiting
            .remove(&self.key)
            .is_some();
        if !self.answered && was_waiting {
            let id = match self.id {
                RequestId::Integer(i) => Value::from(*i),
                RequestId::String(s) => Value::from(s.as_str()),
            };
            let _ = self.out.send(jsonrpc::notification(
                <method::Cancelled as Notification>::METHOD,
                Some(json!({ "requestId": id, "reason": "the server no longer needs the answer" })),
            ));
        }
    }
}

/// The `initialize` result: the legacy version, the server's capabilities, name and
/// instructions.
pub(crate) fn session_result(
    info: &Implementation,
    capabilities: &ServerCapabilities,
    instructions: Option<&str>,
) -> Result<Value, RpcError> {
    let encode = |e: serde_json::Error| {
        tracing::error!(error = %e, "could not describe the server to a 2025-11-25 client");
        RpcError::internal("Internal error")
    };
    let result = old::InitializeResult {
        capabilities: recode(capabilities).map_err(encode)?,
        instructions: instructions.map(str::to_owned),
        meta: None,
        protocol_version: SESSION_PROTOCOL_VERSION.to_owned(),
        server_info: recode(info).map_err(encode)?,
        extra: serde_json::Map::new(),
    };
    serde_json::to_value(result).map_err(encode)
}

/// How a server fulfils the `InputRequiredResult`s its handlers return on 2025-11-25
/// sessions, when it is asked to ([`ServerBuilder::fulfil_input_on_sessions`](crate::server::ServerBuilder::fulfil_input_on_sessions)).
/// A resolver tool's questions on a session keep to the same bounds (to the defaults
/// when fulfilment is off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionInput {
    /// The most rounds one request may take (default 10); past it, -32603.
    pub max_rounds: usize,
    /// How long one request may wait for all its answers, over every round (default
    /// five minutes); past it, -32603.
    pub timeout: Duration,
}

impl SessionInput {
    /// The bounds of a session request's rounds: each round's questions asked at once.
    pub(crate) fn limits(&self) -> crate::protocol::rounds::RoundLimits {
        crate::protocol::rounds::RoundLimits {
            max_rounds: self.max_rounds,
            max_questions: usize::MAX,
            deadline: Some(self.timeout),
            concurrency: usize::MAX,
        }
    }
}

impl Default for SessionInput {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            timeout: Duration::from_secs(5 * 60),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened() -> SessionState {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        SessionState::open(Some(&params), 1 << 16, Offers::default(), None).unwrap()
    }

    #[test]
    fn a_session_subscribes_to_at_most_its_cap_and_resubscribing_is_free() {
        let session = opened();
        for i in 0..MAX_SUBSCRIPTIONS {
            session.subscribe(format!("note://{i}")).unwrap();
        }
        let refused = session.subscribe("note://one-more".into()).unwrap_err();
        assert_eq!(refused.code, crate::jsonrpc::code::INVALID_PARAMS);
        // One already held is no new subscription; one dropped makes room.
        session.subscribe("note://0".into()).unwrap();
        session.unsubscribe("note://0");
        session.subscribe("note://one-more".into()).unwrap();
        assert!(session.subscribed("note://one-more"));
        assert!(!session.subscribed("note://0"));
    }

    #[test]
    fn the_log_level_filters_from_its_severity_up() {
        let session = opened();
        assert!(
            session.logs(LoggingLevel::Debug),
            "no level set: every entry"
        );
        session.set_log_level(LoggingLevel::Warning);
        assert!(!session.logs(LoggingLevel::Info));
        assert!(session.logs(LoggingLevel::Warning));
        assert!(session.logs(LoggingLevel::Emergency));
    }
}
