//! The committed `tern-types` reads well on docs.rs: one type per shared shape, no
//! stuttering names, absolute links, and generated helpers hidden.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

fn generated(module: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../generated/src")
        .join(format!("{module}.rs"));
    std::fs::read_to_string(&path).unwrap()
}

/// The names of the types a module declares at its top level.
fn type_names(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|l| {
            let rest = l
                .strip_prefix("pub struct ")
                .or_else(|| l.strip_prefix("pub enum "))
                .or_else(|| l.strip_prefix("pub type "))?;
            let end = rest
                .find(|c: char| !c.is_alphanumeric() && c != '_')
                .unwrap_or(rest.len());
            Some(rest[..end].to_owned())
        })
        .collect()
}

fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in name.chars() {
        match out.last_mut() {
            Some(w) if !c.is_uppercase() => w.push(c),
            _ => out.push(c.to_string()),
        }
    }
    out
}

#[test]
fn each_version_has_one_cache_scope_where_it_caches() {
    for v in tern_codegen::VERSIONS {
        let source = generated(v.module);
        let scopes = type_names(&source)
            .into_iter()
            .filter(|n| n.ends_with("CacheScope"))
            .count();
        let caches = source.contains("cacheScope");
        assert_eq!(scopes, usize::from(caches), "{}", v.module);
    }
    let modern = generated("v2026_07_28");
    assert_eq!(modern.matches("pub enum CacheScope ").count(), 1);
}

#[test]
fn no_type_name_says_a_word_twice_in_a_row() {
    for v in tern_codegen::VERSIONS {
        for name in type_names(&generated(v.module)) {
            let w = words(&name);
            assert!(
                w.windows(2).all(|pair| pair[0] != pair[1]),
                "{}::{name} stutters",
                v.module
            );
        }
    }
}

#[test]
fn doc_links_are_absolute() {
    for module in [
        "lib",
        "rpc",
        "v2026_07_28",
        "v2025_11_25",
        "ext_tasks",
        "ext_skills",
        "ext_apps",
    ] {
        let source = generated(module);
        assert!(!source.contains("](/"), "{module} has a relative link");
        assert!(!source.contains("(/specification/"), "{module}");
    }
    assert!(
        generated("v2025_11_25")
            .contains("](https://modelcontextprotocol.io/specification/2025-11-25/")
    );
}

#[test]
fn generated_helpers_stay_hidden() {
    for v in tern_codegen::VERSIONS {
        let source = generated(v.module);
        for helper in ["pub fn __roundtrip(", "pub const __DEFINITIONS"] {
            let at = source.find(helper).expect(helper);
            let before: Vec<&str> = source[..at].lines().rev().take(2).collect();
            assert!(
                before.contains(&"#[doc(hidden)]"),
                "{}: {helper} is not #[doc(hidden)]",
                v.module
            );
        }
    }
}
