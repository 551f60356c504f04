//! The canonical form of arguments read from their JSON text, with no tree built: most
//! clients write arguments that are canonical already but for their spacing (keys in
//! order, strings with no escapes, whole numbers), and then the digest hashes the text
//! as it is, or without its spacing. Anything else says so ([`shape`] is `None`), and
//! the text is read into a map and walked.

/// How far a text is from its canonical form, when only its spacing is in the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// The text is its canonical form.
    Compact,
    /// The text without its spacing (outside strings) is its canonical form.
    Spaced,
}

/// Containers nested deeper than this are left to the map walk.
const MAX_DEPTH: usize = 32;

/// Integers with more digits than this may not be exact once read: left to the map walk.
const MAX_DIGITS: usize = 18;

#[derive(Clone, Copy)]
enum Level {
    Array,
    /// An object: where its last key's contents are, and whether a key comes next.
    Object {
        last_key: Option<(usize, usize)>,
        key_next: bool,
    },
}

/// Whether `text`, a JSON value, is canonical but for its spacing: every object's keys
/// in ascending byte order (no two alike), no string with an escape, every number a
/// whole number of at most 18 digits (and not `-0`), nesting at most 32 deep.
pub(super) fn shape(text: &[u8]) -> Option<Shape> {
    let mut levels = [Level::Array; MAX_DEPTH];
    let mut depth = 0usize;
    let mut spaced = false;
    let mut at = 0usize;
    while let Some(&byte) = text.get(at) {
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {
                spaced = true;
                at += 1;
            }
            b'{' | b'[' => {
                *levels.get_mut(depth)? = Level::opened_by(byte);
                depth += 1;
                at += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                at += 1;
            }
            b',' | b':' => {
                if let Some(Level::Object { key_next, .. }) =
                    depth.checked_sub(1).and_then(|top| levels.get_mut(top))
                {
                    *key_next = byte == b',';
                }
                at += 1;
            }
            b'"' => {
                let end = plain_string_end(text, at)?;
                let top = depth.checked_sub(1).and_then(|top| levels.get_mut(top));
                next_key(text, top, (at + 1, end - 1))?;
                at = end;
            }
            b'-' | b'0'..=b'9' => at = whole_number_end(text, at)?,
            b't' if text.get(at..at + 4) == Some(b"true") => at += 4,
            b'f' if text.get(at..at + 5) == Some(b"false") => at += 5,
            b'n' if text.get(at..at + 4) == Some(b"null") => at += 4,
            _ => return None,
        }
    }
    (depth == 0).then_some(if spaced {
        Shape::Spaced
    } else {
        Shape::Compact
    })
}

impl Level {
    /// The level `byte` (`{` or `[`) opens.
    fn opened_by(byte: u8) -> Self {
        if byte == b'{' {
            Level::Object {
                last_key: None,
                key_next: true,
            }
        } else {
            Level::Array
        }
    }
}

/// Takes the string whose contents are at `key` as the next key of `level`, when a key
/// comes next there: `None` when it does not sort after the key before it.
fn next_key(text: &[u8], level: Option<&mut Level>, key: (usize, usize)) -> Option<()> {
    if let Some(Level::Object { last_key, key_next }) = level {
        if *key_next {
            if let Some((from, to)) = *last_key {
                if text.get(from..to)? >= text.get(key.0..key.1)? {
                    return None;
                }
            }
            *last_key = Some(key);
            *key_next = false;
        }
    }
    Some(())
}

/// Just past the string opening at `at`, when it has no escape and no control byte.
fn plain_string_end(text: &[u8], at: usize) -> Option<usize> {
    let rest = text.get(at + 1..)?;
    let close = memchr::memchr2(b'"', b'\\', rest)?;
    let contents = rest.get(..close)?;
    if rest.get(close) != Some(&b'"') || contents.iter().any(|&b| b < 0x20) {
        return None;
    }
    Some(at + 1 + close + 1)
}

/// Just past the number opening at `at`, when it is a whole number written as a map
/// would write it again.
fn whole_number_end(text: &[u8], at: usize) -> Option<usize> {
    let negative = text.get(at) == Some(&b'-');
    let digits_from = at + usize::from(negative);
    let digits = text
        .get(digits_from..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = digits_from + digits;
    let leading = text.get(digits_from)?;
    let zero_alone = *leading == b'0' && digits == 1;
    let canonical = digits > 0
        && digits <= MAX_DIGITS
        && (*leading != b'0' || (zero_alone && !negative))
        && !matches!(text.get(end), Some(b'.' | b'e' | b'E'));
    canonical.then_some(end)
}

/// Feeds `text` to `put` without its spacing outside strings, in as few pieces as the
/// spacing allows.
pub(super) fn without_spacing(text: &[u8], mut put: impl FnMut(&[u8])) {
    let mut at = 0usize;
    let mut run = 0usize;
    while let Some(&byte) = text.get(at) {
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {
                put(text.get(run..at).unwrap_or_default());
                at += 1;
                run = at;
            }
            b'"' => {
                // A string of a text `shape` accepted: no escapes, so the next quote ends it.
                let close = memchr::memchr(b'"', text.get(at + 1..).unwrap_or_default());
                at = close.map_or(text.len(), |c| at + 1 + c + 1);
            }
            _ => at += 1,
        }
    }
    put(text.get(run..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_is_told_from_text_that_needs_reading() {
        let compact = [
            r#"{}"#,
            r#"{"a":1,"b":[true,false,null],"c":{"x":"y"}}"#,
            r#"{"n":-12,"z":0,"é":"ü"}"#,
            r#"[{"b":1},{"a":2}]"#,
        ];
        for text in compact {
            assert_eq!(shape(text.as_bytes()), Some(Shape::Compact), "{text}");
        }
        assert_eq!(shape(b"{ \"a\" : 1 }"), Some(Shape::Spaced));
        let needs_reading = [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a\"":1}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":{"d":1,"c":2}}"#,
        ];
        for text in needs_reading {
            assert_eq!(shape(text.as_bytes()), None, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(shape(deep.as_bytes()), None);
    }

    #[test]
    fn spacing_goes_and_strings_keep_theirs() {
        let mut out = Vec::new();
        without_spacing(b" { \"a b\" : [ 1 , 2 ] }\n", |piece| {
            out.extend_from_slice(piece)
        });
        assert_eq!(out, br#"{"a b":[1,2]}"#);
    }
}
