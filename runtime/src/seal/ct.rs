//! Constant-time comparison of byte strings, for everything checked against a token.

use subtle::{Choice, ConstantTimeEq as _};

/// Whether `a` and `b` hold the same bytes, in time that depends on their lengths only.
///
/// subtle's slice comparison passes every byte through its optimisation barrier (an
/// out-of-line volatile read), which was most of what checking the claims cost. This
/// passes each eight-byte word through subtle's `u64` comparison instead, so the same
/// barrier still guards every step of the loop. Like subtle, it answers early on a length
/// mismatch: lengths are not secret.
pub(crate) fn bytes_ct_eq(a: &[u8], b: &[u8]) -> Choice {
    if a.len() != b.len() {
        return Choice::from(0);
    }
    // Slices of one length split alike; within one length the packing is one-to-one.
    let word = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(0u64, |word, &byte| (word << 8) | u64::from(byte))
    };
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut equal = word(a_words.remainder())
        .ct_eq(&word(b_words.remainder()))
        .unwrap_u8();
    for (x, y) in a_words.zip(b_words) {
        // Always eight bytes; taken as arrays so each is a single load.
        let (Ok(x), Ok(y)) = (<[u8; 8]>::try_from(x), <[u8; 8]>::try_from(y)) else {
            return Choice::from(0);
        };
        equal &= u64::from_le_bytes(x)
            .ct_eq(&u64::from_le_bytes(y))
            .unwrap_u8();
    }
    Choice::from(equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_ct_eq_agrees_with_equality() {
        for len in 0..40usize {
            let a: Vec<u8> = (0..len).map(|i| (i * 37 + 5) as u8).collect();
            assert!(bool::from(bytes_ct_eq(&a, &a.clone())), "len {len}");
            for position in 0..len {
                for flip in [1u8, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[position] ^= flip;
                    assert!(!bool::from(bytes_ct_eq(&a, &b)), "len {len} at {position}");
                }
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!bool::from(bytes_ct_eq(&a, &longer)));
            assert!(!bool::from(bytes_ct_eq(&longer, &a)));
        }
        // A zero byte more or less is a different string, not padding.
        assert!(!bool::from(bytes_ct_eq(b"\0abc", b"abc\0")));
    }
}
