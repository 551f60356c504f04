//! The servers the transport-independent flow tests run against, named, so that a child
//! process (`tests/src/bin/fixture_server.rs`) builds exactly the server the in-process
//! transports serve.

use std::fmt;

use tern_mcp::ask;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::server::{Server, ServerBuilder};
use tern_mcp::types::v2026_07_28::{CallToolResult, method};

use crate::seed;

/// One server of the flow tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixture {
    /// The seed's provision server (`runtime/examples/support/seed.rs`).
    Provision,
    /// Asks for a region three rounds running, handing out `round1`, `round2`, `round3`
    /// and refusing any other state it gets back; then answers
    /// `finished after <the last state>`.
    ThreeRounds,
    /// Asks for a region on every call, with the state `again`: never completes.
    AlwaysAsking,
}

impl Fixture {
    /// Every fixture.
    pub const ALL: [Fixture; 3] = [
        Fixture::Provision,
        Fixture::ThreeRounds,
        Fixture::AlwaysAsking,
    ];

    /// The name a child process is given on its command line.
    pub fn name(self) -> &'static str {
        match self {
            Fixture::Provision => "provision",
            Fixture::ThreeRounds => "three_rounds",
            Fixture::AlwaysAsking => "always_asking",
        }
    }

    /// The fixture called `name`.
    pub fn named(name: &str) -> Option<Fixture> {
        Fixture::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The fixture's server, ready for `.seal(..)` or `.build()`.
    pub fn builder(self) -> ServerBuilder {
        match self {
            Fixture::Provision => seed::provision_server(),
            Fixture::ThreeRounds => three_rounds(),
            Fixture::AlwaysAsking => always_asking(),
        }
    }

    /// The fixture's server, built.
    pub fn server(self) -> Result<Server, tern_mcp::ConfigError> {
        self.builder().build()
    }
}

impl fmt::Display for Fixture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many rounds [`Fixture::ThreeRounds`] asks.
const ROUNDS: u32 = 3;

fn three_rounds() -> ServerBuilder {
    Server::builder("three-rounds", "1.0").handle::<method::CallTool, _, _>(
        |_ctx, params| async move {
            // The state is the only memory a stateless server has: a round it did not hand
            // out (or a state echoed wrongly) is refused, so the client must echo each one.
            let round = match params.request_state.as_deref() {
                None => 0,
                Some(state) => state
                    .strip_prefix("round")
                    .and_then(|n| n.parse::<u32>().ok())
                    .filter(|n| (1..=ROUNDS).contains(n))
                    .ok_or_else(|| {
                        RpcError::invalid_params(format!("not a state I gave: {state:?}"))
                    })?,
            };
            if round < ROUNDS {
                let state = format!("round{}", round + 1);
                return Ok(
                    ask::input_required([("region", seed::ask_region())], Some(&state)).into(),
                );
            }
            let text = format!("finished after round{round}");
            Ok(CallToolResult::new(vec![ask::text(text)]).into())
        },
    )
}

fn always_asking() -> ServerBuilder {
    Server::builder("always-asking", "1.0").handle::<method::CallTool, _, _>(
        |_ctx, _params| async move {
            Ok(ask::input_required([("region", seed::ask_region())], Some("again")).into())
        },
    )
}
