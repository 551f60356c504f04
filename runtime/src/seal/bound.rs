//! What a token binds its request's arguments by ([`ArgsBound`]): short arguments
//! canonical as sent by their text, any others by their digest (`digest.rs`).

use serde_json::value::RawValue;

use super::canonical_text::{Shape, shape};
use super::ct::bytes_ct_eq;
use super::digest::{ARGS_DIGEST_LEN, canonical_digest};

/// The longest arguments a token carries as their canonical text rather than digested.
pub(crate) const ARGS_TEXT_MAX: usize = 64;

/// What a token binds its request's arguments by: their digest, or (arguments short and
/// canonical as sent) their canonical text itself, which takes no hash to seal with or
/// to check against. A text and a digest bind the same arguments when the text's digest
/// is the digest: the two forms check against each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgsBound<'a> {
    Digest([u8; ARGS_DIGEST_LEN]),
    Text(&'a [u8]),
}

impl ArgsBound<'_> {
    /// Whether `self` and `other` bind the same arguments, in constant time for a given
    /// pair of forms and lengths.
    pub(crate) fn ct_eq(&self, other: &ArgsBound<'_>) -> subtle::Choice {
        match (*self, *other) {
            (ArgsBound::Digest(a), ArgsBound::Digest(b)) => bytes_ct_eq(&a, &b),
            (ArgsBound::Text(a), ArgsBound::Text(b)) => bytes_ct_eq(a, b),
            (ArgsBound::Text(text), ArgsBound::Digest(digest))
            | (ArgsBound::Digest(digest), ArgsBound::Text(text)) => {
                bytes_ct_eq(&canonical_digest(text), &digest)
            }
        }
    }

    /// The digest form: a text's digest, computed now.
    pub(crate) fn digest(&self) -> [u8; ARGS_DIGEST_LEN] {
        match self {
            Self::Digest(digest) => *digest,
            Self::Text(text) => canonical_digest(text),
        }
    }
}

/// The text of `arguments`, absent ones binding as `{}`.
pub(crate) fn arguments_text(arguments: Option<&RawValue>) -> &[u8] {
    arguments.map_or(b"{}".as_slice(), |raw| raw.get().as_bytes())
}

/// [`arguments_text`] when it is the arguments' canonical form and short enough to be
/// bound by itself ([`ArgsBound::Text`]).
pub(crate) fn canonical_text(arguments: Option<&RawValue>) -> Option<&[u8]> {
    let text = arguments_text(arguments);
    (text.len() <= ARGS_TEXT_MAX && shape(text) == Some(Shape::Compact)).then_some(text)
}
