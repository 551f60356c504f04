//! Passes over the generated syntax tree: what typify cannot be told to do.

use std::collections::{BTreeMap, BTreeSet};

use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;

/// Runs every pass: docs cleaned (`names` maps schema names to Rust types for links),
/// optional collections made `Option`s, protocol field names shortened,
/// constructors added (`defaulted` types take their default in `new`), open structs
/// read without `flatten`, and optional members of the `boxed` types boxed.
pub(crate) fn run(
    file: &mut syn::File,
    names: &BTreeMap<String, String>,
    defaulted: &BTreeSet<String>,
    tags_first: &BTreeMap<String, String>,
    boxed: &[&str],
) {
    crate::docs::DocFixer { names }.visit_file_mut(file);
    TagsFirst { tags: tags_first }.visit_file_mut(file);
    OptionalCollections.visit_file_mut(file);
    BoxedMembers { types: boxed }.visit_file_mut(file);
    ProtocolFieldNames.visit_file_mut(file);
    add_constructors(file, defaulted);
    crate::open_structs::run(file);
}

/// A struct that is a variant of a tagged union declares (and so writes) its tag
/// first: `tags` maps the struct's name to the tag's wire name.
struct TagsFirst<'a> {
    tags: &'a BTreeMap<String, String>,
}

impl VisitMut for TagsFirst<'_> {
    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        let Some(tag) = self.tags.get(&item.ident.to_string()) else {
            return;
        };
        let syn::Fields::Named(fields) = &mut item.fields else {
            return;
        };
        let Some(at) = fields
            .named
            .iter()
            .position(|f| wire_name(f).as_deref() == Some(tag))
        else {
            return;
        };
        let mut all: Vec<syn::Field> = std::mem::take(&mut fields.named).into_iter().collect();
        let tag_field = all.remove(at);
        fields.named.push(tag_field);
        fields.named.extend(all);
    }
}

/// The name a field has on the wire: its serde `rename`, or its own.
fn wire_name(field: &syn::Field) -> Option<String> {
    serde_member(field)
        .rename
        .or_else(|| field.ident.as_ref().map(ToString::to_string))
}

/// What a field's `#[serde(...)]` attributes say of it.
struct SerdeMember {
    rename: Option<String>,
    /// The `skip_serializing_if` function's path.
    skip_if: Option<String>,
}

fn serde_member(field: &syn::Field) -> SerdeMember {
    let mut member = SerdeMember {
        rename: None,
        skip_if: None,
    };
    for a in &field.attrs {
        if !a.path().is_ident("serde") {
            continue;
        }
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: syn::LitStr = meta.value()?.parse()?;
                member.rename = Some(s.value());
            } else if meta.path.is_ident("skip_serializing_if") {
                let s: syn::LitStr = meta.value()?.parse()?;
                member.skip_if = Some(s.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    member
}

/// typify gives an optional map or list a default and skips it when empty, which loses
/// the difference between `{}` and absent (`"roots": {}` declares a capability). Such
/// members become `Option`s instead.
struct OptionalCollections;

impl VisitMut for OptionalCollections {
    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        let SerdeMember { rename, skip_if } = serde_member(field);
        if !skip_if.is_some_and(|f| f.ends_with("is_empty")) {
            return;
        }
        field.attrs.retain(|a| !a.path().is_ident("serde"));
        let attr: syn::Attribute = match rename {
            Some(r) => {
                syn::parse_quote!(#[serde(rename = #r, default, skip_serializing_if = "::std::option::Option::is_none")])
            }
            None => {
                syn::parse_quote!(#[serde(default, skip_serializing_if = "::std::option::Option::is_none")])
            }
        };
        field.attrs.push(attr);
        let ty = &field.ty;
        field.ty = syn::parse_quote!(::std::option::Option<#ty>);
    }
}

/// `io.modelcontextprotocol/clientInfo` reads as `client_info`, not
/// `io_modelcontextprotocol_client_info`.
struct ProtocolFieldNames;

impl VisitMut for ProtocolFieldNames {
    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        if let Some(ident) = &field.ident {
            let name = ident.to_string();
            if let Some(short) = name.strip_prefix("io_modelcontextprotocol_") {
                field.ident = Some(format_ident!("{}", short));
            }
        }
    }
}

/// An optional member whose type is one of `types` holds it boxed. The request's
/// `_meta` object (about 1 KiB, most of it the client's capabilities) rides in every
/// request's params, which a server moves from the read into the handler: boxed, the
/// params of `tools/call` are a quarter of a kilobyte, and every move and every future
/// that holds them shrinks by the rest.
struct BoxedMembers<'a> {
    types: &'a [&'a str],
}

impl VisitMut for BoxedMembers<'_> {
    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        let syn::Type::Path(option) = &mut field.ty else {
            return;
        };
        let Some(last) = option.path.segments.last_mut() else {
            return;
        };
        if last.ident != "Option" {
            return;
        }
        let syn::PathArguments::AngleBracketed(args) = &mut last.arguments else {
            return;
        };
        let Some(syn::GenericArgument::Type(inner)) = args.args.first_mut() else {
            return;
        };
        if last_segment(inner).is_some_and(|name| self.types.contains(&name.as_str())) {
            *inner = syn::parse_quote!(::std::boxed::Box<#inner>);
        }
    }
}

fn last_segment(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Every struct with named members gets `new(required members...)`: optional members
/// start empty, constants take their only value and `resultType` its natural one.
fn add_constructors(file: &mut syn::File, defaulted: &BTreeSet<String>) {
    // Structs typify already gave a `Default` (those with no member of their own).
    let has_default: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(i)
                if i.trait_
                    .as_ref()
                    .and_then(|(_, path, _)| path.segments.last())
                    .is_some_and(|s| s.ident == "Default") =>
            {
                last_segment(&i.self_ty)
            }
            _ => None,
        })
        .collect();
    let mut impls: Vec<syn::Item> = Vec::new();
    for item in &file.items {
        let syn::Item::Struct(st) = item else {
            continue;
        };
        let syn::Fields::Named(fields) = &st.fields else {
            continue;
        };
        let name = &st.ident;
        let mut args = Vec::new();
        let mut inits = Vec::new();
        let mut arg_docs = Vec::new();
        for f in &fields.named {
            let Some(ident) = &f.ident else { continue };
            let ty = &f.ty;
            let last = last_segment(ty).unwrap_or_default();
            if last == "Option" || ident == "extra" || defaulted.contains(&last) {
                inits.push(quote!(#ident: ::std::default::Default::default()));
            } else if last == "ResultType" {
                let value = if name == "InputRequiredResult" {
                    quote!(ResultType::InputRequired)
                } else {
                    quote!(ResultType::Complete)
                };
                inits.push(quote!(#ident: #value));
            } else if last == "String" {
                args.push(quote!(#ident: impl ::std::convert::Into<::std::string::String>));
                inits.push(quote!(#ident: #ident.into()));
                arg_docs.push(ident.to_string());
            } else {
                args.push(quote!(#ident: #ty));
                inits.push(quote!(#ident));
                arg_docs.push(ident.to_string());
            }
        }
        let doc = if arg_docs.is_empty() {
            format!(" A `{name}` with every optional member empty.")
        } else {
            format!(
                " A `{name}` from its required members ({}); optional members start empty.",
                arg_docs
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let no_args = args.is_empty();
        impls.push(syn::parse_quote! {
            impl #name {
                #[doc = #doc]
                #[allow(clippy::too_many_arguments)]
                pub fn new(#(#args),*) -> Self {
                    Self { #(#inits),* }
                }
            }
        });
        if no_args && !has_default.contains(&name.to_string()) {
            impls.push(syn::parse_quote! {
                impl ::std::default::Default for #name {
                    fn default() -> Self {
                        Self::new()
                    }
                }
            });
        }
    }
    file.items.extend(impls);
}
