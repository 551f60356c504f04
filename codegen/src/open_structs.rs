//! Open structs (those keeping unknown members in `extra`) read without serde's
//! `flatten`: derived, `flatten` buffers every member into an owned tree and reads the
//! struct back out of it, a tree per object on every parse. This pass replaces the
//! derived `Deserialize` of such a struct with one that reads each member once, straight
//! from the input, the unknown ones into `extra`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The member that keeps unknown members.
const EXTRA: &str = "extra";

/// One named field: how it reads and what it is called on the wire.
struct Member {
    ident: syn::Ident,
    ty: syn::Type,
    wire: String,
    /// Absent means its default (an `Option`, or `#[serde(default)]`).
    defaulted: bool,
}

/// Replaces the derived `Deserialize` of every open struct in `file`.
pub(crate) fn run(file: &mut syn::File) {
    let mut impls = Vec::new();
    for item in &mut file.items {
        let syn::Item::Struct(st) = item else {
            continue;
        };
        let Some(members) = open_members(st) else {
            continue;
        };
        if !drop_derived_deserialize(st) {
            continue;
        }
        impls.push(deserialize_impl(&st.ident, &members));
    }
    for tokens in impls {
        if let Ok(item) = syn::parse2::<syn::Item>(tokens) {
            file.items.push(item);
        }
    }
}

/// The members of a struct with a flattened `extra`, that member itself left out; `None`
/// for any other struct, or one with serde attributes this pass does not know.
fn open_members(st: &mut syn::ItemStruct) -> Option<Vec<Member>> {
    let syn::Fields::Named(fields) = &mut st.fields else {
        return None;
    };
    let mut members = Vec::new();
    let mut open = false;
    for field in fields.named.iter_mut() {
        let ident = field.ident.clone()?;
        let attrs = serde_attrs(field)?;
        if ident == EXTRA && attrs.flatten {
            open = true;
            continue;
        }
        if attrs.flatten {
            return None;
        }
        let is_option = matches!(&field.ty, syn::Type::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
        members.push(Member {
            wire: attrs.rename.unwrap_or_else(|| ident.to_string()),
            defaulted: attrs.default || is_option,
            ty: field.ty.clone(),
            ident,
        });
    }
    open.then_some(members)
}

#[derive(Default)]
struct SerdeAttrs {
    rename: Option<String>,
    default: bool,
    flatten: bool,
}

/// The field's serde attributes; `None` when one is not `rename`, `default`, `flatten`
/// or `skip_serializing_if` (which only serializing reads).
fn serde_attrs(field: &syn::Field) -> Option<SerdeAttrs> {
    let mut attrs = SerdeAttrs::default();
    let mut known = true;
    for a in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let parsed = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: syn::LitStr = meta.value()?.parse()?;
                attrs.rename = Some(s.value());
            } else if meta.path.is_ident("default") && !meta.input.peek(syn::Token![=]) {
                attrs.default = true;
            } else if meta.path.is_ident("flatten") {
                attrs.flatten = true;
            } else if meta.path.is_ident("skip_serializing_if") {
                let _: syn::LitStr = meta.value()?.parse()?;
            } else {
                known = false;
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if parsed.is_err() {
            return None;
        }
    }
    known.then_some(attrs)
}

/// Removes `Deserialize` from the struct's derives; false when it derived none.
fn drop_derived_deserialize(st: &mut syn::ItemStruct) -> bool {
    let mut dropped = false;
    for attr in st.attrs.iter_mut().filter(|a| a.path().is_ident("derive")) {
        let Ok(paths) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            continue;
        };
        let kept: Vec<&syn::Path> = paths
            .iter()
            .filter(|p| p.segments.last().is_none_or(|s| s.ident != "Deserialize"))
            .collect();
        if kept.len() < paths.len() {
            dropped = true;
            *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
        }
    }
    dropped
}

/// One `open_struct!` line for the struct: the macro (in `rpc.rs`) writes the impl, so
/// the generated file says what is read, not how.
fn deserialize_impl(name: &syn::Ident, members: &[Member]) -> TokenStream {
    let fields = members.iter().map(|m| {
        let ident = &m.ident;
        let ty = &m.ty;
        let wire = &m.wire;
        let mode = if m.defaulted {
            format_ident!("default")
        } else {
            format_ident!("required")
        };
        quote!(#ident: #ty = #wire #mode)
    });
    quote! {
        crate::rpc::open_struct!(#name { #(#fields),* });
    }
}
