//! The method table: one marker type per protocol method, read from the direction
//! unions of the schema (`ClientRequest`, `ServerRequest`, `InputRequest`,
//! `ClientNotification`, `ServerNotification`).

use std::fmt::Write as _;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::emit::{doc_attr, parse_type};
use crate::prepare::{Prepared, rust_name};
use crate::schema::{self, Defs};
use crate::{Error, Result};

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// A request from client to server.
    ClientRequest,
    /// A request from server to client (2025-11-25 sessions).
    ServerRequest,
    /// A request the server embeds in `InputRequiredResult.inputRequests`.
    InputRequest,
    /// A notification from client to server.
    ClientNotification,
    /// A notification from server to client.
    ServerNotification,
}

impl Direction {
    const ALL: [Direction; 5] = [
        Direction::ClientRequest,
        Direction::ServerRequest,
        Direction::InputRequest,
        Direction::ClientNotification,
        Direction::ServerNotification,
    ];

    fn union(self) -> &'static str {
        match self {
            Self::ClientRequest => "ClientRequest",
            Self::ServerRequest => "ServerRequest",
            Self::InputRequest => "InputRequest",
            Self::ClientNotification => "ClientNotification",
            Self::ServerNotification => "ServerNotification",
        }
    }

    fn is_request(self) -> bool {
        !matches!(self, Self::ClientNotification | Self::ServerNotification)
    }

    fn marker_trait(self) -> TokenStream {
        match self {
            Self::ClientRequest => quote!(crate::rpc::ClientRequestMethod),
            Self::ServerRequest => quote!(crate::rpc::ServerRequestMethod),
            Self::InputRequest => quote!(crate::rpc::InputMethod),
            Self::ClientNotification => quote!(crate::rpc::ClientNotificationMethod),
            Self::ServerNotification => quote!(crate::rpc::ServerNotificationMethod),
        }
    }
}

/// One row of the method table.
#[derive(Debug, Clone)]
pub struct Method {
    /// The JSON-RPC method string.
    pub method: String,
    /// The marker type's name.
    pub marker: String,
    /// The directions it travels in.
    pub directions: Vec<Direction>,
    /// The Rust type of `params`.
    pub params: String,
    /// The Rust type of the result (requests only).
    pub result: Option<String>,
    /// For methods that may answer input-required: the complete result type.
    pub complete: Option<String>,
    /// The definition's description.
    pub description: Option<String>,
}

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
            let (result, complete) = if direction.is_request() {
                let (r, c) = result_type(p, stem);
                (Some(r), c)
            } else {
                (None, None)
            };
            out.push(Method {
                method,
                marker,
                directions: vec![direction],
                params,
                result,
                complete,
                description: schema
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
    }
    Ok(out)
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

fn result_type(p: &Prepared, stem: &str) -> (String, Option<String>) {
    let direct = format!("{stem}Result");
    let complete = if p.original.get(&direct).is_some() {
        rust_name(&direct)
    } else if p.original.get("EmptyResult").is_some() {
        "EmptyResult".to_owned()
    } else {
        "BaseResult".to_owned()
    };
    match p.outcomes.iter().find(|o| o.complete == complete) {
        Some(o) => (o.name.clone(), Some(complete)),
        None => (complete, None),
    }
}

pub(crate) fn emit(p: &Prepared, methods: &[Method]) -> Result<TokenStream> {
    let mut markers = Vec::new();
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
        let body = if let Some(result) = &m.result {
            let result = parse_type(&p.version, &qualify(result))?;
            let complete = match &m.complete {
                Some(c) => {
                    let c = parse_type(&p.version, &qualify(c))?;
                    quote! {
                        impl crate::rpc::MayRequireInput for #marker {
                            type Complete = #c;
                        }
                    }
                }
                None => quote!(),
            };
            quote! {
                impl crate::rpc::Request for #marker {
                    const METHOD: &'static str = #method;
                    type Params = #params;
                    type Result = #result;
                }
                #complete
            }
        } else {
            quote! {
                impl crate::rpc::Notification for #marker {
                    const METHOD: &'static str = #method;
                    type Params = #params;
                }
            }
        };
        markers.push(quote! {
            #doc
            #[derive(Debug)]
            pub enum #marker {}
            #body
            #(#directions)*
        });
    }
    Ok(quote! {
        /// One uninhabited marker type per protocol method, naming its parameters and
        /// result through [`crate::rpc::Request`] or [`crate::rpc::Notification`].
        pub mod method {
            #(#markers)*
        }
    })
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

/// The method table as text, for snapshots and the placeholder example.
pub(crate) fn render(version: &str, methods: &[Method]) -> String {
    let mut s = format!("MCP {version} methods\n");
    for m in methods {
        let dirs: Vec<String> = m.directions.iter().map(|d| format!("{d:?}")).collect();
        let _ = writeln!(
            s,
            "{:<42} {:<28} {:<44} params={} result={}{}",
            m.method,
            m.marker,
            dirs.join("+"),
            m.params
                .replace("::std::option::", "")
                .replace("::serde_json::", "")
                .replace("::std::string::", ""),
            m.result.as_deref().unwrap_or("-"),
            if m.complete.is_some() {
                " (may require input)"
            } else {
                ""
            }
        );
    }
    s
}
