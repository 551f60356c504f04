//! A server's text made safe to show on a terminal.
//!
//! Whatever a server sends (a tool's result, a question, a log entry, an error message)
//! can carry the characters a terminal acts on instead of showing: ESC sequences that set
//! the window title (OSC 0), write the clipboard (OSC 52), colour text or move the cursor
//! (CSI), BEL, the C1 controls that some terminals read as the same sequences
//! (U+009B is CSI), and the bidirectional overrides and isolates that reorder what the
//! user reads. Each such character is shown as Rust's `char::escape_unicode` writes it:
//! ESC as `\u{1b}`, BEL as `\u{7}`, U+009B as `\u{9b}`, RIGHT-TO-LEFT OVERRIDE as
//! `\u{202e}`. That form is plain ASCII, so neutralizing twice changes nothing; a
//! backslash the server sent stays as it is, since it does nothing to a terminal.
//!
//! Under `--json` the output stays JSON: [`json`] writes the same characters as JSON
//! escapes, which read back to the same value.

use std::borrow::Cow;

/// `text` with every character a terminal would act on made visible, line breaks kept:
/// for a message, a result, a description. A tab stays; a carriage return stays only
/// before a line feed (a CRLF line end moves nothing), since alone it returns the
/// cursor to overwrite what the line showed.
pub(crate) fn text(text: &str) -> Cow<'_, str> {
    neutralize(text, Keep::Lines)
}

/// `text` on one line: as [`text`], and a line feed made visible too, for what is shown
/// within a line (a name, a key, a field's label, a table cell, a prompt).
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    neutralize(text, Keep::Nothing)
}

/// `text` without its SGR sequences (`ESC [ digits ; digits m`, colours and weights),
/// which only style what is around them: the rest of what a terminal acts on is left
/// for [`text`] and [`line()`] to make visible.
pub(crate) fn without_colour(text: &str) -> Cow<'_, str> {
    if !text.contains("\u{1b}[") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':'))
            .unwrap_or(after.len());
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            // Not a colour: kept, to be made visible.
            out.push_str(&rest[at..at + 2]);
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// JSON text with DEL, the C1 controls and the bidi controls written as `\uXXXX`
/// escapes (serde_json escapes the C0 controls itself and leaves these raw). They can
/// only occur inside JSON strings, so the text reads back to the same value.
pub(crate) fn json(text: &str) -> Cow<'_, str> {
    if !text.chars().any(raw_in_json) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw_in_json(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// What serde_json writes raw that a terminal acts on. Not the C0 controls: inside a
/// string serde escapes them, and outside one they are the JSON's own line breaks.
fn raw_in_json(c: char) -> bool {
    acts(c) && c >= '\u{7f}'
}

/// Which line breaks pass through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Line feeds, tabs and CRLF line ends.
    Lines,
    /// Tabs only.
    Nothing,
}

fn neutralize(text: &str, keep: Keep) -> Cow<'_, str> {
    let mut chars = text.chars().peekable();
    let mut clean = true;
    while let Some(c) = chars.next() {
        if shown(c, chars.peek().copied(), keep).is_err() {
            clean = false;
            break;
        }
    }
    if clean {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match shown(c, chars.peek().copied(), keep) {
            Ok(c) => out.push(c),
            Err(c) => out.extend(c.escape_unicode()),
        }
    }
    Cow::Owned(out)
}

/// `Ok(c)` when `c` (followed by `next`) is shown as it is, `Err(c)` when it must be
/// escaped.
fn shown(c: char, next: Option<char>, keep: Keep) -> Result<char, char> {
    let kept = match c {
        '\t' => true,
        '\n' => keep == Keep::Lines,
        '\r' => keep == Keep::Lines && next == Some('\n'),
        c => !acts(c),
    };
    if kept { Ok(c) } else { Err(c) }
}

/// A character a terminal acts on (or that reorders the text around it): the C0
/// controls, DEL, the C1 controls, the bidi embeddings, overrides and isolates.
fn acts(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_untouched() {
        let plain = "héllo → wörld\n\tindented, a \\ backslash, 東京";
        assert!(matches!(text(plain), Cow::Borrowed(s) if s == plain));
        assert!(matches!(json(plain), Cow::Borrowed(s) if s == plain));
    }

    #[test]
    fn escape_sequences_are_shown_not_run() {
        let title = "\u{1b}]0;pwned\u{7}";
        assert_eq!(text(title), "\\u{1b}]0;pwned\\u{7}");
        let clipboard = "\u{1b}]52;c;cHduZWQ=\u{1b}\\";
        assert_eq!(text(clipboard), "\\u{1b}]52;c;cHduZWQ=\\u{1b}\\");
        let colour_and_cursor = "\u{1b}[31mred\u{1b}[2A\u{1b}[2K";
        assert_eq!(
            text(colour_and_cursor),
            "\\u{1b}[31mred\\u{1b}[2A\\u{1b}[2K"
        );
    }

    #[test]
    fn colours_are_dropped_and_every_other_sequence_is_left_to_be_shown() {
        let dim = "\u{1b}[2m2026-12-07\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m served";
        assert_eq!(without_colour(dim), "2026-12-07  INFO served");
        let cursor = "\u{1b}[31mred\u{1b}[2A\u{1b}[2K\u{1b}[";
        assert_eq!(
            line(&without_colour(cursor)),
            "red\\u{1b}[2A\\u{1b}[2K\\u{1b}["
        );
        assert!(matches!(without_colour("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn every_c0_control_but_tab_and_newline_is_shown() {
        for code in (0u32..0x20).chain([0x7f]) {
            let c = char::from_u32(code).unwrap();
            let shown = text(&c.to_string()).into_owned();
            if c == '\t' || c == '\n' {
                assert_eq!(shown, c.to_string());
            } else {
                assert_eq!(shown, format!("\\u{{{code:x}}}"));
            }
        }
    }

    #[test]
    fn c1_controls_are_shown() {
        for code in 0x80u32..=0x9f {
            let c = char::from_u32(code).unwrap();
            assert_eq!(text(&c.to_string()), format!("\\u{{{code:x}}}"));
        }
        assert_eq!(text("\u{9b}2J"), "\\u{9b}2J");
    }

    #[test]
    fn bidi_overrides_and_isolates_are_shown() {
        assert_eq!(text("abc\u{202e}fed"), "abc\\u{202e}fed");
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2066}', '\u{2069}',
        ] {
            assert_ne!(text(&c.to_string()), c.to_string());
        }
        // Marks that only hint a direction reorder nothing: they stay.
        assert_eq!(text("a\u{200f}b"), "a\u{200f}b");
    }

    #[test]
    fn a_lone_carriage_return_is_shown_but_a_crlf_line_end_stays() {
        assert_eq!(text("safe\rEVIL"), "safe\\u{d}EVIL");
        assert_eq!(text("one\r\ntwo\r"), "one\r\ntwo\\u{d}");
    }

    #[test]
    fn one_line_text_shows_its_line_breaks_too() {
        assert_eq!(line("key\nfake prompt"), "key\\u{a}fake prompt");
        assert_eq!(line("a\r\nb"), "a\\u{d}\\u{a}b");
        assert_eq!(line("a\tb"), "a\tb");
    }

    #[test]
    fn neutralizing_twice_changes_nothing() {
        let once = text("\u{1b}[31m\u{9b}\u{202e}\r").into_owned();
        assert_eq!(text(&once), once);
    }

    #[test]
    fn json_escapes_what_serde_leaves_raw_and_reads_back_the_same() {
        let value = serde_json::json!({"t": "\u{1b}]0;x\u{7}\u{7f}\u{9b}2J\u{202e}"});
        let raw = serde_json::to_string_pretty(&value).unwrap();
        let safe = json(&raw);
        assert!(!safe.chars().any(raw_in_json), "{safe}");
        assert!(
            !safe.contains('\u{1b}') && !safe.contains('\u{7}'),
            "{safe}"
        );
        assert!(safe.contains("\\u009b") && safe.contains("\\u202e") && safe.contains("\\u007f"));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
