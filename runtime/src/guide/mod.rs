//! The guide: multi round-trip requests in tern, chapter by chapter.
//!
//! Each chapter is a page of this module, and every code block in it is a doctest that
//! compiles and runs (`cargo test --doc -p tern-mcp`), so the guide cannot drift from the API
//! it describes. Read them in order:
//!
//! 0. [`serve_and_call`]: serve it and call it, over a real transport.
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
//! 13. [`apps`]: MCP Apps, a tool shown as a page; its tool still asks.
//! 14. [`skills`]: skills a host lists, and loads only when it needs them, checked.
//! 15. [`gateway`]: a gateway relaying rounds between its clients and upstream servers.
//! 16. [`recap`]: the whole feature on one page.
//!
//! The chapters follow the feature's original description section by section; the
//! committed `checklist.txt` beside them says which chapter covers which section, and a
//! test holds the two together.

/// Declares each chapter as a doc-only module whose page is `<module>.md` (followed by
/// a drawing, `module + "file.svg"`, shown inline), in reading order, and lists the same
/// pages for the checklist test.
macro_rules! chapters {
    ($($module:ident $(+ $drawing:literal)?),* $(,)?) => {
        $(
            #[doc = include_str!(concat!(stringify!($module), ".md"))]
            $(#[doc = include_str!($drawing)])?
            pub mod $module {}
        )*

        /// Each chapter's module and page, in reading order.
        #[cfg(test)]
        const PAGES: &[(&str, &str)] = &[
            $((stringify!($module), include_str!(concat!(stringify!($module), ".md")))),*
        ];
    };
}

chapters!(
    serve_and_call + "flow.svg",
    returning,
    server_side,
    beyond_tools,
    client_loop,
    manual_loop,
    resolvers,
    securing_state,
    own_codec,
    hand_built_state,
    eras,
    tasks,
    authorization,
    apps,
    skills,
    gateway,
    recap,
);

#[cfg(test)]
mod checklist;
