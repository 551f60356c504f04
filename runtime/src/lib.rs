//! tern: a Rust SDK for the Model Context Protocol 2026-07-28, built around multi
//! round-trip requests.
//!
//! A tool that needs something only the user has returns an `InputRequiredResult`
//! instead of calling back; the client answers and retries the same call. Here a
//! high-level server asks which region to use (a resolver: the question, the sealed
//! state and the retry are tern's job) and the automatic client answers, in one process
//! over the in-memory transport:
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use tern_mcp::ask;
//! use tern_mcp::client::Client;
//! use tern_mcp::mcp::{Elicit, McpServer, ToolError};
//! use tern_mcp::transport::memory;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ProvisionArgs {
//!     /// The database name.
//!     name: String,
//! }
//!
//! /// Which region should the database live in?
//! #[derive(Clone, Deserialize, JsonSchema)]
//! struct Region {
//!     region: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mcp = McpServer::new("Provisioner", "1.0.0");
//! mcp.tool("provision")
//!     .description("Provision a database. Asks which region to put it in.")
//!     .resolve(|args: ProvisionArgs, region: Elicit<Region>| async move {
//!         match region {
//!             Elicit::Accepted(r) => Ok(format!("Provisioned '{}' in {}.", args.name, r.region)),
//!             _ => Err(ToolError::new("no region, no database")),
//!         }
//!     });
//!
//! let (client_end, server_end) = memory::pair();
//! tokio::spawn(async move { mcp.serve(server_end).await });
//!
//! # let transport = client_end;
//! let client = Client::builder("my-app", "1.0.0")
//!     .on_elicitation(|_ctx, _params| async { Ok(ask::accept([("region", "eu-west-1")])) })
//!     .connect(transport) // any era; `.era(EraMode::Stateless)` first: 2026-07-28 without probing
//!     .await?;
//! let result = client.call_tool("provision", json!({"name": "orders"})).await?;
//! let text = serde_json::to_value(&result.content[0])?;
//! assert_eq!(text["text"], "Provisioned 'orders' in eu-west-1.");
//! # Ok(())
//! # }
//! ```
//!
//! Where things are:
//! - [`mcp`]: the high-level [`McpServer`](mcp::McpServer): tools, prompts and
//!   resources as typed async functions, resolvers.
//! - [`server`]: the low-level [`Server`](server::Server) (one handler per method,
//!   generic over the generated method types), the extension seam, and its serving on
//!   message transports (in memory, stdio).
//! - `http` (feature `http-server`): the Streamable HTTP endpoint, `HttpServer`, that
//!   serves either server.
//! - `fleet` (feature `redis`): everything a fleet of instances keeps in Redis, on one
//!   link.
//! - [`client`]: the automatic loop, the manual loop, era discovery.
//! - [`seal`]: `requestState` sealing (XChaCha20-Poly1305, bound to the request, the
//!   principal, the audience and a time window).
//! - [`transport`]: what carries bytes: in-memory, stdio (feature `stdio`), the HTTP
//!   client (feature `http-client`) and the header rules both HTTP sides share.
//! - [`types`]: the protocol's types and method table, generated from the schema.
//!
//! The [`guide`] follows the feature chapter by chapter, every example compiled and run.
//! `ARCHITECTURE.md` at the repository's root maps the crates and their rules.
//!
//! # Install
//!
//! ```toml
//! [dependencies]
//! tern-mcp = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! The crate is `tern_mcp` in code. Its features, and what each brings:
//!
#![doc = include_str!("features.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod apps;
pub mod ask;
pub mod auth;
pub mod client;
mod error;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod fleet;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod guide;
#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub mod http;
pub mod jsonrpc;
pub mod mcp;

#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod oauth;
mod protocol;
#[cfg(feature = "http-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
pub mod proxy;
pub mod seal;
pub mod server;
#[cfg(feature = "skills")]
pub mod skills;
pub mod tasks;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod transport;
mod util;

pub use error::detail::{ConfigError, InputError, ProtocolError, SkillFailure, StoreError};
pub use error::{Error, Result};
pub use protocol::era::Era;
pub use tern_types as types;
