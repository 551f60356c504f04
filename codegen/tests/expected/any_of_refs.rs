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
/// `BlobBody`
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct BlobBody {
    /// The `blob` member.
    pub blob: ::std::string::String,
    /// The `uri` member.
    pub uri: ::std::string::String,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
/// `TextBody`
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct TextBody {
    /// The `text` member.
    pub text: ::std::string::String,
    /// The `uri` member.
    pub uri: ::std::string::String,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
crate::rpc::const_strs! {}
/// No tag: the required member tells the variants apart.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A `TextBody`.
    Text(TextBody),
    /// A `BlobBody`.
    Blob(BlobBody),
}
impl ::serde::Serialize for Body {
    fn serialize<S: ::serde::Serializer>(
        &self,
        serializer: S,
    ) -> ::std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Text(v) => ::serde::Serialize::serialize(v, serializer),
            Self::Blob(v) => ::serde::Serialize::serialize(v, serializer),
        }
    }
}
impl ::std::convert::From<TextBody> for Body {
    fn from(v: TextBody) -> Self {
        Self::Text(v)
    }
}
impl ::std::convert::From<BlobBody> for Body {
    fn from(v: BlobBody) -> Self {
        Self::Blob(v)
    }
}
impl<'de> ::serde::Deserialize<'de> for Body {
    fn deserialize<D: ::serde::Deserializer<'de>>(
        deserializer: D,
    ) -> ::std::result::Result<Self, D::Error> {
        let buffered = crate::rpc::buffer(deserializer)?;
        let value = buffered.get();
        let [member_0, member_1] = crate::rpc::members(value, ["text", "blob"]);
        if member_0.is_some() {
            return crate::rpc::variant_of::<D, TextBody>(value).map(Self::Text);
        }
        if member_1.is_some() {
            return crate::rpc::variant_of::<D, BlobBody>(value).map(Self::Blob);
        }
        Err(
            ::serde::de::Error::custom(crate::rpc::DecodeError::NoVariant {
                kind: "Body",
            }),
        )
    }
}
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
pub const __DEFINITIONS: &[&str] = &["BlobBody", "Body", "TextBody"];
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
            "BlobBody" => roundtrip::<BlobBody>(value),
            "Body" => roundtrip::<Body>(value),
            "TextBody" => roundtrip::<TextBody>(value),
            _ => return None,
        },
    )
}
impl BlobBody {
    /// A `BlobBody` from its required members (`blob`, `uri`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        blob: impl ::std::convert::Into<::std::string::String>,
        uri: impl ::std::convert::Into<::std::string::String>,
    ) -> Self {
        Self {
            blob: blob.into(),
            uri: uri.into(),
            extra: ::std::default::Default::default(),
        }
    }
}
impl TextBody {
    /// A `TextBody` from its required members (`text`, `uri`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        text: impl ::std::convert::Into<::std::string::String>,
        uri: impl ::std::convert::Into<::std::string::String>,
    ) -> Self {
        Self {
            text: text.into(),
            uri: uri.into(),
            extra: ::std::default::Default::default(),
        }
    }
}
crate::rpc::open_struct!(
    BlobBody { blob : ::std::string::String = "blob" required, uri :
    ::std::string::String = "uri" required }
);
crate::rpc::open_struct!(
    TextBody { text : ::std::string::String = "text" required, uri :
    ::std::string::String = "uri" required }
);
