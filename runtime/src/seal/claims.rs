//! The claims envelope sealed inside every token, and the checks made against it.
//!
//! A small fixed binary layout rather than JSON, because sealing happens on every round
//! and this keeps it to one allocation with no parsing on the way back:
//!
//! ```text
//! version u8 = 1 | flags u8 | issued_at_ms u64 | expires_at_ms u64
//! | (flags & ARGS_TEXT) arguments' canonical text: len u32 + bytes | (else) args digest [16]
//! | (flags & PRINCIPAL) salt [16] tag [16]
//! | method: len u32 + bytes | target: len u32 + bytes
//! | (flags & AUDIENCE) audience: len u32 + bytes
//! | (flags & ROUND) round u32: the round whose answer carried the token
//! | state: the remaining bytes
//! ```
//!
//! Integers are big-endian. Unknown versions or flags are malformed, never ignored.

use super::RejectReason;
use super::bound::ArgsBound;
use super::ct::bytes_ct_eq;
use super::digest::ARGS_DIGEST_LEN;
use super::principal::{PRINCIPAL_SALT_LEN, PRINCIPAL_TAG_LEN, Principal};

const VERSION: u8 = 1;
const FLAG_PRINCIPAL: u8 = 0b01;
const FLAG_AUDIENCE: u8 = 0b10;
const FLAG_ROUND: u8 = 0b100;
const FLAG_ARGS_TEXT: u8 = 0b1000;
const KNOWN_FLAGS: u8 = FLAG_PRINCIPAL | FLAG_AUDIENCE | FLAG_ROUND | FLAG_ARGS_TEXT;
const FIXED_LEN: usize = 1 + 1 + 8 + 8;

/// How far ahead of our clock a token's issue time may be: another instance's clock may
/// run ahead of ours.
pub(crate) const FUTURE_SKEW_MS: u64 = 60_000;

/// A principal as it sits in the claims: a random salt and the tag computed with it.
#[derive(Clone, Copy)]
pub(crate) struct PrincipalTag {
    pub(crate) salt: [u8; PRINCIPAL_SALT_LEN],
    pub(crate) tag: [u8; PRINCIPAL_TAG_LEN],
}

/// The claims of one token, borrowed from the decrypted payload or the outgoing request.
pub(crate) struct Claims<'a> {
    pub(crate) issued_at_ms: u64,
    pub(crate) expires_at_ms: u64,
    pub(crate) args: ArgsBound<'a>,
    pub(crate) principal: Option<PrincipalTag>,
    pub(crate) method: &'a [u8],
    pub(crate) target: &'a [u8],
    pub(crate) audience: Option<&'a [u8]>,
    /// The round of the flow whose input-required answer carries the token (1 for the
    /// first), when the server counted it.
    pub(crate) round: Option<u32>,
}

/// What the incoming request says the token must match.
pub(crate) struct Expected<'a> {
    pub(crate) now_ms: u64,
    pub(crate) method: &'a [u8],
    pub(crate) target: &'a [u8],
    pub(crate) args: ArgsBound<'a>,
    pub(crate) audience: Option<&'a [u8]>,
    pub(crate) principal: Option<&'a Principal>,
}

impl<'a> Claims<'a> {
    /// The length of the envelope followed by `state_len` bytes of state.
    pub(crate) fn encoded_len(&self, state_len: usize) -> usize {
        let principal_len = if self.principal.is_some() {
            PRINCIPAL_SALT_LEN + PRINCIPAL_TAG_LEN
        } else {
            0
        };
        let audience_len = self.audience.map_or(0, |audience| 4 + audience.len());
        let round_len = if self.round.is_some() { 4 } else { 0 };
        let args_len = match self.args {
            ArgsBound::Digest(_) => ARGS_DIGEST_LEN,
            ArgsBound::Text(text) => 4 + text.len(),
        };
        (FIXED_LEN + args_len + principal_len + 8 + audience_len + round_len)
            .saturating_add(self.method.len())
            .saturating_add(self.target.len())
            .saturating_add(state_len)
    }

    /// Appends the envelope followed by `state` to `out`, or returns `None` when a field
    /// outgrows its length prefix.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>, state: &[u8]) -> Option<()> {
        let mut flags = 0;
        if self.principal.is_some() {
            flags |= FLAG_PRINCIPAL;
        }
        if self.audience.is_some() {
            flags |= FLAG_AUDIENCE;
        }
        if self.round.is_some() {
            flags |= FLAG_ROUND;
        }
        if matches!(self.args, ArgsBound::Text(_)) {
            flags |= FLAG_ARGS_TEXT;
        }
        out.push(VERSION);
        out.push(flags);
        out.extend_from_slice(&self.issued_at_ms.to_be_bytes());
        out.extend_from_slice(&self.expires_at_ms.to_be_bytes());
        match self.args {
            ArgsBound::Digest(digest) => out.extend_from_slice(&digest),
            ArgsBound::Text(text) => put_field(out, text)?,
        }
        if let Some(principal) = &self.principal {
            out.extend_from_slice(&principal.salt);
            out.extend_from_slice(&principal.tag);
        }
        put_field(out, self.method)?;
        put_field(out, self.target)?;
        if let Some(audience) = self.audience {
            put_field(out, audience)?;
        }
        if let Some(round) = self.round {
            out.extend_from_slice(&round.to_be_bytes());
        }
        out.extend_from_slice(state);
        Some(())
    }

    /// The envelope followed by `state`, for codecs that take a finished payload.
    pub(crate) fn encode(&self, state: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.encoded_len(state.len()));
        self.encode_into(&mut out, state)?;
        Some(out)
    }

    /// Parses the envelope; returns the claims and the offset where the state begins.
    pub(crate) fn decode(bytes: &'a [u8]) -> Option<(Self, usize)> {
        let mut reader = Reader { rest: bytes };
        let [version, flags] = reader.array()?;
        if version != VERSION || flags & !KNOWN_FLAGS != 0 {
            return None;
        }
        let issued_at_ms = u64::from_be_bytes(reader.array()?);
        let expires_at_ms = u64::from_be_bytes(reader.array()?);
        let args = if flags & FLAG_ARGS_TEXT != 0 {
            ArgsBound::Text(reader.field()?)
        } else {
            ArgsBound::Digest(reader.array()?)
        };
        let principal = if flags & FLAG_PRINCIPAL != 0 {
            Some(PrincipalTag {
                salt: reader.array()?,
                tag: reader.array()?,
            })
        } else {
            None
        };
        let method = reader.field()?;
        let target = reader.field()?;
        let audience = if flags & FLAG_AUDIENCE != 0 {
            Some(reader.field()?)
        } else {
            None
        };
        let round = if flags & FLAG_ROUND != 0 {
            Some(u32::from_be_bytes(reader.array()?))
        } else {
            None
        };
        let state_offset = bytes.len() - reader.rest.len();
        let claims = Self {
            issued_at_ms,
            expires_at_ms,
            args,
            principal,
            method,
            target,
            audience,
            round,
        };
        Some((claims, state_offset))
    }

    /// Checks time, audience, request and principal, in that order; the first failure
    /// names the reason that goes to the log.
    pub(crate) fn check(&self, expected: &Expected<'_>) -> Result<(), RejectReason> {
        if self.issued_at_ms > expected.now_ms.saturating_add(FUTURE_SKEW_MS) {
            return Err(RejectReason::MintedInFuture);
        }
        if expected.now_ms >= self.expires_at_ms {
            return Err(RejectReason::Expired);
        }
        let audience_ok = match (self.audience, expected.audience) {
            (Some(ours), Some(theirs)) => bool::from(bytes_ct_eq(ours, theirs)),
            (None, None) => true,
            _ => false,
        };
        if !audience_ok {
            return Err(RejectReason::Audience);
        }
        let request_ok = bytes_ct_eq(self.method, expected.method)
            & bytes_ct_eq(self.target, expected.target)
            & self.args.ct_eq(&expected.args);
        if !bool::from(request_ok) {
            return Err(RejectReason::RequestBinding);
        }
        let principal_ok = match (&self.principal, expected.principal) {
            (Some(sealed), Some(principal)) => principal.matches(&sealed.salt, &sealed.tag),
            (None, None) => true,
            _ => false,
        };
        if !principal_ok {
            return Err(RejectReason::Principal);
        }
        Ok(())
    }
}

fn put_field(out: &mut Vec<u8>, field: &[u8]) -> Option<()> {
    let len = u32::try_from(field.len()).ok()?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(field);
    Some(())
}

/// Checked reads: every take fails cleanly on short input rather than panicking.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.rest.split_at_checked(len)?;
        self.rest = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn field(&mut self) -> Option<&'a [u8]> {
        let len = u32::from_be_bytes(self.array()?);
        self.take(usize::try_from(len).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(audience: Option<&'static [u8]>, principal: Option<PrincipalTag>) -> Claims<'static> {
        Claims {
            issued_at_ms: 1_000_000,
            expires_at_ms: 1_600_000,
            args: ArgsBound::Digest([9; ARGS_DIGEST_LEN]),
            principal,
            method: b"tools/call",
            target: b"deploy",
            audience,
            round: None,
        }
    }

    fn expected<'a>(
        audience: Option<&'static [u8]>,
        principal: Option<&'a Principal>,
    ) -> Expected<'a> {
        Expected {
            now_ms: 1_000_000,
            method: b"tools/call",
            target: b"deploy",
            args: ArgsBound::Digest([9; ARGS_DIGEST_LEN]),
            audience,
            principal,
        }
    }

    #[test]
    fn claims_round_trip_through_the_binary_layout() {
        let alice = Principal::custom("alice");
        let salt = [3; PRINCIPAL_SALT_LEN];
        let sealed = PrincipalTag {
            salt,
            tag: alice.tag(&salt),
        };
        let mut original = claims(Some(b"svc"), Some(sealed));
        original.round = Some(7);
        let bytes = original.encode(b"state").unwrap();
        assert_eq!(bytes.len(), original.encoded_len(5));
        let (decoded, offset) = Claims::decode(&bytes).unwrap();
        assert_eq!(&bytes[offset..], b"state");
        assert_eq!(decoded.issued_at_ms, original.issued_at_ms);
        assert_eq!(decoded.expires_at_ms, original.expires_at_ms);
        assert_eq!(decoded.method, original.method);
        assert_eq!(decoded.target, original.target);
        assert_eq!(decoded.audience, original.audience);
        assert_eq!(decoded.round, Some(7));
        decoded
            .check(&expected(Some(b"svc"), Some(&alice)))
            .unwrap();
    }

    #[test]
    fn every_truncation_and_unknown_flag_is_malformed() {
        let mut counted = claims(Some(b"svc"), None);
        counted.round = Some(2);
        let bytes = counted.encode(b"").unwrap();
        for len in 0..bytes.len() {
            assert!(Claims::decode(&bytes[..len]).is_none(), "prefix of {len}");
        }
        let mut flagged = bytes.clone();
        flagged[1] |= 0b1_0000;
        assert!(Claims::decode(&flagged).is_none());
        let mut versioned = bytes;
        versioned[0] = 2;
        assert!(Claims::decode(&versioned).is_none());
    }

    #[test]
    fn arguments_carried_as_text_round_trip_and_check_against_their_digest() {
        let text: &[u8] = br#"{"a":1}"#;
        let mut by_text = claims(None, None);
        by_text.args = ArgsBound::Text(text);
        let bytes = by_text.encode(b"st").unwrap();
        assert_eq!(bytes.len(), by_text.encoded_len(2));
        let (decoded, offset) = Claims::decode(&bytes).unwrap();
        assert_eq!(&bytes[offset..], b"st");
        assert_eq!(decoded.args, ArgsBound::Text(text));
        let mut expected = expected(None, None);
        for same in [
            ArgsBound::Text(text),
            ArgsBound::Digest(ArgsBound::Text(text).digest()),
        ] {
            expected.args = same;
            assert_eq!(decoded.check(&expected), Ok(()));
        }
        for other in [
            ArgsBound::Text(br#"{"a":2}"#),
            ArgsBound::Digest([9; ARGS_DIGEST_LEN]),
        ] {
            expected.args = other;
            assert_eq!(decoded.check(&expected), Err(RejectReason::RequestBinding));
        }
        let bare = by_text.encode(b"").unwrap();
        for len in 0..bare.len() {
            assert!(Claims::decode(&bare[..len]).is_none(), "prefix of {len}");
        }
    }

    #[test]
    fn audience_presence_drift_is_rejected_both_ways() {
        let with = claims(Some(b"svc"), None);
        let without = claims(None, None);
        assert_eq!(
            with.check(&expected(None, None)),
            Err(RejectReason::Audience)
        );
        assert_eq!(
            without.check(&expected(Some(b"svc"), None)),
            Err(RejectReason::Audience)
        );
        assert_eq!(without.check(&expected(None, None)), Ok(()));
    }
}
