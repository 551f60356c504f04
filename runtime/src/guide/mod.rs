//! The guide: multi round-trip requests in tern, chapter by chapter.
//!
//! Each chapter is a page of this module, and every code block in it is a doctest that
//! compiles and runs (`cargo test --doc -p tern --all-features`), so the guide cannot
//! drift from the API it describes. Read them in order:
//!
//! 1. [`returning`]: return, don't call back: the shape of a flow.
//! 2. [`server_side`]: the low-level server's two result types.
//! 3. [`beyond_tools`]: prompts and resource templates ask the same way.
//! 4. [`client_loop`]: the automatic client loop, its round cap and backoff.
//! 5. [`manual_loop`]: driving the loop yourself, inspecting and persisting rounds.
//! 6. [`resolvers`]: resolvers, and why they exclude the direct form.
//! 7. [`securing_state`]: what the seal binds, instances and keys, rotation, failures.
//!
//! Chapters on hand-built state, eras, tasks and authorization are still to come; until
//! then the docs of [`seal`](crate::seal), [`server`](crate::server) and
//! [`client`](crate::client) and the repository's `ARCHITECTURE.md` cover them.

#[doc = include_str!("returning.md")]
pub mod returning {}

#[doc = include_str!("server_side.md")]
pub mod server_side {}

#[doc = include_str!("beyond_tools.md")]
pub mod beyond_tools {}

#[doc = include_str!("client_loop.md")]
pub mod client_loop {}

#[doc = include_str!("manual_loop.md")]
pub mod manual_loop {}

#[doc = include_str!("resolvers.md")]
pub mod resolvers {}

#[doc = include_str!("securing_state.md")]
pub mod securing_state {}
