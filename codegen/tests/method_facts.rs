//! The protocol facts the generated method tables carry, checked against the generated
//! `tern-types` of both versions.

#![allow(clippy::unwrap_used)]

use tern_types::rpc::{MethodInfo, Request, RequestVisitor};
use tern_types::{v2025_11_25, v2026_07_28};

/// Reads a marker's facts back through its trait constants.
struct Facts;

impl RequestVisitor for Facts {
    type Output = (
        &'static str,
        bool,
        bool,
        Option<&'static str>,
        Option<&'static str>,
    );
    fn visit<M: Request>(self) -> Self::Output {
        (
            M::METHOD,
            M::MAY_REQUIRE_INPUT,
            M::CACHEABLE,
            M::TARGET,
            M::CAPABILITY,
        )
    }
}

fn info_matches_the_marker(
    all: &[MethodInfo],
    visit: fn(&str, Facts) -> Option<<Facts as RequestVisitor>::Output>,
) {
    for info in all {
        match visit(info.method, Facts) {
            Some(facts) => {
                assert!(info.is_request, "{} visits but is no request", info.method);
                assert_eq!(
                    facts,
                    (
                        info.method,
                        info.may_require_input,
                        info.cacheable,
                        info.target,
                        info.capability
                    ),
                    "{}",
                    info.method
                );
            }
            None => assert!(
                !info.is_request,
                "{} is a request but does not visit",
                info.method
            ),
        }
    }
}

#[test]
fn method_info_agrees_with_the_marker_constants_in_both_versions() {
    info_matches_the_marker(v2026_07_28::method::ALL, v2026_07_28::method::visit_request);
    info_matches_the_marker(v2025_11_25::method::ALL, v2025_11_25::method::visit_request);
}

#[test]
fn only_outcome_results_may_require_input() {
    use v2026_07_28::method::{CallTool, GetPrompt, ListTools, ReadResource};
    let facts = [
        CallTool::MAY_REQUIRE_INPUT,
        GetPrompt::MAY_REQUIRE_INPUT,
        ReadResource::MAY_REQUIRE_INPUT,
        ListTools::MAY_REQUIRE_INPUT,
        v2025_11_25::method::CallTool::MAY_REQUIRE_INPUT,
    ];
    assert_eq!(facts, [true, true, true, false, false]);
}

#[test]
fn results_with_ttl_and_cache_scope_are_cacheable() {
    use v2026_07_28::method::{CallTool, Discover, ListTools, ReadResource};
    let facts = [
        ListTools::CACHEABLE,
        ReadResource::CACHEABLE,
        Discover::CACHEABLE,
        CallTool::CACHEABLE,
        v2025_11_25::method::ListTools::CACHEABLE,
    ];
    assert_eq!(facts, [true, true, true, false, false]);
}

#[test]
fn results_whose_type_requires_result_type_always_write_it() {
    use v2026_07_28::method::{CallTool, Discover, Elicit, ListTools};
    let facts = [
        CallTool::WRITES_RESULT_TYPE,
        ListTools::WRITES_RESULT_TYPE,
        Discover::WRITES_RESULT_TYPE,
        Elicit::WRITES_RESULT_TYPE,
        v2025_11_25::method::CallTool::WRITES_RESULT_TYPE,
    ];
    assert_eq!(facts, [true, true, true, false, false]);
    // What the fact promises: the value writes the member, whatever else it holds.
    let written = serde_json::to_value(v2026_07_28::CallToolResult::new(vec![])).unwrap();
    assert_eq!(written["resultType"], "complete");
    let written = serde_json::to_value(v2026_07_28::ListToolsResult::new(vec![])).unwrap();
    assert!(written.get("resultType").is_some());
}

#[test]
fn targets_name_tools_and_prompts_and_locate_resources() {
    use v2026_07_28::method::{CallTool, Complete, GetPrompt, ListTools, ReadResource};
    assert_eq!(CallTool::TARGET, Some("name"));
    assert_eq!(GetPrompt::TARGET, Some("name"));
    assert_eq!(ReadResource::TARGET, Some("uri"));
    assert_eq!(ListTools::TARGET, None);
    assert_eq!(Complete::TARGET, None);
    assert_eq!(v2025_11_25::method::Subscribe::TARGET, Some("uri"));
}

#[test]
fn capabilities_come_from_the_receivers_capability_members() {
    use v2026_07_28::method::{CallTool, Complete, Discover, Elicit, ListRoots};
    assert_eq!(CallTool::CAPABILITY, Some("tools"));
    assert_eq!(Complete::CAPABILITY, Some("completions"));
    assert_eq!(Elicit::CAPABILITY, Some("elicitation"));
    assert_eq!(ListRoots::CAPABILITY, Some("roots"));
    assert_eq!(Discover::CAPABILITY, None);
    assert_eq!(v2025_11_25::method::SetLevel::CAPABILITY, Some("logging"));
    assert_eq!(
        v2025_11_25::method::CreateMessage::CAPABILITY,
        Some("sampling")
    );
    assert_eq!(v2025_11_25::method::Initialize::CAPABILITY, None);
}

#[test]
fn info_finds_requests_and_notifications_by_method() {
    let call = v2026_07_28::method::info("tools/call").unwrap();
    assert!(call.is_request && call.client_request && !call.server_request);
    let elicit = v2026_07_28::method::info("elicitation/create").unwrap();
    assert!(elicit.input_request && !elicit.server_request);
    let legacy = v2025_11_25::method::info("elicitation/create").unwrap();
    assert!(legacy.server_request && !legacy.input_request);
    let cancelled = v2026_07_28::method::info("notifications/cancelled").unwrap();
    assert!(!cancelled.is_request);
    assert!(cancelled.client_notification && cancelled.server_notification);
    assert!(v2026_07_28::method::info("initialize").is_none());
    assert_eq!(
        v2026_07_28::method::visit_request("notifications/cancelled", Facts),
        None
    );
}

#[test]
fn logging_levels_order_by_severity() {
    use v2025_11_25::LoggingLevel as Old;
    use v2026_07_28::LoggingLevel as New;
    assert!(New::Debug < New::Error && New::Error < New::Emergency);
    assert!(Old::Debug < Old::Error && Old::Error < Old::Emergency);
    assert!(New::Warning < New::Alert && Old::Info < Old::Notice);
}

/// A client request's `_meta` (about 1 KiB) is boxed in its params, which a server moves
/// from the read into the handler: the params stay small whatever the metadata holds.
#[test]
fn request_params_hold_their_meta_boxed() {
    use v2026_07_28::*;
    let params = CallToolRequestParams::new("t");
    let meta: Option<Box<RequestMetaObject>> = params.meta;
    assert!(meta.is_none());
    assert!(std::mem::size_of::<RequestMetaObject>() > 512);
    for (name, size) in [
        ("CallToolRequestParams", size_of::<CallToolRequestParams>()),
        (
            "GetPromptRequestParams",
            size_of::<GetPromptRequestParams>(),
        ),
        (
            "ReadResourceRequestParams",
            size_of::<ReadResourceRequestParams>(),
        ),
        ("CompleteRequestParams", size_of::<CompleteRequestParams>()),
        (
            "PaginatedRequestParams",
            size_of::<PaginatedRequestParams>(),
        ),
    ] {
        assert!(size <= 512, "{name} is {size} bytes");
    }
}
