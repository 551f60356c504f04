//! Results as a person reads them: text as text, structured content as pretty JSON,
//! images and audio as their type and size, links as name and URI. The server's text is
//! kept as it came (JSON with its controls as JSON escapes); the caller neutralizes the
//! whole (`safe::text`) on its way to the terminal.

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use crate::error::{CliError, Result};
use crate::notices::Ui;
use crate::{exit, safe};

/// Which result it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Call,
    Prompt,
    Read,
}

/// The result `value` (a complete result of `kind`) as text.
pub(crate) fn result(kind: Kind, value: &Value) -> String {
    let mut out = Vec::new();
    match kind {
        Kind::Call => {
            if value["isError"].as_bool() == Some(true) {
                out.push("the tool reported an error:".to_owned());
            }
            for b in value["content"].as_array().into_iter().flatten() {
                out.push(block(b));
            }
            if let Some(structured) = value.get("structuredContent").filter(|v| !v.is_null()) {
                out.push(format!("structured content:\n{}", json(structured)));
            }
        }
        Kind::Prompt => {
            if let Some(description) = value["description"].as_str() {
                out.push(description.to_owned());
            }
            for m in value["messages"].as_array().into_iter().flatten() {
                let role = m["role"].as_str().unwrap_or("?");
                out.push(format!("{role}: {}", block(&m["content"])));
            }
        }
        Kind::Read => {
            for c in value["contents"].as_array().into_iter().flatten() {
                out.push(contents(c));
            }
        }
    }
    out.join("\n")
}

/// Pretty JSON.
pub(crate) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Pretty JSON whose every control is a JSON escape, so it reads as JSON on a terminal.
fn json(value: &Value) -> String {
    safe::json(&pretty(value)).into_owned()
}

/// One content block.
fn block(b: &Value) -> String {
    let text = |key: &str| b[key].as_str().unwrap_or_default().to_owned();
    match b["type"].as_str() {
        Some("text") => text("text"),
        Some(kind @ ("image" | "audio")) => {
            format!("[{kind} {}, {}]", text("mimeType"), size(&b["data"]))
        }
        Some("resource_link") => format!("[link] {} <{}>", text("name"), text("uri")),
        Some("resource") => format!("[resource] {}", contents(&b["resource"])),
        _ => json(b),
    }
}

/// A resource's contents: text under a heading, a blob as its type and size.
fn contents(c: &Value) -> String {
    let uri = c["uri"].as_str().unwrap_or_default();
    let mime = c["mimeType"]
        .as_str()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    match (c["text"].as_str(), c.get("blob")) {
        (Some(text), _) => format!("{uri}{mime}\n{text}"),
        (None, Some(blob)) => format!("{uri}{mime}, {}", size(blob)),
        (None, None) => json(c),
    }
}

/// The decoded size of base64 data.
fn size(data: &Value) -> String {
    let text = data.as_str().unwrap_or_default();
    match base64::engine::general_purpose::STANDARD.decode(text) {
        Ok(bytes) => format!("{} bytes", bytes.len()),
        Err(_) => format!("{} characters of undecodable base64", text.len()),
    }
}

/// Prints a complete result; the exit code it makes.
pub(crate) fn print_result<T: Serialize>(
    ui: &Ui,
    kind: Kind,
    outcome: &T,
    json: bool,
) -> Result<u8> {
    ui.finish();
    let value = serde_json::to_value(outcome).map_err(|e| CliError::Prompt(e.to_string()))?;
    if json {
        println!("{}", safe::json(&pretty(&value)));
    } else {
        println!("{}", safe::text(&result(kind, &value)));
    }
    Ok(
        if kind == Kind::Call && value["isError"].as_bool() == Some(true) {
            exit::TOOL_ERROR
        } else {
            exit::DONE
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_read_as_text_sizes_and_links() {
        let value = json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAEC", "mimeType": "image/png"},
            {"type": "resource_link", "name": "doc", "uri": "file:///doc"}
        ], "structuredContent": {"a": 1}});
        assert_eq!(
            result(Kind::Call, &value),
            "hi\n[image image/png, 3 bytes]\n[link] doc <file:///doc>\nstructured content:\n{\n  \"a\": 1\n}"
        );
    }
}
