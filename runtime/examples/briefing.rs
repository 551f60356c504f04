//! The seed's briefing prompt: it asks who the briefing is for, then drafts it.
//!
//! A high-level server's prompt function returns an `InputRequiredResult` itself and
//! reads the retry's answer from its context; the automatic client answers.
//!
//! ```sh
//! cargo run -p tern-mcp --example briefing
//! ```

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{
    ContentBlock, ElicitValue, GetPromptOutcome, GetPromptResult, PromptMessage, Role, method,
};

async fn briefing(_args: NoArgs, ctx: ToolContext) -> Result<GetPromptOutcome, ToolError> {
    let audience = ctx
        .input_responses()
        .and_then(|r| r.get::<method::Elicit>("audience"))
        .and_then(Result::ok)
        .and_then(|answer| answer.content)
        .and_then(|content| match content.get("audience") {
            Some(ElicitValue::String(a)) => Some(a.clone()),
            _ => None,
        });
    let Some(audience) = audience else {
        let question = ask::elicit_form(
            "Who is the briefing for?",
            json!({"type": "object", "properties": {"audience": {"type": "string"}}, "required": ["audience"]}),
        )?;
        println!("server: asking who the briefing is for");
        return Ok(ask::input_required([("audience", question)], None).into());
    };
    let text = format!("Write a briefing for {audience}.");
    Ok(GetPromptResult::new(vec![PromptMessage::new(ask::text(text), Role::User)]).into())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = McpServer::new("Briefing", "1.0.0");
    mcp.prompt("briefing")
        .description("Draft a briefing tuned to its audience.")
        .run(briefing);

    let (client_end, server_end) = memory::pair();
    let server = mcp.server()?;
    tokio::spawn(async move { server.serve(server_end).await });

    let client = Client::builder("briefing-example", "1.0.0")
        .on_elicitation(|ctx, _params| async move {
            println!(
                "client: {:?} asked; answering \"the board\"",
                ctx.key.unwrap_or_default()
            );
            Ok(ask::accept([("audience", "the board")]))
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await?;
    let prompt = client.get_prompt("briefing", None).await?;
    for message in &prompt.messages {
        if let ContentBlock::Text(t) = &message.content {
            println!("{}", t.text);
        }
    }
    Ok(())
}
