//! The public API as a committed listing (`snapshots/it__api_listing__tern_public_api.snap`):
//! every `pub` item of `runtime/src`, read from the source with `syn`, one line each
//! under its module, so that adding, removing or changing a public item fails here
//! until the listing changes in the same commit (`INSTA_UPDATE=always cargo test -p
//! tern-tests --test it api_listing`, then review the diff).
//!
//! Read from the source rather than from rustdoc's JSON, which needs a nightly
//! toolchain; what a `pub` item in a private module re-exported elsewhere means is
//! shown by the `pub use` line that re-exports it. Trait impls are not listed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, TraitItem, Visibility};

/// The listing of the crate rooted at `lib` (its `lib.rs`).
fn listing(lib: &Path) -> String {
    let mut out = String::new();
    module(&mut out, "tern_mcp", lib, &[]);
    out
}

fn module(out: &mut String, path: &str, file: &Path, cfg: &[String]) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let dir = module_dir(file);
    items(out, path, &parsed.items, &dir, cfg);
}

/// Where the files of `file`'s submodules are.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("lib" | "mod") => parent.to_owned(),
        Some(stem) => parent.join(stem),
        None => parent.to_owned(),
    }
}

fn items(out: &mut String, path: &str, list: &[Item], dir: &Path, cfg: &[String]) {
    for item in list {
        let attrs = attributes(item);
        if is_test_only(attrs) {
            continue;
        }
        let mut cfg = cfg.to_vec();
        cfg.extend(cfgs(attrs));
        let here = |out: &mut String, line: String| {
            let _ = writeln!(out, "{path}: {line}{}", suffix(&cfg));
        };
        match item {
            Item::Mod(m) => {
                let public = is_pub(&m.vis);
                let child = format!("{path}::{}", m.ident);
                if public {
                    here(out, format!("pub mod {}", m.ident));
                }
                // A private module's `pub` items count too: they are reached through
                // `pub use` (listed where they are re-exported) or not at all.
                match &m.content {
                    Some((_, inner)) => {
                        items(out, &child, inner, &dir.join(m.ident.to_string()), &cfg)
                    }
                    None => {
                        let file = [
                            dir.join(format!("{}.rs", m.ident)),
                            dir.join(m.ident.to_string()).join("mod.rs"),
                        ]
                        .into_iter()
                        .find(|f| f.exists())
                        .unwrap_or_else(|| panic!("no file for module {child}"));
                        module(out, &child, &file, &cfg);
                    }
                }
            }
            Item::Impl(i) if i.trait_.is_none() => {
                let ty = flat(&i.self_ty);
                for member in &i.items {
                    if let ImplItem::Fn(f) = member {
                        if is_pub(&f.vis) && !is_test_only(&f.attrs) {
                            let mut c = cfg.clone();
                            c.extend(cfgs(&f.attrs));
                            let _ = writeln!(
                                out,
                                "{path}: impl {ty} {{ {} }}{}",
                                flat(&f.sig),
                                suffix(&c)
                            );
                        }
                    }
                }
            }
            Item::Trait(t) if is_pub(&t.vis) => {
                here(out, format!("pub trait {}{}", t.ident, flat(&t.generics)));
                for member in &t.items {
                    let line = match member {
                        TraitItem::Fn(f) => flat(&f.sig),
                        TraitItem::Const(c) => format!("const {}: {}", c.ident, flat(&c.ty)),
                        TraitItem::Type(ty) => format!("type {}", ty.ident),
                        _ => continue,
                    };
                    here(out, format!("trait {} {{ {line} }}", t.ident));
                }
            }
            Item::Struct(s) if is_pub(&s.vis) => {
                let fields: Vec<String> = s
                    .fields
                    .iter()
                    .filter(|f| is_pub(&f.vis))
                    .map(|f| match &f.ident {
                        Some(name) => format!("pub {name}: {}", flat(&f.ty)),
                        None => format!("pub {}", flat(&f.ty)),
                    })
                    .collect();
                here(
                    out,
                    format!(
                        "pub struct {}{}{}{}",
                        s.ident,
                        flat(&s.generics),
                        non_exhaustive(&s.attrs),
                        fields_of(&fields)
                    ),
                );
            }
            Item::Enum(e) if is_pub(&e.vis) => {
                let variants: Vec<String> = e
                    .variants
                    .iter()
                    .map(|v| {
                        let mut v = v.clone();
                        v.attrs.clear();
                        v.fields.iter_mut().for_each(|f| f.attrs.clear());
                        flat(&v)
                    })
                    .collect();
                here(
                    out,
                    format!(
                        "pub enum {}{}{} {{ {} }}",
                        e.ident,
                        flat(&e.generics),
                        non_exhaustive(&e.attrs),
                        variants.join(", ")
                    ),
                );
            }
            Item::Fn(f) if is_pub(&f.vis) => here(out, format!("pub {}", flat(&f.sig))),
            Item::Const(c) if is_pub(&c.vis) => {
                here(out, format!("pub const {}: {}", c.ident, flat(&c.ty)))
            }
            Item::Static(s) if is_pub(&s.vis) => {
                here(out, format!("pub static {}: {}", s.ident, flat(&s.ty)))
            }
            Item::Type(t) if is_pub(&t.vis) => here(
                out,
                format!(
                    "pub type {}{} = {}",
                    t.ident,
                    flat(&t.generics),
                    flat(&t.ty)
                ),
            ),
            Item::Use(u) if is_pub(&u.vis) => here(out, format!("pub use {}", flat(&u.tree))),
            Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
                here(
                    out,
                    format!(
                        "macro {}",
                        m.ident
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                );
            }
            _ => {}
        }
    }
}

fn fields_of(fields: &[String]) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        format!(" {{ {} }}", fields.join(", "))
    }
}

fn non_exhaustive(attrs: &[Attribute]) -> &'static str {
    if attrs.iter().any(|a| a.path().is_ident("non_exhaustive")) {
        " #[non_exhaustive]"
    } else {
        ""
    }
}

/// Tokens as one line, without the spaces `quote` puts between every two.
fn flat(tokens: &impl ToTokens) -> String {
    let mut text = tokens.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" ::", "::"),
        (" : ", ": "),
        ("( ", "("),
        (" )", ")"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        (" ?", "?"),
        ("' ", "'"),
        ("# [", "#["),
        (" (", "("),
        ("->(", "-> ("),
        ("=(", "= ("),
        (",)", ")"),
        (", }", " }"),
        ("=>", " => "),
    ] {
        text = text.replace(from, to);
    }
    text.replace("  => ", " => ")
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn attributes(item: &Item) -> &[Attribute] {
    match item {
        Item::Mod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::Const(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

fn cfgs(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .filter_map(|a| a.meta.require_list().ok().map(|l| flat(&l.tokens)))
        .collect()
}

fn is_test_only(attrs: &[Attribute]) -> bool {
    cfgs(attrs).iter().any(|c| c == "test")
}

fn suffix(cfg: &[String]) -> String {
    if cfg.is_empty() {
        String::new()
    } else {
        format!("  [cfg {}]", cfg.join(" & "))
    }
}

#[test]
fn tern_public_api() {
    let lib = tern_tests::workspace_root().join("runtime/src/lib.rs");
    let listing = listing(&lib);
    insta::assert_snapshot!(listing);
}

/// The names axum 0.8 exports that an app importing both crates would use unqualified
/// (its root, `body`, `extract`, `middleware`, `response`, `routing`, `serve`).
const AXUM_NAMES: &[&str] = &[
    "Router",
    "Json",
    "Form",
    "Extension",
    "Body",
    "BodyDataStream",
    "Bytes",
    "Path",
    "Query",
    "State",
    "Request",
    "ConnectInfo",
    "MatchedPath",
    "NestedPath",
    "OriginalUri",
    "RawForm",
    "RawQuery",
    "RawPathParams",
    "WebSocketUpgrade",
    "FromRef",
    "FromRequest",
    "FromRequestParts",
    "Next",
    "IntoResponse",
    "IntoResponseParts",
    "Response",
    "ResponseParts",
    "Html",
    "Redirect",
    "Sse",
    "NoContent",
    "AppendHeaders",
    "ErrorResponse",
    "MethodRouter",
    "Route",
    "Handler",
    "HandlerService",
    "Listener",
    "ListenerExt",
    "Serve",
    "MethodFilter",
    "ServiceExt",
    "RequestExt",
    "RequestPartsExt",
];

/// tern's public types leave axum's names alone: an app that embeds
/// `HttpServer::router()` imports both without renaming.
#[test]
fn no_public_type_shares_a_name_with_axum() {
    let lib = tern_tests::workspace_root().join("runtime/src/lib.rs");
    let listing = listing(&lib);
    let clashes: Vec<&str> = listing
        .lines()
        .filter_map(|line| {
            let (_, item) = line.split_once(": pub ")?;
            let mut words = item.split_whitespace();
            let kind = words.next()?;
            let name = words.next()?.split(['<', '(', '{']).next()?;
            (matches!(kind, "struct" | "enum" | "trait" | "type") && AXUM_NAMES.contains(&name))
                .then_some(name)
        })
        .collect();
    assert!(
        clashes.is_empty(),
        "tern types named as axum's: {clashes:?}"
    );
}
