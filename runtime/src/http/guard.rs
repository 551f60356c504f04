//! Who may talk to the endpoint: DNS-rebinding protection (`Host`, `Origin`).

use http::header::{HOST, ORIGIN};

use crate::transport::http::fields::Fields;
use crate::transport::http::visible_bytes;

/// Which `Host` and `Origin` headers the endpoint accepts. A web page on another site
/// whose name was rebound to 127.0.0.1 still sends its own name in `Host` and its own
/// origin in `Origin`: rejecting those (403) keeps it away from a local server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostPolicy {
    /// `localhost`, `127.0.0.1` or `[::1]`, with any port; an `Origin`, if sent, must be
    /// one of those too.
    Loopback,
    /// These host names (compared without the port, case-insensitively); an `Origin`, if
    /// sent, must name one of them.
    Allow(Vec<String>),
    /// No check: for servers behind a proxy that checks, or on public addresses.
    Any,
}

impl HostPolicy {
    /// Whether `host` (without its port) is allowed. Compared as bytes: a name that is
    /// not ASCII matches none of the (ASCII) names allowed.
    fn allows(&self, host: &[u8]) -> bool {
        match self {
            Self::Any => true,
            Self::Loopback => [&b"localhost"[..], b"127.0.0.1", b"[::1]"]
                .iter()
                .any(|n| n.eq_ignore_ascii_case(host)),
            Self::Allow(names) => names
                .iter()
                .any(|n| n.as_bytes().eq_ignore_ascii_case(host)),
        }
    }

    /// Whether the request's `Host` and `Origin` are acceptable; if not, the refusal
    /// names what was seen and the setting that would accept it.
    pub(crate) fn check(&self, headers: &impl Fields) -> Result<(), String> {
        if *self == Self::Any {
            return Ok(());
        }
        let Some(host) = headers.get(&HOST).filter(|h| visible_bytes(h)) else {
            return Err("the request has no Host header".into());
        };
        let name = strip_port(host);
        if !self.allows(name) {
            return Err(self.refusal("Host", host, name));
        }
        if let Some(origin) = headers.get(&ORIGIN) {
            let origin_host = visible_bytes(origin)
                .then(|| after(origin, b"://"))
                .flatten()
                .map(|rest| strip_port(rest.split(|&b| b == b'/').next().unwrap_or_default()));
            match origin_host {
                Some(name) if self.allows(name) => {}
                Some(name) => return Err(self.refusal("Origin", origin, name)),
                None => return Err(self.refusal("Origin", origin, b"")),
            }
        }
        Ok(())
    }

    /// "Host "fleet" is not allowed (...)": what was seen (at most a DNS name's length,
    /// visible ASCII only, as `check` made sure), what is accepted, and how to accept it.
    fn refusal(&self, header: &str, seen: &[u8], name: &[u8]) -> String {
        let shown =
            |bytes: &[u8]| String::from_utf8_lossy(&bytes[..bytes.len().min(255)]).into_owned();
        let accepted = match self {
            Self::Loopback => "this endpoint accepts localhost, 127.0.0.1 and [::1] (HostPolicy::Loopback, the default on a loopback listener)".to_owned(),
            Self::Allow(names) => format!("this endpoint accepts {} (HostPolicy::Allow)", names.join(", ")),
            Self::Any => String::new(),
        };
        let fix = if name.is_empty() {
            "an Origin must be a URL whose host is accepted".to_owned()
        } else {
            format!(
                "to accept it, serve with HttpServer::hosts(HostPolicy::Allow(vec![{:?}.into()])); \
                 behind a proxy, pass on the name clients use (nginx: proxy_set_header Host $host;) \
                 or use HostPolicy::Any if the proxy checks Host itself",
                shown(name)
            )
        };
        format!(
            "{header} {:?} is not allowed: {accepted}; {fix}",
            shown(seen)
        )
    }
}

/// What follows the first `separator` in `text`.
fn after<'a>(text: &'a [u8], separator: &[u8]) -> Option<&'a [u8]> {
    let at = text.windows(separator.len()).position(|w| w == separator)?;
    text.get(at + separator.len()..)
}

/// `host[:port]` without the port; IPv6 literals keep their brackets.
fn strip_port(authority: &[u8]) -> &[u8] {
    if authority.first() == Some(&b'[') {
        return match authority.iter().position(|&b| b == b']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    authority.split(|&b| b == b':').next().unwrap_or(authority)
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(ORIGIN, o.parse().unwrap());
        }
        h
    }

    #[test]
    fn loopback_policy_accepts_loopback_names_with_ports() {
        for host in [
            "localhost",
            "localhost:3000",
            "127.0.0.1:1",
            "[::1]:8080",
            "[::1]",
        ] {
            assert!(
                HostPolicy::Loopback.check(&headers(host, None)).is_ok(),
                "{host}"
            );
        }
        assert!(
            HostPolicy::Loopback
                .check(&headers("127.0.0.1:1", Some("http://localhost:5173")))
                .is_ok()
        );
    }

    #[test]
    fn loopback_policy_rejects_other_hosts_and_origins() {
        assert!(
            HostPolicy::Loopback
                .check(&headers("evil.example.com", None))
                .is_err()
        );
        assert!(
            HostPolicy::Loopback
                .check(&headers("127.0.0.1:1", Some("http://evil.example.com")))
                .is_err()
        );
        assert!(
            HostPolicy::Loopback
                .check(&headers("127.0.0.1", Some("null")))
                .is_err()
        );
    }
}
