//! Doc comments: the schema's descriptions, cleaned for rustdoc.

use std::collections::BTreeMap;

use syn::visit_mut::VisitMut;

/// Rewrites a schema description for rustdoc: `{@link X}` becomes an intra-doc link
/// to the Rust type `X` names (`prefix` reaches the version module from where the doc
/// sits), bare URLs are wrapped so rustdoc links them, and typify's schema dumps are
/// dropped.
pub(crate) fn clean(text: &str, names: &BTreeMap<String, String>, prefix: &str) -> String {
    let text = match text.find("<details>") {
        Some(i) => text[..i].trim_end(),
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{@link ") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{@link ".len()..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        out.push_str(&link(&after[..end], names, prefix));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    wrap_urls(&absolute_links(&out))
}

/// Where the schema's site-relative links (`/specification/...`) point.
const SITE: &str = "https://modelcontextprotocol.io";

/// Makes Markdown links relative to the protocol's site absolute: rustdoc would resolve
/// them against docs.rs.
fn absolute_links(text: &str) -> String {
    text.replace("](/", &format!("]({SITE}/"))
}

/// `{@link Target}`, `{@link Target.member}` or TypeDoc's `{@link Target text}` with
/// the space lost in the published schema (`CallToolRequesttools/call`).
fn link(inner: &str, names: &BTreeMap<String, String>, prefix: &str) -> String {
    let inner = inner.trim();
    let best = names
        .iter()
        .filter(|(schema, _)| inner.starts_with(schema.as_str()))
        .max_by_key(|(schema, _)| schema.len());
    match best {
        Some((schema, rust)) => {
            let rest = inner[schema.len()..].trim_start_matches(['|', ' ']);
            let shown = if rest.is_empty() {
                rust.clone()
            } else if rest.starts_with('.') {
                format!("{rust}{rest}")
            } else {
                rest.trim_matches('`').to_owned()
            };
            if shown == *rust && prefix.is_empty() {
                format!("[`{shown}`]")
            } else {
                format!("[`{shown}`]({prefix}{rust})")
            }
        }
        None => format!("`{inner}`"),
    }
}

fn wrap_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("https://").or_else(|| rest.find("http://")) {
        let (before, url_start) = rest.split_at(i);
        out.push_str(before);
        let end = url_start
            .find(|c: char| c.is_whitespace() || c == ')' || c == '>' || c == '"')
            .unwrap_or(url_start.len());
        let url = url_start[..end].trim_end_matches(['.', ',']);
        let wrapped = before.ends_with('<') || before.ends_with("](");
        if wrapped {
            out.push_str(url);
        } else {
            out.push('<');
            out.push_str(url);
            out.push('>');
        }
        rest = &url_start[url.len()..];
    }
    out.push_str(rest);
    out
}

/// Cleans every doc comment in typify's output and documents what the schema left
/// undocumented, so the crate can deny missing docs.
pub(crate) struct DocFixer<'a> {
    pub(crate) names: &'a BTreeMap<String, String>,
}

fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                lines.push(s.value());
            }
        }
    }
    if lines.is_empty() {
        None
    } else {
        Some(
            lines
                .iter()
                .map(|l| l.strip_prefix(' ').unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

/// Replaces the doc text, keeping other `doc` attributes such as `#[doc(hidden)]`.
fn set_doc(attrs: &mut Vec<syn::Attribute>, text: &str) {
    attrs.retain(|a| !(a.path().is_ident("doc") && matches!(a.meta, syn::Meta::NameValue(_))));
    let mut docs: Vec<syn::Attribute> = text
        .lines()
        .map(|l| {
            let l = format!(" {l}");
            syn::parse_quote!(#[doc = #l])
        })
        .collect();
    docs.append(attrs);
    *attrs = docs;
}

impl DocFixer<'_> {
    fn fix(&self, attrs: &mut Vec<syn::Attribute>, fallback: impl FnOnce() -> String) {
        let text = match doc_text(attrs) {
            Some(t) => clean(&t, self.names, ""),
            None => String::new(),
        };
        let text = if text.trim().is_empty() {
            fallback()
        } else {
            text
        };
        set_doc(attrs, &text);
    }
}

fn serde_rename(attrs: &[syn::Attribute]) -> Option<String> {
    let mut found = None;
    for a in attrs {
        if !a.path().is_ident("serde") {
            continue;
        }
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: syn::LitStr = meta.value()?.parse()?;
                found = Some(s.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    found
}

impl VisitMut for DocFixer<'_> {
    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        let name = item.ident.to_string();
        self.fix(&mut item.attrs, || format!("The `{name}` object."));
        for field in item.fields.iter_mut() {
            let json = serde_rename(&field.attrs).or_else(|| {
                field
                    .ident
                    .as_ref()
                    .map(|i| i.to_string().trim_start_matches("r#").to_owned())
            });
            let is_extra = field.ident.as_ref().is_some_and(|i| i == "extra");
            self.fix(&mut field.attrs, || {
                if is_extra {
                    "Members the schema does not name, kept so they survive a round trip."
                        .to_owned()
                } else {
                    match json {
                        Some(j) => format!("The `{j}` member."),
                        None => "The wrapped value.".to_owned(),
                    }
                }
            });
        }
    }

    fn visit_item_enum_mut(&mut self, item: &mut syn::ItemEnum) {
        let name = item.ident.to_string();
        self.fix(&mut item.attrs, || format!("The `{name}` values."));
        for v in item.variants.iter_mut() {
            let json = serde_rename(&v.attrs).unwrap_or_else(|| v.ident.to_string());
            self.fix(&mut v.attrs, || format!("`{json}`"));
        }
    }

    fn visit_item_mod_mut(&mut self, item: &mut syn::ItemMod) {
        let name = item.ident.to_string();
        self.fix(&mut item.attrs, || format!("Support items for `{name}`."));
        syn::visit_mut::visit_item_mod_mut(self, item);
    }

    fn visit_item_type_mut(&mut self, item: &mut syn::ItemType) {
        let name = item.ident.to_string();
        self.fix(&mut item.attrs, || format!("The `{name}` type."));
    }

    fn visit_item_fn_mut(&mut self, item: &mut syn::ItemFn) {
        let name = item.sig.ident.to_string();
        self.fix(&mut item.attrs, || format!("`{name}`"));
    }
}
