//! The bytes a server answers a `POST /mcp` with, read by tern's HTTP/1.1 client and by
//! hyper's (`tern_mcp::fuzzing::h1::responses` says what must agree).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_mcp::fuzzing::h1::responses(data));
