//! Rewrites a protocol schema into what typify should see, and records what the
//! generator emits itself instead.
//!
//! typify makes the leaf structs. Everything the schema states through `const` values
//! (tags, method names, error codes), every union, and the JSON value types are taken
//! out of its hands here: each becomes a `$ref` to a definition that typify is told to
//! replace with a type this generator emits.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::{Map, Value};

mod distribute;
mod inline;
mod naming;
mod shapes;
mod unions;

use crate::schema::Defs;
use crate::{Error, Result};

use unions::words;

/// Definition names that would shadow std or read badly, and what tern calls them.
const RENAMES: &[(&str, &str)] = &[
    ("Result", "BaseResult"),
    ("Request", "BaseRequest"),
    ("Notification", "BaseNotification"),
    ("Error", "ErrorObject"),
];

/// A string constant the schema pins a property to, emitted as a zero-sized type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConstStr {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) property: String,
}

/// An integer constant (an error code), emitted as an alias of `ErrorCode<N>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConstInt {
    pub(crate) name: String,
    pub(crate) value: i64,
}

/// One test a union's deserializer makes to pick a variant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Check {
    /// The value at the path is one of these strings.
    OneOf(Vec<String>, Vec<String>),
    /// The value at the path is one of these strings, or absent.
    OneOfOrMissing(Vec<String>, Vec<String>),
    /// The object has a member at the path.
    Has(Vec<String>),
    /// The value is a JSON array.
    IsArray,
    /// The value is a JSON object.
    IsObject,
    /// The value is this string.
    IsString(String),
}

/// One variant of a union.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub(crate) name: String,
    /// The Rust type the variant holds, as a path in the version module.
    pub(crate) ty: String,
    pub(crate) checks: Vec<Check>,
}

/// A union the generator emits as an enum with a discriminating deserializer.
#[derive(Debug, Clone)]
pub(crate) struct Union {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// The member whose value names the variant, when there is one (`type`, `method`).
    pub(crate) tag: Option<(String, Vec<String>)>,
    pub(crate) variants: Vec<Variant>,
}

/// A "complete or input-required" result: an alias of `Outcome<Complete>`.
#[derive(Debug, Clone)]
pub(crate) struct OutcomeAlias {
    pub(crate) name: String,
    pub(crate) complete: String,
}

/// Everything the generator learned from one schema.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) version: String,
    /// The rewritten definitions, for typify.
    pub(crate) defs: Map<String, Value>,
    /// The original definitions (after renames and `allOf` merging), for analysis.
    pub(crate) original: Defs,
    /// Schema name -> Rust type name, for every definition that has a Rust type.
    pub(crate) rust_names: BTreeMap<String, String>,
    /// Definition name -> the type typify must use instead of generating one.
    pub(crate) replacements: BTreeMap<String, String>,
    pub(crate) consts: BTreeSet<ConstStr>,
    pub(crate) codes: BTreeSet<ConstInt>,
    pub(crate) unions: Vec<Union>,
    pub(crate) outcomes: Vec<OutcomeAlias>,
    /// Whether this version has `InputRequiredResult` (and so `Outcome`).
    pub(crate) has_input_required: bool,
    /// Whether this version has `InputResponses` (decoded against `InputRequests`).
    pub(crate) has_input_responses: bool,
    /// Whether this version's tool calls have `arguments` (kept as `ToolArguments`).
    pub(crate) has_tool_arguments: bool,
}

/// The Rust name typify gives a definition.
pub(crate) fn rust_name(def: &str) -> String {
    def.to_upper_camel_case()
}

fn schema_error(version: &str, definition: &str, message: impl Into<String>) -> Error {
    Error::Schema {
        version: version.to_owned(),
        definition: definition.to_owned(),
        message: message.into(),
    }
}

pub(crate) fn prepare(version: &str, root: &Value) -> Result<Prepared> {
    let mut defs = Defs::from_schema(version, root)?.map;
    rename_definitions(&mut defs);
    distribute::share_named_shapes(&mut defs);
    distribute::constants_as_enums(&mut defs);
    distribute::nullable_as_type_array(&mut defs);
    distribute::distribute_unions(version, &mut defs)?;
    shapes::merge_all_of(version, &mut defs)?;
    shapes::order_enums(version, &mut defs)?;
    let original = Defs { map: defs.clone() };

    let mut p = Prepared {
        version: version.to_owned(),
        defs: Map::new(),
        original,
        rust_names: BTreeMap::new(),
        replacements: BTreeMap::new(),
        consts: BTreeSet::new(),
        codes: BTreeSet::new(),
        unions: Vec::new(),
        outcomes: Vec::new(),
        has_input_required: defs.contains_key("InputRequiredResult"),
        has_input_responses: defs.contains_key("InputResponses")
            && defs.contains_key("InputRequests"),
        has_tool_arguments: false,
    };

    for (schema_name, _) in RENAMES {
        if let Some((_, to)) = RENAMES.iter().find(|(from, _)| from == schema_name) {
            if defs.contains_key(*to) {
                p.rust_names
                    .insert((*schema_name).to_owned(), (*to).to_owned());
            }
        }
    }

    shapes::replace_json_values(&mut defs, &mut p);
    shapes::raw_json_properties(&mut defs);
    p.has_tool_arguments = shapes::tool_arguments(&mut defs, &mut p);
    shapes::lenient_required(&mut defs);
    inline::extract_inline_unions(version, &mut defs, &mut p)?;
    unions::collect_unions(version, &mut defs, &mut p)?;
    shapes::replace_consts(version, &mut defs, &mut p)?;
    shapes::replace_result_type(&mut defs, &mut p);
    shapes::drop_defaults_of_replaced(&mut defs, &p);
    shapes::open_objects(&mut defs);
    naming::share_repeated_enums(&mut defs);
    naming::untangle_inline_names(&mut defs);

    for name in defs.keys() {
        if !p.replacements.contains_key(name) || p.unions.iter().any(|u| &u.name == name) {
            p.rust_names
                .entry(schema_name_of(name).to_owned())
                .or_insert_with(|| rust_name(name));
        }
    }
    // The raw input-response map and the outcome aliases are types too.
    for o in &p.outcomes {
        p.rust_names.insert(o.name.clone(), o.name.clone());
    }
    if p.has_input_responses {
        p.rust_names
            .insert("InputResponses".into(), "InputResponses".into());
    }

    p.defs = rewrite_refs_for_typify(defs);
    // typify looks replacements up by the Rust name it would give the definition.
    p.replacements = std::mem::take(&mut p.replacements)
        .into_iter()
        .map(|(k, v)| (rust_name(&k), v))
        .collect();
    Ok(p)
}

/// The schema name of a (possibly renamed) definition.
fn schema_name_of(def: &str) -> &str {
    RENAMES
        .iter()
        .find(|(_, to)| *to == def)
        .map(|(from, _)| *from)
        .unwrap_or(def)
}

fn for_each_ref(value: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                if k == "$ref" {
                    if let Value::String(s) = v {
                        f(s);
                    }
                } else {
                    for_each_ref(v, f);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| for_each_ref(v, f)),
        _ => {}
    }
}

fn rename_definitions(defs: &mut Map<String, Value>) {
    let mut renames: Vec<(String, String)> = RENAMES
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    for name in defs.keys() {
        if let Some(rest) = name.strip_prefix("JSONRPC") {
            renames.push((name.clone(), format!("JsonRpc{rest}")));
        }
    }
    let renames: Vec<_> = renames
        .into_iter()
        .filter(|(from, _)| defs.contains_key(from))
        .collect();
    let old = std::mem::take(defs);
    for (k, v) in old {
        let k = renames
            .iter()
            .find(|(from, _)| *from == k)
            .map(|(_, to)| to.clone())
            .unwrap_or(k);
        defs.insert(k, v);
    }
    for v in defs.values_mut() {
        for_each_ref(v, &mut |r| {
            for (from, to) in &renames {
                if r.rsplit('/').next() == Some(from.as_str()) {
                    *r = format!("#/$defs/{to}");
                }
            }
        });
    }
}

/// typify reads draft-07 style references.
fn rewrite_refs_for_typify(mut defs: Map<String, Value>) -> Map<String, Value> {
    for v in defs.values_mut() {
        for_each_ref(v, &mut |r| {
            if let Some(name) = r.strip_prefix("#/$defs/") {
                *r = format!("#/definitions/{name}");
            }
        });
    }
    defs
}
