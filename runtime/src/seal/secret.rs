//! Fresh secrets for `RequestStateSecurity::keys`, and parsers for secrets kept as text.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use zeroize::Zeroizing;

use crate::ConfigError;

use super::Result;

/// The length of a generated secret, and the minimum length of any `requestState` key.
pub(crate) const SECRET_LEN: usize = 32;

/// Returns 32 bytes from the operating system's CSPRNG (through a reseeding thread-local
/// generator), suitable as a `requestState` key.
///
/// The array is the caller's to wipe: wrap it in [`zeroize::Zeroizing`] if it lives on.
pub fn generate_secret() -> [u8; SECRET_LEN] {
    let mut secret = [0u8; SECRET_LEN];
    rand::fill(&mut secret[..]);
    secret
}

/// A fresh secret as 64 lowercase hex characters, the form [`parse_secret`] reads.
pub fn generate_secret_hex() -> String {
    let secret = Zeroizing::new(generate_secret());
    encode_hex(&secret[..])
}

/// Parses a secret kept as text: hex (either case, no separators), else standard padded
/// base64 (the way `openssl rand -base64 32` prints it); no surrounding whitespace.
///
/// The bytes are wiped when the returned buffer drops. Length is checked later, by
/// `RequestStateSecurity::keys`, which says how to generate a long enough one.
pub fn parse_secret(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    parse_secret_hex(text)
        .or_else(|_| parse_secret_base64(text))
        .map_err(|_| ConfigError::InvalidSecret {
            expected: "hex digits, or standard padded base64, with no whitespace",
        })
}

/// A secret written as hex.
fn parse_secret_hex(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    let invalid = || ConfigError::InvalidSecret {
        expected: "an even number of hex digits with no whitespace",
    };
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(invalid());
    }
    let mut out = Zeroizing::new(Vec::with_capacity(digits.len() / 2));
    for pair in digits.chunks_exact(2) {
        let (Some(high), Some(low)) = (hex_value(pair[0]), hex_value(pair[1])) else {
            return Err(invalid());
        };
        out.push(high << 4 | low);
    }
    Ok(out)
}

/// A secret written as standard padded base64.
fn parse_secret_base64(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    STANDARD
        .decode(text)
        .map(Zeroizing::new)
        .map_err(|_| ConfigError::InvalidSecret {
            expected: "standard padded base64 with no whitespace",
        })
}

fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_32_random_bytes() {
        assert_ne!(generate_secret(), generate_secret());
        assert_eq!(generate_secret().len(), 32);
    }

    #[test]
    fn hex_secret_round_trips() {
        let text = generate_secret_hex();
        assert_eq!(text.len(), 64);
        assert_eq!(parse_secret_hex(&text).unwrap().len(), 32);
        assert_eq!(
            parse_secret_hex("00fFa0").unwrap().as_slice(),
            &[0x00, 0xff, 0xa0]
        );
    }

    #[test]
    fn base64_secret_round_trips() {
        let secret = generate_secret();
        let text = STANDARD.encode(secret);
        assert_eq!(*parse_secret(&text).unwrap(), secret.to_vec());
    }

    #[test]
    fn malformed_secret_text_is_rejected_with_advice() {
        for bad in ["abc", "zz", "00 11", " 0011"] {
            let err = parse_secret_hex(bad).unwrap_err();
            assert!(err.to_string().contains("generate_secret_hex"), "{err}");
        }
        assert!(parse_secret_base64("not base64!").is_err());
        assert!(parse_secret_base64(" AAAA").is_err());
    }
}
