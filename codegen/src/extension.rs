//! Extension modules: an extension's schema repeats the core types it refers to, and its
//! module reuses the core module's types instead of defining them again.
//!
//! The extension's schema is generated as any schema is, then everything the core
//! module already has is left out: its constants, error codes and methods before
//! emission, and afterwards every item whose tokens are exactly those of a core item.
//! What remains names the core types through a glob import of the core module. An item
//! that remains and defines a name the core module also defines means the extension
//! repeats a core type *differently*: that is an error, not a silent second type.
//!
//! An extension's schema has no direction unions (`ClientRequest`, ...): its new
//! requests are taken as client requests and its new notifications as server
//! notifications, which is what the tasks extension defines; the method table reads
//! them through direction unions added for the purpose and never emitted.

use std::collections::BTreeSet;

use quote::ToTokens;
use serde_json::{Value, json};

use crate::prepare::Prepared;
use crate::rows::Method;
use crate::{Error, Result};

/// The core direction unions an extension's methods join, with the envelope each
/// member's `allOf` starts from.
const DIRECTIONS: [(&str, &str); 2] = [
    ("ClientRequest", "JSONRPCRequest"),
    ("ServerNotification", "JSONRPCNotification"),
];

/// Items the extension module always defines for itself: its method table and the
/// hidden round-trip registry.
const OWN_ITEMS: [&str; 3] = ["method", "__DEFINITIONS", "__roundtrip"];

/// What an extension module leaves to its core module.
pub(crate) struct Base {
    module: &'static str,
    prepared: Prepared,
    methods: Vec<Method>,
    items: BTreeSet<String>,
    names: BTreeSet<String>,
    core: serde_json::Map<String, Value>,
    widened: Vec<String>,
}

impl Base {
    /// The core module `module`, generated from `schema` as `source`.
    pub(crate) fn new(
        version: &str,
        module: &'static str,
        schema: &Value,
        source: &str,
    ) -> Result<Self> {
        let prepared = crate::prepare::prepare(version, schema)?;
        let methods = crate::methods::table(&prepared)?;
        let file = syn::parse_file(source).map_err(|e| Error::Unparsable {
            version: version.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Self {
            module,
            prepared,
            methods,
            items: file.items.iter().map(item_tokens).collect(),
            names: file.items.iter().filter_map(defined_name).collect(),
            core: crate::schema::Defs::from_schema(version, schema)?.map,
            widened: Vec::new(),
        })
    }

    /// The core module's name (`v2026_07_28`).
    pub(crate) fn module(&self) -> &'static str {
        self.module
    }

    /// Whether the core module defines the type `name`.
    pub(crate) fn defines(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The core module's method table.
    pub(crate) fn methods(&self) -> &[Method] {
        &self.methods
    }

    /// The core module's prepared schema.
    pub(crate) fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// The schema the extension module is generated from: the core definitions, the
    /// extension's over them, and the extension's new requests and notifications added
    /// to the core direction unions (so the method table finds them).
    pub(crate) fn merged(&mut self, extension: &str, schema: &Value) -> Result<Value> {
        let schema = &hoist_nested_defs(extension, schema)?;
        let own = crate::schema::Defs::from_schema(extension, schema)?.map;
        let mut defs = self.core.clone();
        for (name, def) in &own {
            defs.insert(name.clone(), def.clone());
        }
        for (union, envelope) in DIRECTIONS {
            let added: Vec<Value> = own
                .iter()
                .filter(|(name, def)| !self.core.contains_key(*name) && starts_from(def, envelope))
                .map(|(name, _)| json!({ "$ref": format!("#/$defs/{name}") }))
                .collect();
            if added.is_empty() {
                continue;
            }
            let members = defs
                .get_mut(union)
                .and_then(|u| u.get_mut("anyOf"))
                .and_then(Value::as_array_mut)
                .ok_or_else(|| Error::Schema {
                    version: extension.to_owned(),
                    definition: union.to_owned(),
                    message: "the core schema has no such union to add the extension's methods to"
                        .to_owned(),
                })?;
            members.extend(added);
            self.widened.push(union.to_owned());
        }
        let mut merged = schema.clone();
        merged["$defs"] = Value::Object(defs);
        Ok(merged)
    }

    /// Leaves out of `p` and `methods` what the core module emits already. A constant
    /// of the extension's own that takes a core constant's name is an error.
    pub(crate) fn narrow(&self, p: &mut Prepared, methods: &mut Vec<Method>) -> Result<()> {
        p.consts.retain(|c| !self.prepared.consts.contains(c));
        let taken: Vec<&str> = p
            .consts
            .iter()
            .filter(|c| self.prepared.consts.iter().any(|b| b.name == c.name))
            .map(|c| c.name.as_str())
            .collect();
        if !taken.is_empty() {
            return Err(Error::Schema {
                version: self.module.to_owned(),
                definition: taken.join(", "),
                message: "the extension's constants take core constants' names".to_owned(),
            });
        }
        p.codes.retain(|c| !self.prepared.codes.contains(c));
        p.unions.retain(|u| !self.widened.contains(&u.name));
        methods.retain(|m| !self.methods.iter().any(|b| b.method == m.method));
        Ok(())
    }

    /// Drops every item of `file` identical to a core item, checks that no remaining one
    /// redefines a core name, and imports the core module's types.
    pub(crate) fn drop_repeated(&self, file: &mut syn::File) -> Result<()> {
        // Compared as the core module was: formatted, then read again (doc comments
        // written out as `///` lines read back differently from the ones quoted).
        *file = syn::parse_file(&prettyplease::unparse(file)).map_err(|e| Error::Unparsable {
            version: self.module.to_owned(),
            message: e.to_string(),
        })?;
        file.items
            .retain(|item| !self.items.contains(&item_tokens(item)));
        let clashes: Vec<String> = file
            .items
            .iter()
            .filter_map(defined_name)
            .filter(|n| self.names.contains(n) && !OWN_ITEMS.contains(&n.as_str()))
            .collect();
        if !clashes.is_empty() {
            return Err(Error::Schema {
                version: self.module.to_owned(),
                definition: clashes.join(", "),
                message: "the extension repeats these core types differently".to_owned(),
            });
        }
        let module = syn::Ident::new(self.module, proc_macro2::Span::call_site());
        let import: syn::Item = syn::parse_quote! {
            #[allow(unused_imports)]
            use crate::#module::*;
        };
        file.items.insert(0, import);
        Ok(())
    }
}

/// A schema whose definitions carry definitions of their own (MCP Apps' schema, written
/// out by a generator: each definition that uses a JSON value defines it inside, as
/// `__schema0`), with those lifted to the top, where its `$ref`s (`#/$defs/__schema0`)
/// look for them; one that is any JSON value becomes a reference to `JSONValue`. Two
/// nested definitions of one name that differ are an error.
fn hoist_nested_defs(extension: &str, schema: &Value) -> Result<Value> {
    let mut schema = schema.clone();
    let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) else {
        return Ok(schema);
    };
    let mut lifted: serde_json::Map<String, Value> = serde_json::Map::new();
    for (owner, def) in defs.iter_mut() {
        let Some(Value::Object(nested)) = def.as_object_mut().and_then(|d| d.remove("$defs"))
        else {
            continue;
        };
        for (name, inner) in nested {
            if lifted.get(&name).is_some_and(|seen| *seen != inner) {
                return Err(Error::Schema {
                    version: extension.to_owned(),
                    definition: owner.clone(),
                    message: format!("its nested definition {name} differs from another's"),
                });
            }
            lifted.insert(name, inner);
        }
    }
    let json_values: Vec<String> = lifted
        .iter()
        .filter(|(_, def)| is_any_json_value(def))
        .map(|(name, _)| format!("#/$defs/{name}"))
        .collect();
    for (name, def) in lifted {
        if !json_values.contains(&format!("#/$defs/{name}")) {
            defs.insert(name, def);
        }
    }
    // A schema none of whose definitions names another (but a JSON value) is written
    // out longhand, the core shapes it uses copied in: loosened where a type cannot
    // say what it says.
    let longhand = !defs.values().any(|def| names_another(def, &json_values));
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in names {
        if let Some(def) = defs.get_mut(&name) {
            crate::schema::visit_subschemas_mut(def, &name, &mut |_, sub| {
                let points_to_value = sub
                    .get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| json_values.iter().any(|v| v == r));
                if points_to_value {
                    *sub = json!({ "$ref": "#/$defs/JSONValue" });
                }
                if longhand {
                    loosen(sub);
                }
            });
            if longhand {
                loosen(def);
            }
        }
    }
    Ok(schema)
}

/// Shapes a schema written out longhand has and a type cannot say, said loosely: a
/// member forbidden (`"not": {}`) is left out; an object whose keys are named by
/// `propertyNames` is a map; "a number, or anything", and a union
/// written out in place (of objects, or of a string and a number), are any JSON value;
/// every member of a product of unions of objects (`allOf` of `anyOf`s: "a height or a
/// max height, and a width or a max width") is an optional member of one object.
fn loosen(sub: &mut Value) {
    if let Some(props) = sub.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|_, p| p.get("not") != Some(&json!({})));
    }
    if sub.get("propertyNames").is_some() {
        // A map whose keys are named (CSS variables): its keys are not members.
        let values = match sub.get("additionalProperties") {
            Some(v) if v.is_object() => v.clone(),
            _ => json!({}),
        };
        let description = sub.get("description").cloned();
        *sub = json!({ "type": "object", "additionalProperties": values });
        if let Some(d) = description {
            sub["description"] = d;
        }
        return;
    }
    // "A number, or anything"; and a union written out in place (the core's content
    // blocks and resource contents copied, a string or an integer id): kept as JSON,
    // read where used.
    let anything = sub.get("anyOf").and_then(Value::as_array).is_some_and(|m| {
        m.iter().any(|m| m == &json!({}))
            || (m.len() > 1
                && m.iter()
                    .all(|m| m.get("$ref").is_none() && m.get("const").is_none()))
    });
    if anything {
        let description = sub.get("description").cloned();
        *sub = json!({ "$ref": "#/$defs/JSONValue" });
        if let Some(d) = description {
            sub["description"] = d;
        }
        return;
    }
    let product_of_unions = sub
        .get("allOf")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().all(|m| m.get("anyOf").is_some()));
    if product_of_unions {
        let mut props = serde_json::Map::new();
        for object in sub["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("anyOf").and_then(Value::as_array))
            .flatten()
        {
            if let Some(p) = object.get("properties").and_then(Value::as_object) {
                props.extend(p.clone());
            }
        }
        let description = sub.get("description").cloned();
        *sub = json!({ "type": "object", "properties": props });
        if let Some(d) = description {
            sub["description"] = d;
        }
    }
}

/// Whether `schema` refers to a definition other than the JSON values `values`.
fn names_another(schema: &Value, values: &[String]) -> bool {
    match schema {
        Value::Object(members) => {
            members
                .iter()
                .any(|(key, member)| match (key.as_str(), member) {
                    ("$ref", Value::String(target)) => !values.contains(target),
                    _ => names_another(member, values),
                })
        }
        Value::Array(items) => items.iter().any(|item| names_another(item, values)),
        _ => false,
    }
}

/// Whether `def` is any JSON value: a union of a string, a number, a boolean, null, an
/// object and an array.
fn is_any_json_value(def: &Value) -> bool {
    let Some(members) = def.get("anyOf").and_then(Value::as_array) else {
        return false;
    };
    let kinds: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.get("type").and_then(Value::as_str))
        .collect();
    ["string", "number", "boolean", "null", "object", "array"]
        .iter()
        .all(|k| kinds.contains(k))
}

/// Whether a definition is an `allOf` whose first member is `envelope`.
fn starts_from(def: &Value, envelope: &str) -> bool {
    def.get("allOf")
        .and_then(Value::as_array)
        .and_then(|m| m.first())
        .and_then(crate::schema::Defs::ref_name)
        == Some(envelope)
}

fn item_tokens(item: &syn::Item) -> String {
    item.to_token_stream().to_string()
}

/// The name an item defines, when it defines one.
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Const(i) => &i.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Mod(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}
