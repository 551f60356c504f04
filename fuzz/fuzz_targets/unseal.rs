//! Arbitrary input to tern's token codec and to the sealer in front of it: nothing may
//! panic, and nothing the fuzzer invents may verify.
#![no_main]

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use tern_mcp::seal::{Keyring, ManualClock, RequestBinding, RequestStateSecurity, Sealer, StateCodec};

const SECRET: [u8; 32] = [0x42; 32];
const SECOND: [u8; 32] = [0x17; 32];

static KEYS: LazyLock<Keyring> = LazyLock::new(|| match Keyring::new([SECRET, SECOND]) {
    Ok(keys) => keys,
    Err(err) => panic!("fixed fuzz keys are valid: {err}"),
});

static SEALER: LazyLock<Sealer> = LazyLock::new(|| {
    let policy = match RequestStateSecurity::keys([SECRET, SECOND]) {
        Ok(policy) => policy,
        Err(err) => panic!("fixed fuzz keys are valid: {err}"),
    };
    match policy
        .clock(Arc::new(ManualClock::new(1_767_225_600_000)))
        .build(Some("fuzz"))
    {
        Ok(sealer) => sealer,
        Err(err) => panic!("fixed fuzz policy is valid: {err}"),
    }
});

fuzz_target!(|data: &[u8]| {
    let Ok(token) = std::str::from_utf8(data) else {
        return;
    };
    // The seeds are genuine tokens, so the codec may accept their exact bytes; what
    // matters there is that nothing panics.
    let _ = KEYS.unseal(token);
    // No seed carries claims for this sealer and the fuzzer cannot forge a tag, so a
    // verified token would be a real finding.
    assert!(
        SEALER
            .verify(token, &RequestBinding::tool("deploy", None))
            .is_err(),
        "forged token verified"
    );
});
