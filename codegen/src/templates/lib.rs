//! MCP protocol types generated from the official JSON schema.
//!
//! One module per protocol version, each behind its cargo feature:
//! `v2026_07_28` (default) and `v2025_11_25`; and one per extension, on top of
//! 2026-07-28: `ext_tasks` (`io.modelcontextprotocol/tasks`), `ext_skills`
//! (`io.modelcontextprotocol/skills`) and `ext_apps` (MCP Apps,
//! `io.modelcontextprotocol/ui`). Every module holds the schema's types,
//! a marker type per method (in `method`), the unions with discriminating decoders,
//! and, for 2026-07-28, the "complete or input-required" [`v2026_07_28::Outcome`].
//!
//! ```
//! # #[cfg(feature = "v2026_07_28")] {
//! use tern_types::rpc::Request;
//! use tern_types::v2026_07_28::{ContentBlock, method::CallTool};
//!
//! assert_eq!(CallTool::METHOD, "tools/call");
//! let block: ContentBlock = serde_json::from_str(r#"{"type":"audio","data":"AA==","mimeType":"audio/wav"}"#).unwrap();
//! assert!(matches!(block, ContentBlock::Audio(_)));
//! # }
//! ```
#![deny(missing_docs)]

#[rustfmt::skip]
pub mod rpc;

#[cfg(feature = "v2026_07_28")]
#[rustfmt::skip]
pub mod v2026_07_28;

#[cfg(feature = "v2025_11_25")]
#[rustfmt::skip]
pub mod v2025_11_25;

#[cfg(feature = "ext_tasks")]
#[rustfmt::skip]
pub mod ext_tasks;

#[cfg(feature = "ext_skills")]
#[rustfmt::skip]
pub mod ext_skills;

#[cfg(feature = "ext_apps")]
#[rustfmt::skip]
pub mod ext_apps;
