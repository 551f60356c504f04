//! `WWW-Authenticate: Bearer ...` and `DPoP ...` challenges (RFC 6750 §3, RFC 9728
//! §5.1, RFC 9449 §7.1): what a refusing MCP server says the client needs.

/// The parameters of a `Bearer` challenge that an MCP client acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct BearerChallenge {
    /// `resource_metadata`: where the Protected Resource Metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the refused request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The first `Bearer` or `DPoP` challenge (RFC 9449 §7.1: the same parameters) in a
    /// `WWW-Authenticate` value, if there is one. Other schemes in the same header are
    /// skipped; unknown parameters ignored.
    pub(crate) fn parse(header: &str) -> Option<Self> {
        let mut rest = header;
        let mut found = None;
        while let Some((scheme, after)) = next_token(rest) {
            let (params, next) = params(after);
            if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop") {
                found = Some(params);
                break;
            }
            rest = next;
        }
        let params = found?;
        let mut challenge = Self::default();
        for (name, value) in params {
            let slot = match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => &mut challenge.resource_metadata,
                "scope" => &mut challenge.scope,
                "error" => &mut challenge.error,
                "error_description" => &mut challenge.error_description,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        Some(challenge)
    }

    /// The scopes the challenge names.
    pub(crate) fn scopes(&self) -> Vec<String> {
        self.scope.as_deref().map(split_scopes).unwrap_or_default()
    }

    /// Whether the token lacks a scope (`error="insufficient_scope"`).
    pub(crate) fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Space-separated scopes, each once.
pub(crate) fn split_scopes(scopes: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for scope in scopes.split_ascii_whitespace() {
        if !out.iter().any(|s| s == scope) {
            out.push(scope.to_owned());
        }
    }
    out
}

/// The next token (a scheme or parameter name) after optional spaces and commas.
fn next_token(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start_matches(|c: char| c == ',' || c.is_ascii_whitespace());
    let end = text
        .find(|c: char| c.is_ascii_whitespace() || c == ',' || c == '=')
        .unwrap_or(text.len());
    (end > 0).then(|| (&text[..end], &text[end..]))
}

/// The `name=value` parameters at the start of `text` (values quoted or tokens), and
/// where the next challenge starts.
fn params(mut text: &str) -> (Vec<(String, String)>, &str) {
    let mut out = Vec::new();
    loop {
        let Some((name, after)) = next_token(text) else {
            return (out, "");
        };
        let after_name = after.trim_start();
        let Some(value_text) = after_name.strip_prefix('=') else {
            // A token with no `=`: the next challenge's scheme.
            return (out, text);
        };
        let value_text = value_text.trim_start();
        let (value, rest) = match value_text.strip_prefix('"') {
            Some(quoted) => unquote(quoted),
            None => {
                let end = value_text
                    .find(|c: char| c == ',' || c.is_ascii_whitespace())
                    .unwrap_or(value_text.len());
                (value_text[..end].to_owned(), &value_text[end..])
            }
        };
        out.push((name.to_owned(), value));
        text = rest;
    }
}

/// A quoted string's value (after its opening quote) and the text after it.
fn unquote(text: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &text[i + 1..]),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            c => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::BearerChallenge;

    #[test]
    fn a_bearer_challenge_reads_its_parameters_quoted_or_not() {
        let c = BearerChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="needs \"write\"""#,
        )
        .unwrap();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), ["files:read", "files:write"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.error_description.as_deref(), Some("needs \"write\""));
        let bare = BearerChallenge::parse("bearer realm=mcp, error=invalid_token").unwrap();
        assert_eq!(bare.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn other_schemes_are_skipped_and_no_bearer_is_none() {
        let c = BearerChallenge::parse(r#"Basic realm="x", Bearer scope="a""#).unwrap();
        assert_eq!(c.scopes(), ["a"]);
        assert_eq!(BearerChallenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(BearerChallenge::parse(""), None);
        assert_eq!(
            BearerChallenge::parse("Bearer").unwrap(),
            BearerChallenge::default()
        );
    }
}
