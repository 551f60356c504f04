//! The URL a DPoP proof names (`htu`) as compared with the request's (RFC 9449 §4.3):
//! without query or fragment, and normalized as RFC 3986 §6.2.2 and §6.2.3 say: scheme
//! and host in lower case, percent-encodings in upper case and unreserved characters
//! decoded, dot segments removed, the scheme's default port and an empty port left out,
//! an empty path made `/`. Nothing else: a trailing `/` stays, so `https://rs/mcp/` is
//! not `https://rs/mcp`.

/// `url` normalized for comparison; `None` when it is not an absolute URL with an
/// authority (`scheme://host...`) or its port is not a port.
pub(super) fn normalize(url: &str) -> Option<String> {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, authority),
    };
    // An IPv6 literal's colons are inside its brackets.
    let port_at = match host_port.rfind(']') {
        Some(end) => host_port.get(end..)?.find(':').map(|i| i + end),
        None => host_port.rfind(':'),
    };
    let (host, port) = match port_at {
        Some(i) => (host_port.get(..i)?, host_port.get(i + 1..)?),
        None => (host_port, ""),
    };
    let mut out = format!("{scheme}://");
    if let Some(userinfo) = userinfo {
        out.push_str(&percent(userinfo)?);
        out.push('@');
    }
    out.push_str(&lower_outside_escapes(&percent(host)?));
    if !port.is_empty() {
        if !port.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = port.trim_start_matches('0');
        let port: u16 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        if Some(port) != default_port(&scheme) {
            out.push_str(&format!(":{port}"));
        }
    }
    let path = remove_dot_segments(&percent(path)?);
    out.push_str(if path.is_empty() { "/" } else { &path });
    Some(out)
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// `text` with each percent-encoding of an unreserved character decoded and every other
/// one in upper case (RFC 3986 §6.2.2.1, §6.2.2.2); a `%` not followed by two hex digits
/// is left as it came (it compares only with itself).
fn percent(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escaped = (b == b'%')
            .then(|| Some((hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?)))
            .flatten();
        match escaped {
            Some((high, low)) => {
                let decoded = high << 4 | low;
                if decoded.is_ascii_alphanumeric() || matches!(decoded, b'-' | b'.' | b'_' | b'~') {
                    out.push(decoded);
                } else {
                    out.push(b'%');
                    out.extend(format!("{decoded:02X}").bytes());
                }
                i += 3;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn hex(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// `text` in lower case except inside its `%XX` escapes (kept upper case).
fn lower_outside_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut escape = 0;
    for c in text.chars() {
        if c == '%' {
            escape = 2;
            out.push(c);
        } else if escape > 0 {
            escape -= 1;
            out.push(c);
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// RFC 3986 §5.2.4: `.` and `..` segments resolved away.
fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let mut input = path;
    while !input.is_empty() {
        if let Some(rest) = input
            .strip_prefix("../")
            .or_else(|| input.strip_prefix("./"))
        {
            input = rest;
        } else if input.starts_with("/./") {
            input = input.get(2..).unwrap_or("/");
        } else if input == "/." {
            input = "/";
        } else if input.starts_with("/../") || input == "/.." {
            input = input.get(3..).filter(|r| !r.is_empty()).unwrap_or("/");
            output.pop();
        } else if input == "." || input == ".." {
            input = "";
        } else {
            let from = usize::from(input.starts_with('/'));
            let end = input
                .get(from..)
                .and_then(|r| r.find('/'))
                .map_or(input.len(), |i| i + from);
            let (segment, rest) = input.split_at(end);
            output.push(segment);
            input = rest;
        }
    }
    output.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        normalize(a).is_some() && normalize(a) == normalize(b)
    }

    #[test]
    fn case_default_port_query_and_fragment_do_not_count() {
        assert_eq!(
            normalize("HTTPS://MCP.Example.com:443/mcp?q=1#f").as_deref(),
            Some("https://mcp.example.com/mcp")
        );
        assert!(same("http://h:80/mcp", "http://h/mcp"));
        assert!(same("http://h:/mcp", "http://h/mcp"));
        assert!(same("https://h", "https://h/"));
        assert!(same("http://[::1]:80/mcp", "http://[::1]/mcp"));
        assert!(!same("http://[::1]:8080/mcp", "http://[::1]/mcp"));
        assert!(!same("http://h:8080/mcp", "http://h/mcp"));
        assert!(!same("https://h:80/mcp", "https://h/mcp"));
    }

    #[test]
    fn a_trailing_slash_and_path_case_count() {
        assert!(!same("https://rs/mcp/", "https://rs/mcp"));
        assert!(!same("https://rs/MCP", "https://rs/mcp"));
        assert!(!same("http://h/mcp", "http://h/other"));
    }

    #[test]
    fn percent_encodings_and_dot_segments_are_normalized() {
        assert!(same("https://rs/%6Dcp", "https://rs/mcp"));
        assert!(same("https://rs/a%2fb", "https://rs/a%2Fb"));
        assert!(!same("https://rs/a%2Fb", "https://rs/a/b"));
        assert!(same("https://rs/a/./b/../mcp", "https://rs/a/mcp"));
        assert!(same("https://rs/../../mcp", "https://rs/mcp"));
        assert!(same("https://rs/%2E%2E/mcp", "https://rs/mcp"));
        assert!(same("https://rs/mcp/.", "https://rs/mcp/"));
        assert!(same("https://rs/mcp/x/..", "https://rs/mcp/"));
        assert!(same("https://R%53/mcp", "https://rs/mcp"));
    }

    #[test]
    fn what_is_not_an_absolute_url_never_matches() {
        for url in [
            "/mcp",
            "rs/mcp",
            "",
            "://rs/mcp",
            "1http://rs/mcp",
            "http://rs:x/mcp",
            "http://rs:99999/mcp",
        ] {
            assert_eq!(normalize(url), None, "{url}");
        }
    }
}
