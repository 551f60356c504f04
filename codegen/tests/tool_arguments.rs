//! A tool call's `arguments` stay the JSON text they came in (`ToolArguments`): checked
//! to be an object when read, decoded straight from the text when the tool asks.

#![allow(clippy::unwrap_used)]

use serde::Deserialize;
use serde_json::json;
use tern_types::v2026_07_28::{CallToolRequestParams, ToolArguments};

#[derive(Debug, Deserialize, PartialEq)]
struct Provision {
    name: String,
    size: u32,
}

#[test]
fn a_call_keeps_its_arguments_as_text_and_a_tool_decodes_them() {
    let params: CallToolRequestParams = serde_json::from_str(
        r#"{"name": "provision", "arguments": {"size": 3, "na\u006de": "orders", "name": "db"}}"#,
    )
    .unwrap();
    let arguments = params.arguments.as_ref().unwrap();
    assert_eq!(
        arguments.as_str(),
        r#"{"size": 3, "na\u006de": "orders", "name": "db"}"#
    );
    // A repeated key counts as a map would count it: the last one.
    assert_eq!(arguments.get("name"), Some(json!("db")));
    assert_eq!(arguments.get_raw("size").unwrap().get(), "3");
    assert!(arguments.contains_key("size") && !arguments.contains_key("region"));
    assert!(!arguments.is_empty() && ToolArguments::new().is_empty());
    let decoded: Result<Provision, _> = arguments.decode();
    assert!(decoded.is_err(), "serde refuses a field given twice");
    let once: ToolArguments = serde_json::from_str(r#"{"name":"db","size":3}"#).unwrap();
    assert_eq!(
        once.decode::<Provision>().unwrap(),
        Provision {
            name: "db".into(),
            size: 3
        }
    );
}

#[test]
fn arguments_that_are_not_an_object_are_refused() {
    for text in [r#"[1]"#, r#""x""#, "3", "null"] {
        let params = format!(r#"{{"name":"t","arguments":{text}}}"#);
        let read: Result<CallToolRequestParams, _> = serde_json::from_str(&params);
        if text == "null" {
            // `null` is the member left out.
            assert!(read.is_err() || read.unwrap().arguments.is_none());
        } else {
            assert!(read.is_err(), "{text}");
        }
    }
    assert!(ToolArguments::from_value(&json!([1])).is_err());
    assert!(ToolArguments::try_from(json!("x")).is_err());
}

#[test]
fn arguments_round_trip_as_written_and_compare_as_values() {
    let spaced: ToolArguments = serde_json::from_str(r#"{ "b": [1, 2], "a": null }"#).unwrap();
    let compact = ToolArguments::from(json!({"a": null, "b": [1, 2]}).as_object().unwrap());
    assert_eq!(spaced, compact);
    assert_ne!(spaced, ToolArguments::new());
    let mut params = CallToolRequestParams::new("t");
    params.arguments = Some(spaced);
    assert_eq!(
        serde_json::to_string(&params).unwrap(),
        r#"{"arguments":{ "b": [1, 2], "a": null },"name":"t"}"#
    );
    assert_eq!(compact.to_map().unwrap()["b"], json!([1, 2]));
}
