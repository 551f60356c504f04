//! The OAuth client's keys and what it signs with them (jsonwebtoken, RustCrypto
//! backends): its client assertions (`private_key_jwt`, RFC 7523 §2.2) and its DPoP
//! proofs (RFC 9449 §4), each a fresh JWT with a random `jti`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use serde_json::json;

use crate::transport::TransportError;
use crate::util::lock;

/// How long a client assertion is good for: long enough for one token request.
const ASSERTION_LIFETIME_SECS: u64 = 60;
/// The most servers whose DPoP nonces are remembered.
const MAX_NONCES: usize = 64;

/// A private key the client signs with: its client assertions at the token endpoint
/// (`private_key_jwt`, RFC 7523 §2.2). A P-256 key signs ES256, an RSA key RS256.
#[derive(Clone)]
pub struct ClientKey {
    key: Arc<EncodingKey>,
    alg: Algorithm,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

fn bad_key(why: impl std::fmt::Display) -> TransportError {
    TransportError::new(format!("not a usable private key: {why}"))
}

impl ClientKey {
    /// The key in `pem`, a PKCS#8 private key (`-----BEGIN PRIVATE KEY-----`): P-256
    /// (ES256) or RSA (RS256).
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, TransportError> {
        let der = pkcs8_der(pem)?;
        Self::from_pkcs8_der(&der)
    }

    fn from_pkcs8_der(der: &[u8]) -> Result<Self, TransportError> {
        use p256::pkcs8::DecodePrivateKey as _;
        if p256::SecretKey::from_pkcs8_der(der).is_ok() {
            return Ok(Self::new(EncodingKey::from_ec_der(der), Algorithm::ES256));
        }
        if let Ok(rsa) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            use rsa::pkcs1::EncodeRsaPrivateKey as _;
            let pkcs1 = rsa.to_pkcs1_der().map_err(bad_key)?;
            return Ok(Self::new(
                EncodingKey::from_rsa_der(pkcs1.as_bytes()),
                Algorithm::RS256,
            ));
        }
        Err(bad_key(
            "only P-256 (ES256) and RSA (RS256) keys are supported",
        ))
    }

    fn new(key: EncodingKey, alg: Algorithm) -> Self {
        Self {
            key: Arc::new(key),
            alg,
        }
    }

    /// The JWS algorithm the key signs with (`ES256`, `RS256`).
    pub(crate) fn algorithm(&self) -> &'static str {
        match self.alg {
            Algorithm::RS256 => "RS256",
            _ => "ES256",
        }
    }

    fn sign(&self, mut header: Header, claims: &impl Serialize) -> Result<String, TransportError> {
        header.alg = self.alg;
        jsonwebtoken::encode(&header, claims, &self.key)
            .map_err(|e| TransportError::new(format!("could not sign a JWT: {e}")))
    }

    /// A client assertion for `client_id` at the authorization server `audience` (its
    /// issuer identifier, as RFC 7523bis settles it): `iss` and `sub` the client, a
    /// minute to live, a fresh `jti`.
    pub(crate) fn assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, TransportError> {
        let now = crate::util::unix_secs();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": crate::util::random_id(),
        });
        self.sign(Header::new(self.alg), &claims)
    }
}

/// The DER inside a PKCS#8 PEM block.
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, TransportError> {
    const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
    const END: &str = "-----END PRIVATE KEY-----";
    let Some(start) = pem.find(BEGIN) else {
        let hint = if pem.contains("-----BEGIN EC PRIVATE KEY-----")
            || pem.contains("-----BEGIN RSA PRIVATE KEY-----")
        {
            " (this is a SEC1 or PKCS#1 key: `openssl pkcs8 -topk8 -nocrypt` converts it)"
        } else {
            ""
        };
        return Err(bad_key(format!("no `{BEGIN}` block{hint}")));
    };
    let body = &pem[start + BEGIN.len()..];
    let end = body
        .find(END)
        .ok_or_else(|| bad_key(format!("no `{END}`")))?;
    let text: String = body[..end].split_ascii_whitespace().collect();
    STANDARD.decode(text).map_err(bad_key)
}

/// The client's DPoP key (P-256, ES256) and the nonces servers gave it.
pub(crate) struct DpopKey {
    key: ClientKey,
    jwk: Jwk,
    /// By origin (`scheme://host:port`): the latest `DPoP-Nonce` each server sent.
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("jkt", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// The key in `pem` (PKCS#8, P-256).
    pub(crate) fn from_pem(pem: &str) -> Result<Self, TransportError> {
        let key = ClientKey::from_pkcs8_pem(pem)?;
        if key.alg != Algorithm::ES256 {
            return Err(bad_key("a DPoP key is a P-256 key"));
        }
        let jwk = Jwk::from_encoding_key(&key.key, Algorithm::ES256).map_err(bad_key)?;
        Ok(Self {
            key,
            jwk,
            nonces: Mutex::default(),
        })
    }

    /// A new random key, and its PKCS#8 PEM (to keep it).
    pub(crate) fn generate() -> Result<(Self, String), TransportError> {
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = loop {
            let mut bytes = [0u8; 32];
            rand::fill(&mut bytes[..]);
            // Almost every 32 bytes are a scalar below the group order.
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let pem = secret
            .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
            .map_err(bad_key)?;
        Ok((Self::from_pem(&pem)?, pem.to_string()))
    }

    /// The key's RFC 7638 thumbprint: what a bound token's `cnf.jkt` holds.
    pub(crate) fn thumbprint(&self) -> String {
        self.jwk.thumbprint(ThumbprintHash::SHA256)
    }

    /// A proof for one request: `method` to `url` (its query and fragment left out),
    /// carrying `token`'s hash when it presents one, and the nonce `url`'s server
    /// last gave.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
    ) -> Result<String, TransportError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": crate::util::random_id(),
            "htm": method,
            "htu": htu,
            "iat": crate::util::unix_secs(),
        });
        if let Some(token) = token {
            claims["ath"] = crate::util::sha256_b64url(token).into();
        }
        if let Some(nonce) = lock(&self.nonces).get(origin(url)) {
            claims["nonce"] = nonce.clone().into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        self.key.sign(header, &claims)
    }

    /// Remembers the nonce `url`'s server gave; whether it is a new one.
    pub(crate) fn remember_nonce(&self, url: &str, nonce: &str) -> bool {
        let mut nonces = lock(&self.nonces);
        let origin = origin(url);
        if nonces.get(origin).is_some_and(|n| n == nonce) {
            return false;
        }
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(origin) {
            nonces.clear();
        }
        nonces.insert(origin.to_owned(), nonce.to_owned());
        true
    }
}

/// `scheme://authority` of an absolute URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find(['/', '?', '#']) {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn claims_of(jwt: &str) -> serde_json::Value {
        let part = jwt.split('.').nth(1).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_dpop_proof_names_the_request_the_token_and_the_nonce() {
        let (key, pem) = DpopKey::generate().unwrap();
        let again = DpopKey::from_pem(&pem).unwrap();
        assert_eq!(key.thumbprint(), again.thumbprint());
        let first = key
            .proof("POST", "https://mcp.example/mcp?x=1#f", Some("tok"))
            .unwrap();
        let claims = claims_of(&first);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["ath"], crate::util::sha256_b64url("tok"));
        assert!(claims.get("nonce").is_none());
        assert!(key.remember_nonce("https://mcp.example/mcp", "n1"));
        assert!(!key.remember_nonce("https://mcp.example/other", "n1"));
        let second = claims_of(&key.proof("GET", "https://mcp.example/mcp", None).unwrap());
        assert_eq!(second["nonce"], "n1");
        assert_ne!(second["jti"], claims["jti"], "a fresh jti each time");
        let header = jsonwebtoken::decode_header(&first).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert!(header.jwk.is_some());
    }

    #[test]
    fn keys_other_than_pkcs8_are_refused_with_a_hint() {
        let e = ClientKey::from_pkcs8_pem(
            "-----BEGIN EC PRIVATE KEY-----\nAA\n-----END EC PRIVATE KEY-----",
        )
        .unwrap_err();
        assert!(e.message().contains("openssl pkcs8"), "{e}");
        assert!(ClientKey::from_pkcs8_pem("junk").is_err());
    }
}
