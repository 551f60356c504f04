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
use std::sync::Mutex;

use crate::types::v2026_07_28::InputRequest;
use crate::util::{Recent, lock};

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
    entries: Recent<Rendered, KEPT>,
    /// Fingerprints of texts written once and not kept (yet).
    seen: Recent<u64, KEPT>,
}

/// A question and its JSON text.
struct Rendered {
    request: InputRequest,
    text: Box<[u8]>,
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
        if self.copy_kept(request, out) {
            return Ok(());
        }
        let start = out.len();
        serde_json::to_writer(&mut *out, request)?;
        if let Some(text) = out.get(start..) {
            self.learn(request, text);
        }
        Ok(())
    }

    /// Appends the text of the kept question equal to `request`, if one is kept.
    fn copy_kept(&self, request: &InputRequest, out: &mut Vec<u8>) -> bool {
        let kept = lock(&self.kept);
        let found = kept.entries.iter().find(|r| r.request == *request);
        found.map(|r| out.extend_from_slice(&r.text)).is_some()
    }

    /// Keeps `request` with its `text` when the text was written before (its fingerprint
    /// is among those seen); else notes the fingerprint.
    fn learn(&self, request: &InputRequest, text: &[u8]) {
        if text.len() > LONGEST {
            return;
        }
        let print = self.hasher.hash_one(text);
        let mut kept = lock(&self.kept);
        if !kept.seen.iter().any(|&p| p == print) {
            kept.seen.push(print);
            return;
        }
        kept.entries.push(Rendered {
            request: request.clone(),
            text: text.into(),
        });
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

    /// Whether a question equal to `request` is kept.
    fn is_kept(cache: &RenderedRequests, request: &InputRequest) -> bool {
        cache.copy_kept(request, &mut Vec::new())
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
        assert!(is_kept(&cache, &asked), "kept once written twice");
    }

    #[test]
    fn a_question_seen_once_is_not_kept_and_a_changed_one_is_written_anew() {
        let cache = RenderedRequests::default();
        let one = question("Which region?");
        written(&cache, &one);
        assert!(!is_kept(&cache, &one));
        written(&cache, &one);
        let reworded = question("Which region, please?");
        assert_eq!(
            written(&cache, &reworded),
            serde_json::to_string(&reworded).unwrap()
        );
        assert!(!is_kept(&cache, &reworded));
        assert!(is_kept(&cache, &one));
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
        let kept = lock(&cache.kept);
        assert_eq!(kept.entries.len(), KEPT);
        assert!(kept.seen.len() <= KEPT);
        drop(kept);
        assert!(is_kept(
            &cache,
            &question(&format!("Question {}?", KEPT * 4 - 1))
        ));
        assert!(!is_kept(&cache, &question("Question 0?")));
    }
}
