//! The method table: one marker type per protocol method, read from the direction
//! unions of the schema (`ClientRequest`, `ServerRequest`, `InputRequest`,
//! `ClientNotification`, `ServerNotification`).

use std::fmt::Write as _;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::behaviour::Side;
use crate::emit::{doc_attr, parse_type};
use crate::prepare::{Prepared, rust_name};
use crate::rows::{Direction, Method};
use crate::schema::{self, Defs};
use crate::{Error, Result};

pub(crate) fn table(p: &Prepared) -> Result<Vec<Method>> {
    let defs = &p.original;
    let mut out: Vec<Method> = Vec::new();
    for direction in Direction::ALL {
        let Some(def) = defs.get(direction.union()) else {
            continue;
        };
        let members = match Defs::union_members(def) {
            Some(m) => m,
            // A direction with a single method is that method's own definition.
            None => vec![direction.union().to_owned()],
        };
        for member in members {
            let schema = defs
                .get(&member)
                .ok_or_else(|| err(p, &member, "missing definition"))?;
            let method = schema::properties(schema)
                .and_then(|props| props.get("method"))
                .and_then(schema::const_str)
                .ok_or_else(|| err(p, &member, "no constant `method`"))?
                .to_owned();
            if let Some(existing) = out.iter_mut().find(|m| m.method == method) {
                existing.directions.push(direction);
                continue;
            }
            let suffix = if direction.is_request() {
                "Request"
            } else {
                "Notification"
            };
            let stem = member.strip_suffix(suffix).unwrap_or(&member);
            let marker = if direction.union() == member {
                // `ClientNotification` in 2026-07-28 is the cancellation notification.
                "Cancelled".to_owned()
            } else {
                rust_name(stem)
            };
            let params = params_type(schema, &member);
            let (result, complete, cacheable, writes_result_type) = if direction.is_request() {
                let (r, c, def) = result_type(p, stem);
                let requires =
                    |members: &[&str]| def.as_ref().is_some_and(|d| requires_all(p, d, members));
                (
                    Some(r),
                    c,
                    requires(&CACHING_MEMBERS),
                    requires(&["resultType"]),
                )
            } else {
                (None, None, false, false)
            };
            let target = if direction == Direction::ClientRequest {
                target_member(p, schema)
            } else {
                None
            };
            let params_members = crate::views::required_params_members(p, schema);
            let behaviour = crate::behaviour::of(p, &method, schema, direction.is_request());
            let params_meta = crate::views::params_meta(p, schema);
            out.push(Method {
                method,
                marker,
                directions: vec![direction],
                params,
                result,
                complete,
                cacheable,
                writes_result_type,
                target,
                capability: None,
                params_members,
                params_meta,
                description: schema
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                may_become_task: false,
                behaviour,
            });
        }
    }
    for m in &mut out {
        m.capability = capability(p, &m.method, &m.directions);
    }
    Ok(out)
}

/// Members a result must carry for a client to cache it.
const CACHING_MEMBERS: [&str; 2] = ["ttlMs", "cacheScope"];

/// Whether the result definition `def` (after `allOf` merging) requires every one of
/// `members` ([`CACHING_MEMBERS`], say).
fn requires_all(p: &Prepared, def: &str, members: &[&str]) -> bool {
    let required = p
        .original
        .get(def)
        .map(schema::required)
        .unwrap_or_default();
    members.iter().all(|m| required.iter().any(|r| r == m))
}

/// Params members that name the thing a request acts on, in order of preference: a
/// tool or prompt is named, a resource has a URI, a task has an id.
const TARGET_MEMBERS: [&str; 3] = ["name", "uri", "taskId"];

/// The first [`TARGET_MEMBERS`] member the request's params require as a string.
fn target_member(p: &Prepared, request: &Value) -> Option<String> {
    let params = schema::properties(request)?.get("params")?;
    let params = p.original.resolve(params);
    let required = schema::required(params);
    let props = schema::properties(params)?;
    TARGET_MEMBERS
        .iter()
        .find(|member| {
            required.iter().any(|r| r == *member)
                && props
                    .get(**member)
                    .map(|m| p.original.resolve(m))
                    .and_then(|m| m.get("type"))
                    .and_then(Value::as_str)
                    == Some("string")
        })
        .map(|m| (*m).to_owned())
}

/// The capability a receiver declares to handle `method`: the text before the first
/// `/`, as a member of the receiver's capabilities, exactly or with an `s` appended
/// (`completion/complete` is `completions`). For a method sent both ways, the first
/// direction whose receiver has such a member decides.
fn capability(p: &Prepared, method: &str, directions: &[Direction]) -> Option<String> {
    let namespace = method.split('/').next()?;
    directions.iter().find_map(|d| {
        let caps = p.original.get(d.receiver_capabilities()?)?;
        let props = schema::properties(caps)?;
        [namespace.to_owned(), format!("{namespace}s")]
            .into_iter()
            .find(|candidate| props.contains_key(candidate))
    })
}

fn err(p: &Prepared, def: &str, message: &str) -> Error {
    Error::Schema {
        version: p.version.clone(),
        definition: def.to_owned(),
        message: message.to_owned(),
    }
}

fn params_type(schema: &Value, def: &str) -> String {
    let required = schema::required(schema).contains(&"params".to_owned());
    let ty = match schema::properties(schema).and_then(|props| props.get("params")) {
        None => "::serde_json::Map<::std::string::String, ::serde_json::Value>".to_owned(),
        Some(params) => match Defs::ref_name(params) {
            Some(r) => rust_name(r),
            None => format!("{}Params", rust_name(def)),
        },
    };
    if required {
        ty
    } else {
        format!("::std::option::Option<{ty}>")
    }
}

/// The result's Rust type, the complete type when it may require input, and the
/// schema definition of the complete result (none for the bare `Result`).
fn result_type(p: &Prepared, stem: &str) -> (String, Option<String>, Option<String>) {
    let direct = format!("{stem}Result");
    let (complete, def) = if p.original.get(&direct).is_some() {
        (rust_name(&direct), Some(direct))
    } else if p.original.get("EmptyResult").is_some() {
        ("EmptyResult".to_owned(), Some("EmptyResult".to_owned()))
    } else {
        ("BaseResult".to_owned(), None)
    };
    match p.outcomes.iter().find(|o| o.complete == complete) {
        Some(o) => (o.name.clone(), Some(complete), def),
        None => (complete, None, def),
    }
}

fn opt_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(v) => quote!(::std::option::Option::Some(#v)),
        None => quote!(::std::option::Option::None),
    }
}

/// `base`, for an extension's module: the core module's name and whether it defines a
/// type (see [`crate::views::client_request_params`]).
pub(crate) fn emit(
    p: &Prepared,
    methods: &[Method],
    base: Option<crate::views::Core<'_>>,
) -> Result<TokenStream> {
    let mut markers = Vec::new();
    let mut infos = Vec::new();
    let mut visits = Vec::new();
    let mut plain_results: Vec<&str> = Vec::new();
    for m in methods {
        let marker = format_ident!("{}", m.marker);
        let method = &m.method;
        let params = parse_type(&p.version, &qualify(&m.params))?;
        let mut doc = format!("`{method}`");
        if let Some(d) = &m.description {
            doc.push_str(": ");
            doc.push_str(d);
        }
        let doc = doc_attr(&crate::docs::clean(&doc, &p.rust_names, "super::"));
        let directions = m.directions.iter().map(|d| {
            let t = d.marker_trait();
            quote!(impl #t for #marker {})
        });
        let may_require_input = m.may_require_input();
        let cacheable = m.cacheable;
        let writes_result_type = m.writes_result_type;
        let target = opt_str(m.target.as_deref());
        let capability = opt_str(m.capability.as_deref());
        let facts = m.behaviour.facts();
        // The facts that hold on `side`'s trait, as its constants (the others default).
        let said = |side: Side| {
            facts
                .iter()
                .filter(move |(_, on, holds)| *on == side && *holds)
                .map(|(name, _, _)| {
                    let name = format_ident!("{name}");
                    quote!(const #name: bool = true;)
                })
        };
        let request_facts = said(Side::Request);
        let notification_facts = said(Side::Notification);
        let body = if let Some(result) = &m.result {
            let result = parse_type(&p.version, &qualify(result))?;
            let complete = match &m.complete {
                Some(c) => {
                    let c = parse_type(&p.version, &qualify(c))?;
                    let round = crate::views::set_round(m);
                    let task = m.may_become_task.then(|| {
                        quote!(
                            const MAY_BECOME_TASK: bool = true;
                        )
                    });
                    quote! {
                        impl crate::rpc::MayRequireInput for #marker {
                            type Complete = #c;
                            type InputResponses = super::InputResponses;
                            #task
                            #round
                        }
                    }
                }
                None => quote!(),
            };
            visits.push(quote!(#method => ::std::option::Option::Some(visitor.visit::<#marker>())));
            let view = crate::views::retry_view(m);
            if m.complete.is_none() && !plain_results.contains(&result_name(m)) {
                plain_results.push(result_name(m));
            }
            quote! {
                impl crate::rpc::Request for #marker {
                    const METHOD: &'static str = #method;
                    const MAY_REQUIRE_INPUT: bool = #may_require_input;
                    const CACHEABLE: bool = #cacheable;
                    const WRITES_RESULT_TYPE: bool = #writes_result_type;
                    const TARGET: ::std::option::Option<&'static str> = #target;
                    const CAPABILITY: ::std::option::Option<&'static str> = #capability;
                    #(#request_facts)*
                    type Params = #params;
                    type Result = #result;
                    #view
                }
                #complete
            }
        } else {
            quote! {
                impl crate::rpc::Notification for #marker {
                    const METHOD: &'static str = #method;
                    #(#notification_facts)*
                    type Params = #params;
                }
            }
        };
        let is_request = m.is_request();
        let fact_fields = facts.iter().map(|(name, _, holds)| {
            let field = format_ident!("{}", name.to_lowercase());
            quote!(#field: #holds)
        });
        let flags = Direction::ALL.iter().map(|d| {
            let field = format_ident!("{}", d.info_field());
            let on = m.directions.contains(d);
            quote!(#field: #on)
        });
        infos.push(quote! {
            crate::rpc::MethodInfo {
                method: #method,
                is_request: #is_request,
                #(#flags,)*
                may_require_input: #may_require_input,
                cacheable: #cacheable,
                target: #target,
                capability: #capability,
                #(#fact_fields,)*
            }
        });
        markers.push(quote! {
            #doc
            #[derive(Debug)]
            pub enum #marker {}
            #body
            #(#directions)*
        });
    }
    // Results of methods that never ask for input are always complete; an `Outcome`
    // answers for itself (in the outcome template).
    let answers = plain_results
        .iter()
        .map(|r| {
            let ty = parse_type(&p.version, &qualify(r))?;
            Ok(quote! {
                impl crate::rpc::IntoAnswer for #ty {
                    type Complete = Self;
                    type InputRequired = crate::rpc::Never;
                    fn into_answer(self) -> crate::rpc::Answer<Self, crate::rpc::Never> {
                        crate::rpc::Answer::Complete(self)
                    }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let client_params = crate::views::client_request_params(methods, base);
    Ok(quote! {
        /// One uninhabited marker type per protocol method, naming its parameters and
        /// result through [`crate::rpc::Request`] or [`crate::rpc::Notification`].
        pub mod method {
            #(#answers)*

            #client_params

            #(#markers)*

            /// Every method of this version, requests and notifications, in schema order.
            pub const ALL: &[crate::rpc::MethodInfo] = &[#(#infos),*];

            /// What this version says about `method`, if it defines it.
            pub fn info(method: &str) -> ::std::option::Option<&'static crate::rpc::MethodInfo> {
                ALL.iter().find(|m| m.method == method)
            }

            /// Calls `visitor` with the request marker whose [`crate::rpc::Request::METHOD`]
            /// is `method`; `None` when this version has no such request.
            pub fn visit_request<V: crate::rpc::RequestVisitor>(method: &str, visitor: V) -> ::std::option::Option<V::Output> {
                match method {
                    #(#visits,)*
                    _ => {
                        let _ = visitor;
                        ::std::option::Option::None
                    }
                }
            }
        }
    })
}

/// The result type of a request, as the table spells it.
fn result_name(m: &Method) -> &str {
    m.result.as_deref().unwrap_or_default()
}

/// Types in the method module live one level down from the version's types.
fn qualify(ty: &str) -> String {
    if let Some(inner) = ty
        .strip_prefix("::std::option::Option<")
        .and_then(|t| t.strip_suffix('>'))
    {
        return format!("::std::option::Option<{}>", qualify(inner));
    }
    if ty.starts_with("::") {
        return ty.to_owned();
    }
    format!("super::{ty}")
}

/// The method table as text, for snapshots and `--methods`.
pub(crate) fn render(version: &str, methods: &[Method]) -> String {
    let mut s = format!("MCP {version} methods\n");
    for m in methods {
        let dirs: Vec<String> = m.directions.iter().map(|d| format!("{d:?}")).collect();
        let mut facts = Vec::new();
        if m.may_require_input() {
            facts.push("may-require-input".to_owned());
        }
        if m.cacheable {
            facts.push("cacheable".to_owned());
        }
        if let Some(t) = &m.target {
            facts.push(format!("target={t}"));
        }
        if let Some(c) = &m.capability {
            facts.push(format!("capability={c}"));
        }
        for (name, _, holds) in m.behaviour.facts() {
            if holds {
                facts.push(name.to_lowercase().replace('_', "-"));
            }
        }
        let line = format!(
            "{:<42} {:<28} {:<44} params={} result={} {}",
            m.method,
            m.marker,
            dirs.join("+"),
            m.params
                .replace("::std::option::", "")
                .replace("::serde_json::", "")
                .replace("::std::string::", ""),
            m.result.as_deref().unwrap_or("-"),
            facts.join(" "),
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}
