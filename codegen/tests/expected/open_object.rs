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
/// Named members are typed; the rest are kept.
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Item {
    /// The `labels` member.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub labels: ::std::option::Option<
        ::std::collections::BTreeMap<::std::string::String, ::std::string::String>,
    >,
    /// The `_meta` member.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "::std::option::Option::is_none"
    )]
    pub meta: ::std::option::Option<Meta>,
    /// The `name` member.
    pub name: ::std::string::String,
    /// The `tags` member.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub tags: ::std::option::Option<::std::vec::Vec<::std::string::String>>,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
/// Anything goes.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
#[serde(transparent)]
pub struct Meta(
    /// The wrapped value.
    pub ::serde_json::Map<::std::string::String, ::serde_json::Value>,
);
impl ::std::ops::Deref for Meta {
    type Target = ::serde_json::Map<::std::string::String, ::serde_json::Value>;
    fn deref(&self) -> &::serde_json::Map<::std::string::String, ::serde_json::Value> {
        &self.0
    }
}
impl ::std::convert::From<Meta>
for ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    fn from(value: Meta) -> Self {
        value.0
    }
}
impl ::std::convert::From<::serde_json::Map<::std::string::String, ::serde_json::Value>>
for Meta {
    fn from(
        value: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
    ) -> Self {
        Self(value)
    }
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
pub const __DEFINITIONS: &[&str] = &["Item", "Meta"];
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
            "Item" => roundtrip::<Item>(value),
            "Meta" => roundtrip::<Meta>(value),
            _ => return None,
        },
    )
}
impl Item {
    /// A `Item` from its required members (`name`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: impl ::std::convert::Into<::std::string::String>) -> Self {
        Self {
            labels: ::std::default::Default::default(),
            meta: ::std::default::Default::default(),
            name: name.into(),
            tags: ::std::default::Default::default(),
            extra: ::std::default::Default::default(),
        }
    }
}
crate::rpc::open_struct!(
    Item { labels : ::std::option::Option < ::std::collections::BTreeMap <
    ::std::string::String, ::std::string::String > > = "labels" default, meta :
    ::std::option::Option < Meta > = "_meta" default, name : ::std::string::String =
    "name" required, tags : ::std::option::Option < ::std::vec::Vec <
    ::std::string::String > > = "tags" default }
);
