//! What the Streamable HTTP server refuses, and with which status and JSON-RPC error:
//! over a real loopback socket, with a raw HTTP client that sends exactly the headers
//! each test names.

use crate::http_support;
use tern_mcp::http::HttpLimits;

use std::sync::Arc;

use serde_json::json;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::http::{HostPolicy, HttpServer};
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::ParamHeader;
use tern_mcp::types::v2026_07_28::{
    CallToolResult, ReadResourceResult, TextResourceContents, method,
};

use http_support::{body, mcp_headers, post, send, serve, set};

fn server() -> Server {
    Server::builder("rules", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, params| async move {
            let who = ctx.auth().map(|a| a.client_id.clone()).unwrap_or_default();
            let text = format!("{} by {who}", params.name);
            Ok(CallToolResult::new(vec![tern_mcp::ask::text(text)]).into())
        })
        .handle::<method::ReadResource, _, _>(|_ctx, params| async move {
            let contents = TextResourceContents::new("hi", params.uri.clone());
            Ok(ReadResourceResult::new(vec![contents.into()]).into())
        })
        .build()
        .unwrap()
}

fn sql_headers(tool: &str) -> Option<Vec<ParamHeader>> {
    (tool == "sql").then(|| {
        vec![
            ParamHeader::new("Region", ["region"]),
            ParamHeader::new("Limit", ["limit"]),
        ]
    })
}

async fn rules_server() -> std::net::SocketAddr {
    serve(HttpServer::new(server()).tool_headers(sql_headers)).await
}

fn call(name: &str) -> String {
    body(1, "tools/call", json!({"name": name, "arguments": {}}))
}

#[tokio::test]
async fn a_well_formed_call_is_answered_with_json() {
    let addr = rules_server().await;
    let r = post(
        addr,
        &mcp_headers("tools/call", Some("echo")),
        &call("echo"),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_missing_protocol_version_header_is_400_header_mismatch() {
    let addr = rules_server().await;
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "MCP-Protocol-Version", None);
    let r = post(addr, &h, &call("echo")).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
    assert_eq!(r.json()["id"], 1);
}

#[tokio::test]
async fn a_protocol_version_header_that_differs_from_meta_is_400_header_mismatch() {
    let addr = rules_server().await;
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "MCP-Protocol-Version", Some("2025-11-25"));
    let r = post(addr, &h, &call("echo")).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
}

#[tokio::test]
async fn a_missing_meta_is_400_invalid_params() {
    let addr = rules_server().await;
    let text = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let r = post(addr, &mcp_headers("tools/list", None), &text.to_string()).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{r:?}");
}

#[tokio::test]
async fn meta_without_client_capabilities_is_400_invalid_params() {
    let addr = rules_server().await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let text = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}, "_meta": meta}});
    let r = post(
        addr,
        &mcp_headers("tools/call", Some("echo")),
        &text.to_string(),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{r:?}");
    assert_eq!(r.json()["id"], 7);
}

#[tokio::test]
async fn a_missing_or_mismatched_mcp_method_header_is_400_header_mismatch() {
    let addr = rules_server().await;
    for value in [None, Some("tools/list")] {
        let mut h = mcp_headers("tools/call", Some("echo"));
        set(&mut h, "Mcp-Method", value);
        let r = post(addr, &h, &call("echo")).await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, Some(-32020)),
            "{value:?}: {r:?}"
        );
    }
}

#[tokio::test]
async fn a_missing_or_mismatched_mcp_name_header_is_400_header_mismatch() {
    let addr = rules_server().await;
    for value in [None, Some("other")] {
        let mut h = mcp_headers("tools/call", Some("echo"));
        set(&mut h, "Mcp-Name", value);
        let r = post(addr, &h, &call("echo")).await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, Some(-32020)),
            "{value:?}: {r:?}"
        );
    }
    let read = body(2, "resources/read", json!({"uri": "file:///a.txt"}));
    let r = post(
        addr,
        &mcp_headers("resources/read", Some("file:///b.txt")),
        &read,
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
    let r = post(
        addr,
        &mcp_headers("resources/read", Some("file:///a.txt")),
        &read,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_base64_encoded_mcp_name_is_decoded_before_comparing() {
    let addr = rules_server().await;
    let name = "héllo wörld";
    let encoded = tern_mcp::transport::http::encode_header_value(name);
    assert!(encoded.starts_with("=?base64?"), "{encoded}");
    let r = post(
        addr,
        &mcp_headers("tools/call", Some(&encoded)),
        &call(name),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let wrong = tern_mcp::transport::http::encode_header_value("héllo");
    let r = post(addr, &mcp_headers("tools/call", Some(&wrong)), &call(name)).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
    let r = post(
        addr,
        &mcp_headers("tools/call", Some("=?base64?%%%?=")),
        &call(name),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
}

#[tokio::test]
async fn mcp_param_headers_must_mirror_annotated_arguments() {
    let addr = rules_server().await;
    let sql =
        |args: serde_json::Value| body(1, "tools/call", json!({"name": "sql", "arguments": args}));
    let with = |params: &[(&str, &str)]| {
        let mut h = mcp_headers("tools/call", Some("sql"));
        for (n, v) in params {
            h.push(((*n).into(), (*v).into()));
        }
        h
    };
    let args = json!({"region": "us-west1", "limit": 42, "query": "SELECT 1"});
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: Vec<Case<'_>> = vec![
        (
            "both present",
            vec![("Mcp-Param-Region", "us-west1"), ("Mcp-Param-Limit", "42")],
            200,
        ),
        (
            "integers compare numerically",
            vec![
                ("Mcp-Param-Region", "us-west1"),
                ("mcp-param-limit", "42.0"),
            ],
            200,
        ),
        (
            "base64 form",
            vec![
                ("Mcp-Param-Region", "=?base64?dXMtd2VzdDE=?="),
                ("Mcp-Param-Limit", "42"),
            ],
            200,
        ),
        ("missing", vec![("Mcp-Param-Limit", "42")], 400),
        (
            "mismatched",
            vec![("Mcp-Param-Region", "eu-west1"), ("Mcp-Param-Limit", "42")],
            400,
        ),
        (
            "mismatched integer",
            vec![("Mcp-Param-Region", "us-west1"), ("Mcp-Param-Limit", "43")],
            400,
        ),
    ];
    for (what, params, status) in cases {
        let r = post(addr, &with(&params), &sql(args.clone())).await;
        assert_eq!(r.status, status, "{what}: {r:?}");
        if status == 400 {
            assert_eq!(r.error_code(), Some(-32020), "{what}");
        }
    }
    // An argument that is absent or null needs no header, and must not get one.
    let r = post(addr, &with(&[]), &sql(json!({"region": null}))).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = post(addr, &with(&[("Mcp-Param-Region", "x")]), &sql(json!({}))).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)), "{r:?}");
}

#[tokio::test]
async fn get_is_405_and_delete_is_405_in_stateless_only_mode() {
    // A dual-era endpoint serves a session's GET stream: a GET that does not take
    // text/event-stream is 406, one that names no session 400.
    let addr = rules_server().await;
    let r = send(addr, "GET", &[], "").await;
    assert_eq!(r.status, 406, "GET: {r:?}");
    let sse = [("Accept".to_owned(), "text/event-stream".to_owned())];
    let r = send(addr, "GET", &sse, "").await;
    assert_eq!(r.status, 400, "GET: {r:?}");
    let stateless_only = serve(HttpServer::new(server()).stateless_only()).await;
    for verb in ["GET", "DELETE"] {
        let r = send(stateless_only, verb, &sse, "").await;
        assert_eq!(r.status, 405, "{verb}: {r:?}");
    }
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let addr = serve(
        HttpServer::new(server()).limits(tern_tests::tuned(|l: &mut HttpLimits| {
            l.max_body_bytes = 1024
        })),
    )
    .await;
    let big = body(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"pad": "x".repeat(2048)}}),
    );
    let r = post(addr, &mcp_headers("tools/call", Some("echo")), &big).await;
    assert_eq!(r.status, 413, "{r:?}");
}

#[tokio::test]
async fn an_unknown_method_is_404_method_not_found() {
    let addr = rules_server().await;
    let text = body(7, "prompts/list", json!({}));
    let r = post(addr, &mcp_headers("prompts/list", None), &text).await;
    assert_eq!((r.status, r.error_code()), (404, Some(-32601)), "{r:?}");
    assert_eq!(r.json()["id"], 7);
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_403_and_loopback_ones_pass() {
    let addr = rules_server().await;
    let port = addr.port();
    let forbidden = [
        ("Host", "evil.example.com".to_owned()),
        ("Host", format!("evil.example.com:{port}")),
        ("Origin", "http://evil.example.com".to_owned()),
    ];
    for (name, value) in forbidden {
        let mut h = mcp_headers("tools/call", Some("echo"));
        set(&mut h, name, Some(&value));
        let r = post(addr, &h, &call("echo")).await;
        assert_eq!(r.status, 403, "{name}: {value}: {r:?}");
    }
    let allowed = [
        ("Host", format!("localhost:{port}")),
        ("Host", format!("127.0.0.1:{port}")),
        ("Origin", format!("http://localhost:{port}")),
    ];
    for (name, value) in allowed {
        let mut h = mcp_headers("tools/call", Some("echo"));
        set(&mut h, name, Some(&value));
        let r = post(addr, &h, &call("echo")).await;
        assert_eq!(r.status, 200, "{name}: {value}: {r:?}");
    }
    // The conformance probe: a non-MCP body with a good Host is not refused as a rebinding.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let r = post(
        addr,
        &[("Host".into(), format!("localhost:{port}"))],
        &init.to_string(),
    )
    .await;
    assert_ne!(r.status, 403, "{r:?}");
}

#[tokio::test]
async fn behind_a_plain_proxy_pass_the_refusal_names_the_host_and_the_setting_that_accepts_it() {
    // nginx's `proxy_pass http://fleet;` without `proxy_set_header Host` sends the
    // upstream's name as the Host.
    let addr = rules_server().await;
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "Host", Some("fleet"));
    let r = post(addr, &h, &call("echo")).await;
    assert_eq!(r.status, 403, "{r:?}");
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for part in [
        "Host \"fleet\" is not allowed",
        "localhost, 127.0.0.1 and [::1]",
        "HttpServer::hosts(HostPolicy::Allow(vec![\"fleet\".into()]))",
        "proxy_set_header Host $host;",
        "HostPolicy::Any",
    ] {
        assert!(message.contains(part), "{part:?} is not in {message:?}");
    }
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "Origin", Some("https://app.example:8443/page"));
    let r = post(addr, &h, &call("echo")).await;
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("Origin \"https://app.example:8443/page\" is not allowed")
            && message.contains("vec![\"app.example\".into()]"),
        "{message}"
    );
}

#[tokio::test]
async fn hosts_can_be_allowed_by_name_or_unchecked() {
    let named =
        serve(HttpServer::new(server()).hosts(HostPolicy::Allow(vec!["mcp.example".into()]))).await;
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "Host", Some("mcp.example:443"));
    assert_eq!(post(named, &h, &call("echo")).await.status, 200);
    set(&mut h, "Host", Some("localhost"));
    assert_eq!(post(named, &h, &call("echo")).await.status, 403);
    let open = serve(HttpServer::new(server()).hosts(HostPolicy::Any)).await;
    set(&mut h, "Host", Some("anything.example"));
    assert_eq!(post(open, &h, &call("echo")).await.status, 200);
}

struct OneToken;

impl TokenVerifier for OneToken {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let result = if token == "good" {
            Ok(AuthInfo::new("client-7"))
        } else {
            Err(AuthError::InvalidToken("unknown token".into()))
        };
        Box::pin(async move { result })
    }
}

#[tokio::test]
async fn bearer_tokens_are_verified_and_the_identity_reaches_the_handler() {
    let addr = serve(
        HttpServer::new(server())
            .token_verifier(Arc::new(OneToken))
            .resource_metadata("http://127.0.0.1/.well-known/oauth-protected-resource"),
    )
    .await;
    let mut h = mcp_headers("tools/call", Some("echo"));
    let missing = post(addr, &h, &call("echo")).await;
    assert_eq!(missing.status, 401, "{missing:?}");
    let challenge = missing.header("www-authenticate").unwrap();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(challenge.contains("resource_metadata="), "{challenge}");

    set(&mut h, "Authorization", Some("Bearer bad"));
    let bad = post(addr, &h, &call("echo")).await;
    assert_eq!(bad.status, 401);
    assert!(
        bad.header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );

    set(&mut h, "Authorization", Some("Bearer good"));
    let ok = post(addr, &h, &call("echo")).await;
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(
        ok.json()["result"]["content"][0]["text"],
        "echo by client-7"
    );
}

#[tokio::test]
async fn a_batch_or_garbage_body_is_400() {
    let addr = rules_server().await;
    let h = mcp_headers("tools/call", Some("echo"));
    let batch = format!("[{}]", call("echo"));
    for text in ["{not json", batch.as_str()] {
        let r = post(addr, &h, text).await;
        assert_eq!(r.status, 400, "{text}: {r:?}");
        assert!(matches!(r.error_code(), Some(-32700 | -32600)), "{r:?}");
    }
}

#[tokio::test]
async fn params_that_are_not_json_are_a_parse_error_whatever_else_the_request_says() {
    let addr = rules_server().await;
    // Brackets that balance around text that is not JSON: the body's envelope reads
    // well, and only reading the params finds the fault.
    let good = call("echo");
    for (method, name, text) in [
        (
            "tools/call",
            "echo",
            good.replace(r#""arguments":{}"#, r#""arguments":{"a":tru}"#),
        ),
        (
            "tools/call",
            "echo",
            good.replace(r#""arguments":{}"#, r#""arguments":{"a":[1,}"#),
        ),
        (
            "tools/call",
            "echo",
            good.replace(r#""arguments":{}"#, "\"arguments\":{\"a\":\"\u{1}\"}"),
        ),
        (
            "no/such/method",
            "echo",
            good.replace("tools/call", "no/such/method")
                .replace(r#""arguments":{}"#, r#""arguments":{]"#),
        ),
    ] {
        assert_ne!(text, good);
        // The headers disagree with the body too: the parse error is what is answered.
        let r = post(addr, &mcp_headers(method, Some(name)), &text).await;
        assert_eq!(r.status, 400, "{text}: {r:?}");
        assert_eq!(r.error_code(), Some(-32700), "{text}: {r:?}");
        let wrong = post(addr, &mcp_headers(method, Some("other")), &text).await;
        assert_eq!(wrong.error_code(), Some(-32700), "{text}: {wrong:?}");
    }
}

#[tokio::test]
async fn params_followed_by_other_members_are_read_where_they_end() {
    let addr = rules_server().await;
    let h = mcp_headers("tools/call", Some("echo"));
    let answer = post(addr, &h, &call("echo")).await.json()["result"].clone();
    assert_eq!(answer["resultType"], "complete", "{answer}");
    let sent: serde_json::Value = serde_json::from_str(&call("echo")).unwrap();
    let params = sent["params"].to_string();
    for text in [
        // First, where the TypeScript SDK writes them.
        format!(r#"{{"method":"tools/call","params":{params},"jsonrpc":"2.0","id":1}}"#),
        // Followed by a member whose value is an object too: the message ends as if
        // they closed it.
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}, "x":{{"y":{{}}}} }}"#
        ),
    ] {
        let r = post(addr, &h, &text).await;
        assert_eq!(r.status, 200, "{text}: {r:?}");
        assert_eq!(r.json()["result"], answer, "{text}");
    }
    // Params that are not JSON, followed by such a member: still a parse error.
    let bad = params.replace(r#""arguments":{}"#, r#""arguments":{"a":tru}"#);
    let text =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{bad},"x":{{}}}}"#);
    let r = post(addr, &h, &text).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32700)), "{r:?}");
}

#[tokio::test]
async fn an_unsupported_protocol_version_is_400_with_the_supported_list() {
    let addr = rules_server().await;
    let mut text: serde_json::Value = serde_json::from_str(&call("echo")).unwrap();
    text["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut h = mcp_headers("tools/call", Some("echo"));
    set(&mut h, "MCP-Protocol-Version", Some("2099-01-01"));
    let r = post(addr, &h, &text.to_string()).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32022)), "{r:?}");
    assert_eq!(
        r.json()["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
}

#[tokio::test]
async fn asking_for_an_undeclared_capability_is_400_missing_capability() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|_ctx, _p| async {
            Ok(
                tern_mcp::ask::input_required([("roots", tern_mcp::ask::list_roots())], None)
                    .into(),
            )
        })
        .build()
        .unwrap();
    let addr = serve(HttpServer::new(server)).await;
    let r = post(
        addr,
        &mcp_headers("tools/call", Some("echo")),
        &call("echo"),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32021)), "{r:?}");
}

#[tokio::test]
async fn a_repeated_routing_header_is_400_header_mismatch() {
    // A gateway that reads the last value would route another request than the one
    // the first value names: one value per routing header, or nothing is served.
    let addr = rules_server().await;
    let args = json!({"region": "us-west1", "limit": 42, "query": "SELECT 1"});
    let sql = body(1, "tools/call", json!({"name": "sql", "arguments": args}));
    let params = [("Mcp-Param-Region", "us-west1"), ("Mcp-Param-Limit", "42")];
    let repeats = [
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "other"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Param-Region", "eu-west1"),
        ("Mcp-Session-Id", "one"),
    ];
    for (name, second) in repeats {
        let mut headers = mcp_headers("tools/call", Some("sql"));
        for (n, v) in params {
            headers.push((n.into(), v.into()));
        }
        if name == "Mcp-Session-Id" {
            headers.push((name.into(), "zero".into()));
        }
        headers.push((name.into(), second.into()));
        let r = post(addr, &headers, &sql).await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, Some(-32020)),
            "{name}: {r:?}"
        );
        assert_eq!(r.json()["id"], 1, "{name}");
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(&name.to_ascii_lowercase()), "{message}");
    }
    // The same headers, each once, are served.
    let mut headers = mcp_headers("tools/call", Some("sql"));
    for (n, v) in params {
        headers.push((n.into(), v.into()));
    }
    assert_eq!(post(addr, &headers, &sql).await.status, 200);
}

/// An `McpServer`'s tool annotations reach its HTTP endpoint with nothing wired: the
/// endpoint checks `Mcp-Param-*` against the arguments of the tool that declares them.
#[tokio::test]
async fn an_mcp_server_brings_its_tools_header_annotations_to_the_endpoint() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        /// Where to run.
        #[schemars(extend("x-mcp-header" = "Region"))]
        region: String,
    }
    let mcp = tern_mcp::mcp::McpServer::new("annotated", "1");
    mcp.tool("sql")
        .run(|args: Args, _ctx: tern_mcp::mcp::ToolContext| async move { Ok(args.region) });
    let addr = serve(HttpServer::new(mcp.server().unwrap())).await;
    let call = body(
        1,
        "tools/call",
        json!({"name": "sql", "arguments": {"region": "eu"}}),
    );
    let headers = |region: &str| {
        let mut h = mcp_headers("tools/call", Some("sql"));
        h.push(("Mcp-Param-Region".into(), region.into()));
        h
    };
    let agreeing = post(addr, &headers("eu"), &call).await;
    assert_eq!(agreeing.status, 200, "{agreeing:?}");
    let disagreeing = post(addr, &headers("us"), &call).await;
    assert_eq!(
        (disagreeing.status, disagreeing.error_code()),
        (400, Some(-32020)),
        "{disagreeing:?}"
    );
}
