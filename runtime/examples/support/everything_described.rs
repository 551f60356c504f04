//! The `everything` server's described entries: a tool, a prompt, a resource and a
//! template, each with a title, an icon, `_meta` and (where the schema has them)
//! annotations, for clients that draw them (`tests/interop/listing_client.py` reads
//! them through the Python SDK).

use std::collections::BTreeMap;

use serde_json::json;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::types::v2026_07_28::{Annotations, Icon, Role, ToolAnnotations};

/// The icon every described entry shows.
fn icon() -> Icon {
    let mut icon = Icon::new("https://example.com/icons/described.png");
    icon.mime_type = Some("image/png".into());
    icon.sizes = Some(vec!["48x48".into()]);
    icon
}

/// The `_meta` every described entry carries.
fn meta(kind: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut meta = serde_json::Map::new();
    meta.insert("com.example/kind".into(), json!(kind));
    meta
}

pub(crate) fn register(mcp: &McpServer) {
    let mut hints = ToolAnnotations::new();
    hints.read_only_hint = Some(true);
    hints.idempotent_hint = Some(true);
    mcp.tool("described_tool")
        .description("Answers with a greeting; listed with a title, an icon, _meta and hints")
        .title("Described tool")
        .icons([icon()])
        .meta(meta("tool"))
        .annotations(hints)
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("Hello from a described tool.") });
    mcp.prompt("described_prompt")
        .description("A prompt listed with a title, an icon and _meta")
        .title("Described prompt")
        .icons([icon()])
        .meta(meta("prompt"))
        .run(|_: NoArgs, _ctx| async { Ok("Say hello.".to_owned()) });
    let mut annotations = Annotations::new();
    annotations.audience = Some(vec![Role::User]);
    annotations.priority = Some(0.5);
    mcp.resource("test://described", "described_resource")
        .description("A resource listed with a title, an icon, _meta and annotations")
        .title("Described resource")
        .icons([icon()])
        .meta(meta("resource"))
        .annotations(annotations.clone())
        .mime_type("text/plain")
        .read(|| async { Ok("Described.") });
    mcp.resource_template("test://described/{id}", "described_template")
        .description("A template listed with a title, an icon, _meta and annotations")
        .title("Described template")
        .icons([icon()])
        .meta(meta("template"))
        .annotations(annotations)
        .read(|variables: BTreeMap<String, String>, _ctx| async move {
            let id = variables.get("id").cloned().unwrap_or_default();
            Ok(format!("Described {id}."))
        });
}
