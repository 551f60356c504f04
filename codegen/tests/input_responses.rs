//! `InputResponses` keeps the answers as the JSON text they came in: checked once when
//! read, each answer decoded straight from its text when asked for.

#![allow(clippy::unwrap_used)]

use tern_types::v2026_07_28::{
    ElicitResult, ElicitResultAction, InputRequest, InputRequests, InputResponse, InputResponses,
    ListRootsRequest, method,
};

fn read(text: &str) -> Result<InputResponses, serde_json::Error> {
    serde_json::from_str(text)
}

#[test]
fn answers_are_found_by_key_and_decoded_from_their_text() {
    let answers =
        read(r#" {"b": {"action": "accept", "content": {"x": "y"}}, "re\u0067ion": {"action": "decline"}} "#)
            .unwrap();
    assert_eq!(answers.len(), 2);
    assert!(answers.contains_key("b") && answers.contains_key("region"));
    assert!(!answers.contains_key("a"));
    let region = answers.get::<method::Elicit>("region").unwrap().unwrap();
    assert_eq!(region.action, ElicitResultAction::Decline);
    assert!(answers.get::<method::Elicit>("missing").is_none());
    let keys: Vec<String> = answers.iter().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(keys, ["b", "region"]);
    assert_eq!(
        answers.raw("region").unwrap().get(),
        r#"{"action": "decline"}"#
    );
    // An answer of the wrong shape is an error for its key alone.
    let odd = read(r#"{"a": {"action": 7}, "b": {"action": "cancel"}}"#).unwrap();
    assert!(odd.get::<method::Elicit>("a").unwrap().is_err());
    assert!(odd.get::<method::Elicit>("b").unwrap().is_ok());
}

#[test]
fn a_repeated_key_or_a_non_object_is_refused_when_read() {
    for text in [
        r#"{"a": {}, "a": {}}"#,
        r#"{"a": {}, "b": 1, "\u0061": {}}"#,
        "[]",
        r#""a""#,
        "7",
    ] {
        assert!(read(text).is_err(), "{text}");
    }
    let error = read(r#"{"k": 1, "k": 2}"#).unwrap_err().to_string();
    assert!(error.contains("repeats the key `k`"), "{error}");
    assert!(read("{}").unwrap().is_empty());
}

#[test]
fn inserting_replaces_an_answer_and_keeps_the_others() {
    let mut answers = InputResponses::new();
    let decline = InputResponse::Elicit(ElicitResult::new(ElicitResultAction::Decline));
    let cancel = InputResponse::Elicit(ElicitResult::new(ElicitResultAction::Cancel));
    answers.insert("a", decline.clone()).unwrap();
    answers.insert("b\"q", decline).unwrap();
    answers.insert("a", cancel).unwrap();
    assert_eq!(answers.len(), 2);
    let a = answers.get::<method::Elicit>("a").unwrap().unwrap();
    assert_eq!(a.action, ElicitResultAction::Cancel);
    assert!(answers.contains_key("b\"q"));
    // Written and read back, the same answers; spacing and order do not matter.
    let text = serde_json::to_string(&answers).unwrap();
    assert_eq!(read(&text).unwrap(), answers);
    let reordered = read(r#"{"b\"q": {"action": "decline"}, "a": {"action":"cancel"}}"#).unwrap();
    assert_eq!(reordered, answers);
}

#[test]
fn decode_reads_the_answers_to_the_requests_sent() {
    let answers = read(r#"{"roots": {"roots": []}, "stray": {"x": 1}}"#).unwrap();
    let requests = InputRequests(
        [(
            "roots".to_owned(),
            InputRequest::ListRoots(ListRootsRequest::new()),
        )]
        .into(),
    );
    let decoded = answers.decode(&requests).unwrap();
    assert!(matches!(
        decoded.get("roots"),
        Some(InputResponse::ListRoots(_))
    ));
    assert_eq!(decoded.len(), 1);
}

#[test]
fn the_first_answer_is_found_as_any_other_and_never_after_it_is_replaced() {
    // The first key written plainly, escaped, or spaced: found as the scan finds it.
    for text in [
        r#"{"region": {"action": "decline"}, "b": {"action": "cancel"}}"#,
        r#"{"re\u0067ion": {"action": "decline"}, "b": {"action": "cancel"}}"#,
        r#"{ "region" :{"action": "decline"} , "b":{"action": "cancel"}}"#,
    ] {
        let answers = read(text).unwrap();
        assert_eq!(
            answers.text("region"),
            Some(r#"{"action": "decline"}"#),
            "{text}"
        );
        assert_eq!(answers.text("b"), Some(r#"{"action": "cancel"}"#), "{text}");
        assert!(answers.text("regio").is_none() && answers.text("regions").is_none());
    }
    // Replaced, the first answer is the new one (the map's text was written again).
    let mut answers = read(r#"{"region": {"action": "decline"}}"#).unwrap();
    let accept = ElicitResult::new(ElicitResultAction::Accept);
    answers
        .insert("region", InputResponse::Elicit(accept))
        .unwrap();
    let region = answers.get::<method::Elicit>("region").unwrap().unwrap();
    assert_eq!(region.action, ElicitResultAction::Accept);
    assert_eq!(answers.len(), 1);
    // A clone finds it too.
    let copy = read(r#"{"x": 1, "region": 2}"#).unwrap().clone();
    assert_eq!(
        (copy.text("x"), copy.text("region")),
        (Some("1"), Some("2"))
    );
}
