//! What to do about an error: a line of advice under it (`hint: ...`), read from what
//! failed (an HTTP status, a TLS handshake with a plain-HTTP server) and the TARGET; and
//! the names nearest to a mistyped one.

use crate::error::CliError;

/// Advice for `error`, reached through `target` (a URL or a command line) when known.
pub(crate) fn for_error(error: &CliError, target: Option<&str>) -> Option<String> {
    if let Some(hint) = error.hint() {
        return Some(hint.to_owned());
    }
    let transport = error.transport()?;
    let https = target.is_some_and(|t| {
        t.get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    });
    match transport.http_status() {
        Some(401) => Some(
            "the server wants authorization: sign in with --oauth, or send a bearer token \
             with --token TOKEN"
                .into(),
        ),
        // Refused before any credentials were read (its reason is in the message).
        Some(403) if transport.www_authenticate().is_none() => None,
        Some(403) => Some(
            "the server refused these credentials: a token with more scope (--token), or \
             --oauth to sign in again"
                .into(),
        ),
        Some(404) if target.is_some_and(|t| t.ends_with("/mcp/")) => Some(format!(
            "is the endpoint path /mcp, without the trailing slash? try {}",
            target.unwrap_or_default().trim_end_matches('/')
        )),
        Some(404) => Some(match target.and_then(origin) {
            Some(origin) if !target.is_some_and(|t| t.trim_end_matches('/').ends_with("/mcp")) => {
                format!(
                    "is the endpoint path /mcp? MCP servers usually serve it there: {origin}/mcp"
                )
            }
            _ => "is the endpoint path right? nothing answers MCP at this URL".into(),
        }),
        None if refused(transport.message()) => Some(format!(
            "nothing is listening at {}: is the server running, and is the port right?",
            target.and_then(origin).unwrap_or("this address")
        )),
        None if https && looks_like_tls_mismatch(transport.message()) => Some(format!(
            "the server does not speak TLS here: try {}",
            target
                .map(|t| format!("http://{}", &t[8..]))
                .unwrap_or_else(|| "http://".into())
        )),
        _ => None,
    }
}

/// `scheme://host:port` of a URL.
fn origin(url: &str) -> Option<&str> {
    let after = url.find("://")? + 3;
    let end = url[after..].find('/').map_or(url.len(), |i| after + i);
    url.get(..end)
}

/// Whether a transport failure reads as a connection the other side refused.
fn refused(message: &str) -> bool {
    message.to_ascii_lowercase().contains("connection refused")
}

/// Whether a transport failure reads as TLS spoken to a server that answers plain HTTP.
fn looks_like_tls_mismatch(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "tls",
        "handshake",
        "corrupt message",
        "invalidcontenttype",
        "wrong version",
        "ssl",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// The names in `known` nearest `typed` (at most three, within a third of its length
/// in edits), nearest first.
pub(crate) fn nearest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = typed.chars().count().div_ceil(3).max(1);
    let mut close: Vec<(usize, &str)> = known
        .into_iter()
        .map(|name| (strsim::levenshtein(typed, name), name))
        .filter(|(d, _)| *d <= limit)
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, name)| name).collect()
}

/// `did you mean `a` or `b`?`, or nothing when nothing is near.
pub(crate) fn did_you_mean(names: &[&str]) -> Option<String> {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        [first @ .., last] => Some(format!("did you mean {} or {last}?", first.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_names_come_first_and_far_ones_not_at_all() {
        let known = ["test_elicitation", "test_simple_text", "sign_in"];
        assert_eq!(nearest("test_elicitaton", known), ["test_elicitation"]);
        assert!(nearest("zzz", known).is_empty());
        assert_eq!(
            did_you_mean(&["a", "b", "c"]).as_deref(),
            Some("did you mean `a`, `b` or `c`?")
        );
    }
}
