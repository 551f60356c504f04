//! Behaviour tests of the sealing engine, one concern per file.

mod args_text;
mod binding;
mod logging;
mod policy;
mod properties;
mod token;

use std::sync::Arc;

use super::sealer::Codec;
use super::*;

pub(super) const SECRET_A: [u8; 32] = [0xA1; 32];
pub(super) const SECRET_B: [u8; 32] = [0xB2; 32];
pub(super) const SECRET_C: [u8; 32] = [0xC3; 32];

/// 2026-01-01T00:00:00Z, a fixed "now" for clock-driven tests.
pub(super) const T0: u64 = 1_767_225_600_000;

pub(super) fn ring(secrets: &[[u8; 32]]) -> Keyring {
    Keyring::new(secrets.iter()).expect("valid test ring")
}

pub(super) fn reason(result: Result<Vec<u8>, InvalidRequestState>) -> RejectReason {
    result.expect_err("expected a rejection").reason()
}

/// A codec that shares one key ring between sealers, so tests can vary everything else.
pub(super) struct Shared(pub(super) Arc<Keyring>);

impl StateCodec for Shared {
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure> {
        self.0.seal(payload)
    }
    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState> {
        self.0.unseal(token)
    }
}

/// A sealer over a shared ring with any audience, including none (which the public
/// builder only allows for the ephemeral default).
pub(super) fn sealer_with(
    keys: &Arc<Keyring>,
    audience: Option<&str>,
    clock: &Arc<ManualClock>,
) -> Sealer {
    Sealer::new(
        Codec::Custom(Box::new(Shared(keys.clone()))),
        600_000,
        audience.map(str::to_owned),
        None,
        DEFAULT_MAX_TOKEN_LEN,
        clock.clone(),
    )
}

/// A named sealer over fixed keys with a manual clock at [`T0`].
pub(super) fn keyed_sealer(name: &str) -> (Sealer, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(T0));
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .expect("valid key")
        .clock(clock.clone())
        .build(Some(name))
        .expect("valid policy");
    (sealer, clock)
}
