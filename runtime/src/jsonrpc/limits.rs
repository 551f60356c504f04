//! How complex an incoming message may be, checked on its bytes before anything is
//! built from them: a message within its byte limit can still hold a million tiny
//! values, and each would become a node of a tree (tool arguments, `inputResponses`).
//!
//! The check is one pass over the bytes with no allocation, string contents skipped a
//! vector at a time, and it is skipped for messages too short and too flat to break any
//! limit.

use super::RpcError;
use crate::types::rpc::scan;

/// The complexity an incoming message may have. Beyond any limit the message is refused
/// with -32600 (Invalid Request) before it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JsonLimits {
    /// Values (objects, arrays, members and elements) in one message. Default 100,000.
    pub(crate) max_values: usize,
    /// Nesting depth of objects and arrays. Default 64.
    pub(crate) max_depth: usize,
    /// Members of `params.inputResponses`: a server asks few questions a round, and
    /// each answer is a tree of its own. Default 1,000.
    pub(crate) max_input_responses: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        Self {
            max_values: 100_000,
            max_depth: 64,
            max_input_responses: 1_000,
        }
    }
}

/// The shortest text of one `inputResponses` member: `"":0,`.
const SHORTEST_MEMBER: usize = 4;

impl JsonLimits {
    /// Refuses `bytes` when the message breaks a limit, or is a batch (an array:
    /// 2026-07-28 has no batches, and 2025-11-25 dropped them too).
    pub(crate) fn check(&self, bytes: &[u8]) -> Result<(), RpcError> {
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return Err(RpcError::invalid_request(
                "Invalid Request: batches (JSON arrays of messages) are not supported",
            ));
        }
        if self.cannot_break(bytes) {
            return Ok(());
        }
        self.scan(bytes)
    }

    /// Whether `bytes` are too short and too flat to break any limit, which a count of
    /// bytes shows without the scan: every value but the first costs a comma or an
    /// opening bracket (one byte each), every `inputResponses` member at least
    /// [`SHORTEST_MEMBER`] bytes, and every level of nesting an opening bracket. Brackets
    /// inside strings are counted too, which only errs towards scanning.
    fn cannot_break(&self, bytes: &[u8]) -> bool {
        let short = bytes.len() < self.max_values
            && bytes.len() <= self.max_input_responses.saturating_mul(SHORTEST_MEMBER);
        short && opening_brackets(bytes) <= self.max_depth
    }

    fn scan(&self, bytes: &[u8]) -> Result<(), RpcError> {
        let mut values = 1usize;
        let mut depth = 0usize;
        // The depth of the `inputResponses` object inside `params`, while inside it.
        let mut answers_at: Option<usize> = None;
        let mut answers = 0usize;
        // The last string closed at depth 2 (a member name of `params`, or of the top).
        let mut last_key: (usize, usize) = (0, 0);
        let mut in_params_at: Option<usize> = None;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    // Just past the closing quote; an unclosed string runs to the end.
                    let end = scan::string_end(bytes, i).unwrap_or(bytes.len() + 1);
                    last_key = (i + 1, end - 1);
                    i = end - 1;
                }
                open @ (b'{' | b'[') => {
                    depth += 1;
                    values += 1;
                    if depth > self.max_depth {
                        return Err(self.too_deep());
                    }
                    if open == b'{' {
                        let key = &bytes[last_key.0..last_key.1];
                        opened(key, depth, &mut in_params_at, &mut answers_at);
                    }
                    last_key = (0, 0);
                }
                b'}' | b']' => {
                    if answers_at == Some(depth) {
                        answers_at = None;
                    }
                    if in_params_at == Some(depth) {
                        in_params_at = None;
                    }
                    depth = depth.saturating_sub(1);
                }
                b',' => {
                    values += 1;
                    if values > self.max_values {
                        return Err(self.too_many_values());
                    }
                }
                b':' if answers_at == Some(depth) => {
                    answers += 1;
                    if answers > self.max_input_responses {
                        return Err(self.too_many_answers());
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if values > self.max_values {
            return Err(self.too_many_values());
        }
        Ok(())
    }

    #[cold]
    fn too_deep(&self) -> RpcError {
        too_complex(format!("nested deeper than {} levels", self.max_depth))
    }

    #[cold]
    fn too_many_values(&self) -> RpcError {
        too_complex(format!("more than {} values", self.max_values))
    }

    #[cold]
    fn too_many_answers(&self) -> RpcError {
        too_complex(format!(
            "more than {} inputResponses",
            self.max_input_responses
        ))
    }
}

/// Notes an object opening at `depth` after the member name `key`: `params` at the top,
/// or its `inputResponses`, whose members are counted while it is open.
fn opened(
    key: &[u8],
    depth: usize,
    in_params_at: &mut Option<usize>,
    answers_at: &mut Option<usize>,
) {
    if depth == 2 && key == b"params" {
        *in_params_at = Some(depth);
    } else if depth == 3 && *in_params_at == Some(2) && key == b"inputResponses" {
        *answers_at = Some(depth);
    }
}

/// How many bytes of `bytes` are `{` or `[`, counted in blocks the compiler turns into
/// vector compares: the two differ only in the bit `| 0x20` sets, so one compare finds
/// both, and a block of 64 cannot overflow its byte-wide count.
fn opening_brackets(bytes: &[u8]) -> usize {
    let is_open = |b: u8| u8::from(b | 0x20 == b'{');
    let mut blocks = bytes.chunks_exact(64);
    let mut count = 0;
    for block in &mut blocks {
        count += usize::from(block.iter().fold(0u8, |n, &b| n + is_open(b)));
    }
    count
        + blocks
            .remainder()
            .iter()
            .map(|&b| usize::from(is_open(b)))
            .sum::<usize>()
}

fn too_complex(what: String) -> RpcError {
    RpcError::invalid_request(format!(
        "Invalid Request: the message is too complex ({what})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(values: usize, depth: usize, answers: usize) -> JsonLimits {
        JsonLimits {
            max_values: values,
            max_depth: depth,
            max_input_responses: answers,
        }
    }

    fn refused(limits: JsonLimits, text: &str) -> String {
        limits.check(text.as_bytes()).unwrap_err().message
    }

    #[test]
    fn ordinary_messages_pass() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"t","arguments":{"a":[1,2,3],"b":"x,{[:"},"inputResponses":{"q":{"action":"accept"}}}}"#;
        assert_eq!(limits(20, 5, 1).check(text.as_bytes()), Ok(()));
    }

    #[test]
    fn a_batch_is_refused_before_anything_else() {
        let message = refused(JsonLimits::default(), "  [{\"jsonrpc\":\"2.0\"}]");
        assert!(message.contains("batches"), "{message}");
    }

    #[test]
    fn too_many_values_are_refused() {
        let many = format!("{{\"a\":[{}]}}", vec!["0"; 50].join(","));
        assert!(refused(limits(40, 64, 10), &many).contains("more than 40 values"));
        assert_eq!(limits(60, 64, 10).check(many.as_bytes()), Ok(()));
    }

    #[test]
    fn too_deep_is_refused() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(70), "]".repeat(70));
        assert!(refused(limits(1000, 64, 10), &deep).contains("deeper than 64"));
    }

    #[test]
    fn input_responses_are_counted_where_they_are_and_nowhere_else() {
        let answers: Vec<String> = (0..30).map(|i| format!("\"q{i}\":{{\"a\":1}}")).collect();
        let text = format!(
            "{{\"id\":1,\"params\":{{\"inputResponses\":{{{}}}}}}}",
            answers.join(",")
        );
        assert!(refused(limits(1000, 64, 20), &text).contains("more than 20 inputResponses"));
        // The same members under another name, or deeper, are ordinary values.
        let elsewhere = text.replace("inputResponses", "arguments");
        assert_eq!(limits(1000, 64, 20).check(elsewhere.as_bytes()), Ok(()));
        let quoted = format!(
            "{{\"params\":{{\"x\":\"inputResponses\",\"y\":{{{}}}}}}}",
            answers.join(",")
        );
        assert_eq!(limits(1000, 64, 20).check(quoted.as_bytes()), Ok(()));
    }

    #[test]
    fn a_short_flat_message_is_let_through_without_the_scan_and_nothing_else_is() {
        let limits = limits(100, 4, 10);
        assert!(limits.cannot_break(br#"{"a":{"b":[1,2]},"c":"x"}"#));
        // Five opening brackets could nest five deep: scanned (and here refused).
        let deep = br#"{"a":[[[[1]]]]}"#;
        assert!(!limits.cannot_break(deep));
        assert!(limits.check(deep).is_err());
        // Brackets in a string are counted, so the message is scanned, and passes.
        let quoted = br#"{"a":"[[[[["}"#;
        assert!(!limits.cannot_break(quoted));
        assert_eq!(limits.check(quoted), Ok(()));
        // Counted in blocks of 64 and a remainder.
        let many = format!("{}{}", "{[".repeat(40), "x".repeat(37));
        assert_eq!(opening_brackets(many.as_bytes()), 80);
        assert_eq!(opening_brackets(b"{[]}[{a}]"), 4);
        // As long as the value limit: scanned.
        let long = format!("{{\"a\":\"{}\"}}", "x".repeat(100));
        assert!(!limits.cannot_break(long.as_bytes()));
        assert_eq!(limits.check(long.as_bytes()), Ok(()));
    }

    #[test]
    fn escaped_quotes_do_not_end_a_string() {
        let text = format!("{{\"a\":\"\\\",{}\"}}", ",".repeat(100));
        assert_eq!(limits(10, 64, 10).check(text.as_bytes()), Ok(()));
    }
}
