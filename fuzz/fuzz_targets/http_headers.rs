//! A POST's headers and body through the HTTP endpoint's checks. The input is lines:
//! `name: value` header lines, then an empty line, then the body. Seeded with a valid
//! tools/call so the fuzzer starts past the JSON-RPC checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (head, body) = match data.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&data[..i], &data[i + 2..]),
        None => (data, &[][..]),
    };
    let headers: Vec<(&[u8], &[u8])> = head
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let colon = line.iter().position(|b| *b == b':')?;
            let value = &line[colon + 1..];
            Some((&line[..colon], value.strip_prefix(b" ").unwrap_or(value)))
        })
        .collect();
    let status = tern_mcp::fuzzing::serve_post(&headers, body);
    assert!(status == 0 || (200..600).contains(&status), "status {status}");
});
