//! What must not compile, with the compiler's message checked.

#[test]
fn input_required_on_tools_list_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/input_required_on_tools_list.rs");
}

#[test]
fn a_resolver_tool_returning_input_required_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/resolver_tool_returns_input_required.rs");
}
