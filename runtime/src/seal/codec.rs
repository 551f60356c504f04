//! The contract between the sealer and whatever turns claims into an opaque token.

use super::{InvalidRequestState, SealFailure};

/// Turns sealed claims into an opaque, tamper-evident string and back.
///
/// tern's own [`Keyring`](super::Keyring) is one; a deployment that keeps its keys in a KMS
/// writes its own (the guide's [`own_codec`](crate::guide::own_codec) chapter runs one). A codec owes only
/// integrity, and ideally confidentiality: time-to-live, audience, principal and request
/// binding are written into the payload and checked again by the [`Sealer`](super::Sealer)
/// for every codec.
///
/// `seal` is fallible, unlike a pure encoder, because a real codec can refuse: tern's own
/// refuses a payload whose token would exceed the size cap, and a KMS-backed one may lose
/// its data key. A failure becomes a sanitised internal error, never an unsealed token.
pub trait StateCodec: Send + Sync + 'static {
    /// Seals `payload` into a token that only this codec's `unseal` accepts.
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure>;

    /// Returns the payload of a token this codec sealed, or [`InvalidRequestState`] for
    /// any other input: altered, truncated, foreign or spelled differently.
    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState>;
}
