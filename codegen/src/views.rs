//! What the method table lets a server read from a request's typed params without
//! knowing the method: the retry view (`requestState`, the target, the arguments) on
//! each marker, and where client requests keep their `_meta`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::prepare::{Prepared, rust_name};
use crate::rows::{Direction, Method};
use crate::schema::{self, Defs};

/// The property names of a request's params, when the request requires params that
/// are a named object definition (the Rust type is then that struct, not an `Option`).
pub(crate) fn required_params_members(p: &Prepared, request: &Value) -> Vec<String> {
    let Some(params) = schema::properties(request).and_then(|props| props.get("params")) else {
        return Vec::new();
    };
    if Defs::ref_name(params).is_none() || !schema::required(request).iter().any(|r| r == "params")
    {
        return Vec::new();
    }
    schema::properties(p.original.resolve(params))
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// The params struct of a request and the definition its `_meta` member refers to.
pub(crate) fn params_meta(p: &Prepared, request: &Value) -> Option<(String, String)> {
    let params = schema::properties(request)?.get("params")?;
    let name = Defs::ref_name(params)?;
    let meta = schema::properties(p.original.resolve(params))?.get("_meta")?;
    Some((rust_name(name), rust_name(Defs::ref_name(meta)?)))
}

/// The one definition every client request's params keep their `_meta` in (2026-07-28:
/// `RequestMetaObject`), if there is one.
pub(crate) fn request_meta(methods: &[Method]) -> Option<&str> {
    let mut client = methods
        .iter()
        .filter(|m| m.directions.contains(&Direction::ClientRequest))
        .map(|m| m.params_meta.as_ref().map(|(_, meta)| meta.as_str()));
    let first = client.next()??;
    client.all(|meta| meta == Some(first)).then_some(first)
}

/// The core module an extension's module builds on: its name, and whether it defines a
/// type.
pub(crate) type Core<'a> = (&'a str, &'a dyn Fn(&str) -> bool);

/// When every client request's params keep their `_meta` in one definition,
/// `ClientRequestParams` says where, for a server that reads the params once and takes
/// the metadata from them. Nothing for other versions. The member is boxed (see
/// `passes::BoxedMembers`).
///
/// An extension's module (`base`: the core module it builds on, and whether that
/// module defines a type) implements the core's trait for its own params instead, so
/// the core's server routes its methods like the core's.
pub(crate) fn client_request_params(methods: &[Method], base: Option<Core<'_>>) -> TokenStream {
    let Some(meta) = request_meta(methods) else {
        return TokenStream::new();
    };
    let client: Vec<&Method> = methods
        .iter()
        .filter(|m| m.directions.contains(&Direction::ClientRequest))
        .collect();
    let meta = format_ident!("{meta}");
    let mut structs: Vec<&str> = client
        .iter()
        .filter_map(|m| m.params_meta.as_ref().map(|(s, _)| s.as_str()))
        .collect();
    structs.sort_unstable();
    structs.dedup();
    if let Some((_, defines)) = base {
        structs.retain(|s| !defines(s));
    }
    let trait_path = match base {
        Some((module, _)) => {
            let module = format_ident!("{module}");
            quote!(crate::#module::method::ClientRequestParams)
        }
        None => quote!(ClientRequestParams),
    };
    let impls = structs.iter().map(|s| {
        let s = format_ident!("{s}");
        quote! {
            impl #trait_path for super::#s {
                fn request_meta(&self) -> ::std::option::Option<&super::#meta> {
                    self.meta.as_deref()
                }
                fn request_meta_slot(
                    &mut self,
                ) -> ::std::option::Option<&mut ::std::option::Option<::std::boxed::Box<super::#meta>>> {
                    ::std::option::Option::Some(&mut self.meta)
                }
            }
        }
    });
    if base.is_some() {
        return quote!(#(#impls)*);
    }
    quote! {
        /// A client request's params, as a server reads them: where their `_meta` is.
        pub trait ClientRequestParams {
            /// The request's `_meta`, when it carries one.
            fn request_meta(&self) -> ::std::option::Option<&super::#meta>;
            /// Where the request's `_meta` is kept: a server moves what it keeps for the
            /// handler's context out of it rather than copying it, and puts back a
            /// `_meta` it read before instead of reading the same text again. `None`
            /// when the params themselves are absent.
            fn request_meta_slot(
                &mut self,
            ) -> ::std::option::Option<&mut ::std::option::Option<::std::boxed::Box<super::#meta>>>;
        }
        impl<T: ClientRequestParams> ClientRequestParams for ::std::option::Option<T> {
            fn request_meta(&self) -> ::std::option::Option<&super::#meta> {
                self.as_ref()?.request_meta()
            }
            fn request_meta_slot(
                &mut self,
            ) -> ::std::option::Option<&mut ::std::option::Option<::std::boxed::Box<super::#meta>>> {
                self.as_mut()?.request_meta_slot()
            }
        }
        #(#impls)*
    }
}

/// How a retry of a method that may ask for input writes its round into the params:
/// the answers and the echoed state, each into its member when the params have it.
pub(crate) fn set_round(m: &Method) -> TokenStream {
    let has = |member: &str| m.params_members.iter().any(|x| x == member);
    let responses = if has("inputResponses") {
        quote!(params.input_responses = responses;)
    } else {
        quote!(let _ = responses;)
    };
    let state = if has("requestState") {
        quote!(params.request_state = state;)
    } else {
        quote!(let _ = state;)
    };
    quote! {
        fn set_round(
            params: &mut Self::Params,
            responses: ::std::option::Option<Self::InputResponses>,
            state: ::std::option::Option<::std::string::String>,
        ) {
            #responses
            #state
        }
    }
}

/// The retry view's accessors for one request marker: `requestState` (read and
/// replaced), the target member and `arguments`, each emitted only when the params
/// struct has that member; the trait's defaults answer `None` for the rest.
pub(crate) fn retry_view(m: &Method) -> TokenStream {
    let has = |member: &str| m.params_members.iter().any(|x| x == member);
    let mut out = TokenStream::new();
    if m.may_require_input() && has("requestState") {
        out.extend(quote! {
            fn request_state(params: &Self::Params) -> ::std::option::Option<&str> {
                params.request_state.as_deref()
            }
            fn set_request_state(
                params: &mut Self::Params,
                state: ::std::string::String,
            ) -> ::std::option::Option<::std::string::String> {
                params.request_state.replace(state)
            }
        });
    }
    if let Some(target) = m.target.as_deref().filter(|t| has(t)) {
        let field = format_ident!("{}", heck::ToSnakeCase::to_snake_case(target));
        out.extend(quote! {
            fn target(params: &Self::Params) -> ::std::option::Option<&str> {
                ::std::option::Option::Some(params.#field.as_str())
            }
        });
    }
    if m.target.is_some() && has("arguments") {
        out.extend(quote! {
            fn arguments(
                params: &Self::Params,
            ) -> ::std::option::Option<::std::borrow::Cow<'_, ::serde_json::value::RawValue>> {
                params.arguments.as_ref().map(crate::rpc::ArgumentsText::arguments_text)
            }
        });
    }
    out
}
