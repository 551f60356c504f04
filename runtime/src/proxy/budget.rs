//! What the gateway reads of an upstream's answers, at most: an upstream is an input.
//! The budgets ([`UpstreamBudgets`]) and the counting done on an answer's text before
//! anything is built from it: a list page's entries (and each of them handed on as its
//! text, see `Link::fetch`), a round's questions and the bytes of its state. Past a
//! budget ([`Over`]) the gateway's client gets an error naming the upstream and the
//! budget, and the other upstreams are served as before.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::json;
use serde_json::value::RawValue;

use crate::jsonrpc::{JsonLimits, RawResult, RpcError, code};
use crate::types::rpc::scan;

/// The most pages of one list the gateway follows (each counted against the budgets
/// too: this stops an upstream that answers empty pages with a next cursor forever).
pub(super) const MAX_PAGES: usize = 1_000;

/// What the gateway reads of one upstream's answers, at most: plain data, given to
/// [`Upstream::budgets`](super::Upstream::budgets). Start from [`Default`] and change
/// what you need. Past any of them, the gateway's client gets -32603 naming the
/// upstream and the budget, and the other upstreams are served as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpstreamBudgets {
    /// Entries of one list (its tools, prompts, resources or templates, all pages
    /// together). Default 10,000.
    pub list_entries: usize,
    /// Bytes (as the upstream wrote them, all pages together) of one list; the gateway
    /// keeps at most its four lists of each upstream, so this bounds what it keeps.
    /// Default 8 MiB.
    pub list_bytes: usize,
    /// Questions (`inputRequests` members) in one round. Default, and at most, 1,000:
    /// what a tern server takes back as answers (`inputResponses`) in one retry.
    pub questions: usize,
    /// Bytes of the upstream's `requestState` in one round: it travels inside the
    /// gateway's sealed state, which is at most 64 KiB. Default 16 KiB.
    pub state_bytes: usize,
}

impl Default for UpstreamBudgets {
    fn default() -> Self {
        Self {
            list_entries: 10_000,
            list_bytes: 8 * 1024 * 1024,
            questions: max_questions(),
            state_bytes: 16 * 1024,
        }
    }
}

impl UpstreamBudgets {
    /// These budgets, the questions at most what a tern server takes back.
    pub(super) fn clamped(mut self) -> Self {
        self.questions = self.questions.min(max_questions());
        self
    }
}

/// How many answers a tern server takes back in one retry.
fn max_questions() -> usize {
    JsonLimits::default().max_input_responses
}

/// A budget an upstream's answer went past: what it answered, the budget's name and
/// its limit; [`error`](Self::error) makes it what the gateway's client is told.
#[derive(Debug)]
pub(super) struct Over {
    what: String,
    budget: &'static str,
    limit: usize,
}

impl Over {
    /// -32603 naming the upstream (`label`, as its errors name it; `name`, in the
    /// data), the method it answered, what it answered and the budget; a warning.
    pub(super) fn error(self, label: &str, name: Option<&str>, method: &str) -> RpcError {
        let Self {
            what,
            budget,
            limit,
        } = self;
        tracing::warn!(upstream = %label, method, budget, limit, "an upstream answered past its budget");
        RpcError::new(
            code::INTERNAL_ERROR,
            format!("{label} answered {method} with {what} (its budget)"),
        )
        .with_data(json!({ "upstream": name, "budget": budget, "limit": limit }))
    }
}

/// Checks a list's `bytes` so far against its budget.
pub(super) fn list_bytes(budgets: &UpstreamBudgets, bytes: usize) -> Result<(), Over> {
    if bytes <= budgets.list_bytes {
        return Ok(());
    }
    Err(Over {
        what: format!("more than {} bytes", budgets.list_bytes),
        budget: "listBytes",
        limit: budgets.list_bytes,
    })
}

/// Checks a list's `entries` so far (of its `member`) against its budget.
pub(super) fn list_entries(
    budgets: &UpstreamBudgets,
    entries: usize,
    member: &str,
) -> Result<(), Over> {
    if entries <= budgets.list_entries {
        return Ok(());
    }
    Err(Over {
        what: format!("more than {} {member}", budgets.list_entries),
        budget: "listEntries",
        limit: budgets.list_entries,
    })
}

/// A bridged call past the bounds of its rounds (`RoundLimits`).
pub(super) fn rounds(over: crate::protocol::rounds::Over) -> Over {
    use crate::protocol::rounds::Over as Past;
    match over {
        Past::Questions { asked, max } => Over {
            what: format!("{asked} questions in one round, more than {max}"),
            budget: "questions",
            limit: max,
        },
        Past::Rounds(max) => Over {
            what: format!("more than {max} rounds of questions"),
            budget: "rounds",
            limit: max,
        },
        Past::Deadline(took) => Over {
            what: format!("rounds taking longer than {took:?}"),
            budget: "deadline",
            limit: usize::try_from(took.as_secs()).unwrap_or(usize::MAX),
        },
    }
}

/// A list of more pages than the gateway follows.
pub(super) fn list_pages() -> Over {
    Over {
        what: format!("more than {MAX_PAGES} pages"),
        budget: "pages",
        limit: MAX_PAGES,
    }
}

/// Refuses a round whose questions or state are past `budgets`, counted on the
/// result's text (before the questions become a tree each): its top-level members found
/// by their names as any JSON reader reads them (escapes too), their values skipped.
/// A result that names neither member, plainly or with a `\u` escape, costs three
/// searches of its text.
pub(super) fn round(budgets: &UpstreamBudgets, raw: &RawResult) -> Result<(), Over> {
    let taken = raw.taken();
    let plain = taken.contains(r#""inputRequests""#) || taken.contains(r#""requestState""#);
    // Only a `\u` escape can spell a letter of a member's name otherwise.
    if !plain && !taken.contains(r"\u") {
        return Ok(());
    }
    let text = raw.get();
    let measured = measure(text).or_else(|| {
        // Not an object the scan reads: serde says what a round's members hold, and
        // text no reader takes is the client's own read to refuse.
        serde_json::from_str::<Round>(text)
            .ok()
            .map(|r| (r.questions.0, r.state.0))
    });
    let Some((questions, state)) = measured else {
        return Ok(());
    };
    if questions > budgets.questions {
        return Err(Over {
            what: format!(
                "{questions} questions in one round, more than {}",
                budgets.questions
            ),
            budget: "questions",
            limit: budgets.questions,
        });
    }
    if state > budgets.state_bytes {
        return Err(Over {
            what: format!(
                "a requestState of {state} bytes, more than {}",
                budgets.state_bytes
            ),
            budget: "stateBytes",
            limit: budgets.state_bytes,
        });
    }
    Ok(())
}

/// How many questions the result `text` asks (entries of `inputRequests`) and the
/// bytes of its `requestState`, in one pass over it; `None` when `text` is not an
/// object.
fn measure(text: &str) -> Option<(usize, usize)> {
    let start = scan::blank(text.as_bytes(), 0);
    let object = text.get(start..)?;
    let bytes = object.as_bytes();
    let (mut questions, mut state) = (0, 0);
    scan::walk_members(bytes, |key, at| {
        match scan::member_name(object.get(key)?)?.as_ref() {
            "inputRequests" => {
                let (n, end) = entries(bytes, at)?;
                questions = n;
                Some(end)
            }
            "requestState" => {
                let end = scan::value_end(bytes, at)?;
                state = string_bytes(object.get(at..end)?)?;
                Some(end)
            }
            _ => scan::value_end(bytes, at),
        }
    })?;
    Some((questions, state))
}

/// The members of the object or the elements of the array at `at` (0 for any other
/// value), and where the value ends.
fn entries(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut n = 0;
    match bytes.get(at)? {
        b'{' => {
            let end = scan::each_member(bytes.get(at..)?, |_, _| {
                n += 1;
                Some(())
            })?;
            Some((n, at + end))
        }
        b'[' => {
            let mut i = scan::blank(bytes, at + 1);
            while *bytes.get(i)? != b']' {
                i = scan::blank(bytes, scan::value_end(bytes, i)?);
                n += 1;
                match bytes.get(i)? {
                    b',' => i = scan::blank(bytes, i + 1),
                    b']' => {}
                    _ => return None,
                }
            }
            Some((n, i + 1))
        }
        _ => Some((0, scan::value_end(bytes, at)?)),
    }
}

/// The bytes of a string value as it reads (escapes decoded only if any); 0 for any
/// other value, `None` for a string JSON refuses.
fn string_bytes(value: &str) -> Option<usize> {
    if !value.starts_with('"') {
        return Some(0);
    }
    scan::member_name(value).map(|s| s.len())
}

/// How many entries the array `member` of a list result holds, counted on its text.
pub(super) fn count(raw: &RawResult, member: &'static str) -> Result<usize, String> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    Members { member }
        .deserialize(&mut de)
        .map_err(|e| format!("a list that is not JSON: {e}"))
}

/// Hands each entry of the array `member` of a list result to `f`, in order; the
/// result's `nextCursor`. Stops at the first entry `f` refuses.
pub(super) fn each(
    raw: &RawResult,
    member: &'static str,
    f: &mut dyn FnMut(&RawValue) -> Result<(), ()>,
) -> Result<Option<String>, String> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    Walk { member, f }
        .deserialize(&mut de)
        .map_err(|e| format!("a list that is not JSON: {e}"))
}

/// A list result walked: its entries handed on, its next cursor kept.
struct Walk<'f> {
    member: &'static str,
    f: &'f mut dyn FnMut(&RawValue) -> Result<(), ()>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Option<String>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        let mut next = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == self.member {
                map.next_value_seed(Entries(&mut *self.f))?;
            } else if key == "nextCursor" {
                next = map.next_value::<Option<String>>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(next)
    }
}

/// The entries of a list result's array, each handed on as its text.
struct Entries<'f>(&'f mut dyn FnMut(&RawValue) -> Result<(), ()>);

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(entry) = seq.next_element::<&'de RawValue>()? {
            (self.0)(entry).map_err(|()| de::Error::custom("an entry refused"))?;
        }
        Ok(())
    }
}

/// The top-level object of a list result, seen for the length of one member.
struct Members {
    member: &'static str,
}

impl<'de> DeserializeSeed<'de> for Members {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Members {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut found = 0;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == self.member {
                found = map.next_value::<Counted>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// What a round says, counted: its questions and the bytes of its state.
#[derive(Deserialize)]
struct Round {
    #[serde(rename = "inputRequests", default)]
    questions: Counted,
    #[serde(rename = "requestState", default)]
    state: Length,
}

/// How many elements (of an array) or members (of an object) a value holds; 0 for
/// anything else. Nothing of them is kept.
#[derive(Default)]
struct Counted(usize);

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Counter)
    }
}

struct Counter;

impl<'de> Visitor<'de> for Counter {
    type Value = Counted;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Counted, A::Error> {
        let mut n = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Counted(n))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counted, A::Error> {
        let mut n = 0usize;
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Counted(n))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Counted, E> {
        Ok(Counted(0))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Counted, E> {
        Ok(Counted(0))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Counted, E> {
        Ok(Counted(0))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Counted, E> {
        Ok(Counted(0))
    }
    fn visit_str<E>(self, _: &str) -> Result<Counted, E> {
        Ok(Counted(0))
    }
    fn visit_unit<E>(self) -> Result<Counted, E> {
        Ok(Counted(0))
    }
}

/// The length in bytes of a string value (0 for anything else), not kept.
#[derive(Default)]
struct Length(usize);

impl<'de> Deserialize<'de> for Length {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Measure)
    }
}

struct Measure;

impl<'de> Visitor<'de> for Measure {
    type Value = Length;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, s: &str) -> Result<Length, E> {
        Ok(Length(s.len()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Length, A::Error> {
        Counter.visit_seq(seq).map(|_| Length(0))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Length, A::Error> {
        Counter.visit_map(map).map(|_| Length(0))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Length, E> {
        Ok(Length(0))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Length, E> {
        Ok(Length(0))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Length, E> {
        Ok(Length(0))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Length, E> {
        Ok(Length(0))
    }
    fn visit_unit<E>(self) -> Result<Length, E> {
        Ok(Length(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawResult {
        RawResult::unchecked(text.into())
    }

    #[test]
    fn a_lists_entries_are_counted_on_its_text() {
        let text =
            r#"{"nextCursor":"x","tools":[{"name":"a"},{"name":"b","tools":[1,2,3]}],"_meta":{}}"#;
        assert_eq!(count(&raw(text), "tools"), Ok(2));
        assert_eq!(count(&raw(r#"{"prompts":[]}"#), "tools"), Ok(0));
        assert!(count(&raw("[1]"), "tools").is_err());
    }

    #[test]
    fn a_lists_entries_are_walked_as_text_and_its_cursor_kept() {
        let text = r#"{"tools":[{"name":"a"}, {"name":"b"}],"nextCursor":"c2","x":[{}]}"#;
        let mut seen = Vec::new();
        let next = each(&raw(text), "tools", &mut |entry| {
            seen.push(entry.get().to_owned());
            Ok(())
        });
        assert_eq!(next, Ok(Some("c2".to_owned())));
        assert_eq!(seen, [r#"{"name":"a"}"#, r#"{"name":"b"}"#]);
        let mut calls = 0;
        let refused = each(&raw(text), "tools", &mut |_| {
            calls += 1;
            Err(())
        });
        assert!(refused.is_err());
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_rounds_questions_and_state_are_counted_on_its_text() {
        let text = r#"{"resultType":"input_required","inputRequests":{"a":{},"b":{"x":[1]}},"requestState":"abc\"d"}"#;
        let round: Round = serde_json::from_str(text).unwrap();
        assert_eq!((round.questions.0, round.state.0), (2, 5));
        let none: Round = serde_json::from_str(r#"{"content":[]}"#).unwrap();
        assert_eq!((none.questions.0, none.state.0), (0, 0));
    }

    #[test]
    fn a_rounds_members_are_measured_as_a_json_reader_reads_them() {
        let plain = r#"{"resultType":"input_required","inputRequests":{"a":{},"b":{"x":"}"}},"requestState":"abc\"d"}"#;
        assert_eq!(measure(plain), Some((2, 5)));
        let escaped =
            r#" {"input\u0052equests":{"a":1,"b":2,"c":3},"request\u0053tate":"\u0041BC"}"#;
        assert_eq!(measure(escaped), Some((3, 3)));
        let listed = r#"{"inputRequests":[ {"a":"]"} , [1,2] ,3 ],"requestState":7}"#;
        assert_eq!(measure(listed), Some((3, 0)));
        assert_eq!(measure(r#"{"content":[]}"#), Some((0, 0)));
        assert_eq!(measure(r#"{"inputRequests":{"a":1,}"#), None);
        assert_eq!(measure("[]"), None);
    }
}
