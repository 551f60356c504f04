//! The two ways sealing can fail, each with one fixed face on the wire.

use std::fmt;

/// Why an incoming `requestState` was rejected: for the server log only.
///
/// The wire never sees this; every cause becomes the same [`InvalidRequestState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RejectReason {
    /// Not a token this codec could ever have produced (prefix, encoding, length, claims layout).
    Malformed,
    /// Sealed under a key id this server does not hold (another instance, a restart, a retired key).
    UnknownKey,
    /// The authentication tag did not verify: the token was altered or the key id transplanted.
    Seal,
    /// The token's expiry has passed.
    Expired,
    /// The token claims to be minted more than the allowed clock skew in the future.
    MintedInFuture,
    /// The method, target or arguments differ from the request that minted the token.
    RequestBinding,
    /// The token was minted for another audience, or audience presence differs.
    Audience,
    /// The principal differs, appeared or disappeared since the token was minted.
    Principal,
    /// A custom codec rejected the token, returned an error or panicked.
    Codec,
    /// The token exceeds the configured maximum length.
    TooLarge,
}

impl RejectReason {
    /// A short, stable code for logs and metrics.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::UnknownKey => "unknown_key",
            Self::Seal => "seal",
            Self::Expired => "expired",
            Self::MintedInFuture => "minted_in_future",
            Self::RequestBinding => "request_binding",
            Self::Audience => "audience",
            Self::Principal => "principal",
            Self::Codec => "codec_error",
            Self::TooLarge => "too_large",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An incoming `requestState` failed verification.
///
/// Opaque on purpose: its [`Display`](fmt::Display) is always "Invalid or expired requestState"
/// and its wire form is always -32602 with that message, whatever the cause, so a client cannot
/// learn which check failed. The cause is available to the server through
/// [`reason`](Self::reason) for logging.
///
/// A custom [`StateCodec`](super::StateCodec) returns [`InvalidRequestState::default`] for every
/// token it did not issue.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InvalidRequestState {
    reason: RejectReason,
}

impl InvalidRequestState {
    /// The one message every rejection carries (with -32602, invalid params).
    pub(crate) const MESSAGE: &'static str = crate::jsonrpc::INVALID_REQUEST_STATE;

    pub(crate) fn because(reason: RejectReason) -> Self {
        Self { reason }
    }

    /// The log-only cause. Never send it to the client.
    pub fn reason(&self) -> RejectReason {
        self.reason
    }
}

/// A rejection from a custom codec; it is logged as [`RejectReason::Codec`].
impl Default for InvalidRequestState {
    fn default() -> Self {
        Self::because(RejectReason::Codec)
    }
}

impl fmt::Display for InvalidRequestState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::MESSAGE)
    }
}

// Debug deliberately omits the reason: a careless `{:?}` in an error path must not turn
// into a wire message that tells the client which check failed.
impl fmt::Debug for InvalidRequestState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InvalidRequestState")
    }
}

impl std::error::Error for InvalidRequestState {}

/// Why sealing an outgoing `requestState` failed: for the server log only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SealFailureReason {
    /// The token would exceed the configured maximum length.
    TooLarge,
    /// A custom codec returned an error.
    Codec,
    /// A custom codec or the `bind_principal` hook panicked.
    Panicked,
    /// A claim field does not fit the envelope's length prefix.
    ClaimTooLong,
}

impl SealFailureReason {
    /// A short, stable code for logs and metrics.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::TooLarge => "too_large",
            Self::Codec => "codec_error",
            Self::Panicked => "panicked",
            Self::ClaimTooLong => "claim_too_long",
        }
    }
}

/// Sealing an outgoing `requestState` failed; no token is sent.
///
/// Maps to a sanitised JSON-RPC internal error (-32603, "Internal error"): the
/// server never falls back to sending state unsealed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SealFailure {
    reason: SealFailureReason,
}

impl SealFailure {
    /// The one message a sealing failure carries on the wire (with -32603, internal).
    pub(crate) const MESSAGE: &'static str = "Internal error";

    pub(crate) fn because(reason: SealFailureReason) -> Self {
        Self { reason }
    }

    /// The log-only cause.
    pub fn reason(&self) -> SealFailureReason {
        self.reason
    }
}

/// A failure from a custom codec; it is logged as [`SealFailureReason::Codec`].
impl Default for SealFailure {
    fn default() -> Self {
        Self::because(SealFailureReason::Codec)
    }
}

impl fmt::Display for SealFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::MESSAGE)
    }
}

impl fmt::Display for SealFailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SealFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealFailure({})", self.reason.as_str())
    }
}

impl std::error::Error for SealFailure {}

/// The one face a rejected `requestState` shows the client, whatever the cause (which
/// stays in the server's log).
impl From<InvalidRequestState> for crate::jsonrpc::RpcError {
    fn from(_: InvalidRequestState) -> Self {
        Self::invalid_request_state()
    }
}

/// The one face a failure to seal shows the client: an internal error, no detail.
impl From<SealFailure> for crate::jsonrpc::RpcError {
    fn from(_: SealFailure) -> Self {
        Self::internal(SealFailure::MESSAGE)
    }
}
