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
/// A problem whose code is pinned.
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct NotFound {
    /// The `code` member.
    pub code: NotFoundCode,
    /// The `message` member.
    pub message: ::std::string::String,
    /// The `uri` member.
    pub uri: ::std::string::String,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
/// `Problem`
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Problem {
    /// The `code` member.
    pub code: i64,
    /// The `message` member.
    pub message: ::std::string::String,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
crate::rpc::const_strs! {}
/// The error code `-32002`.
pub type NotFoundCode = crate::rpc::ErrorCode<{ -32002 }>;
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
pub const __DEFINITIONS: &[&str] = &["NotFound", "Problem"];
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
            "NotFound" => roundtrip::<NotFound>(value),
            "Problem" => roundtrip::<Problem>(value),
            _ => return None,
        },
    )
}
impl NotFound {
    /// A `NotFound` from its required members (`message`, `uri`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        message: impl ::std::convert::Into<::std::string::String>,
        uri: impl ::std::convert::Into<::std::string::String>,
    ) -> Self {
        Self {
            code: ::std::default::Default::default(),
            message: message.into(),
            uri: uri.into(),
            extra: ::std::default::Default::default(),
        }
    }
}
impl Problem {
    /// A `Problem` from its required members (`code`, `message`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        code: i64,
        message: impl ::std::convert::Into<::std::string::String>,
    ) -> Self {
        Self {
            code,
            message: message.into(),
            extra: ::std::default::Default::default(),
        }
    }
}
crate::rpc::open_struct!(
    NotFound { code : NotFoundCode = "code" required, message : ::std::string::String =
    "message" required, uri : ::std::string::String = "uri" required }
);
crate::rpc::open_struct!(
    Problem { code : i64 = "code" required, message : ::std::string::String = "message"
    required }
);
