//! The sealer the server layer calls: claims in, token out; token in, state out.

use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::method;

use super::bound::ArgsBound;
use super::claims::{Claims, Expected, PrincipalTag};
use super::clock::Clock;
use super::digest::{ARGS_DIGEST_LEN, arguments_digest};
use super::keyring::Keyring;
use super::principal::PRINCIPAL_SALT_LEN;
use super::{
    InvalidRequestState, Principal, RejectReason, SealFailure, SealFailureReason, StateCodec,
};

/// The `bind_principal` hook, shared by every clone of the sealer.
pub(crate) type BindPrincipal =
    Arc<dyn Fn(&RequestBinding<'_>) -> Option<Principal> + Send + Sync + 'static>;

/// The request a token is minted for, or presented with.
///
/// `arguments` of `None` binds like an empty object. Construct with [`new`](Self::new) or
/// the [`tool`](Self::tool), [`prompt`](Self::prompt) and [`resource`](Self::resource)
/// shorthands; more fields may be added, so struct literals are not available outside tern.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RequestBinding<'a> {
    /// The JSON-RPC method, e.g. `tools/call`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub target: &'a str,
    /// The request's arguments, if any.
    pub arguments: Option<&'a Map<String, Value>>,
    /// The principal of a validated access token, if the request carried one.
    pub principal: Option<&'a Principal>,
    /// The digest of `arguments`, when the server has it already: computed once per
    /// request, not again for each token it opens or seals.
    pub(crate) arguments_digest: Option<[u8; ARGS_DIGEST_LEN]>,
    /// The arguments' text, when the server has it and it is their canonical form
    /// (short): bound by itself, no digest computed.
    pub(crate) arguments_text: Option<&'a [u8]>,
}

impl<'a> RequestBinding<'a> {
    /// A binding for `method` on `target`, with no arguments and no principal.
    pub fn new(method: &'a str, target: &'a str) -> Self {
        Self {
            method,
            target,
            arguments: None,
            principal: None,
            arguments_digest: None,
            arguments_text: None,
        }
    }

    /// A `tools/call` of the tool `name`.
    pub fn tool(name: &'a str, arguments: Option<&'a Map<String, Value>>) -> Self {
        Self::new(method::CallTool::METHOD, name).with_arguments(arguments)
    }

    /// A `prompts/get` of the prompt `name`.
    pub fn prompt(name: &'a str, arguments: Option<&'a Map<String, Value>>) -> Self {
        Self::new(method::GetPrompt::METHOD, name).with_arguments(arguments)
    }

    /// A `resources/read` of `uri`.
    pub fn resource(uri: &'a str) -> Self {
        Self::new(method::ReadResource::METHOD, uri)
    }

    /// Sets the arguments.
    pub(crate) fn with_arguments(mut self, arguments: Option<&'a Map<String, Value>>) -> Self {
        self.arguments = arguments;
        self.arguments_digest = None;
        self.arguments_text = None;
        self
    }

    /// Binds the arguments by their digest, computed already (the arguments themselves,
    /// if set, are only for the `bind_principal` hook to see).
    pub(crate) fn with_arguments_digest(mut self, digest: [u8; ARGS_DIGEST_LEN]) -> Self {
        self.arguments_digest = Some(digest);
        self
    }

    /// Binds the arguments by their text, which [`canonical_text`] found canonical
    /// (the arguments themselves, if set, are only for the `bind_principal` hook to see).
    ///
    /// [`canonical_text`]: super::digest::canonical_text
    pub(crate) fn with_arguments_text(mut self, text: &'a [u8]) -> Self {
        self.arguments_text = Some(text);
        self
    }

    /// What the arguments are bound by: their text, when the binding has it and
    /// `by_text`, else their digest.
    fn bound(&self, by_text: bool) -> ArgsBound<'a> {
        match (self.arguments_digest, self.arguments_text) {
            (Some(digest), _) => ArgsBound::Digest(digest),
            (None, Some(text)) if by_text => ArgsBound::Text(text),
            (None, Some(text)) => ArgsBound::Digest(ArgsBound::Text(text).digest()),
            (None, None) => ArgsBound::Digest(arguments_digest(self.arguments)),
        }
    }

    /// Sets the principal of the request's validated access token.
    pub fn with_principal(mut self, principal: Option<&'a Principal>) -> Self {
        self.principal = principal;
        self
    }
}

/// A token opened: the handler's state, and the round the claims count (tokens sealed
/// without one have none).
pub(crate) struct Opened {
    pub(crate) state: Vec<u8>,
    pub(crate) round: Option<u32>,
}

/// A sealing's `result`, its failure logged.
fn logged<T>(
    binding: &RequestBinding<'_>,
    result: Result<T, SealFailure>,
) -> Result<T, SealFailure> {
    if let Err(failure) = &result {
        tracing::warn!(
            target: "tern_mcp::seal",
            reason = failure.reason().as_str(),
            method = binding.method,
            "could not seal requestState"
        );
    }
    result
}

/// A token sealed: tern's own appended to the buffer it was given (`t1.` and base64url,
/// text that JSON needs no escape for), or another codec's as the codec returned it.
enum Token {
    Appended,
    Returned(String),
}

/// The codec behind a sealer: tern's own is called directly, a custom one behind a
/// panic guard.
pub(crate) enum Codec {
    Builtin(Keyring),
    Custom(Box<dyn StateCodec>),
}

/// Seals outgoing `requestState` and verifies incoming tokens under one policy.
///
/// Built by [`RequestStateSecurity::build`](super::RequestStateSecurity::build). Cheap to
/// clone: clones share the keys.
#[derive(Clone)]
pub struct Sealer {
    inner: Arc<Inner>,
}

struct Inner {
    codec: Codec,
    ttl_ms: u64,
    audience: Option<String>,
    bind_principal: Option<BindPrincipal>,
    max_token_len: usize,
    clock: Arc<dyn Clock>,
}

impl Sealer {
    pub(crate) fn new(
        codec: Codec,
        ttl_ms: u64,
        audience: Option<String>,
        bind_principal: Option<BindPrincipal>,
        max_token_len: usize,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                codec,
                ttl_ms,
                audience,
                bind_principal,
                max_token_len,
                clock,
            }),
        }
    }

    /// Whether a `bind_principal` hook sees each binding (and so its arguments).
    pub(crate) fn has_principal_hook(&self) -> bool {
        self.inner.bind_principal.is_some()
    }

    /// The audience this sealer writes and requires, if any.
    #[cfg(test)]
    pub(crate) fn audience(&self) -> Option<&str> {
        self.inner.audience.as_deref()
    }

    /// Seals `state` for the request `binding`, with a fresh expiry.
    ///
    /// On failure nothing is sent but the sanitised [`SealFailure`]; the cause goes to a
    /// `tracing` warning.
    pub fn seal(&self, binding: &RequestBinding<'_>, state: &[u8]) -> Result<String, SealFailure> {
        self.seal_round(binding, state, None)
    }

    /// [`seal`](Self::seal), counting the flow's `round` into the claims (the server's
    /// rounds: a retry with this token is `round + 1`).
    pub(crate) fn seal_round(
        &self,
        binding: &RequestBinding<'_>,
        state: &[u8],
        round: Option<u32>,
    ) -> Result<String, SealFailure> {
        let mut appended = Vec::new();
        match logged(
            binding,
            self.seal_unlogged(binding, state, round, &mut appended),
        )? {
            Token::Returned(token) => Ok(token),
            Token::Appended => String::from_utf8(appended)
                .map_err(|_| SealFailure::because(SealFailureReason::Codec)),
        }
    }

    /// [`seal_round`](Self::seal_round), the token appended to `out` as a JSON string
    /// (tern's own, which needs no escaping, written straight into it). On failure `out`
    /// is as it was.
    pub(crate) fn seal_round_json(
        &self,
        binding: &RequestBinding<'_>,
        state: &[u8],
        round: Option<u32>,
        out: &mut Vec<u8>,
    ) -> Result<(), SealFailure> {
        let start = out.len();
        out.push(b'"');
        let written =
            self.seal_unlogged(binding, state, round, out)
                .and_then(|sealed| match sealed {
                    Token::Appended => {
                        out.push(b'"');
                        Ok(())
                    }
                    // Another codec's token may be any text: escaped as JSON needs.
                    Token::Returned(token) => {
                        out.truncate(start);
                        serde_json::to_writer(&mut *out, &token)
                            .map_err(|_| SealFailure::because(SealFailureReason::Codec))
                    }
                });
        if written.is_err() {
            out.truncate(start);
        }
        logged(binding, written)
    }

    /// Returns the handler's state from `token` if it was sealed by this policy, is within
    /// its time window and was minted for this request, audience and principal.
    ///
    /// Every failure is the same [`InvalidRequestState`]; the cause goes to a `tracing`
    /// warning that never contains the token, the state or any key.
    pub fn verify(
        &self,
        token: &str,
        binding: &RequestBinding<'_>,
    ) -> Result<Vec<u8>, InvalidRequestState> {
        self.open(token, binding).map(|opened| opened.state)
    }

    /// [`verify`](Self::verify), with the round the token's claims count.
    pub(crate) fn open(
        &self,
        token: &str,
        binding: &RequestBinding<'_>,
    ) -> Result<Opened, InvalidRequestState> {
        let result = self.verify_unlogged(token, binding);
        if let Err(rejection) = &result {
            tracing::warn!(
                target: "tern_mcp::seal",
                reason = rejection.reason().as_str(),
                method = binding.method,
                "rejected requestState"
            );
        }
        result
    }

    fn seal_unlogged(
        &self,
        binding: &RequestBinding<'_>,
        state: &[u8],
        round: Option<u32>,
        out: &mut Vec<u8>,
    ) -> Result<Token, SealFailure> {
        let inner = &*self.inner;
        let principal = self
            .principal_for(binding)
            .ok_or(SealFailure::because(SealFailureReason::Panicked))?;
        let principal = principal.map(|principal| {
            let mut salt = [0u8; PRINCIPAL_SALT_LEN];
            rand::fill(&mut salt[..]);
            PrincipalTag {
                salt,
                tag: principal.tag(&salt),
            }
        });
        let now_ms = inner.clock.now_unix_ms();
        let claims = Claims {
            issued_at_ms: now_ms,
            expires_at_ms: now_ms.saturating_add(inner.ttl_ms),
            // Only tern's own codec, which encrypts, carries the arguments' text.
            args: binding.bound(matches!(inner.codec, Codec::Builtin(_))),
            principal,
            method: binding.method.as_bytes(),
            target: binding.target.as_bytes(),
            audience: inner.audience.as_deref().map(str::as_bytes),
            round,
        };
        let too_long = || SealFailure::because(SealFailureReason::ClaimTooLong);
        match &inner.codec {
            // tern's own codec gets the claims written straight into its cipher buffer,
            // and writes its token straight into `out`.
            Codec::Builtin(keyring) => {
                let fill =
                    |buffer: &mut Vec<u8>| claims.encode_into(buffer, state).ok_or_else(too_long);
                keyring.seal_with(claims.encoded_len(state.len()), fill, out)?;
                Ok(Token::Appended)
            }
            Codec::Custom(codec) => {
                let payload = claims.encode(state).ok_or_else(too_long)?;
                let token = catch_unwind(AssertUnwindSafe(|| codec.seal(&payload)))
                    .map_err(|_| SealFailure::because(SealFailureReason::Panicked))??;
                if token.len() > inner.max_token_len {
                    return Err(SealFailure::because(SealFailureReason::TooLarge));
                }
                Ok(Token::Returned(token))
            }
        }
    }

    fn verify_unlogged(
        &self,
        token: &str,
        binding: &RequestBinding<'_>,
    ) -> Result<Opened, InvalidRequestState> {
        let reject = InvalidRequestState::because;
        let inner = &*self.inner;
        if token.len() > inner.max_token_len {
            return Err(reject(RejectReason::TooLarge));
        }
        let (mut payload, plaintext) = match &inner.codec {
            Codec::Builtin(keyring) => keyring.open(token)?,
            Codec::Custom(codec) => {
                let payload = catch_unwind(AssertUnwindSafe(|| codec.unseal(token)))
                    .map_err(|_| reject(RejectReason::Codec))??;
                let len = payload.len();
                (payload, 0..len)
            }
        };
        let principal = self
            .principal_for(binding)
            .ok_or(reject(RejectReason::Principal))?;
        let (state_offset, round) = {
            let claims_bytes = payload
                .get(plaintext.clone())
                .ok_or(reject(RejectReason::Malformed))?;
            let (claims, state_offset) =
                Claims::decode(claims_bytes).ok_or(reject(RejectReason::Malformed))?;
            let expected = Expected {
                now_ms: inner.clock.now_unix_ms(),
                method: binding.method.as_bytes(),
                target: binding.target.as_bytes(),
                args: binding.bound(true),
                audience: inner.audience.as_deref().map(str::as_bytes),
                principal: principal.as_deref(),
            };
            claims.check(&expected).map_err(reject)?;
            (state_offset, claims.round)
        };
        payload.truncate(plaintext.end);
        payload.drain(..plaintext.start + state_offset);
        Ok(Opened {
            state: payload,
            round,
        })
    }

    /// The principal to bind: the hook's when it names one (it overrides the validated
    /// token's, and sees it in `binding.principal`), else the validated token's; `None`
    /// (the outer option) when the hook panicked.
    fn principal_for<'b>(
        &self,
        binding: &RequestBinding<'b>,
    ) -> Option<Option<Cow<'b, Principal>>> {
        let from_token = binding.principal.map(Cow::Borrowed);
        match &self.inner.bind_principal {
            Some(hook) => catch_unwind(AssertUnwindSafe(|| hook(binding)))
                .ok()
                .map(|principal| principal.map(Cow::Owned).or(from_token)),
            None => Some(from_token),
        }
    }
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let codec: &dyn fmt::Debug = match &self.inner.codec {
            Codec::Builtin(keyring) => keyring,
            Codec::Custom(_) => &"custom",
        };
        f.debug_struct("Sealer")
            .field("codec", codec)
            .field("ttl_ms", &self.inner.ttl_ms)
            .field("audience", &self.inner.audience)
            .field("bind_principal", &self.inner.bind_principal.is_some())
            .field("max_token_len", &self.inner.max_token_len)
            .finish_non_exhaustive()
    }
}
