//! How the gateway names what its upstreams name: a named upstream's tools, prompts,
//! questions and task ids are served as `NAME.x`, and what its clients send back under
//! those names goes to the upstream without `NAME.`; an unnamed upstream's keep their
//! own names both ways.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::{RawResult, RpcError};
use crate::types::v2026_07_28::{InputRequests, InputResponses};

/// The separator between an upstream's name and the name of one of its things.
pub(super) const SEPARATOR: char = '.';

/// `own` as the gateway serves it for the upstream called `name`, if it has a name.
pub(super) fn served(name: Option<&str>, own: &str) -> String {
    match name {
        Some(name) => format!("{name}{SEPARATOR}{own}"),
        None => own.to_owned(),
    }
}

/// `served` as the upstream called `name` knows it: `NAME.` taken off, or `None` when
/// it is not one of that upstream's.
pub(super) fn own<'a>(name: &str, served: &'a str) -> Option<&'a str> {
    served
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(SEPARATOR))
}

/// An upstream's questions as the gateway asks them.
pub(super) fn questions(name: Option<&str>, requests: InputRequests) -> InputRequests {
    match name {
        None => requests,
        Some(name) => InputRequests(
            requests
                .0
                .into_iter()
                .map(|(key, request)| (served(Some(name), &key), request))
                .collect(),
        ),
    }
}

/// The answers meant for the upstream called `name`, under its own keys: for a named
/// upstream, only those keyed `NAME.key`.
pub(super) fn answers(
    name: Option<&str>,
    responses: &InputResponses,
) -> Result<InputResponses, RpcError> {
    let Some(name) = name else {
        return Ok(responses.clone());
    };
    let mut theirs = InputResponses::new();
    for (key, answer) in responses.iter() {
        if let Some(key) = own(name, &key) {
            theirs
                .insert_raw(key, answer)
                .map_err(|e| RpcError::invalid_params(format!("Invalid inputResponses: {e}")))?;
        }
    }
    Ok(theirs)
}

/// Whether a relayed result is a task (`resultType: "task"`) rather than the method's.
pub(super) fn is_task(result: &RawResult) -> bool {
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(rename = "resultType")]
        result_type: Option<String>,
    }
    // A look at the text taken for the result first, which holds all of it.
    result.taken().contains(r#""task""#)
        && result
            .decode::<Kind>()
            .is_ok_and(|k| k.result_type.as_deref() == Some("task"))
}

/// A task the upstream called `name` answered a call with, as the gateway serves it.
pub(super) fn task(name: Option<&str>, result: &RawResult) -> Result<Box<RawValue>, String> {
    let Some(name) = name else {
        return RawValue::from_string(result.get().to_owned()).map_err(|e| e.to_string());
    };
    let mut value: Value = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    task_outward(name, &mut value);
    serde_json::value::to_raw_value(&value).map_err(|e| e.to_string())
}

/// A task's members as the gateway serves them: its id, wherever it is named (at the
/// top, or in `task`), and the keys of its questions, `NAME.x`.
pub(super) fn task_outward(name: &str, value: &mut Value) {
    rewrite(value, &|text| served(Some(name), text));
}

/// What the gateway's client sent about a task, as the upstream called `name` knows
/// it: the task id and the keys of its answers without `NAME.`.
pub(super) fn task_inward(name: &str, value: &mut Value) {
    rewrite(value, &|text| own(name, text).unwrap_or(text).to_owned());
}

/// Renames, with `f`, the task ids (`taskId`, at the top or in `task`) and the keys of
/// `inputRequests` and `inputResponses` in `value`.
fn rewrite(value: &mut Value, f: &dyn Fn(&str) -> String) {
    let Some(members) = value.as_object_mut() else {
        return;
    };
    if let Some(Value::String(id)) = members.get_mut("taskId") {
        *id = f(id);
    }
    if let Some(task) = members.get_mut("task") {
        rewrite(task, f);
    }
    for keyed in ["inputRequests", "inputResponses"] {
        if let Some(Value::Object(map)) = members.get_mut(keyed) {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(key, v)| (f(&key), v))
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_named_upstreams_things_are_served_under_its_name_and_taken_back_from_it() {
        assert_eq!(served(Some("weather"), "forecast"), "weather.forecast");
        assert_eq!(served(None, "forecast"), "forecast");
        assert_eq!(own("weather", "weather.forecast"), Some("forecast"));
        assert_eq!(own("weather", "weather.a.b"), Some("a.b"));
        assert_eq!(own("weather", "weatherforecast"), None);
        assert_eq!(own("weather", "files.read"), None);
    }

    #[test]
    fn answers_reach_only_the_upstream_they_are_keyed_for() {
        let mut sent = InputResponses::new();
        let yes = RawValue::from_string(r#"{"action":"accept"}"#.into()).unwrap();
        sent.insert_raw("a.confirm", &yes).unwrap();
        sent.insert_raw("b.confirm", &yes).unwrap();
        sent.insert_raw("gateway.consent", &yes).unwrap();
        let to_a = answers(Some("a"), &sent).unwrap();
        assert_eq!(to_a.len(), 1);
        assert!(to_a.contains_key("confirm"));
        assert_eq!(answers(None, &sent).unwrap().len(), 3);
    }

    #[test]
    fn a_tasks_id_and_question_keys_are_renamed_both_ways() {
        let mut value = json!({
            "resultType": "task",
            "task": { "taskId": "t1", "status": "input_required" },
            "inputRequests": { "confirm": {} }
        });
        task_outward("a", &mut value);
        assert_eq!(value["task"]["taskId"], "a.t1");
        assert!(value["inputRequests"].get("a.confirm").is_some());
        let mut update = json!({ "taskId": "a.t1", "inputResponses": { "a.confirm": {} } });
        task_inward("a", &mut update);
        assert_eq!(
            update,
            json!({ "taskId": "t1", "inputResponses": { "confirm": {} } })
        );
    }
}
