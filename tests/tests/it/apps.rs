//! MCP Apps on an `McpServer`: the extension declared, a tool linked to its `ui://`
//! page, the page served as `text/html;profile=mcp-app`, both `_meta.ui` valid against
//! the pinned MCP Apps schema; what a client sees follows what it declares; a tool with
//! an app still asks through MRTR. In both eras.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tern_mcp::apps::{AppHost, AppTool, Apps, ClientApps, MIME_TYPE};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::mcp::{Elicit, McpServer, ToolError};
use tern_mcp::transport::memory;
use tern_mcp::types::ext_apps::{
    EXTENSION_ID as EXTENSION, McpUiResourceMeta, McpUiToolVisibility,
};
use tern_mcp::types::v2026_07_28::{AnyResourceContents, RequestParams, method};
use tern_tests::text_of;

/// The everything example's app, as the example registers it.
#[path = "../../../runtime/examples/support/everything_apps.rs"]
mod everything_apps;

const PAGE: &str = "ui://weather/view";

#[derive(Deserialize, JsonSchema)]
struct Where {
    city: String,
}

/// Which unit should the temperature be in?
#[derive(Clone, Debug, Deserialize, JsonSchema)]
struct Unit {
    unit: String,
}

fn server() -> McpServer {
    let mut meta = McpUiResourceMeta::new();
    meta.prefers_border = Some(true);
    meta.domain = Some("weather.example".into());
    let apps = Apps::new()
        .page(PAGE, "weather", "<!doctype html><p>sunny</p>", meta)
        .unwrap();
    let mcp = McpServer::new("weather", "1").extension(apps);
    mcp.tool("forecast")
        .description("The forecast, shown on the weather page where apps render")
        .extension(AppTool::new(PAGE))
        .resolve(|args: Where, unit: Elicit<Unit>| async move {
            let unit = unit.accepted().map(|u| u.unit).unwrap_or_default();
            Ok::<_, ToolError>(format!("{}: 21 degrees {unit}", args.city))
        });
    mcp.tool("summarize")
        .description("For the model alone: an app may not call it")
        .extension(AppTool::new(PAGE).visibility([McpUiToolVisibility::Model]))
        .run(|_: tern_mcp::mcp::NoArgs, _| async { Ok::<_, ToolError>("summary") });
    mcp.tool("refresh")
        .description("Refreshes the page's data; for the app alone")
        .extension(AppTool::new(PAGE).visibility([McpUiToolVisibility::App]))
        .run(|_: tern_mcp::mcp::NoArgs, _| async { Ok::<_, ToolError>("refreshed") });
    mcp
}

async fn client(era: EraMode, host: bool) -> Client {
    client_declaring(era, host.then(ClientApps::default)).await
}

/// A client of the weather server that speaks `apps`, if given.
async fn client_declaring(era: EraMode, apps: Option<ClientApps>) -> Client {
    let (client_end, server_end) = memory::pair();
    let mcp = server();
    tokio::spawn(async move { mcp.serve(server_end).await });
    let builder = Client::builder("host", "1").era(era);
    let builder = match apps {
        Some(apps) => builder.extension(apps),
        None => builder,
    };
    builder
        .on_elicitation(|_, _| async { Ok(tern_mcp::ask::accept([("unit", "celsius")])) })
        .connect(client_end)
        .await
        .unwrap()
}

/// The pinned MCP Apps schema's definition `name`, as a validator.
fn pinned(name: &str) -> jsonschema::Validator {
    let path = tern_tests::workspace_root().join("schema/ext-apps/2.0.4/schema.json");
    let text = std::fs::read_to_string(&path).expect("run schema/fetch");
    let schema: Value = serde_json::from_str(&text).unwrap();
    // Each definition is a schema of its own: its references point into its own `$defs`.
    jsonschema::draft202012::new(&schema["$defs"][name]).unwrap()
}

fn ui_of(meta: Option<&Map<String, Value>>) -> Option<&Value> {
    meta?.get("ui")
}

#[tokio::test]
async fn a_host_sees_the_link_and_the_page_and_both_meta_ui_are_valid_in_both_eras() {
    let tool_meta = pinned("McpUiToolMeta");
    let resource_meta = pinned("McpUiResourceMeta");
    for era in [EraMode::Stateless, EraMode::Session] {
        let client = client(era, true).await;
        if era == EraMode::Stateless {
            let discovered = client
                .request::<method::Discover>(RequestParams::default())
                .await
                .unwrap();
            assert!(
                discovered
                    .capabilities
                    .extensions
                    .unwrap_or_default()
                    .contains_key(EXTENSION)
            );
        }
        let tools = client.list_all::<method::ListTools>().await.unwrap();
        let forecast = tools.iter().find(|t| t.name == "forecast").unwrap();
        let ui = ui_of(forecast.meta.as_deref()).expect("the link is listed");
        assert_eq!(ui["resourceUri"], PAGE);
        assert!(tool_meta.is_valid(ui), "{ui}");
        assert_eq!(forecast.meta.as_ref().unwrap()["ui/resourceUri"], PAGE);
        let refresh = tools.iter().find(|t| t.name == "refresh").unwrap();
        assert_eq!(
            ui_of(refresh.meta.as_deref()).unwrap()["visibility"],
            json!(["app"])
        );

        let resources = client.list_all::<method::ListResources>().await.unwrap();
        let page = resources
            .iter()
            .find(|r| r.uri == PAGE)
            .expect("the page is listed");
        assert_eq!(page.mime_type.as_deref(), Some(MIME_TYPE));
        let listed_ui = ui_of(page.meta.as_deref()).unwrap();
        assert!(resource_meta.is_valid(listed_ui), "{listed_ui}");

        let read = client.read_resource(PAGE).await.unwrap();
        let AnyResourceContents::Text(content) = &read.contents[0] else {
            panic!("the page is text");
        };
        assert_eq!(content.mime_type.as_deref(), Some(MIME_TYPE));
        assert!(content.text.contains("sunny"));
        let read_ui = ui_of(content.meta.as_deref()).unwrap();
        assert!(resource_meta.is_valid(read_ui), "{read_ui}");
        assert_eq!(read_ui["prefersBorder"], true);
        assert_eq!(read_ui["domain"], "weather.example");
    }
}

#[tokio::test]
async fn a_client_without_the_extension_sees_plain_tools_and_no_page() {
    // Not declared at all, or declared without the page type among its mimeTypes.
    let no_pages = Some(ClientApps::default().mime_types(["text/plain"]));
    for (era, settings) in [
        (EraMode::Stateless, None),
        (EraMode::Session, None),
        (EraMode::Stateless, no_pages.clone()),
        (EraMode::Session, no_pages),
    ] {
        let client = client_declaring(era, settings).await;
        let tools = client.list_all::<method::ListTools>().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["forecast", "summarize"],
            "the app-only tool is not listed"
        );
        assert!(tools[0].meta.is_none(), "no link: {:?}", tools[0].meta);
        let resources = client.list_all::<method::ListResources>().await.unwrap();
        assert!(resources.iter().all(|r| r.uri != PAGE));
        // The text content is the fallback, and the tool still asks through MRTR.
        let result = client
            .call_tool("forecast", json!({"city": "Lisbon"}))
            .await
            .unwrap();
        assert_eq!(text_of(&result), "Lisbon: 21 degrees celsius");
    }
}

#[tokio::test]
async fn a_tool_with_an_app_still_asks_through_mrtr() {
    let client = client(EraMode::Stateless, true).await;
    let result = client
        .call_tool("forecast", json!({"city": "Porto"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Porto: 21 degrees celsius");
}

#[test]
fn a_page_that_is_not_ui_or_twice_is_refused() {
    let page = |uri: &str| Apps::new().page(uri, "p", "<p>", McpUiResourceMeta::new());
    for bad in ["https://example.com/app", "ui://", "file:///app.html"] {
        let err = page(bad).unwrap_err().to_string();
        assert!(err.contains("ui://"), "{bad}: {err}");
    }
    let twice = page("ui://a/b")
        .unwrap()
        .page("ui://a/b", "again", "<p>", McpUiResourceMeta::new())
        .unwrap_err();
    assert!(twice.to_string().contains("already"), "{twice}");
}

#[tokio::test]
async fn a_host_on_terns_client_answers_its_apps_view_and_relays_its_calls_through_mrtr() {
    let client = client(EraMode::Stateless, true).await;
    let tools = client.list_all::<method::ListTools>().await.unwrap();
    let forecast = tools.iter().find(|t| t.name == "forecast").unwrap();
    assert_eq!(AppHost::page_of(forecast), Some(PAGE));
    let host = AppHost::new(client, "test-host", "1.0.0");
    assert!(host.read_page(PAGE).await.unwrap().contains("sunny"));

    // The view's messages, as postMessage would carry them.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "appInfo": {"name": "view", "version": "1"}, "appCapabilities": {},
        "protocolVersion": "2026-01-26"}});
    let answer = host.handle(&initialize).await.unwrap();
    assert_eq!(answer["id"], 1);
    assert!(
        pinned("McpUiInitializeResult").is_valid(&answer["result"]),
        "{answer}"
    );
    assert_eq!(answer["result"]["hostInfo"]["name"], "test-host");
    let initialized = json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"});
    assert_eq!(host.handle(&initialized).await, None);

    // The tool asks (MRTR): the host's client callback answers, the view gets the result.
    let call = |id: u64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": {"city": "Faro"}}})
    };
    let answer = host.handle(&call(2, "forecast")).await.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Faro: 21 degrees celsius"
    );
    let answer = host.handle(&call(3, "refresh")).await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "refreshed");
    let answer = host.handle(&call(4, "summarize")).await.unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let unknown = json!({"jsonrpc": "2.0", "id": 5, "method": "ui/open-link", "params": {"url": "https://example.com"}});
    assert_eq!(
        host.handle(&unknown).await.unwrap()["error"]["code"],
        -32601
    );

    // What the host tells the view: JSON-RPC notifications whose method and params are
    // valid against the pinned schema (which describes them without the envelope).
    let message = |mut m: Value| {
        assert_eq!(m["jsonrpc"], "2.0");
        m.as_object_mut().unwrap().remove("jsonrpc");
        m
    };
    let input = message(AppHost::tool_input(
        json!({"city": "Faro"}).as_object().cloned().unwrap(),
    ));
    assert!(
        pinned("McpUiToolInputNotification").is_valid(&input),
        "{input}"
    );
    let result = tern_mcp::types::v2026_07_28::CallToolResult::new(vec![tern_mcp::ask::text("ok")]);
    let output = message(AppHost::tool_result(&result));
    assert!(
        pinned("McpUiToolResultNotification").is_valid(&output),
        "{output}"
    );
}

#[tokio::test]
async fn the_everything_examples_app_is_declared_linked_and_valid_in_both_eras() {
    for era in [EraMode::Stateless, EraMode::Session] {
        let mcp = McpServer::new("everything", "1").extension(everything_apps::apps().unwrap());
        everything_apps::register(&mcp);
        let (client_end, server_end) = memory::pair();
        tokio::spawn(async move { mcp.serve(server_end).await });
        let client = Client::builder("host", "1")
            .era(era)
            .extension(ClientApps::default())
            .connect(client_end)
            .await
            .unwrap();
        let tools = client.list_all::<method::ListTools>().await.unwrap();
        let greet = tools.iter().find(|t| t.name == "app_greet").unwrap();
        let ui = ui_of(greet.meta.as_deref()).unwrap();
        assert_eq!(ui["resourceUri"], everything_apps::GREETER);
        assert!(pinned("McpUiToolMeta").is_valid(ui), "{ui}");
        let read = client
            .read_resource(everything_apps::GREETER)
            .await
            .unwrap();
        let AnyResourceContents::Text(page) = &read.contents[0] else {
            panic!("the page is text");
        };
        assert_eq!(page.mime_type.as_deref(), Some(MIME_TYPE));
        let page_ui = ui_of(page.meta.as_deref()).unwrap();
        assert!(pinned("McpUiResourceMeta").is_valid(page_ui), "{page_ui}");
        let result = client
            .call_tool("app_greet", json!({"name": "test"}))
            .await
            .unwrap();
        assert_eq!(text_of(&result), "Hello, test! (from tern)");
    }
}
