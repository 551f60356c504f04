//! `requestState` across rounds: an incoming token is opened before the handler runs,
//! and an `InputRequiredResult` is checked (requests or state, only declared
//! capabilities) and its state sealed after.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::rendered::RenderedRequests;
use crate::jsonrpc::RpcError;
use crate::protocol;
use crate::seal::{
    ARGS_DIGEST_LEN, Principal, RequestBinding, Sealer, arguments_text, canonical_text,
    text_arguments_digest,
};
use crate::types::rpc::Request;
use crate::types::v2026_07_28::{ClientCapabilities, InputRequiredResult, ResultType};

/// The sealer and the caller, for a route whose `requestState` is sealed.
#[derive(Clone, Copy)]
pub(super) struct Sealing<'a> {
    pub(super) sealer: &'a Sealer,
    pub(super) principal: Option<&'a Principal>,
}

/// What a sealed token is bound to besides the method and the principal: the request's
/// target (tool or prompt name, resource URI) and its arguments ([`Args`]).
#[derive(Debug)]
pub(crate) struct Binding {
    target: String,
    args: Args,
    /// The arguments read into a map, for a `bind_principal` hook only.
    arguments: Option<Map<String, Value>>,
    /// The sealed token the request carried, once verified.
    pub(super) redeemed: Option<String>,
    /// The request's round in its flow: 1 without state, else one past the round its
    /// token was sealed in (2 for a token that does not say).
    pub(super) round: u32,
}

/// A binding's arguments, looked at no more than the request needed.
#[derive(Debug)]
enum Args {
    /// Their digest, computed when a token was checked against them.
    Digest([u8; ARGS_DIGEST_LEN]),
    /// Their text as sent (`None`: none sent), found short and canonical when a token
    /// was checked against it: bound by itself.
    Canonical(Option<Box<RawValue>>),
    /// Their text as sent, not looked at yet: a call that completes pays nothing, one
    /// that asks again has it bound by itself or by its digest then.
    Sent(Option<Box<RawValue>>),
}

impl Binding {
    pub(super) fn request<'a>(
        &'a self,
        method: &'a str,
        principal: Option<&'a Principal>,
    ) -> RequestBinding<'a> {
        let binding = RequestBinding::new(method, &self.target)
            .with_arguments(self.arguments.as_ref())
            .with_principal(principal);
        match &self.args {
            Args::Digest(digest) => binding.with_arguments_digest(*digest),
            Args::Canonical(text) => binding.with_arguments_text(arguments_text(text.as_deref())),
            Args::Sent(text) => match canonical_text(text.as_deref()) {
                Some(canonical) => binding.with_arguments_text(canonical),
                None => binding.with_arguments_digest(text_arguments_digest(text.as_deref())),
            },
        }
    }
}

/// Opens the `requestState` the client echoed, if any, and puts the plaintext the
/// handler wrote in its place; or rejects the request with the fixed error. Returns what
/// the state this request answers with will be bound to: the target and arguments, read
/// through `M`'s entry in the method table (the target copied, as the handler takes the
/// params; the arguments as [`Args`] says).
pub(super) fn open<M: Request>(
    sealing: Sealing<'_>,
    params: &mut M::Params,
) -> Result<Binding, RpcError> {
    let arguments = M::arguments(params);
    let for_hook = sealing.sealer.has_principal_hook().then(|| {
        serde_json::from_slice::<Map<String, Value>>(arguments_text(arguments.as_deref())).ok()
    });
    // A token is checked against the arguments now: short ones canonical as sent by
    // their text, others by their digest.
    let args = match M::request_state(params) {
        None => Args::Sent(arguments.map(Cow::into_owned)),
        Some(_) if canonical_text(arguments.as_deref()).is_some() => {
            Args::Canonical(arguments.map(Cow::into_owned))
        }
        Some(_) => Args::Digest(text_arguments_digest(arguments.as_deref())),
    };
    let mut binding = Binding {
        target: M::target(params).unwrap_or_default().to_owned(),
        args,
        arguments: for_hook.flatten(),
        redeemed: None,
        round: 1,
    };
    if let Some(token) = M::request_state(params) {
        let opened = sealing
            .sealer
            .open(token, &binding.request(M::METHOD, sealing.principal))
            .map_err(|rejected| {
                tracing::Span::current().record("mcp.state_rejected", rejected.reason().as_str());
                RpcError::from(rejected)
            })?;
        binding.round = opened.round.map_or(2, |r| r.saturating_add(1));
        let plain =
            String::from_utf8(opened.state).map_err(|_| RpcError::invalid_request_state())?;
        // The sealed token is kept (moved, not copied) for single-use tools.
        binding.redeemed = M::set_request_state(params, plain);
    }
    Ok(binding)
}

/// Room for an `InputRequiredResult` as written, its token aside: a form with a few
/// fields fits, and with a token the whole stays within what glibc's per-thread cache
/// keeps (1,032 bytes), which a larger buffer misses at some 400 instructions.
const INPUT_REQUIRED_ROOM: usize = 640;

/// Room for a sealed token beyond the state it seals: its claims (times, the binding,
/// the audience), the cipher's nonce and tag, and base64's third more.
const TOKEN_ROOM: usize = 200;

/// Every `InputRequiredResult` has requests or state, asks only for what the client
/// declared, and carries sealed state when sealing is on. Returns it written as JSON,
/// its questions through `rendered` (a question asked before is not written again) and
/// its state sealed as it is written, last.
pub(super) fn finish_input_required(
    method: &str,
    sealing: Option<(&Sealer, &Binding)>,
    principal: Option<&Principal>,
    capabilities: &ClientCapabilities,
    rendered: &RenderedRequests,
    mut asked: InputRequiredResult,
) -> Result<String, RpcError> {
    check(method, capabilities, &mut asked)?;
    let sealed = sealing.zip(asked.request_state.take_if(|_| sealing.is_some()));
    // Written once into room for a usual result and its token, not grown from serde's
    // small start.
    let room = INPUT_REQUIRED_ROOM
        + sealed
            .as_ref()
            .map_or(0, |(_, s)| s.len() * 4 / 3 + TOKEN_ROOM);
    let mut out = Vec::with_capacity(room);
    let encode_error = |error: String| {
        tracing::error!(method, %error, "could not encode an InputRequiredResult");
        RpcError::internal("Internal error")
    };
    write_input_required(&asked, rendered, &mut out).map_err(|e| encode_error(e.to_string()))?;
    if let Some(((sealer, binding), state)) = sealed {
        out.extend_from_slice(br#","requestState":"#);
        let request = binding.request(method, principal);
        sealer
            .seal_round_json(&request, state.as_bytes(), Some(binding.round), &mut out)
            .map_err(RpcError::from)?;
    }
    out.push(b'}');
    String::from_utf8(out).map_err(|e| encode_error(e.to_string()))
}

/// `asked` as serde writes it (its members in order, then the ones the schema does not
/// name), but each question through `rendered`; all but the closing brace, so that a
/// sealed state can follow.
fn write_input_required(
    asked: &InputRequiredResult,
    rendered: &RenderedRequests,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"resultType":"#);
    serde_json::to_writer(&mut *out, &asked.result_type)?;
    if let Some(requests) = &asked.input_requests {
        out.extend_from_slice(br#","inputRequests":{"#);
        for (i, (key, request)) in requests.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, key)?;
            out.push(b':');
            rendered.write(request, out)?;
        }
        out.push(b'}');
    }
    if let Some(meta) = &asked.meta {
        out.extend_from_slice(br#","_meta":"#);
        serde_json::to_writer(&mut *out, meta)?;
    }
    if let Some(state) = &asked.request_state {
        out.extend_from_slice(br#","requestState":"#);
        serde_json::to_writer(&mut *out, state)?;
    }
    for (key, value) in &asked.extra {
        out.push(b',');
        serde_json::to_writer(&mut *out, key)?;
        out.push(b':');
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}

/// The checks of [`finish_input_required`], then its state sealed in place (a
/// session's direct form, which hands the typed value on).
pub(super) fn check_and_seal(
    method: &str,
    sealing: Option<(&Sealer, &Binding)>,
    principal: Option<&Principal>,
    capabilities: &ClientCapabilities,
    asked: &mut InputRequiredResult,
) -> Result<(), RpcError> {
    check(method, capabilities, asked)?;
    if let (Some((sealer, binding)), Some(state)) = (sealing, asked.request_state.as_mut()) {
        *state = sealer
            .seal_round(
                &binding.request(method, principal),
                state.as_bytes(),
                Some(binding.round),
            )
            .map_err(RpcError::from)?;
    }
    Ok(())
}

/// An `InputRequiredResult` has requests or state and asks only for what the client
/// declared; its `resultType` is set to say what it is.
fn check(
    method: &str,
    capabilities: &ClientCapabilities,
    asked: &mut InputRequiredResult,
) -> Result<(), RpcError> {
    let requests = asked.input_requests.as_ref().filter(|r| !r.is_empty());
    if requests.is_none() && asked.request_state.is_none() {
        tracing::error!(
            method,
            "a handler returned an InputRequiredResult with neither inputRequests nor requestState"
        );
        return Err(RpcError::internal("Internal error"));
    }
    if let Some(missing) = requests.and_then(|r| protocol::missing_capabilities(r, capabilities)) {
        return Err(RpcError::missing_capability(&missing));
    }
    // The type says what this is, whatever the handler wrote in the field.
    asked.result_type = ResultType::InputRequired;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ask;
    use crate::types::v2026_07_28::{ResultMetaObject, StringSchema};

    fn written(asked: &InputRequiredResult, rendered: &RenderedRequests) -> String {
        let mut out = Vec::new();
        write_input_required(asked, rendered, &mut out).unwrap();
        out.push(b'}');
        String::from_utf8(out).unwrap()
    }

    const METHOD: &str = crate::types::v2026_07_28::method::CallTool::METHOD;

    /// `asked` finished as a `tools/call` round of tool `t` under `sealer`, for a client
    /// that takes URL elicitations.
    fn finished(sealer: &Sealer, asked: InputRequiredResult) -> (String, Binding) {
        let binding = Binding {
            target: "t".into(),
            args: Args::Sent(None),
            arguments: None,
            redeemed: None,
            round: 1,
        };
        let capabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        let rendered = RenderedRequests::default();
        let text = finish_input_required(
            METHOD,
            Some((sealer, &binding)),
            None,
            &capabilities,
            &rendered,
            asked,
        )
        .unwrap();
        (text, binding)
    }

    #[test]
    fn an_input_required_result_is_written_as_serde_writes_it() {
        let form = ask::ElicitForm::new("Which \"region\"?\n")
            .required("region", StringSchema::new())
            .into();
        let url = ask::elicit_url("Sign in", "https://example.com");
        let mut full = ask::input_required([("b", form), ("a\\", url)], Some("st\"ate"));
        full.meta =
            Some(serde_json::from_value::<ResultMetaObject>(json!({"k": [1, 2.5]})).unwrap());
        full.extra.insert("x-extra".into(), json!({"n": null}));
        let mut state_only = InputRequiredResult::new();
        state_only.request_state = Some(String::new());
        let requests_only =
            ask::input_required([("q", ask::elicit_url("Go", "https://e.x"))], None::<&str>);
        let rendered = RenderedRequests::default();
        for asked in [full, state_only, requests_only] {
            let expected = serde_json::to_string(&asked).unwrap();
            for round in 0..3 {
                assert_eq!(written(&asked, &rendered), expected, "round {round}");
            }
        }
    }

    /// A codec whose tokens JSON must escape: a quote, a backslash, a line break.
    struct Quoting;

    impl crate::seal::StateCodec for Quoting {
        fn seal(&self, payload: &[u8]) -> Result<String, crate::seal::SealFailure> {
            Ok(format!("\"{}\\\n", payload.len()))
        }
        fn unseal(&self, _: &str) -> Result<Vec<u8>, crate::seal::InvalidRequestState> {
            Err(crate::seal::InvalidRequestState::default())
        }
    }

    #[test]
    fn a_custom_codecs_token_is_written_as_a_json_string() {
        let sealer = crate::seal::RequestStateSecurity::codec(Quoting)
            .build(Some("svc"))
            .unwrap();
        let asked = ask::input_required(std::iter::empty::<(&str, _)>(), Some("state"));
        let (text, _) = finished(&sealer, asked);
        let value: serde_json::Value = serde_json::from_str(&text).expect("the result is JSON");
        let token = value["requestState"].as_str().unwrap();
        assert!(
            token.starts_with('"') && token.ends_with("\\\n"),
            "{token:?}"
        );
    }

    #[test]
    fn a_sealed_token_is_written_last_as_it_is_and_opens_to_the_state() {
        let sealer = crate::seal::RequestStateSecurity::keys([[0x42u8; 32]])
            .unwrap()
            .build(Some("svc"))
            .unwrap();
        let mut asked = ask::input_required(
            [("q", ask::elicit_url("Go", "https://e.x"))],
            Some("st\"ate"),
        );
        asked.extra.insert("x".into(), json!(1));
        let (text, binding) = finished(&sealer, asked.clone());
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let token = value["requestState"].as_str().unwrap().to_owned();
        assert!(
            text.ends_with(&format!(r#","requestState":"{token}"}}"#)),
            "{text}"
        );
        assert!(token.starts_with("t1."), "{token}");
        let opened = sealer
            .verify(&token, &binding.request(METHOD, None))
            .unwrap();
        assert_eq!(opened, b"st\"ate");
        value.as_object_mut().unwrap().remove("requestState");
        asked.request_state = None;
        asked.result_type = ResultType::InputRequired;
        assert_eq!(value, serde_json::to_value(&asked).unwrap());
    }
}
