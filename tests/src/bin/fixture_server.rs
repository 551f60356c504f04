//! One of `tern_tests::fixtures`, served on stdin/stdout: `fixture_server NAME`. The flow
//! tests spawn it through `env!("CARGO_BIN_EXE_fixture_server")` for their stdio arm.

use tern_mcp::transport::stdio::stdio;
use tern_tests::fixtures::Fixture;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args().nth(1).unwrap_or_default();
    let fixture = Fixture::named(&name).ok_or_else(|| {
        let names: Vec<&str> = Fixture::ALL.iter().map(|f| f.name()).collect();
        format!("usage: fixture_server {}", names.join("|"))
    })?;
    fixture.server()?.serve(stdio()).await?;
    Ok(())
}
