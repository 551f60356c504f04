//! A DPoP proof's header (RFC 9449 §4.2): `typ`, an asymmetric `alg`, and the public key
//! it carries as `jwk`, whose `kty` and `crv` must fit that `alg` before anything else is
//! done with it; and the key's RFC 7638 thumbprint, computed here from the required
//! members only (EC: `crv kty x y`; OKP: `crv kty x`; RSA: `e kty n`), in that
//! lexicographic order, without whitespace. jsonwebtoken's `Jwk::thumbprint` is not used:
//! it hashes an OKP key's text with `crv` unquoted and panics on a `kty` and `crv` that
//! disagree.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

/// The algorithms a proof may be signed with: asymmetric ones only, each with the key
/// type (and curve) it needs.
pub(crate) const ALGS: &str = "ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA";

/// The smallest and largest RSA modulus taken, in bytes (2048 and 4096 bits).
const RSA_MODULUS_BYTES: std::ops::RangeInclusive<usize> = 256..=512;
/// The longest RSA public exponent taken, in bytes.
const RSA_EXPONENT_BYTES: usize = 8;

/// The public key a proof is signed with.
pub(super) struct ProofKey {
    /// The algorithm of the proof's signature.
    pub(super) alg: Algorithm,
    /// The key, for jsonwebtoken to check that signature with.
    pub(super) decoding: DecodingKey,
    /// Its RFC 7638 SHA-256 thumbprint: what a token bound to it holds as `cnf.jkt`.
    pub(super) thumbprint: String,
}

/// The key of `proof` (a compact JWS), once its header is a DPoP proof's and its `jwk`
/// fits its `alg`; why not otherwise.
pub(super) fn proof_key(proof: &str) -> Result<ProofKey, String> {
    let mut parts = proof.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the proof is not a compact JWS".into());
    };
    let header: Map<String, Value> = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("the proof's header is not base64url JSON")?;
    if text(&header, "typ") != Some("dpop+jwt") {
        return Err("the proof's typ is not dpop+jwt".into());
    }
    let alg_name = text(&header, "alg").unwrap_or_default();
    let alg = algorithm(alg_name)
        .ok_or_else(|| format!("the proof's alg {:?} is not one of {ALGS}", short(alg_name)))?;
    let Some(Value::Object(jwk)) = header.get("jwk") else {
        return Err("the proof's header has no jwk".into());
    };
    if jwk.contains_key("d") {
        return Err("the proof's jwk holds a private key".into());
    }
    if let Some(said) = jwk.get("alg") {
        if said.as_str() != Some(alg_name) {
            return Err(format!(
                "the proof's jwk is for another alg than {alg_name}"
            ));
        }
    }
    let (decoding, thumbprint) = key_for(jwk, alg, alg_name)?;
    Ok(ProofKey {
        alg,
        decoding,
        thumbprint,
    })
}

/// The algorithm named `name`, if a proof may use it.
fn algorithm(name: &str) -> Option<Algorithm> {
    Some(match name {
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

/// The key `jwk` describes and its thumbprint, when its type and curve fit `alg`.
fn key_for(
    jwk: &Map<String, Value>,
    alg: Algorithm,
    alg_name: &str,
) -> Result<(DecodingKey, String), String> {
    let kty = text(jwk, "kty").unwrap_or_default();
    let crv = text(jwk, "crv");
    let misfit = || {
        format!(
            "the proof's jwk (kty {:?}, crv {:?}) does not fit its alg {alg_name}",
            short(kty),
            crv.map(short).unwrap_or_default()
        )
    };
    match (alg, kty, crv) {
        (Algorithm::ES256, "EC", Some(crv @ "P-256"))
        | (Algorithm::ES384, "EC", Some(crv @ "P-384")) => {
            let size = if crv == "P-256" { 32 } else { 48 };
            let x = member(jwk, "x", |n| n == size)?;
            let y = member(jwk, "y", |n| n == size)?;
            let decoding = DecodingKey::from_ec_components(x, y)
                .map_err(|e| format!("the proof's jwk: {e}"))?;
            let canonical = format!(r#"{{"crv":"{crv}","kty":"EC","x":"{x}","y":"{y}"}}"#);
            Ok((decoding, thumbprint_of(&canonical)))
        }
        (Algorithm::EdDSA, "OKP", Some("Ed25519")) => {
            let x = member(jwk, "x", |n| n == 32)?;
            if !ed25519_point_of_large_order(x) {
                return Err("the proof's jwk x is not an Ed25519 key of full order".into());
            }
            let decoding =
                DecodingKey::from_ed_components(x).map_err(|e| format!("the proof's jwk: {e}"))?;
            let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
            Ok((decoding, thumbprint_of(&canonical)))
        }
        (
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512,
            "RSA",
            _,
        ) => {
            let n = member(jwk, "n", |n| RSA_MODULUS_BYTES.contains(&n))?;
            let e = member(jwk, "e", |n| (1..=RSA_EXPONENT_BYTES).contains(&n))?;
            let decoding = DecodingKey::from_rsa_components(n, e)
                .map_err(|e| format!("the proof's jwk: {e}"))?;
            let canonical = format!(r#"{{"e":"{e}","kty":"RSA","n":"{n}"}}"#);
            Ok((decoding, thumbprint_of(&canonical)))
        }
        _ => Err(misfit()),
    }
}

/// Whether `x` (base64url, 32 octets) is an Ed25519 point outside the small subgroup. A
/// key of small order (the identity among them) verifies signatures no one made with a
/// private key (R the identity, S zero), and the verifier does not refuse it itself.
fn ed25519_point_of_large_order(x: &str) -> bool {
    let Some(bytes) = URL_SAFE_NO_PAD
        .decode(x)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
    else {
        return false;
    };
    curve25519_dalek::edwards::CompressedEdwardsY(bytes)
        .decompress()
        .is_some_and(|point| !point.is_small_order())
}

/// Member `name` of `jwk`: base64url text (canonical: no padding, no stray bits, so it
/// is the text the thumbprint hashes) of a length `fits` takes, with no leading zero
/// octet when longer than one (RFC 7518 §6.3.1: the fewest octets).
fn member<'a>(
    jwk: &'a Map<String, Value>,
    name: &str,
    fits: impl Fn(usize) -> bool,
) -> Result<&'a str, String> {
    let value = text(jwk, name).ok_or_else(|| format!("the proof's jwk has no {name}"))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(value)
        .map_err(|_| format!("the proof's jwk {name} is not base64url"))?;
    let minimal = !matches!(name, "n" | "e") || bytes.len() < 2 || bytes.first() != Some(&0);
    if !fits(bytes.len()) || !minimal {
        return Err(format!("the proof's jwk {name} is not of its key's size"));
    }
    Ok(value)
}

/// base64url(SHA-256(`canonical`)): the thumbprint of the key whose RFC 7638 text is
/// `canonical`.
pub(super) fn thumbprint_of(canonical: &str) -> String {
    crate::util::sha256_b64url(canonical)
}

fn text<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    object.get(name).and_then(Value::as_str)
}

/// At most 16 characters of `said`, for an answer that names what came.
fn short(said: &str) -> &str {
    said.char_indices()
        .nth(16)
        .and_then(|(i, _)| said.get(..i))
        .unwrap_or(said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A proof whose header is `header` (the signature is not looked at here).
    fn proof(header: Value) -> String {
        let header = URL_SAFE_NO_PAD.encode(header.to_string());
        format!("{header}.e30.c2ln")
    }

    /// RFC 7638 §3.1's RSA key.
    const RFC7638_N: &str = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";

    #[test]
    fn the_rfc_7638_rsa_example_has_its_published_thumbprint() {
        let canonical = format!(r#"{{"e":"AQAB","kty":"RSA","n":"{RFC7638_N}"}}"#);
        assert_eq!(
            thumbprint_of(&canonical),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
        let key = proof_key(&proof(json!({"typ": "dpop+jwt", "alg": "RS256",
            "jwk": {"kty": "RSA", "n": RFC7638_N, "e": "AQAB", "alg": "RS256",
                "kid": "2011-04-29"}})))
        .map_err(|e| e.to_string())
        .unwrap();
        assert_eq!(
            key.thumbprint, "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
            "only the required members count, in their order"
        );
    }

    #[test]
    fn the_rfc_8037_ed25519_example_has_its_published_thumbprint() {
        let key = proof_key(&proof(json!({"typ": "dpop+jwt", "alg": "EdDSA",
            "jwk": {"x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kty": "OKP",
                "crv": "Ed25519"}})))
        .map_err(|e| e.to_string())
        .unwrap();
        assert_eq!(
            key.thumbprint,
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }

    #[test]
    fn a_jwk_whose_type_or_curve_does_not_fit_the_alg_is_refused() {
        let x32 = URL_SAFE_NO_PAD.encode([1u8; 32]);
        let cases = [
            (
                "ES256",
                json!({"kty": "EC", "crv": "Ed25519", "x": x32, "y": x32}),
            ),
            (
                "EdDSA",
                json!({"kty": "OKP", "crv": "P-256", "x": x32, "y": x32}),
            ),
            (
                "ES256",
                json!({"kty": "EC", "crv": "P-384", "x": x32, "y": x32}),
            ),
            (
                "ES384",
                json!({"kty": "EC", "crv": "P-256", "x": x32, "y": x32}),
            ),
            ("EdDSA", json!({"kty": "EC", "crv": "Ed25519", "x": x32})),
            (
                "RS256",
                json!({"kty": "EC", "crv": "P-256", "x": x32, "y": x32}),
            ),
            ("ES256", json!({"kty": "RSA", "n": RFC7638_N, "e": "AQAB"})),
            ("ES256", json!({"kty": "oct", "k": x32})),
            ("EdDSA", json!({"kty": "OKP", "crv": "X25519", "x": x32})),
        ];
        for (alg, jwk) in cases {
            let said = proof_key(&proof(json!({"typ": "dpop+jwt", "alg": alg, "jwk": jwk})));
            let why = said.err().unwrap_or_default();
            assert!(why.contains("does not fit"), "{alg} {jwk}: {why}");
        }
    }

    #[test]
    fn members_of_the_wrong_size_or_encoding_are_refused() {
        let cases = [
            (
                "EdDSA",
                json!({"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}),
            ),
            ("EdDSA", json!({"kty": "OKP", "crv": "Ed25519"})),
            (
                "ES256",
                json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode([1u8; 32]), "y": "a+b/"}),
            ),
            (
                "RS256",
                json!({"kty": "RSA", "n": URL_SAFE_NO_PAD.encode([1u8; 64]), "e": "AQAB"}),
            ),
            (
                "RS256",
                json!({"kty": "RSA", "n": RFC7638_N, "e": "AAEAAQ"}),
            ),
        ];
        for (alg, jwk) in cases {
            let said = proof_key(&proof(json!({"typ": "dpop+jwt", "alg": alg, "jwk": jwk})));
            assert!(said.is_err(), "{alg} {jwk}");
        }
    }

    #[test]
    fn a_header_not_a_dpop_proofs_is_refused() {
        let jwk = json!({"kty": "OKP", "crv": "Ed25519",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        let refused = [
            proof(json!({"typ": "JWT", "alg": "EdDSA", "jwk": jwk})),
            proof(json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": jwk})),
            proof(json!({"typ": "dpop+jwt", "alg": "none", "jwk": jwk})),
            proof(json!({"typ": "dpop+jwt", "alg": "EdDSA"})),
            proof(
                json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": {"d": "AA", "kty": "OKP",
                "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}}),
            ),
            proof(json!({"typ": "dpop+jwt", "alg": "EdDSA",
                "jwk": {"alg": "ES256", "kty": "OKP", "crv": "Ed25519",
                    "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}})),
            "not.a.jws.at all".into(),
            "e30".into(),
        ];
        for proof in refused {
            assert!(proof_key(&proof).is_err(), "{proof}");
        }
    }
}
