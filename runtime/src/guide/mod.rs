//! The guide: multi round-trip requests in tern, chapter by chapter.
//!
//! Each chapter is a page of this module, and every code block in it is a doctest that
//! compiles and runs (`cargo test --doc -p tern`), so the guide cannot drift from the API
//! it describes. Read them in order:
//!
//! 1. [`returning`]: return, don't call back: the shape of a flow.
//! 2. [`server_side`]: the low-level server's two result types.
//! 3. [`beyond_tools`]: prompts and resource templates ask the same way.
//! 4. [`client_loop`]: the automatic client loop, its round cap and backoff.
//! 5. [`manual_loop`]: driving the loop yourself, inspecting and persisting rounds.
//! 6. [`resolvers`]: resolvers, and why they exclude the direct form.
//! 7. [`securing_state`]: what the seal binds, instances and keys, rotation, failures.
//! 8. [`own_codec`]: bringing your own codec, an envelope-encryption example.
//! 9. [`hand_built_state`]: hand-built state, and the question identity it must carry.
//! 10. [`eras`]: a result of 2026-07-28, and the 2025-11-25 hosts of today.
//! 11. [`tasks`]: questions from a call that has become a task.
//! 12. [`authorization`]: state bound to the principal of an access token.
//! 13. [`recap`]: the whole feature on one page.
//!
//! The chapters follow the feature's original description section by section; the
//! committed `checklist.txt` beside them says which chapter covers which section, and a
//! test holds the two together.

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

#[doc = include_str!("own_codec.md")]
pub mod own_codec {}

#[doc = include_str!("hand_built_state.md")]
pub mod hand_built_state {}

#[doc = include_str!("eras.md")]
pub mod eras {}

#[doc = include_str!("tasks.md")]
pub mod tasks {}

#[doc = include_str!("authorization.md")]
pub mod authorization {}

#[doc = include_str!("recap.md")]
pub mod recap {}

#[cfg(test)]
mod checklist;
