//! The log gets the reason and never the token, the state or a secret.

use std::io;
use std::sync::Mutex;

use super::*;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn captured(run: impl FnOnce()) -> String {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    tracing::subscriber::with_default(subscriber, run);
    let bytes = capture.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn logs_name_the_reason_but_never_contain_the_state_the_token_or_the_secret() {
    let secret = generate_secret_hex();
    let parsed = parse_secret(&secret).unwrap();
    let state = b"STATE-ssn-078-05-1120";
    let clock = Arc::new(ManualClock::new(T0));
    let sealer = RequestStateSecurity::keys([&parsed[..]])
        .unwrap()
        .clock(clock.clone())
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, state).unwrap();
    let tampered = format!("{}A", &token[..token.len() - 1]);

    let log = captured(|| {
        let _ = sealer.verify(&tampered, &RequestBinding::tool("t", None));
        let _ = sealer.verify(&token, &RequestBinding::tool("other", None));
        let _ = sealer.verify("t1.not-a-token", &request);
        let _ = sealer.seal(&request, &vec![0; DEFAULT_MAX_TOKEN_LEN]);
        clock.advance(std::time::Duration::from_secs(3600));
        let _ = sealer.verify(&token, &request);
    });

    for code in ["request_binding", "malformed", "too_large", "expired"] {
        assert!(log.contains(code), "missing {code} in {log}");
    }
    assert!(log.contains("WARN"), "{log}");
    let body = &token[TOKEN_PREFIX.len()..];
    for forbidden in [
        String::from_utf8(state.to_vec()).unwrap(),
        "ssn-078".to_owned(),
        secret.clone(),
        secret[..16].to_owned(),
        body[..16].to_owned(),
        body[body.len() - 16..].to_owned(),
    ] {
        assert!(!log.contains(&forbidden), "log leaked {forbidden:?}: {log}");
    }
}

#[test]
fn a_successful_round_logs_nothing_at_warn() {
    let (sealer, _) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    let log = captured(|| {
        let token = sealer.seal(&request, b"s").unwrap();
        sealer.verify(&token, &request).unwrap();
    });
    assert!(!log.contains("WARN"), "{log}");
}
