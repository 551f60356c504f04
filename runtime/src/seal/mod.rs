//! Sealing of `requestState`: the opaque token a server hands out mid-flow and gets back.
//!
//! `requestState` comes back as client-supplied input, so the high-level server seals
//! every outgoing state and verifies every incoming one. Handlers write and read
//! plaintext; the wire only ever carries a token that is encrypted, authenticated and
//! bound to:
//!
//! - a time window: [`ttl`](RequestStateSecurity::ttl), default 600 s, renewed every round
//!   (a token minted more than 60 s in our future is refused too, allowing for clock skew);
//! - the originating request: method, tool or prompt name or resource URI, and a digest of
//!   the arguments (canonical JSON, so key order does not matter);
//! - the audience: the server's name, or [`audience`](RequestStateSecurity::audience);
//! - the principal: the client, issuer and subject of a validated access token (the client
//!   alone when the verifier gives no subject), or whatever a
//!   [`bind_principal`](RequestStateSecurity::bind_principal) hook supplies.
//!
//! ```
//! use tern_mcp::seal::{RequestBinding, RequestStateSecurity};
//!
//! # fn main() -> tern_mcp::Result<()> {
//! let sealer = RequestStateSecurity::ephemeral().build(Some("deployer"))?;
//! let args = serde_json::json!({ "name": "orders" });
//! let request = RequestBinding::tool("provision", args.as_object());
//!
//! let token = sealer.seal(&request, b"step=2").expect("sealing a small state succeeds");
//! assert_eq!(sealer.verify(&token, &request).expect("same request"), b"step=2");
//!
//! // The same token replayed against another tool is refused, with the one fixed error.
//! let other = RequestBinding::tool("delete", args.as_object());
//! let err = sealer.verify(&token, &other).unwrap_err();
//! assert_eq!(err.to_string(), "Invalid or expired requestState");
//! # Ok(())
//! # }
//! ```
//!
//! # Choosing where the key comes from
//!
//! - **[`RequestStateSecurity::ephemeral`] (the default)**: a random key made when the
//!   server starts. Right for one process: stdio, or exactly one HTTP worker. A round that
//!   lands on another worker, another instance behind a load balancer, or the same server
//!   after a restart is rejected and the client starts the flow over.
//! - **[`RequestStateSecurity::keys`]**: one or more shared secrets of at least 32 bytes.
//!   Required whenever a round may reach a different instance or must survive a restart:
//!   every instance verifies what any sibling sealed. `keys[0]` seals; every key verifies,
//!   and the token's key id means only one key is ever tried.
//! - **[`RequestStateSecurity::codec`]**: your own [`StateCodec`], for example envelope
//!   encryption under a data key unwrapped once from a KMS at start-up (below).
//!
//! A policy with explicit keys or a codec needs an audience: the server's name, or
//! [`audience`](RequestStateSecurity::audience) when it has none, so that another service
//! that happens to share the secret cannot replay its tokens here.
//!
//! # Generating a secret and rotating keys
//!
//! [`generate_secret_hex`] prints a fresh 32-byte secret, no CLI needed; read it back
//! (hex, or base64) with [`parse_secret`]:
//!
//! ```
//! use tern_mcp::seal::{RequestStateSecurity, generate_secret_hex, parse_secret};
//!
//! # fn main() -> tern_mcp::Result<()> {
//! let text = generate_secret_hex(); // store this in your secret manager
//! let secret = parse_secret(&text)?;
//! let policy = RequestStateSecurity::keys([secret])?;
//! # let _ = policy.build(Some("fleet"))?;
//! # Ok(())
//! # }
//! ```
//!
//! Rotation without downtime takes three phases, each fully rolled out to every instance
//! before the next begins:
//!
//! 1. `keys([OLD, NEW])`: every instance learns to verify `NEW`; `OLD` still seals.
//! 2. `keys([NEW, OLD])`: `NEW` seals; state in flight under `OLD` keeps verifying.
//! 3. `keys([NEW])`, one TTL after phase 2 is fully out: `OLD` is retired.
//!
//! Never promote the sealing key first: sealing under a key that some instance cannot yet
//! verify breaks rounds in flight during the roll-out.
//!
//! # Bringing your own codec
//!
//! A codec turns bytes into a string and back, and must return [`InvalidRequestState`] for
//! any token it did not issue, including a different spelling of one it did. Expiry,
//! audience, principal and request binding stay tern's job for every codec. A codec that
//! panics or errors fails closed: a rejection on the way in, a sanitised internal error
//! (and no token) on the way out. The guide's chapter
//! [`own_codec`](crate::guide::own_codec) runs an envelope-encryption codec (a data key
//! unwrapped once from a KMS, every token local crypto) alone and inside a server.
//!
//! # When verification fails
//!
//! Every cause (tampered, expired, replayed against another request or principal, sealed
//! under an unknown key, too large) gets the same wire error,
//! `{"code": -32602, "message": "Invalid or expired requestState"}`
//! (an [`InvalidRequestState`]). The cause ([`RejectReason`]) goes to a `tracing`
//! warning under the `tern_mcp::seal` target; the token, the state and the keys never do.
//! The most common rejection in practice is not an attacker but the ephemeral key meeting
//! a round from before a restart or from another instance: configure
//! [`keys`](RequestStateSecurity::keys) when that matters.
//!
//! # tern's token
//!
//! `t1.` followed by unpadded base64url of `key id (4) | nonce (24) | ciphertext | tag (16)`
//! under XChaCha20-Poly1305 (through ring by default, feature `seal-ring`, which the
//! default TLS client builds anyway; without it the `chacha20poly1305` crate computes the
//! same bytes in pure Rust), with the prefix and key id as associated data. Keys are
//! derived once from each secret with HKDF-SHA256 under a tern-specific label, and wiped
//! when the [`Keyring`] drops; `Debug` shows key ids only. Decoding is strict (no padding,
//! no whitespace, no alternative final character), and tokens over
//! [`max_token_len`](RequestStateSecurity::max_token_len) (64 KiB by default) are refused
//! on both sides. Panic-catching of custom codecs relies on unwinding: under
//! `panic = "abort"` a panicking codec aborts the process instead.

/// What configuring sealing returns: a [`ConfigError`](crate::ConfigError) when it is
/// refused.
type Result<T, E = crate::ConfigError> = std::result::Result<T, E>;

mod aead;
mod bound;
mod canonical_text;
mod claims;
mod clock;
mod codec;
mod ct;
mod digest;
mod keyring;
mod policy;
mod principal;
mod rejection;
mod sealer;
mod secret;
#[cfg(test)]
mod tests;

pub use clock::{Clock, ManualClock};

pub(crate) use bound::{arguments_text, canonical_text};
pub use codec::StateCodec;
pub(crate) use digest::{ARGS_DIGEST_LEN, json_digest, text_arguments_digest};
pub use keyring::Keyring;
#[cfg(test)]
use keyring::{DEFAULT_MAX_TOKEN_LEN, TOKEN_PREFIX};
pub use policy::{DEFAULT_TTL, RequestStateSecurity};
pub use principal::Principal;
pub use rejection::{InvalidRequestState, RejectReason, SealFailure, SealFailureReason};
pub use sealer::{RequestBinding, Sealer};
pub use secret::{generate_secret, generate_secret_hex, parse_secret};
