//! W3C Trace Context in `_meta` (SEP-414): the `traceparent` and `tracestate` keys a
//! client sets from its current span and a server reads as the parent of its own.
//!
//! Both sides check what they carry: a `traceparent` that is not a version-00 one with
//! a non-zero trace and parent id is ignored (never an error: tracing must not fail a
//! request), and a `tracestate` beyond the W3C's 512 characters is dropped. With the
//! `otel` feature the context crosses into OpenTelemetry through
//! `tracing-opentelemetry`: a server span's parent, a client request's context.

use serde_json::{Map, Value};

/// `_meta` key: the W3C `traceparent` of the span that sent the request.
pub(crate) const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key: the W3C `tracestate` that goes with it.
pub(crate) const META_TRACESTATE: &str = "tracestate";

/// The most a `tracestate` may hold (W3C Trace Context, 3.3.1.1: 512 characters).
const MAX_TRACESTATE: usize = 512;

/// A request's trace context: a checked `traceparent` and its `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// A context from its two values, if `traceparent` is a well-formed version-00 one
    /// (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, neither id
    /// all zeros). An oversized or empty `tracestate` is left out.
    pub(crate) fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let parts: Vec<&str> = traceparent.split('-').collect();
        let [version, trace_id, parent_id, flags] = parts.as_slice() else {
            return None;
        };
        let hex = |s: &str, len: usize| {
            s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        let ok = *version == "00"
            && hex(trace_id, 32)
            && hex(parent_id, 16)
            && hex(flags, 2)
            && !zero(trace_id)
            && !zero(parent_id);
        ok.then(|| Self {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate
                .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
                .map(str::to_owned),
        })
    }

    /// The context a request's `_meta` carries, if a valid one.
    pub(crate) fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let parent = meta.get(META_TRACEPARENT)?.as_str()?;
        Self::parse(parent, meta.get(META_TRACESTATE).and_then(Value::as_str))
    }

    /// The `traceparent` value.
    pub(crate) fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if any.
    #[cfg(any(test, feature = "otel"))]
    pub(crate) fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id: 32 lowercase hex digits.
    #[cfg(any(test, feature = "otel"))]
    pub(crate) fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The id of the span that sent the request: 16 lowercase hex digits.
    #[cfg(any(test, feature = "otel"))]
    pub(crate) fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the sender sampled the trace.
    #[cfg(any(test, feature = "otel"))]
    pub(crate) fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|f| f & 1 == 1)
    }

    /// The members to add to a request's `_meta`.
    pub(crate) fn members(&self) -> impl Iterator<Item = (&'static str, &str)> {
        std::iter::once((META_TRACEPARENT, self.traceparent.as_str()))
            .chain(self.tracestate.as_deref().map(|s| (META_TRACESTATE, s)))
    }
}

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::TraceContext;

    impl TraceContext {
        /// Makes this context the parent of `span` (a remote parent, in OpenTelemetry's
        /// terms).
        pub(crate) fn set_parent_of(&self, span: &tracing::Span) {
            let (Ok(trace_id), Ok(span_id)) = (
                TraceId::from_hex(self.trace_id()),
                SpanId::from_hex(self.parent_id()),
            ) else {
                return;
            };
            let flags = if self.sampled() {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            };
            let state = self
                .tracestate()
                .and_then(|s| s.parse::<TraceState>().ok())
                .unwrap_or_default();
            let remote = SpanContext::new(trace_id, span_id, flags, true, state);
            let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
        }

        /// The context of `span`, when OpenTelemetry gave it valid ids.
        pub(crate) fn of_span(span: &tracing::Span) -> Option<Self> {
            let context = span.context();
            let span_ref = context.span();
            let sc = span_ref.span_context();
            if !sc.is_valid() {
                return None;
            }
            let parent = format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            );
            let state = sc.trace_state().header();
            Self::parse(&parent, Some(&state))
        }
    }
}

/// The context of the current span, for a request the client is about to send
/// (`None` without the `otel` feature, or outside a span OpenTelemetry traces).
pub(crate) fn current() -> Option<TraceContext> {
    #[cfg(feature = "otel")]
    {
        TraceContext::of_span(&tracing::Span::current())
    }
    #[cfg(not(feature = "otel"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_well_formed_traceparent_is_read_into_its_parts() {
        let t = TraceContext::parse(GOOD, Some("congo=t61rcWkgMzE")).unwrap();
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_id(), "00f067aa0ba902b7");
        assert!(t.sampled());
        assert_eq!(t.tracestate(), Some("congo=t61rcWkgMzE"));
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
            "00-4bf92f3577b34da6a3ce929d0e0é736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad}");
        }
    }

    #[test]
    fn an_oversized_tracestate_is_dropped_and_the_parent_kept() {
        let long = "a=".to_owned() + &"b".repeat(MAX_TRACESTATE);
        let t = TraceContext::parse(GOOD, Some(&long)).unwrap();
        assert_eq!(t.tracestate(), None);
        assert_eq!(t.traceparent(), GOOD);
    }
}
