//! The method tables as the wire reads them: what 2026-07-28's table (or the tasks
//! extension's, which tern serves) says of a method named in a message, asked by its
//! name or by its bytes as the message spells it.

/// What the method table says about `method`: 2026-07-28's, or an extension's tern
/// serves (the tasks methods).
pub(crate) fn method_info(method: &str) -> Option<&'static crate::types::rpc::MethodInfo> {
    method_spelled(method.as_bytes())
}

/// Whether the method table says `fact` of `method` (never of a method it lacks): how
/// the runtime asks a fact of a method it holds by name, as `M::FACT` does of a marker.
pub(crate) fn says(method: &str, fact: fn(&crate::types::rpc::MethodInfo) -> bool) -> bool {
    method_info(method).is_some_and(fact)
}

/// [`method_info`] for a method spelled by bytes (a message's, not made text first).
pub(crate) fn method_spelled(name: &[u8]) -> Option<&'static crate::types::rpc::MethodInfo> {
    let tables = [
        crate::types::v2026_07_28::method::ALL,
        crate::types::ext_tasks::method::ALL,
    ];
    tables
        .into_iter()
        .flatten()
        .find(|info| info.method.as_bytes() == name)
}
