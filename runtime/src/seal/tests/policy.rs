//! Construction of `RequestStateSecurity`: TTL and audience rules.

use std::time::Duration;

use super::*;
use crate::ConfigError;

#[test]
fn ttl_defaults_to_600_seconds() {
    assert_eq!(DEFAULT_TTL, Duration::from_secs(600));
    let (sealer, clock) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"").unwrap();
    clock.advance(Duration::from_secs(599));
    assert!(sealer.verify(&token, &request).is_ok());
    clock.advance(Duration::from_secs(1));
    assert!(sealer.verify(&token, &request).is_err());
}

#[test]
fn zero_too_short_and_too_long_ttls_are_rejected() {
    for ttl in [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_secs(1_000_000_000_000),
    ] {
        let err = RequestStateSecurity::ephemeral().ttl(ttl).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidTtl { .. }), "{ttl:?}");
        assert!(err.to_string().contains("600"), "{err}");
    }
    assert!(
        RequestStateSecurity::ephemeral()
            .ttl(Duration::from_millis(500))
            .is_ok()
    );
    assert!(
        RequestStateSecurity::ephemeral()
            .ttl(Duration::from_secs(3600))
            .is_ok()
    );
}

#[test]
fn explicit_keys_on_an_unnamed_server_need_an_audience() {
    let err = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .build(None)
        .unwrap_err();
    assert!(matches!(err, ConfigError::MissingAudience));
    assert!(err.to_string().contains(".audience("), "{err}");
    let err = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .build(Some(""))
        .unwrap_err();
    assert!(matches!(err, ConfigError::MissingAudience));
    assert!(
        RequestStateSecurity::keys([SECRET_A])
            .unwrap()
            .audience("svc")
            .build(None)
            .is_ok()
    );
}

#[test]
fn a_custom_codec_on_an_unnamed_server_needs_an_audience() {
    let codec = || Shared(Arc::new(ring(&[SECRET_A])));
    assert!(matches!(
        RequestStateSecurity::codec(codec())
            .build(None)
            .unwrap_err(),
        ConfigError::MissingAudience
    ));
    assert!(
        RequestStateSecurity::codec(codec())
            .audience("svc")
            .build(None)
            .is_ok()
    );
}

#[test]
fn the_ephemeral_default_needs_no_name() {
    let sealer = RequestStateSecurity::default().build(None).unwrap();
    assert_eq!(sealer.audience(), None);
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    assert_eq!(sealer.verify(&token, &request).unwrap(), b"s");
}

#[test]
fn the_audience_defaults_to_the_server_name() {
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .build(Some("deployer"))
        .unwrap();
    assert_eq!(sealer.audience(), Some("deployer"));
    let explicit = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .audience("fleet")
        .build(Some("deployer"))
        .unwrap();
    assert_eq!(explicit.audience(), Some("fleet"));
}

#[test]
fn an_empty_audience_is_rejected() {
    let err = RequestStateSecurity::ephemeral()
        .audience("")
        .build(Some("svc"))
        .unwrap_err();
    assert!(matches!(err, ConfigError::EmptyAudience));
}
