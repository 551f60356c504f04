//! What the transport learned about the caller from a validated access token.

/// The identity carried by an access token that tern's token verifier accepted.
///
/// The server layer builds one per authenticated request; `requestState` sealing turns it
/// into a [`Principal`](crate::seal::Principal) so state minted for one caller fails for
/// another.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthInfo {
    /// The OAuth client the token was issued to.
    pub client_id: String,
    /// The authorization server that issued the token, when the verifier reports it.
    pub issuer: Option<String>,
    /// The end user (or service) the token speaks for, when the verifier reports it.
    pub subject: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
}
