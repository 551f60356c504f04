//! tern-codegen: turns the MCP JSON schema into the `tern-types` crate.
//!
//! typify makes the leaf structs; this crate emits everything the schema states through
//! `const` values (JSON-RPC envelope constants, method markers, tags and error codes),
//! the unions with discriminating deserializers, the "complete or input-required"
//! outcomes and the input-response map. The CLI in `main.rs` only calls [`generate`],
//! [`write()`] and [`stale`].
//!
//! ```no_run
//! let files = tern_codegen::generate(std::path::Path::new("schema"))?;
//! let stale = tern_codegen::stale(&files, std::path::Path::new("generated"))?;
//! assert!(stale.is_empty(), "run `cargo run -p tern-codegen`");
//! # Ok::<(), tern_codegen::Error>(())
//! ```
#![deny(missing_docs)]

mod behaviour;
mod docs;
mod emit;
mod error;
mod extension;
mod leaves;
mod methods;
mod open_structs;
mod passes;
mod prepare;
mod rows;
mod schema;
mod views;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quote::quote;

pub use behaviour::Behaviour;
pub use error::{Error, Result};
pub use rows::{Direction, Method};

/// The command that regenerates the committed output.
pub const REGENERATE: &str = "cargo run -p tern-codegen";

/// A protocol version tern generates types for.
#[derive(Debug, Clone, Copy)]
pub struct Version {
    /// The protocol version string, also the folder under `schema/`.
    pub name: &'static str,
    /// The Rust module (and cargo feature) that holds its types.
    pub module: &'static str,
}

/// Every protocol version tern-types carries, newest first.
pub const VERSIONS: [Version; 2] = [
    Version {
        name: "2026-07-28",
        module: "v2026_07_28",
    },
    Version {
        name: "2025-11-25",
        module: "v2025_11_25",
    },
];

/// An extension tern generates types for: its schema repeats the core types it uses,
/// and its module reuses the core module's.
#[derive(Debug, Clone, Copy)]
pub struct Extension {
    /// The extension's identifier, as declared under `capabilities.extensions`.
    pub id: &'static str,
    /// Where its schema comes from: a pinned upstream file, or one written for tern.
    pub schema: ExtensionSchema,
    /// The Rust module (and cargo feature) that holds its types.
    pub module: &'static str,
    /// The protocol version whose types it reuses.
    pub base: Version,
    /// The base version's requests a server may answer with a task of this extension's
    /// (`resultType: "task"`), as its specification says (the schema cannot).
    pub task_results: &'static [&'static str],
}

/// Where an extension's schema comes from.
#[derive(Debug, Clone, Copy)]
pub enum ExtensionSchema {
    /// Pinned and fetched like the core's: the folder under `schema/` that holds its
    /// `schema.json`.
    Pinned(&'static str),
    /// Written for tern, where the extension publishes no JSON schema: its path under
    /// `codegen/` and its text.
    Written(&'static str, &'static str),
}

impl ExtensionSchema {
    /// Where the schema is named in messages and in the generated file's preamble.
    pub fn origin(self) -> String {
        match self {
            Self::Pinned(folder) => format!("schema/{folder}/schema.json"),
            Self::Written(path, _) => format!("codegen/{path}"),
        }
    }

    /// The schema, read from under `schema_dir` when it is pinned.
    pub fn read(self, schema_dir: &Path) -> Result<serde_json::Value> {
        match self {
            Self::Pinned(folder) => read_schema(&schema_dir.join(folder).join("schema.json")),
            Self::Written(path, text) => serde_json::from_str(text).map_err(|source| Error::Json {
                path: PathBuf::from(path),
                source,
            }),
        }
    }
}

/// Every extension tern-types carries.
pub const EXTENSIONS: [Extension; 3] = [
    Extension {
        id: "io.modelcontextprotocol/tasks",
        schema: ExtensionSchema::Pinned("ext-tasks/draft"),
        module: "ext_tasks",
        base: VERSIONS[0],
        // "This extension allows a server to respond to a tools/call request with an
        // asynchronous task handle" (the extension's specification, 2026-07-28).
        task_results: &["tools/call"],
    },
    Extension {
        id: "io.modelcontextprotocol/skills",
        // SEP-2640's stable specification gives TypeScript interfaces and no JSON
        // schema: this one is written from them (see ARCHITECTURE.md).
        schema: ExtensionSchema::Written(
            "extensions/skills.schema.json",
            include_str!("../extensions/skills.schema.json"),
        ),
        module: "ext_skills",
        base: VERSIONS[0],
        task_results: &[],
    },
    Extension {
        id: "io.modelcontextprotocol/ui",
        schema: ExtensionSchema::Pinned("ext-apps/2.0.4"),
        module: "ext_apps",
        base: VERSIONS[0],
        task_results: &[],
    },
];

/// One file of generated output, relative to the `generated/` crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The path under `generated/`, such as `src/v2026_07_28.rs`.
    pub path: PathBuf,
    /// The formatted contents, preamble included.
    pub contents: String,
}

/// One version's generated module and its method table.
#[derive(Debug, Clone)]
pub struct GeneratedVersion {
    /// The formatted module source, without the preamble.
    pub source: String,
    /// The methods, in schema order.
    pub methods: Vec<Method>,
}

fn preamble(what: &str) -> String {
    format!(
        "// @generated by `{REGENERATE}` from {what}.\n// Do not edit by hand: change the generator (codegen/) and regenerate.\n\n"
    )
}

/// Reads a JSON schema file.
pub fn read_schema(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })
}

/// Generates every file of `tern-types` from the schemas under `schema_dir`
/// (`<schema_dir>/<version>/schema.json`).
pub fn generate(schema_dir: &Path) -> Result<Vec<GeneratedFile>> {
    let mut files = vec![
        GeneratedFile {
            path: PathBuf::from("src/lib.rs"),
            contents: format!(
                "{}{}",
                preamble("codegen/src/templates/lib.rs"),
                format_source("lib", include_str!("templates/lib.rs"))?
            ),
        },
        GeneratedFile {
            path: PathBuf::from("src/rpc.rs"),
            contents: format!(
                "{}{}",
                preamble("codegen/src/templates/rpc.rs"),
                format_source("rpc", include_str!("templates/rpc.rs"))?
            ),
        },
        GeneratedFile {
            path: PathBuf::from("src/rpc/unions.rs"),
            contents: format!(
                "{}{}",
                preamble("codegen/src/templates/unions.rs"),
                format_source("rpc/unions", include_str!("templates/unions.rs"))?
            ),
        },
    ];
    let mut cores = Vec::new();
    for v in VERSIONS {
        let schema = read_schema(&schema_dir.join(v.name).join("schema.json"))?;
        let generated = generate_version(v.name, &schema)?;
        files.push(GeneratedFile {
            path: PathBuf::from(format!("src/{}.rs", v.module)),
            contents: format!(
                "{}{}",
                preamble(&format!("schema/{}/schema.json", v.name)),
                generated.source
            ),
        });
        cores.push((v.name, schema, generated.source));
    }
    for ext in EXTENSIONS {
        let (_, base_schema, base_source) = cores
            .iter()
            .find(|(name, _, _)| *name == ext.base.name)
            .ok_or_else(|| Error::Schema {
                version: ext.schema.origin(),
                definition: "(root)".to_owned(),
                message: format!("its base version {} is not generated", ext.base.name),
            })?;
        let schema = ext.schema.read(schema_dir)?;
        let generated = generate_extension(ext, base_schema, base_source, &schema)?;
        files.push(GeneratedFile {
            path: PathBuf::from(format!("src/{}.rs", ext.module)),
            contents: format!("{}{}", preamble(&ext.schema.origin()), generated.source),
        });
    }
    Ok(files)
}

/// Generates an extension's module from its schema, reusing the types of its base
/// version's module (`base_source`, generated from `base_schema`).
pub fn generate_extension(
    ext: Extension,
    base_schema: &serde_json::Value,
    base_source: &str,
    schema: &serde_json::Value,
) -> Result<GeneratedVersion> {
    let mut base = extension::Base::new(ext.base.name, ext.base.module, base_schema, base_source)?;
    let schema = base.merged(&ext.schema.origin(), schema)?;
    let header = format!(
        " The `{}` extension: its own types and method markers; the {} types it repeats are those of [`crate::{}`].",
        ext.id, ext.base.name, ext.base.module
    );
    let mut module = build_module(ext.base.name, &schema, &header, Some(&base))?;
    module.source.push_str(&format!(
        "/// The extension's identifier, as declared under `capabilities.extensions`.\npub const EXTENSION_ID: &str = {:?};\n",
        ext.id
    ));
    Ok(module)
}

fn format_source(what: &str, src: &str) -> Result<String> {
    let file = syn::parse_file(src).map_err(|e| Error::Unparsable {
        version: what.to_owned(),
        message: e.to_string(),
    })?;
    Ok(prettyplease::unparse(&file))
}

/// Generates one version's module from its schema.
pub fn generate_version(version: &str, schema: &serde_json::Value) -> Result<GeneratedVersion> {
    let header = format!(
        " MCP protocol version {version}: every type of its schema, the method markers and the unions."
    );
    build_module(version, schema, &header, None)
}

/// The structs that write a member first, and which: each tagged union's variants their
/// tag, so a reader finds it in one pass (`rpc::tagged`); an input-required result and
/// each complete result an `Outcome` can hold their `resultType` (the outcome's tag),
/// or the reader keeps every member before it as text and reads them twice.
fn tags_first(prepared: &prepare::Prepared) -> BTreeMap<String, String> {
    let mut tags: BTreeMap<String, String> = prepared
        .unions
        .iter()
        .filter_map(|u| u.tag.as_ref().map(|(field, _)| (u, field)))
        .flat_map(|(u, field)| {
            u.variants.iter().map(move |v| {
                let ty = v.ty.rsplit("::").next().unwrap_or(&v.ty).to_owned();
                (ty, field.clone())
            })
        })
        .collect();
    if prepared.has_input_required {
        tags.insert("InputRequiredResult".to_owned(), "resultType".to_owned());
        for outcome in &prepared.outcomes {
            tags.entry(outcome.complete.clone())
                .or_insert_with(|| "resultType".to_owned());
        }
    }
    tags
}

/// Builds a module from a schema. With a `base`, what the base module already has is
/// left out: its constants, error codes and methods, and every item identical to one of
/// its own (see [`extension`]).
fn build_module(
    version: &str,
    schema: &serde_json::Value,
    header: &str,
    base: Option<&extension::Base>,
) -> Result<GeneratedVersion> {
    let mut prepared = prepare::prepare(version, schema)?;
    let mut methods = methods::table(&prepared)?;
    for m in &mut methods {
        m.may_become_task = EXTENSIONS
            .iter()
            .any(|e| e.base.name == version && e.task_results.contains(&m.method.as_str()));
    }
    let mut names = prepared.rust_names.clone();
    for c in &prepared.consts {
        names
            .entry(c.name.clone())
            .or_insert_with(|| c.name.clone());
    }
    let defaulted: std::collections::BTreeSet<String> = prepared
        .consts
        .iter()
        .map(|c| c.name.clone())
        .chain(prepared.codes.iter().map(|c| c.name.clone()))
        .collect();
    // For the core types an extension repeats, the core's choice: they must come out
    // as the core module has them.
    let mut first = tags_first(&prepared);
    if let Some(base) = base {
        first.retain(|ty, _| !base.defines(ty));
        first.extend(tags_first(base.prepared()));
    }
    if let Some(base) = base {
        base.narrow(&mut prepared, &mut methods)?;
    }
    let leaves = leaves::run_typify(&prepared)?;

    let consts = emit::consts(&prepared);
    let unions = prepared
        .unions
        .iter()
        .map(|u| emit::union(&prepared, u))
        .collect::<Result<Vec<_>>>()?;
    let outcomes = emit::outcomes(&prepared)?;
    let support = emit::support(&prepared)?;
    let defines = |name: &str| base.is_some_and(|b| b.defines(name));
    let method_mod = methods::emit(
        &prepared,
        &methods,
        base.map(|b| (b.module(), &defines as &dyn Fn(&str) -> bool)),
    )?;
    let registry = emit::registry(&prepared)?;

    let body = quote! {
        #leaves
        #consts
        #(#unions)*
        #outcomes
        #support
        #method_mod
        #registry
    };
    let mut file: syn::File = syn::parse2(body).map_err(|e| Error::Unparsable {
        version: version.to_owned(),
        message: e.to_string(),
    })?;
    // The core's boxed members for an extension, whose repeats of core types must come
    // out as the core has them.
    let boxed: Vec<&str> = crate::views::request_meta(base.map_or(&methods, |b| b.methods()))
        .into_iter()
        .collect();
    passes::run(&mut file, &names, &defaulted, &first, &boxed);
    if let Some(base) = base {
        base.drop_repeated(&mut file)?;
    }
    let header: syn::File = syn::parse_quote! {
        #![doc = #header]
        #![allow(clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)]
    };
    let mut attrs = header.attrs;
    attrs.append(&mut file.attrs);
    file.attrs = attrs;
    Ok(GeneratedVersion {
        source: prettyplease::unparse(&file),
        methods,
    })
}

/// Writes generated files under `generated_dir`.
pub fn write(files: &[GeneratedFile], generated_dir: &Path) -> Result<()> {
    for f in files {
        let path = generated_dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        std::fs::write(&path, &f.contents).map_err(|source| Error::Io { path, source })?;
    }
    Ok(())
}

/// The generated files whose committed copy under `generated_dir` differs from `files`
/// (or is missing).
pub fn stale(files: &[GeneratedFile], generated_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for f in files {
        let path = generated_dir.join(&f.path);
        match std::fs::read_to_string(&path) {
            Ok(existing) if existing == f.contents => {}
            Ok(_) => out.push(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => out.push(path),
            Err(source) => return Err(Error::Io { path, source }),
        }
    }
    Ok(out)
}

/// A method table as text (the form `--methods` prints), under the heading `what`.
pub fn render_methods(what: &str, methods: &[Method]) -> String {
    methods::render(what, methods)
}

/// The method table of one version, as text.
pub fn method_table(version: &str, schema: &serde_json::Value) -> Result<String> {
    let prepared = prepare::prepare(version, schema)?;
    Ok(methods::render(version, &methods::table(&prepared)?))
}
