//! Who a token is bound to, and the salted tag that stands for them inside the claims.

use sha2::{Digest as _, Sha256};

use super::ct::bytes_ct_eq;
use crate::auth::AuthInfo;

/// Length of the random salt and of the truncated tag.
pub(crate) const PRINCIPAL_SALT_LEN: usize = 16;
pub(crate) const PRINCIPAL_TAG_LEN: usize = 16;

const TAG_LABEL: &[u8] = b"tern requestState principal v1";

/// The identity a `requestState` token is bound to.
///
/// Built from a validated access token with [`Principal::from_auth`], or by a
/// `bind_principal` hook from the deployment's own identity signal with
/// [`Principal::custom`]. Two principals are the same exactly when every component is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Kind {
    /// A token whose verifier named the subject: client, issuer and subject all bind.
    Subject {
        client_id: String,
        issuer: Option<String>,
        subject: String,
    },
    /// A token whose verifier gave no subject: only the client binds, which for URL-based
    /// client ids is shared by every user of that client software.
    Client { client_id: String },
    /// An identity supplied by the deployment's `bind_principal` hook.
    Custom { id: String },
}

impl Principal {
    /// The principal of a validated access token: client, issuer and subject, or the
    /// client alone when the verifier reports no subject.
    pub fn from_auth(auth: &AuthInfo) -> Self {
        let kind = match &auth.subject {
            Some(subject) => Kind::Subject {
                client_id: auth.client_id.clone(),
                issuer: auth.issuer.clone(),
                subject: subject.clone(),
            },
            None => Kind::Client {
                client_id: auth.client_id.clone(),
            },
        };
        Self { kind }
    }

    /// A principal from the deployment's own identity signal (for a `bind_principal`
    /// hook), e.g. a user id asserted by a trusted proxy.
    pub fn custom(id: impl Into<String>) -> Self {
        Self {
            kind: Kind::Custom { id: id.into() },
        }
    }

    /// The salted tag that stands for this principal inside a token's claims.
    ///
    /// Salted per token so that, even under a codec that only signs, the tag is neither a
    /// stable identifier across tokens nor checkable against a guessed identity offline.
    pub(crate) fn tag(&self, salt: &[u8; PRINCIPAL_SALT_LEN]) -> [u8; PRINCIPAL_TAG_LEN] {
        let mut hash = Sha256::new();
        hash.update(TAG_LABEL);
        hash.update(salt);
        // Each component is tagged and length-prefixed so no two principals encode alike.
        let mut field = |label: u8, value: Option<&str>| {
            hash.update([label]);
            match value {
                Some(value) => {
                    hash.update([1]);
                    hash.update((value.len() as u64).to_be_bytes());
                    hash.update(value.as_bytes());
                }
                None => hash.update([0]),
            }
        };
        match &self.kind {
            Kind::Subject {
                client_id,
                issuer,
                subject,
            } => {
                field(b'S', None);
                field(b'c', Some(client_id));
                field(b'i', issuer.as_deref());
                field(b's', Some(subject));
            }
            Kind::Client { client_id } => {
                field(b'C', None);
                field(b'c', Some(client_id));
            }
            Kind::Custom { id } => {
                field(b'X', None);
                field(b'x', Some(id));
            }
        }
        let full = hash.finalize();
        let mut tag = [0u8; PRINCIPAL_TAG_LEN];
        tag.copy_from_slice(&full[..PRINCIPAL_TAG_LEN]);
        tag
    }

    /// A stable digest of this principal (the tag under a fixed salt), as hex: what a
    /// stored task's owner is compared with.
    pub(crate) fn owner_key(&self) -> String {
        use std::fmt::Write as _;
        let tag = self.tag(&[b'T'; PRINCIPAL_SALT_LEN]);
        tag.iter()
            .fold(String::with_capacity(tag.len() * 2), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }

    /// Whether `tag` (with its `salt`) was computed for this principal, in constant time.
    pub(crate) fn matches(
        &self,
        salt: &[u8; PRINCIPAL_SALT_LEN],
        tag: &[u8; PRINCIPAL_TAG_LEN],
    ) -> bool {
        bool::from(bytes_ct_eq(&self.tag(salt), tag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(client: &str, issuer: Option<&str>, subject: Option<&str>) -> AuthInfo {
        AuthInfo {
            client_id: client.into(),
            issuer: issuer.map(Into::into),
            subject: subject.map(Into::into),
            scopes: vec!["read".into()],
            dpop_jkt: None,
        }
    }

    #[test]
    fn principal_without_subject_binds_the_client_alone() {
        let a = Principal::from_auth(&auth("app", Some("https://idp"), None));
        let b = Principal::from_auth(&auth("app", Some("https://other"), None));
        assert_eq!(a, b);
    }

    #[test]
    fn every_component_and_kind_changes_the_tag() {
        let salt = [7u8; PRINCIPAL_SALT_LEN];
        let principals = [
            Principal::from_auth(&auth("app", Some("iss"), Some("alice"))),
            Principal::from_auth(&auth("app", Some("iss"), Some("bob"))),
            Principal::from_auth(&auth("app", Some("iss2"), Some("alice"))),
            Principal::from_auth(&auth("app", None, Some("alice"))),
            Principal::from_auth(&auth("app2", Some("iss"), Some("alice"))),
            Principal::from_auth(&auth("app", None, None)),
            Principal::custom("app"),
        ];
        let tags: std::collections::HashSet<_> = principals.iter().map(|p| p.tag(&salt)).collect();
        assert_eq!(tags.len(), principals.len());
    }

    #[test]
    fn the_salt_changes_the_tag() {
        let p = Principal::custom("alice");
        assert_ne!(p.tag(&[1; 16]), p.tag(&[2; 16]));
        assert!(p.matches(&[1; 16], &p.tag(&[1; 16])));
    }
}
