//! A tool with two questions, through the in-memory transport: written with resolvers
//! (`Elicit<Region>`, `Elicit<Size>`) next to the same tool written by hand (the direct
//! form). Both run on the high-level server, so both seal their state.
//!
//! ```sh
//! cargo bench -p tern-mcp --bench resolver_flow
//! ```

#![allow(clippy::panic)] // a benchmark that cannot set up has nothing to measure

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::mcp::{Elicit, McpServer, ToolContext, ToolError};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolResult, ElicitValue, method};

#[derive(Deserialize, JsonSchema)]
struct Args {
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Deserialize, JsonSchema)]
struct Region {
    region: String,
}

/// How large should it be?
#[derive(Clone, Deserialize, JsonSchema)]
struct Size {
    gigabytes: i64,
}

fn string_answer(ctx: &ToolContext, key: &str, field: &str) -> Option<ElicitValue> {
    let answer = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    answer.content?.get(field).cloned()
}

async fn direct(args: Args, ctx: ToolContext) -> Result<CallToolOutcome, ToolError> {
    let region = string_answer(&ctx, "region", "region");
    let size = string_answer(&ctx, "size", "gigabytes");
    match (region, size) {
        (Some(ElicitValue::String(region)), Some(ElicitValue::Integer(gb))) => {
            Ok(CallToolOutcome::Complete(CallToolResult::new(vec![
                ask::text(format!("{} in {region}, {gb} GB", args.name)),
            ])))
        }
        _ => {
            let region = ask::elicit_form(
                "Which region should the database live in?",
                json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}),
            )?;
            let size = ask::elicit_form(
                "How large should it be?",
                json!({"type": "object", "properties": {"gigabytes": {"type": "integer"}}, "required": ["gigabytes"]}),
            )?;
            Ok(ask::input_required([("region", region), ("size", size)], Some("asked")).into())
        }
    }
}

fn setup(rt: &tokio::runtime::Runtime) -> Client {
    rt.block_on(async {
        let mcp = McpServer::new("bench", "1.0.0");
        mcp.tool("resolved").resolve(
            |args: Args, region: Elicit<Region>, size: Elicit<Size>| async move {
                let region = region.accepted().map(|r| r.region).unwrap_or_default();
                let gb = size.accepted().map_or(0, |s| s.gigabytes);
                Ok(format!("{} in {region}, {gb} GB", args.name))
            },
        );
        mcp.tool("direct").run(direct);
        let server = match mcp.server() {
            Ok(s) => s,
            Err(e) => panic!("server: {e}"),
        };
        let (client_end, server_end) = memory::pair();
        tokio::spawn(async move { server.serve(server_end).await });
        Client::builder("bench", "1.0.0")
            .on_elicitation(|_ctx, params| async move {
                let tern_mcp::types::v2026_07_28::ElicitRequestParams::Form(form) = params else {
                    return Ok(ask::decline());
                };
                Ok(if form.message.starts_with("Which region") {
                    ask::accept([("region", ElicitValue::from("eu-west-1"))])
                } else {
                    ask::accept([("gigabytes", ElicitValue::from(20i64))])
                })
            })
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(client_end)
            .await
            .unwrap_or_else(|e| panic!("client: {e}"))
    })
}

fn flows(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("runtime: {e}"),
    };
    let client = setup(&rt);
    let mut group = c.benchmark_group("two_question_tool_in_memory");
    group.throughput(Throughput::Elements(1));
    for tool in ["resolved", "direct"] {
        group.bench_function(tool, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let result = client.call_tool(tool, json!({"name": "orders"})).await;
                    match result {
                        Ok(r) => assert_ne!(r.is_error, Some(true)),
                        Err(e) => panic!("{e}"),
                    }
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, flows);
criterion_main!(benches);
