//! What a refused request (a non-2xx answer) said: the JSON-RPC error its body carried
//! (with or without an id), else a line of its text, else the challenge's
//! `error_description`, so that whoever reads the error sees the server's reason and
//! not only the status's name.

use bytes::Bytes;
use http::StatusCode;
use http::header::{HeaderName, WWW_AUTHENTICATE};

use super::super::fields::{Fields as _, HeadFields};
use crate::jsonrpc::{self, RawResponse, Received, RpcError};
use crate::transport::{CallError, TransportError};

/// The field a DPoP resource server sends its nonce in.
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The most of a refusal's text body quoted in its error.
const QUOTED: usize = 300;

/// The largest refusal body read for an `error` member when it is no JSON-RPC response.
const READ_FOR_ERROR: usize = 64 * 1024;

/// The error for a non-2xx answer, with what its body or challenge said.
pub(super) fn refusal(
    status: StatusCode,
    fields: &HeadFields,
    body: Result<Bytes, CallError>,
) -> CallError {
    let body = body.ok();
    let rpc_error = body.as_deref().and_then(rpc_error);
    let reason = status.canonical_reason().unwrap_or("refused");
    let text = |name| fields.text(&name);
    let www_authenticate = text(WWW_AUTHENTICATE).map(str::to_owned);
    let said = match &rpc_error {
        Some(_) => None,
        None => body
            .as_deref()
            .and_then(quoted)
            .or_else(|| www_authenticate.as_deref().and_then(error_description)),
    };
    let message = match said {
        Some(said) => format!("the server refused the request: {reason}: {said}"),
        None => format!("the server refused the request: {reason}"),
    };
    let mut error = TransportError::http(status.as_u16(), message, rpc_error);
    // A challenge is kept only as long as a head may be (`h1::MAX_HEAD` bounds it).
    error.0.www_authenticate = www_authenticate;
    error.0.dpop_nonce = text(DPOP_NONCE).map(str::to_owned);
    // Only the delta-seconds form: a date would need the two clocks to agree.
    if matches!(status.as_u16(), 429 | 503) {
        error.0.retry_after = text(http::header::RETRY_AFTER)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(std::time::Duration::from_secs);
    }
    CallError::Transport(error)
}

/// The JSON-RPC error `body` carries: a response's, or (a refusal answered to no
/// request, its id `null`) the object's `error` member.
fn rpc_error(body: &[u8]) -> Option<RpcError> {
    if let Ok(Received::Response(RawResponse { result: Err(e), .. })) = jsonrpc::receive(body) {
        return Some(e);
    }
    if body.len() > READ_FOR_ERROR {
        return None;
    }
    let mut value: serde_json::Value = serde_json::from_slice(body).ok()?;
    serde_json::from_value(value.get_mut("error")?.take()).ok()
}

/// The first line of a text body that is no JSON, at most [`QUOTED`] characters.
fn quoted(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body.get(..QUOTED * 4).unwrap_or(body));
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.starts_with('{') || line.starts_with('<') {
        // JSON that held no error, or a page of HTML: nothing a person reads as a reason.
        return None;
    }
    let mut quoted: String = line.chars().take(QUOTED).collect();
    if quoted.len() < line.len() {
        quoted.push('…');
    }
    Some(quoted)
}

/// The `error_description` of a `WWW-Authenticate` challenge.
fn error_description(challenge: &str) -> Option<String> {
    let (_, rest) = challenge.split_once("error_description=\"")?;
    let mut description = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(description),
            '\\' => description.push(chars.next()?),
            c => description.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_what_the_server_said() {
        let null_id = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Host \"fleet\" is not allowed"}}"#;
        let e = rpc_error(null_id).expect("the error member");
        assert_eq!(e.message, r#"Forbidden: Host "fleet" is not allowed"#);
        assert_eq!(
            quoted(b"\n  Bad gateway: upstream down\nmore").as_deref(),
            Some("Bad gateway: upstream down")
        );
        assert_eq!(quoted(b"<html><body>nginx</body></html>"), None);
        assert_eq!(
            quoted(&[b'x'; 1000]).map(|q| q.chars().count()),
            Some(QUOTED + 1)
        );
        assert_eq!(
            error_description(
                r#"Bearer error="insufficient_scope", error_description="needs \"notes:write\"""#
            )
            .as_deref(),
            Some(r#"needs "notes:write""#)
        );
        assert_eq!(error_description("Bearer realm=\"x\""), None);
    }

    #[test]
    fn a_malformed_or_oversized_refusal_says_only_its_status() {
        assert_eq!(
            error_description(r#"Bearer error_description="never closed"#),
            None
        );
        assert_eq!(
            error_description(r#"Bearer error_description="ends in \"#),
            None
        );
        // An error member past what is read for one is not looked for.
        let padded = format!(
            r#"{{"pad":"{}","error":{{"code":1,"message":"m"}}}}"#,
            "x".repeat(READ_FOR_ERROR)
        );
        assert!(rpc_error(padded.as_bytes()).is_none());
        assert_eq!(
            quoted(&[0xff; 10_000]).map(|q| q.chars().count()),
            Some(QUOTED + 1)
        );
    }
}
