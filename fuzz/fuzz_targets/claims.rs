//! Arbitrary claims envelopes, reached through a pass-through codec so the parser and the
//! checks behind the cipher get fuzzed too: nothing may panic.
#![no_main]

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use tern_mcp::seal::{
    InvalidRequestState, ManualClock, Principal, RequestBinding, RequestStateSecurity, SealFailure,
    Sealer, StateCodec,
};

/// Hex in, bytes out: no integrity at all, so every byte of the claims is attacker-chosen.
struct PassThrough;

impl StateCodec for PassThrough {
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure> {
        Ok(payload.iter().map(|b| format!("{b:02x}")).collect())
    }
    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState> {
        tern_mcp::seal::parse_secret(token)
            .map(|bytes| bytes.to_vec())
            .map_err(|_| InvalidRequestState::default())
    }
}

static SEALER: LazyLock<Sealer> = LazyLock::new(|| {
    match RequestStateSecurity::codec(PassThrough)
        .clock(Arc::new(ManualClock::new(1_767_225_600_000)))
        .build(Some("fuzz"))
    {
        Ok(sealer) => sealer,
        Err(err) => panic!("fixed fuzz policy is valid: {err}"),
    }
});

fuzz_target!(|data: &[u8]| {
    let token: String = data.iter().map(|b| format!("{b:02x}")).collect();
    let principal = Principal::custom("alice");
    let plain = RequestBinding::tool("deploy", None);
    let _ = SEALER.verify(&token, &plain);
    let _ = SEALER.verify(&token, &plain.with_principal(Some(&principal)));
});
