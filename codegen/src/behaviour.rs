//! What a method makes its receiver do beyond reading its types, said once here so the
//! runtime asks a marker (`Request::OPENS_SESSION`, `Notification::CANCELS_REQUEST`, ...)
//! instead of comparing method names. A notification's facts are read from its params'
//! members; the facts the specification gives only in prose come from [`PROSE`], each
//! with the place that says it.

use serde_json::Value;

use crate::prepare::Prepared;
use crate::schema;

/// One method's behaviour facts: each becomes the generated constant it names (and the
/// `MethodInfo` field of the same name in lower case), documented there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// `Request::OPENS_SESSION`
    pub opens_session: bool,
    /// `Notification::READIES_SESSION`
    pub readies_session: bool,
    /// `Request::NEVER_ENDS`
    pub never_ends: bool,
    /// `Request::PARAM_HEADERS`
    pub param_headers: bool,
    /// `Request::DECLARES_PARAM_HEADERS`
    pub declares_param_headers: bool,
    /// `Notification::CANCELS_REQUEST`, read from a `requestId` member of the params
    pub cancels_request: bool,
    /// `Notification::REPORTS_PROGRESS`, read from a `progressToken` member
    pub reports_progress: bool,
    /// `Notification::HAS_LEVEL`, read from a `level` member
    pub has_level: bool,
}

/// Which trait a fact is a constant of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Request,
    Notification,
}

impl Behaviour {
    /// Every fact, once: its constant's name (the `MethodInfo` field is it in lower
    /// case, the method table's text in kebab case), its trait, and whether it holds.
    pub(crate) fn facts(&self) -> [(&'static str, Side, bool); 8] {
        [
            ("OPENS_SESSION", Side::Request, self.opens_session),
            ("READIES_SESSION", Side::Notification, self.readies_session),
            ("NEVER_ENDS", Side::Request, self.never_ends),
            ("PARAM_HEADERS", Side::Request, self.param_headers),
            (
                "DECLARES_PARAM_HEADERS",
                Side::Request,
                self.declares_param_headers,
            ),
            ("CANCELS_REQUEST", Side::Notification, self.cancels_request),
            (
                "REPORTS_PROGRESS",
                Side::Notification,
                self.reports_progress,
            ),
            ("HAS_LEVEL", Side::Notification, self.has_level),
        ]
    }
}

/// A fact the specification says in prose, not in the schema's structure.
#[derive(Debug, Clone, Copy)]
enum Said {
    OpensSession,
    ReadiesSession,
    NeverEnds,
    ParamHeaders,
    DeclaresParamHeaders,
}

/// One fact said in prose: the method, the fact, the first version that says it (`None`:
/// every version that defines the method) and where it is said.
struct Prose {
    method: &'static str,
    said: Said,
    from: Option<&'static str>,
    #[allow(dead_code)] // read by people: the table's citation
    source: &'static str,
}

/// The facts the specification gives in prose. A new version's prose is read again
/// before its `from` is widened or a row is added.
const PROSE: [Prose; 5] = [
    Prose {
        method: "initialize",
        said: Said::OpensSession,
        from: None,
        source: "basic/lifecycle (2025-11-25): the initialization phase begins a session",
    },
    Prose {
        method: "notifications/initialized",
        said: Said::ReadiesSession,
        from: None,
        source: "basic/lifecycle (2025-11-25): after the initialize answer the client sends \
                 it, and normal operation begins",
    },
    Prose {
        method: "subscriptions/listen",
        said: Said::NeverEnds,
        from: Some("2026-07-28"),
        source: "basic/utilities/subscriptions: the response stream carries notifications \
                 until the client cancels the request or the server ends it",
    },
    Prose {
        method: "tools/call",
        said: Said::ParamHeaders,
        from: Some("2026-07-28"),
        source: "basic/transports/streamable-http: arguments annotated `x-mcp-header` are \
                 mirrored into `Mcp-Param-*` headers, which must match the body",
    },
    Prose {
        method: "tools/list",
        said: Said::DeclaresParamHeaders,
        from: Some("2026-07-28"),
        source: "server/tools: a listed tool's `inputSchema` carries the `x-mcp-header` \
                 annotations",
    },
];

/// The behaviour of `method` (defined by `definition`) in the version `p` reads.
pub(crate) fn of(p: &Prepared, method: &str, definition: &Value, is_request: bool) -> Behaviour {
    let mut behaviour = Behaviour::default();
    if !is_request {
        let members = params_members(p, definition);
        let has = |member: &str| members.iter().any(|m| m == member);
        behaviour.cancels_request = has("requestId");
        behaviour.reports_progress = has("progressToken");
        behaviour.has_level = has("level");
    }
    for prose in PROSE.iter().filter(|prose| prose.method == method) {
        if !prose.from.is_none_or(|from| said_in(&p.version, from)) {
            continue;
        }
        match prose.said {
            Said::OpensSession => behaviour.opens_session = true,
            Said::ReadiesSession => behaviour.readies_session = true,
            Said::NeverEnds => behaviour.never_ends = true,
            Said::ParamHeaders => behaviour.param_headers = true,
            Said::DeclaresParamHeaders => behaviour.declares_param_headers = true,
        }
    }
    behaviour
}

/// Whether `version` (a date, `YYYY-MM-DD`; an extension is read under its base
/// version's) is `from` or later; anything else takes no dated fact.
fn said_in(version: &str, from: &str) -> bool {
    let dated = version.len() == 10 && version.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    dated && version >= from
}

/// The members of the definition's `params` object.
fn params_members(p: &Prepared, definition: &Value) -> Vec<String> {
    schema::properties(definition)
        .and_then(|props| props.get("params"))
        .map(|params| p.original.resolve(params))
        .and_then(schema::properties)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::said_in;

    #[test]
    fn a_prose_fact_holds_from_its_version_on() {
        assert!(said_in("2026-07-28", "2026-07-28"));
        assert!(said_in("2027-01-01", "2026-07-28"));
        assert!(!said_in("2025-11-25", "2026-07-28"));
        assert!(!said_in("ext-tasks", "2026-07-28"));
    }
}
