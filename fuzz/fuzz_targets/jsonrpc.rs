//! Any bytes as an incoming JSON-RPC message: limits, the one-pass reader, the tree
//! reader, the response reader.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tern_mcp::fuzzing::read_message(data);
});
