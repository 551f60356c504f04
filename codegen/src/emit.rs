//! Emits what the generator writes itself: constant types, unions, outcomes and the
//! per-version support types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::prepare::{Check, Prepared, Union};
use crate::{Error, Result};

pub(crate) fn parse_type(version: &str, ty: &str) -> Result<syn::Type> {
    syn::parse_str::<syn::Type>(ty).map_err(|e| Error::Schema {
        version: version.to_owned(),
        definition: ty.to_owned(),
        message: format!("not a Rust type: {e}"),
    })
}

pub(crate) fn doc_attr(text: &str) -> TokenStream {
    let lines: Vec<TokenStream> = text
        .lines()
        .map(|l| {
            let l = format!(" {l}");
            quote!(#[doc = #l])
        })
        .collect();
    quote!(#(#lines)*)
}

pub(crate) fn consts(p: &Prepared) -> TokenStream {
    let names = p.consts.iter().map(|c| format_ident!("{}", c.name));
    let values = p.consts.iter().map(|c| &c.value);
    let members = p.consts.iter().map(|c| &c.property);
    let strs = quote! {
        crate::rpc::const_strs! {
            #(#names = #values in #members),*
        }
    };
    let codes = p.codes.iter().map(|c| {
        let name = format_ident!("{}", c.name);
        let value = proc_macro2::Literal::i64_unsuffixed(c.value.abs());
        let value = if c.value < 0 {
            quote!({ -#value })
        } else {
            quote!(#value)
        };
        let doc = doc_attr(&format!("The error code `{}`.", c.value));
        quote! {
            #doc
            pub type #name = crate::rpc::ErrorCode<#value>;
        }
    });
    quote!(#strs #(#codes)*)
}

/// The member texts a union's checks read, each found once: every top-level member
/// named by a check in one scan of the union's text (`value`), a nested one in a scan
/// of its parent's.
struct Probes(Vec<Vec<String>>);

impl Probes {
    fn of(u: &Union) -> Self {
        let mut paths: Vec<Vec<String>> = Vec::new();
        let mut add = |path: &Vec<String>| {
            for depth in 1..=path.len() {
                let prefix = path[..depth].to_vec();
                if !paths.contains(&prefix) {
                    paths.push(prefix);
                }
            }
        };
        for check in u.variants.iter().flat_map(|v| &v.checks) {
            if let Check::OneOf(p, _) | Check::OneOfOrMissing(p, _) | Check::Has(p) = check {
                add(p);
            }
        }
        Self(paths)
    }

    fn ident(&self, path: &[String]) -> proc_macro2::Ident {
        let at = self.0.iter().position(|p| p == path).unwrap_or_default();
        format_ident!("member_{at}")
    }

    /// The `let`s that find the members.
    fn lets(&self) -> TokenStream {
        let top: Vec<&Vec<String>> = self.0.iter().filter(|p| p.len() == 1).collect();
        let mut out = TokenStream::new();
        if !top.is_empty() {
            let idents = top.iter().map(|p| self.ident(p));
            let keys = top.iter().map(|p| p[0].as_str());
            out.extend(quote!(let [#(#idents),*] = crate::rpc::members(value, [#(#keys),*]);));
        }
        for path in self.0.iter().filter(|p| p.len() > 1) {
            let id = self.ident(path);
            let parent = self.ident(&path[..path.len() - 1]);
            let key = path[path.len() - 1].as_str();
            out.extend(quote!(let #id = #parent.and_then(|t| crate::rpc::members(t, [#key])[0]);));
        }
        out
    }
}

/// A check on a union's buffered text (`value`, a `&str`), through the member texts
/// `probes` found: no tree is built.
fn check_expr(check: &Check, probes: &Probes) -> TokenStream {
    match check {
        Check::OneOf(p, values) => {
            let id = probes.ident(p);
            quote!(matches!(#id.and_then(crate::rpc::as_str).as_deref(), Some(#(#values)|*)))
        }
        Check::OneOfOrMissing(p, values) => {
            let id = probes.ident(p);
            quote!(match #id {
                None => true,
                Some(v) => matches!(crate::rpc::as_str(v).as_deref(), Some(#(#values)|*)),
            })
        }
        Check::Has(p) => {
            let id = probes.ident(p);
            quote!(#id.is_some())
        }
        Check::IsArray => quote!(value.starts_with('[')),
        Check::IsObject => quote!(value.starts_with('{')),
        Check::IsString(s) => quote!(crate::rpc::as_str(value).as_deref() == Some(#s)),
    }
}

pub(crate) fn union(p: &Prepared, u: &Union) -> Result<TokenStream> {
    let name = format_ident!("{}", crate::prepare::rust_name(&u.name));
    let kind = crate::prepare::rust_name(&u.name);
    let doc = doc_attr(u.description.as_deref().unwrap_or(&format!(
        "One of the `{}` variants, chosen by its discriminating members.",
        u.name
    )));
    let mut variants = Vec::new();
    let mut ser_arms = Vec::new();
    let mut from_impls = Vec::new();
    for v in &u.variants {
        let vn = format_ident!("{}", v.name);
        let ty = parse_type(&p.version, &v.ty)?;
        let vdoc = doc_attr(&format!(
            "A `{}`.",
            v.ty.rsplit("::").next().unwrap_or(&v.ty)
        ));
        variants.push(quote!(#vdoc #vn(#ty)));
        ser_arms.push(quote!(Self::#vn(v) => ::serde::Serialize::serialize(v, serializer)));
        from_impls.push(quote! {
            impl ::std::convert::From<#ty> for #name {
                fn from(v: #ty) -> Self { Self::#vn(v) }
            }
        });
    }
    let header = quote! {
        #doc
        #[derive(Clone, Debug, PartialEq)]
        pub enum #name { #(#variants,)* }
        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                match self { #(#ser_arms,)* }
            }
        }
        #(#from_impls)*
    };
    if u.name == "InputResponse" {
        return input_response(p, u, header);
    }

    let probes = Probes::of(u);
    let mut tries = Vec::new();
    for v in &u.variants {
        let vn = format_ident!("{}", v.name);
        let ty = parse_type(&p.version, &v.ty)?;
        let checks: Vec<TokenStream> = v.checks.iter().map(|c| check_expr(c, &probes)).collect();
        let cond = if checks.is_empty() {
            quote!(true)
        } else {
            quote!(#(#checks)&&*)
        };
        tries.push(quote! {
            if #cond {
                return crate::rpc::variant_of::<D, #ty>(value).map(Self::#vn);
            }
        });
    }
    let fallback = match &u.tag {
        Some((field, values)) => quote! {
            const EXPECTED: &[&str] = &[#(#values),*];
            match crate::rpc::members(value, [#field])[0].and_then(crate::rpc::as_str) {
                Some(v) if !EXPECTED.contains(&v.as_ref()) => Err(::serde::de::Error::custom(crate::rpc::DecodeError::UnknownTag {
                    kind: #kind,
                    field: #field,
                    value: v.into_owned(),
                    expected: EXPECTED,
                })),
                None if !value.starts_with('{') => Err(::serde::de::Error::custom(format_args!("{} must be a JSON object", #kind))),
                None => Err(::serde::de::Error::custom(format_args!("{} is missing its `{}` member", #kind, #field))),
                Some(_) => Err(::serde::de::Error::custom(crate::rpc::DecodeError::NoVariant { kind: #kind })),
            }
        },
        None => quote! {
            Err(::serde::de::Error::custom(crate::rpc::DecodeError::NoVariant { kind: #kind }))
        },
    };
    let lets = probes.lets();
    let method_fn = method_fn(p, u, &name)?;
    if let Some(dispatch) = tag_match(p, u, &kind)? {
        let field = u.tag.as_ref().map(|(f, _)| f.clone()).unwrap_or_default();
        return Ok(quote! {
            #header
            impl crate::rpc::TaggedUnion for #name {
                const TAG: &'static str = #field;
                fn variant<'de, X: ::serde::Deserializer<'de>>(
                    tag: ::std::option::Option<&str>,
                    deserializer: X,
                ) -> ::std::result::Result<Self, X::Error> {
                    #dispatch
                }
            }
            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                    crate::rpc::tagged(deserializer)
                }
            }
            #method_fn
        });
    }
    Ok(quote! {
        #header
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                // The value's text (borrowed from the input when it can be), its
                // members found by scanning it: no tree is built.
                let buffered = crate::rpc::buffer(deserializer)?;
                let value = buffered.get();
                #lets
                #(#tries)*
                #fallback
            }
        }
        #method_fn
    })
}

/// A union whose variants each differ only by the value of one member is decoded with a
/// `match` on that member.
fn tag_match(p: &Prepared, u: &Union, kind: &str) -> Result<Option<TokenStream>> {
    let Some((field, values)) = &u.tag else {
        return Ok(None);
    };
    let mut arms = Vec::new();
    let mut missing = None;
    for v in &u.variants {
        let (values_of_v, optional) = match v.checks.as_slice() {
            [Check::OneOf(path, vals)] if path.len() == 1 && &path[0] == field => (vals, false),
            [Check::OneOfOrMissing(path, vals)] if path.len() == 1 && &path[0] == field => {
                (vals, true)
            }
            _ => return Ok(None),
        };
        let vn = format_ident!("{}", v.name);
        let ty = parse_type(&p.version, &v.ty)?;
        arms.push(
            quote!(Some(#(#values_of_v)|*) => <#ty as ::serde::Deserialize>::deserialize(deserializer).map(Self::#vn)),
        );
        if optional {
            missing = Some(
                quote!(None => <#ty as ::serde::Deserialize>::deserialize(deserializer).map(Self::#vn)),
            );
        }
    }
    let missing = missing.unwrap_or_else(|| {
        quote!(None => Err(::serde::de::Error::custom(format_args!("{} is missing its `{}` member", #kind, #field))))
    });
    Ok(Some(quote! {
        const EXPECTED: &[&str] = &[#(#values),*];
        match tag {
            #(#arms,)*
            #missing,
            Some(other) => Err(::serde::de::Error::custom(crate::rpc::DecodeError::UnknownTag {
                kind: #kind,
                field: #field,
                value: other.to_owned(),
                expected: EXPECTED,
            })),
        }
    }))
}

/// Unions tagged by `method` say which method each value is.
fn method_fn(p: &Prepared, u: &Union, name: &syn::Ident) -> Result<TokenStream> {
    let Some((field, _)) = &u.tag else {
        return Ok(quote!());
    };
    if field != "method" {
        return Ok(quote!());
    }
    let mut arms = Vec::new();
    for v in &u.variants {
        let vn = format_ident!("{}", v.name);
        let method = v.checks.iter().find_map(|c| match c {
            Check::OneOf(path, values)
                if path.len() == 1 && path[0] == "method" && values.len() == 1 =>
            {
                Some(values[0].clone())
            }
            _ => None,
        });
        let Some(method) = method else {
            return Err(Error::Schema {
                version: p.version.clone(),
                definition: u.name.clone(),
                message: format!("variant {} has no single method", v.name),
            });
        };
        arms.push(quote!(Self::#vn(_) => #method));
    }
    Ok(quote! {
        impl #name {
            /// The JSON-RPC method of this value.
            pub fn method(&self) -> &'static str {
                match self { #(#arms,)* }
            }
        }
    })
}

/// `InputResponse` is decoded by the method of the request it answers.
fn input_response(p: &Prepared, u: &Union, header: TokenStream) -> Result<TokenStream> {
    let requests = p
        .unions
        .iter()
        .find(|r| r.name == "InputRequest")
        .ok_or_else(|| Error::Schema {
            version: p.version.clone(),
            definition: u.name.clone(),
            message: "InputResponse needs InputRequest".into(),
        })?;
    let mut arms = Vec::new();
    for v in &u.variants {
        let vn = format_ident!("{}", v.name);
        let ty = parse_type(&p.version, &v.ty)?;
        let method = requests
            .variants
            .iter()
            .find(|r| r.name == v.name)
            .and_then(|r| {
                r.checks.iter().find_map(|c| match c {
                    Check::OneOf(path, values) if path[0] == "method" => values.first().cloned(),
                    _ => None,
                })
            })
            .ok_or_else(|| Error::Schema {
                version: p.version.clone(),
                definition: u.name.clone(),
                message: format!("no input request answers to {}", v.name),
            })?;
        arms.push(quote!(#method => <#ty as ::serde::Deserialize>::deserialize(value).map(Self::#vn).map_err(crate::rpc::DecodeError::Json)));
    }
    let name = format_ident!("{}", u.name);
    Ok(quote! {
        #header
        impl #name {
            /// Decodes the answer to a request of `method` (an [`InputRequest`]'s method)
            /// from `value`: a `&serde_json::Value`, a `&RawValue`, or a JSON reader.
            pub fn decode_for<'de, D>(method: &str, value: D) -> ::std::result::Result<Self, crate::rpc::DecodeError>
            where
                D: ::serde::Deserializer<'de, Error = ::serde_json::Error>,
            {
                match method {
                    #(#arms,)*
                    other => Err(crate::rpc::DecodeError::UnknownMethod { kind: "InputResponse", method: other.to_owned() }),
                }
            }
        }
    })
}

pub(crate) fn outcomes(p: &Prepared) -> Result<TokenStream> {
    if !p.has_input_required {
        return Ok(quote!());
    }
    let template: TokenStream = include_str!("templates/outcome.rs")
        .parse()
        .map_err(|e| Error::Template(format!("outcome: {e}")))?;
    let aliases = p
        .outcomes
        .iter()
        .map(|o| {
            let name = format_ident!("{}", o.name);
            let complete = parse_type(&p.version, &o.complete)?;
            let doc = doc_attr(&format!(
                "A [`{}`], or an [`InputRequiredResult`] asking for input first.",
                o.complete
            ));
            Ok(quote! {
                #doc
                pub type #name = Outcome<#complete>;
                impl ::std::convert::From<#complete> for Outcome<#complete> {
                    fn from(r: #complete) -> Self {
                        Self::Complete(r)
                    }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(quote!(#template #(#aliases)*))
}

pub(crate) fn support(p: &Prepared) -> Result<TokenStream> {
    let mut out = TokenStream::new();
    let mut add = |name: &str, src: &str| -> Result<()> {
        let t: TokenStream = src
            .parse()
            .map_err(|e| Error::Template(format!("{name}: {e}")))?;
        out.extend(t);
        Ok(())
    };
    if p.replacements.contains_key("ResultType") {
        add("result_type", include_str!("templates/result_type.rs"))?;
    }
    if p.replacements.contains_key("ElicitValue") {
        add("elicit_value", include_str!("templates/elicit_value.rs"))?;
    }
    if p.has_input_responses {
        add(
            "input_responses",
            include_str!("templates/input_responses.rs"),
        )?;
    }
    if p.has_tool_arguments {
        add(
            "tool_arguments",
            include_str!("templates/tool_arguments.rs"),
        )?;
    }
    Ok(out)
}

/// A hidden function mapping each schema definition name to its Rust type, for the
/// example round-trip test.
pub(crate) fn registry(p: &Prepared) -> Result<TokenStream> {
    let mut arms = Vec::new();
    for (schema_name, rust) in &p.rust_names {
        // An input response alone cannot be decoded: its request's method decides.
        if schema_name == "InputResponse" {
            continue;
        }
        let renamed = p
            .original
            .map
            .keys()
            .find(|k| crate::prepare::rust_name(k) == *rust)
            .cloned()
            .unwrap_or_else(|| rust.clone());
        let ty = match p.replacements.get(&crate::prepare::rust_name(&renamed)) {
            Some(r) if !p.unions.iter().any(|u| u.name == renamed) => r.clone(),
            _ => rust.clone(),
        };
        let ty = parse_type(&p.version, &ty)?;
        arms.push(quote!(#schema_name => roundtrip::<#ty>(value)));
    }
    let names: Vec<&String> = p
        .rust_names
        .keys()
        .filter(|n| *n != "InputResponse")
        .collect();
    let fname = format_ident!("__roundtrip");
    Ok(quote! {
        /// Schema definition names that have a Rust type in this module.
        #[doc(hidden)]
        pub const __DEFINITIONS: &[&str] = &[#(#names),*];

        /// Decodes `value` as the type of schema definition `name` and encodes it again.
        #[doc(hidden)]
        pub fn #fname(name: &str, value: ::serde_json::Value) -> ::std::option::Option<::std::result::Result<::serde_json::Value, ::serde_json::Error>> {
            fn roundtrip<T: ::serde::Serialize + ::serde::de::DeserializeOwned>(value: ::serde_json::Value) -> ::std::result::Result<::serde_json::Value, ::serde_json::Error> {
                let typed: T = ::serde_json::from_value(value)?;
                ::serde_json::to_value(&typed)
            }
            Some(match name {
                #(#arms,)*
                _ => return None,
            })
        }
    })
}
