//! The bytes a client sends on one connection, read by tern's HTTP/1.1 server and by
//! hyper's (`tern_mcp::fuzzing::h1::requests` says what must agree).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_mcp::fuzzing::h1::requests(data));
