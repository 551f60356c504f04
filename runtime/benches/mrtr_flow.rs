//! A full multi round-trip flow in one process: `tools/call`, input-required, the
//! client's callback, the retry, complete — over the in-memory transport.
//!
//! ```sh
//! cargo bench -p tern-mcp --bench mrtr_flow
//! ```

#![allow(clippy::panic)] // a benchmark that cannot set up has nothing to measure

#[path = "../examples/support/seed.rs"]
mod seed;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tern_mcp::client::Client;
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::transport::memory;

fn client_for(rt: &tokio::runtime::Runtime, sealed: bool) -> Client {
    rt.block_on(async {
        let mut builder = seed::provision_server();
        if sealed {
            builder = builder.seal(RequestStateSecurity::ephemeral());
        }
        let server = match builder.build() {
            Ok(s) => s,
            Err(e) => panic!("server: {e}"),
        };
        let (client_end, server_end) = memory::pair();
        tokio::spawn(async move { server.serve(server_end).await });
        Client::builder("bench", "1.0.0")
            .on_elicitation(|_ctx, _p| async {
                Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
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
    let mut group = c.benchmark_group("mrtr_flow_in_memory");
    group.throughput(Throughput::Elements(1));
    for (name, sealed) in [("plain_state", false), ("sealed_state", true)] {
        let client = client_for(&rt, sealed);
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let result = client
                        .call_tool("provision", json!({"name": "orders"}))
                        .await;
                    assert!(result.is_ok(), "{result:?}");
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, flows);
criterion_main!(benches);
