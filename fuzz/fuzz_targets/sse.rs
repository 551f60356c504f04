//! Any bytes as an SSE body, cut into chunks at the 0xff bytes in it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let chunks: Vec<&[u8]> = data.split(|b| *b == 0xff).collect();
    tern_mcp::fuzzing::read_sse(&chunks);
});
