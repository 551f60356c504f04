//! MCP protocol version fixture: every type of its schema, the method markers and the unions.
#![allow(
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]
/// Error types.
pub mod error {
    /// Error from a `TryFrom` or `FromStr` implementation.
    pub struct ConversionError(
        /// The wrapped value.
        ::std::borrow::Cow<'static, str>,
    );
    impl ::std::error::Error for ConversionError {}
    impl ::std::fmt::Display for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Display::fmt(&self.0, f)
        }
    }
    impl ::std::fmt::Debug for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Debug::fmt(&self.0, f)
        }
    }
    impl From<&'static str> for ConversionError {
        fn from(value: &'static str) -> Self {
            Self(value.into())
        }
    }
    impl From<String> for ConversionError {
        fn from(value: String) -> Self {
            Self(value.into())
        }
    }
}
/// A tree node.
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Node {
    /// The `children` member.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub children: ::std::option::Option<::std::vec::Vec<Node>>,
    /// The `label` member.
    pub label: ::std::string::String,
    /// The `parent` member.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub parent: ::std::option::Option<::std::boxed::Box<Node>>,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
crate::rpc::const_strs! {}
/// One uninhabited marker type per protocol method, naming its parameters and
/// result through [`crate::rpc::Request`] or [`crate::rpc::Notification`].
pub mod method {
    /// Every method of this version, requests and notifications, in schema order.
    pub const ALL: &[crate::rpc::MethodInfo] = &[];
    /// What this version says about `method`, if it defines it.
    pub fn info(method: &str) -> ::std::option::Option<&'static crate::rpc::MethodInfo> {
        ALL.iter().find(|m| m.method == method)
    }
    /// Calls `visitor` with the request marker whose [`crate::rpc::Request::METHOD`]
    /// is `method`; `None` when this version has no such request.
    pub fn visit_request<V: crate::rpc::RequestVisitor>(
        method: &str,
        visitor: V,
    ) -> ::std::option::Option<V::Output> {
        match method {
            _ => {
                let _ = visitor;
                ::std::option::Option::None
            }
        }
    }
}
/// Schema definition names that have a Rust type in this module.
#[doc(hidden)]
pub const __DEFINITIONS: &[&str] = &["Node"];
/// Decodes `value` as the type of schema definition `name` and encodes it again.
#[doc(hidden)]
pub fn __roundtrip(
    name: &str,
    value: ::serde_json::Value,
) -> ::std::option::Option<
    ::std::result::Result<::serde_json::Value, ::serde_json::Error>,
> {
    fn roundtrip<T: ::serde::Serialize + ::serde::de::DeserializeOwned>(
        value: ::serde_json::Value,
    ) -> ::std::result::Result<::serde_json::Value, ::serde_json::Error> {
        let typed: T = ::serde_json::from_value(value)?;
        ::serde_json::to_value(&typed)
    }
    Some(
        match name {
            "Node" => roundtrip::<Node>(value),
            _ => return None,
        },
    )
}
impl Node {
    /// A `Node` from its required members (`label`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(label: impl ::std::convert::Into<::std::string::String>) -> Self {
        Self {
            children: ::std::default::Default::default(),
            label: label.into(),
            parent: ::std::default::Default::default(),
            extra: ::std::default::Default::default(),
        }
    }
}
crate::rpc::open_struct!(
    Node { children : ::std::option::Option < ::std::vec::Vec < Node > > = "children"
    default, label : ::std::string::String = "label" required, parent :
    ::std::option::Option < ::std::boxed::Box < Node > > = "parent" default }
);
