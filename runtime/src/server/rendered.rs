//! The input requests a server has written lately, each kept with its JSON text.
//!
//! A handler asks the same question round after round (the same message, the same
//! schema), and writing an `InputRequest` as JSON (each string scanned for escapes, the
//! schema's maps walked) was the largest part of writing an input-required answer. So a
//! question is compared with those written lately, and one equal to a kept question is
//! written as that question's text: equal values write alike. (Floating-point zeros are
//! the one exception: `0.0` and `-0.0` are equal and write apart, and a JSON reader takes
//! both as the same number.)
//!
//! Bounded: a few questions, each a few KiB of JSON at most, the oldest replaced first.
//! A question is kept the second time its text is written: the first time leaves only a
//! fingerprint of the text, so a server whose every question is new pays a fingerprint
//! per question, not a copy of it.

use std::hash::{BuildHasher as _, RandomState};
use std::sync::{Arc, Mutex, PoisonError};

use crate::types::v2026_07_28::InputRequest;

/// How many questions are kept, and how many fingerprints of questions seen once.
const KEPT: usize = 16;

/// The longest text kept. A usual question's is a few hundred bytes.
const LONGEST: usize = 4 * 1024;

/// The questions a server wrote lately. Shared by every request the server serves.
#[derive(Default)]
pub(crate) struct RenderedRequests {
    kept: Mutex<Kept>,
    /// Keys the fingerprints: another server's (or run's) are not this one's.
    hasher: RandomState,
}

#[derive(Default)]
struct Kept {
    entries: Vec<Arc<Rendered>>,
    /// The entry replaced next, once `entries` is full.
    next: usize,
    /// Fingerprints of texts written once and not kept (yet), the oldest replaced first.
    seen: Vec<u64>,
    seen_next: usize,
}

/// A question and its JSON text.
struct Rendered {
    request: InputRequest,
    text: Box<str>,
}

impl std::fmt::Debug for RenderedRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedRequests").finish_non_exhaustive()
    }
}

impl RenderedRequests {
    /// Appends `request` to `out` as JSON: a kept question's text when `request` equals
    /// it, else written now (and kept, the second time the same text is written).
    pub(crate) fn write(
        &self,
        request: &InputRequest,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        if let Some(kept) = self.find(request) {
            out.extend_from_slice(kept.text.as_bytes());
            return Ok(());
        }
        let start = out.len();
        serde_json::to_writer(&mut *out, request)?;
        if let Some(text) = out.get(start..).and_then(|t| std::str::from_utf8(t).ok()) {
            self.learn(request, text);
        }
        Ok(())
    }

    /// The kept question equal to `request`.
    fn find(&self, request: &InputRequest) -> Option<Arc<Rendered>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.entries.iter().find(|r| r.request == *request).cloned()
    }

    /// Keeps `request` with its `text` when the text was written before (its fingerprint
    /// is among those seen); else notes the fingerprint.
    fn learn(&self, request: &InputRequest, text: &str) {
        if text.len() > LONGEST {
            return;
        }
        let print = self.hasher.hash_one(text);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = &mut *kept;
        if !kept.seen.contains(&print) {
            replace_oldest(&mut kept.seen, &mut kept.seen_next, print);
            return;
        }
        let rendered = Arc::new(Rendered {
            request: request.clone(),
            text: text.into(),
        });
        replace_oldest(&mut kept.entries, &mut kept.next, rendered);
    }
}

/// Adds `item` to `items`, which hold [`KEPT`] at most: in place of the oldest, `next`,
/// once full.
fn replace_oldest<T>(items: &mut Vec<T>, next: &mut usize, item: T) {
    if items.len() < KEPT {
        items.push(item);
    } else if let Some(slot) = items.get_mut(*next) {
        *slot = item;
        *next = (*next + 1) % KEPT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask;
    use crate::types::v2026_07_28::StringSchema;

    fn question(message: &str) -> InputRequest {
        ask::ElicitForm::new(message)
            .required("region", StringSchema::new())
            .into()
    }

    fn written(cache: &RenderedRequests, request: &InputRequest) -> String {
        let mut out = Vec::new();
        cache.write(request, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_question_is_written_as_serde_writes_it_first_second_and_kept() {
        let cache = RenderedRequests::default();
        let asked = question("Which region?");
        let expected = serde_json::to_string(&asked).unwrap();
        for round in 0..4 {
            assert_eq!(written(&cache, &asked), expected, "round {round}");
        }
        assert!(cache.find(&asked).is_some(), "kept once written twice");
    }

    #[test]
    fn a_question_seen_once_is_not_kept_and_a_changed_one_is_written_anew() {
        let cache = RenderedRequests::default();
        let one = question("Which region?");
        written(&cache, &one);
        assert!(cache.find(&one).is_none());
        written(&cache, &one);
        let reworded = question("Which region, please?");
        assert_eq!(
            written(&cache, &reworded),
            serde_json::to_string(&reworded).unwrap()
        );
        assert!(cache.find(&reworded).is_none());
        assert!(cache.find(&one).is_some());
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_questions_and_fingerprints() {
        let cache = RenderedRequests::default();
        for i in 0..(KEPT * 4) {
            let asked = question(&format!("Question {i}?"));
            for _ in 0..2 {
                assert_eq!(
                    written(&cache, &asked),
                    serde_json::to_string(&asked).unwrap()
                );
            }
        }
        let kept = cache.kept.lock().unwrap();
        assert_eq!(kept.entries.len(), KEPT);
        assert!(kept.seen.len() <= KEPT);
        drop(kept);
        assert!(
            cache
                .find(&question(&format!("Question {}?", KEPT * 4 - 1)))
                .is_some()
        );
        assert!(cache.find(&question("Question 0?")).is_none());
    }
}
