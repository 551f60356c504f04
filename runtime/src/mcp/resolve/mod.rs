//! Resolvers: a tool declares what it needs from the client as parameters
//! ([`Elicit<T>`], [`Sample<P>`], [`ListRoots`], or a resolver of your own that depends
//! on the arguments and on other resolvers), and tern asks, remembers and retries.
//!
//! Each round, every question whose dependencies are answered is asked, all in one
//! `InputRequiredResult`. Each answer is recorded in the (sealed) request state bound to
//! a digest of the exact question shown; when the question changes (a reworded message,
//! a changed schema) the stale answer is dropped and the question asked again, and an
//! answer that does not fit its schema is asked again too. Declines and cancels are
//! answers: they are kept, not re-asked. Answers under keys the server did not ask in the
//! previous round are ignored. The tool body runs once, when everything is answered.

mod builtin;
mod driver;
mod state;

use std::any::{Any, TypeId};
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

use self::state::{Next, Previous};

pub use builtin::{Elicit, ElicitUrl, ListRoots, Sample, SamplePrompt, UrlPrompt, form_content};

use super::tool::{IntoCallToolResult, ToolError};
use crate::jsonrpc::RpcError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};

/// Something a tool needs from the client before its body can run.
///
/// Implement it for your own type to ask a question that depends on the arguments `A`
/// and on other resolvers (`Deps`, a tuple of resolver types answered first).
pub trait Resolve<A>: Clone + Send + Sync + Sized + 'static {
    /// The resolvers this one needs answered first: `()` or a tuple of resolver types.
    type Deps: ResolveSet<A>;
    /// Whether [`question`](Resolve::question) is the same whatever the arguments and
    /// the answers it depends on: tern then builds it and its digest once, on first
    /// use, and never again. tern's own [`Elicit<T>`] and [`ListRoots`] say so; a
    /// question that does depend on them is compared with the last one asked instead.
    #[doc(hidden)]
    const FIXED_QUESTION: bool = false;
    /// The key of this question in `inputRequests`; the same in every process running
    /// the same code, so a retry served by another instance finds its answer.
    fn key() -> String;
    /// The question, from the arguments and the answers it depends on.
    fn question(args: &A, deps: &Self::Deps) -> Result<InputRequest, ToolError>;
    /// The value from the client's answer (its JSON text, as `inputResponses` carried
    /// it), or `None` when the answer does not fit (the question is then asked again).
    fn from_response(response: &RawValue, deps: &Self::Deps) -> Option<Self>;
    /// [`from_response`](Resolve::from_response) from the answer's JSON text: tern's
    /// own resolvers read the text as it is, where a `RawValue` would be read for it
    /// first.
    #[doc(hidden)]
    fn from_text(text: &str, deps: &Self::Deps) -> Option<Self> {
        Self::from_response(serde_json::from_str(text).ok()?, deps)
    }
}

/// A question as tern asks it: the request and the digest of its canonical JSON, which
/// a recorded answer is bound to, made together and shared from round to round.
struct Asked {
    request: InputRequest,
    digest: String,
}

/// A resolver's question, erased: how to ask it and how to read its answer.
#[doc(hidden)]
pub struct Node<A> {
    key: String,
    /// The resolver's type: where its value is kept in the [`Store`].
    id: TypeId,
    fixed: bool,
    question: fn(&A, &Store) -> Option<Result<InputRequest, ToolError>>,
    /// The value from an answer's JSON text.
    decode: fn(&str, &Store) -> Option<Box<dyn Any + Send + Sync>>,
    /// The last question asked, with its digest: most questions are the same every
    /// round, and comparing (or, for a fixed question, nothing at all) is far cheaper
    /// than building a question and the canonical JSON and SHA-256 of its digest.
    memo: Mutex<Option<Arc<Asked>>>,
}

impl<A> Node<A> {
    /// This round's question, `None` while a dependency is unanswered.
    fn asked(&self, args: &A, store: &Store) -> Option<Result<Arc<Asked>, ToolError>> {
        if self.fixed {
            if let Some(asked) = self.memo.lock().ok().and_then(|m| m.clone()) {
                return Some(Ok(asked));
            }
        }
        let question = match (self.question)(args, store)? {
            Ok(question) => question,
            Err(e) => return Some(Err(e)),
        };
        Some(self.remembered(question).map_err(ToolError::protocol))
    }

    /// `question` with its digest: the memo's when it holds the same question (equal
    /// questions serialize to the same canonical JSON, so they share a digest).
    fn remembered(&self, question: InputRequest) -> Result<Arc<Asked>, RpcError> {
        if let Ok(memo) = self.memo.lock() {
            if let Some(asked) = memo.as_ref().filter(|a| a.request == question) {
                return Ok(Arc::clone(asked));
            }
        }
        let digest = question_digest(&question)?;
        let asked = Arc::new(Asked {
            request: question,
            digest,
        });
        if let Ok(mut memo) = self.memo.lock() {
            *memo = Some(Arc::clone(&asked));
        }
        Ok(asked)
    }
}

/// Resolved values, by resolver type: a handful per tool, so a list.
#[doc(hidden)]
#[derive(Default)]
pub struct Store(Vec<(TypeId, Box<dyn Any + Send + Sync>)>);

impl Store {
    fn get<R: Clone + 'static>(&self) -> Option<R> {
        let id = TypeId::of::<R>();
        let (_, value) = self.0.iter().find(|(kept, _)| *kept == id)?;
        value.downcast_ref::<R>().cloned()
    }

    fn put(&mut self, id: TypeId, value: Box<dyn Any + Send + Sync>) {
        self.0.push((id, value));
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

fn question_of<A, R: Resolve<A>>(
    args: &A,
    store: &Store,
) -> Option<Result<InputRequest, ToolError>> {
    let deps = R::Deps::fetch(store)?;
    Some(R::question(args, &deps))
}

fn decode_of<A, R: Resolve<A>>(text: &str, store: &Store) -> Option<Box<dyn Any + Send + Sync>> {
    let deps = R::Deps::fetch(store)?;
    R::from_text(text, &deps).map(|r| Box::new(r) as Box<dyn Any + Send + Sync>)
}

/// A set of resolvers: `()` or a tuple of up to eight resolver types. Implemented by
/// tern for tuples.
pub trait ResolveSet<A>: Sized + Send + 'static {
    /// Adds the set's resolvers and their dependencies, dependencies first.
    #[doc(hidden)]
    fn nodes(out: &mut Vec<Node<A>>);
    /// The set's values, once all are resolved.
    #[doc(hidden)]
    fn fetch(store: &Store) -> Option<Self>;
}

impl<A> ResolveSet<A> for () {
    fn nodes(_out: &mut Vec<Node<A>>) {}
    fn fetch(_store: &Store) -> Option<Self> {
        Some(())
    }
}

fn push_node<A, R: Resolve<A>>(out: &mut Vec<Node<A>>) {
    R::Deps::nodes(out);
    let key = R::key();
    if !out.iter().any(|n| n.key == key) {
        out.push(Node {
            key,
            id: TypeId::of::<R>(),
            fixed: R::FIXED_QUESTION,
            question: question_of::<A, R>,
            decode: decode_of::<A, R>,
            memo: Mutex::default(),
        });
    }
}

macro_rules! resolve_set {
    ($($r:ident),+) => {
        impl<A, $($r: Resolve<A>),+> ResolveSet<A> for ($($r,)+) {
            fn nodes(out: &mut Vec<Node<A>>) {
                $(push_node::<A, $r>(out);)+
            }
            fn fetch(store: &Store) -> Option<Self> {
                Some(($(store.get::<$r>()?,)+))
            }
        }
    };
}

resolve_set!(R1);
resolve_set!(R1, R2);
resolve_set!(R1, R2, R3);
resolve_set!(R1, R2, R3, R4);
resolve_set!(R1, R2, R3, R4, R5);
resolve_set!(R1, R2, R3, R4, R5, R6);
resolve_set!(R1, R2, R3, R4, R5, R6, R7);
resolve_set!(R1, R2, R3, R4, R5, R6, R7, R8);

/// A tool function in the resolver form: `Fn(Args, R1, ..., Rn) -> Future<Output =
/// Result<T, ToolError>>` with each `Ri` a resolver and `T` a complete result.
#[diagnostic::on_unimplemented(
    message = "this function cannot be registered as a tool that uses resolvers",
    label = "not `async fn(Args, Resolver1, ...) -> Result<T, ToolError>` with T a complete result",
    note = "each parameter after the arguments must be a resolver (Elicit<T>, Sample<P>, ListRoots, or your own Resolve impl), at most eight",
    note = "the result must be a complete one (CallToolResult, String, ContentBlock, Vec<ContentBlock>, Structured<T>): a tool that uses resolvers cannot return InputRequiredResult, because the resolvers own the call's inputResponses and requestState; register it with `.run` to return InputRequiredResult yourself"
)]
pub trait ResolverHandler<A, P>: Send + Sync + 'static {
    /// Runs the body with the arguments and every resolved value.
    #[doc(hidden)]
    fn call(&self, args: A, resolved: P) -> BoxFuture<'static, Result<CallToolResult, ToolError>>;
}

macro_rules! resolver_handler {
    ($($r:ident),+) => {
        #[allow(non_snake_case)]
        impl<F, Fut, T, A, $($r),+> ResolverHandler<A, ($($r,)+)> for F
        where
            F: Fn(A, $($r),+) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
            T: IntoCallToolResult,
            A: Send + 'static,
            $($r: Resolve<A>),+
        {
            fn call(&self, args: A, resolved: ($($r,)+)) -> BoxFuture<'static, Result<CallToolResult, ToolError>> {
                let ($($r,)+) = resolved;
                let fut = self(args, $($r),+);
                Box::pin(async move {
                    let out = fut.await?;
                    out.into_call_tool_result().map_err(ToolError::protocol)
                })
            }
        }
    };
}

resolver_handler!(R1);
resolver_handler!(R1, R2);
resolver_handler!(R1, R2, R3);
resolver_handler!(R1, R2, R3, R4);
resolver_handler!(R1, R2, R3, R4, R5);
resolver_handler!(R1, R2, R3, R4, R5, R6);
resolver_handler!(R1, R2, R3, R4, R5, R6, R7);
resolver_handler!(R1, R2, R3, R4, R5, R6, R7, R8);

/// The digest a recorded answer is bound to: the question's canonical JSON (sorted keys)
/// hashed as the sealer hashes arguments, in hex.
fn question_digest(request: &InputRequest) -> Result<String, RpcError> {
    let value = serde_json::to_value(request).map_err(|e| {
        tracing::error!(error = %e, "could not encode a resolver's question");
        RpcError::internal("Internal error")
    })?;
    let digest = crate::seal::json_digest(&value);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(digest.len() * 2);
    for b in digest {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    Ok(hex)
}

/// Where a call stands: everything answered, or questions to ask.
pub(crate) enum Resolution {
    Ready(Store),
    Ask(Box<InputRequiredResult>),
}

/// Works out, for this round, which answers hold and what must still be asked.
pub(crate) fn resolve_round<A>(
    nodes: &[Node<A>],
    args: &A,
    input_responses: Option<&InputResponses>,
    request_state: Option<&str>,
) -> Result<Resolution, ToolError> {
    // The state is sealed by the server, so it is ours; an unreadable one starts over.
    let previous: Previous<'_> = request_state
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut store = Store::default();
    let mut next = Next::default();
    for node in nodes {
        let Some(asked) = node.asked(args, &store) else {
            // A dependency is not answered yet: asked in a later round.
            continue;
        };
        let asked = asked?;
        let key = node.key.as_str();
        if let Some(recorded) = previous.answer(key).filter(|r| r.q == asked.digest) {
            if let Some(value) = (node.decode)(recorded.a.get(), &store) {
                store.put(node.id, value);
                next.answers.push((key, (asked, recorded.a.get())));
                continue;
            }
        }
        let fresh = input_responses
            .filter(|_| previous.asked(key) == Some(asked.digest.as_str()))
            .and_then(|r| r.text(key));
        if let Some(text) = fresh {
            if let Some(value) = (node.decode)(text, &store) {
                store.put(node.id, value);
                next.answers.push((key, (asked, text)));
                continue;
            }
            tracing::debug!(key, "an answer did not fit its question; asking again");
        }
        next.asked.push((key, asked));
    }
    if next.asked.is_empty() && store.len() == nodes.len() {
        return Ok(Resolution::Ready(store));
    }
    let state = next.state()?;
    let questions = next.asked.iter();
    let mut result = InputRequiredResult::new();
    result.input_requests = Some(InputRequests(
        questions
            .map(|(key, asked)| ((*key).to_owned(), asked.request.clone()))
            .collect(),
    ));
    result.request_state = Some(state);
    Ok(Resolution::Ask(Box::new(result)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(fixed: bool) -> Node<()> {
        Node {
            key: "k".into(),
            id: TypeId::of::<()>(),
            fixed,
            question: |_, _| None,
            decode: |_, _| None,
            memo: Mutex::default(),
        }
    }

    #[test]
    fn a_remembered_digest_is_the_questions_own_and_a_changed_question_gets_its_own() {
        let node = node(false);
        let one = crate::ask::elicit_url("Sign in, please", "https://example.com/one");
        let two = crate::ask::elicit_url("Sign in, please", "https://example.com/two");
        let (d1, d2) = (
            question_digest(&one).unwrap(),
            question_digest(&two).unwrap(),
        );
        assert_ne!(d1, d2);
        let digest = |q: &InputRequest| node.remembered(q.clone()).unwrap().digest.clone();
        assert_eq!(digest(&one), d1);
        assert_eq!(digest(&one), d1, "from the memo");
        assert_eq!(digest(&two), d2, "a changed question is digested anew");
        assert_eq!(digest(&one), d1);
    }

    #[test]
    fn a_fixed_question_is_built_once_and_a_varying_one_every_round() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static BUILT: AtomicUsize = AtomicUsize::new(0);
        let build = |_: &(), _: &Store| {
            BUILT.fetch_add(1, Ordering::SeqCst);
            Some(Ok(crate::ask::elicit_url("Sign in", "https://example.com")))
        };
        let fixed = Node {
            question: build,
            ..node(true)
        };
        for _ in 0..3 {
            fixed.asked(&(), &Store::default()).unwrap().unwrap();
        }
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
        let varying = Node {
            question: build,
            ..node(false)
        };
        for _ in 0..3 {
            varying.asked(&(), &Store::default()).unwrap().unwrap();
        }
        assert_eq!(BUILT.load(Ordering::SeqCst), 4);
    }
}
