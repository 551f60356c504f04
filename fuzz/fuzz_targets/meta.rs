//! Any text as a request's `params._meta`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        tern_mcp::fuzzing::read_meta(text);
    }
});
