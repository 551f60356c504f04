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
/// A circle.
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Circle {
    /// The `type` member.
    #[serde(rename = "type")]
    pub type_: CircleType,
    /// The radius.
    pub radius: ::serde_json::Number,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
/// A square.
#[derive(::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Square {
    /// The `type` member.
    #[serde(rename = "type")]
    pub type_: SquareType,
    /// The `side` member.
    pub side: i64,
    /// Members the schema does not name, kept so they survive a round trip.
    #[serde(flatten)]
    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
crate::rpc::const_strs! {
    CircleType = "circle" in "type", SquareType = "square" in "type"
}
/// A [`Circle`] or a [`Square`], told apart by `type`.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A `Circle`.
    Circle(Circle),
    /// A `Square`.
    Square(Square),
}
impl ::serde::Serialize for Shape {
    fn serialize<S: ::serde::Serializer>(
        &self,
        serializer: S,
    ) -> ::std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Circle(v) => ::serde::Serialize::serialize(v, serializer),
            Self::Square(v) => ::serde::Serialize::serialize(v, serializer),
        }
    }
}
impl ::std::convert::From<Circle> for Shape {
    fn from(v: Circle) -> Self {
        Self::Circle(v)
    }
}
impl ::std::convert::From<Square> for Shape {
    fn from(v: Square) -> Self {
        Self::Square(v)
    }
}
impl crate::rpc::TaggedUnion for Shape {
    const TAG: &'static str = "type";
    fn variant<'de, X: ::serde::Deserializer<'de>>(
        tag: ::std::option::Option<&str>,
        deserializer: X,
    ) -> ::std::result::Result<Self, X::Error> {
        const EXPECTED: &[&str] = &["circle", "square"];
        match tag {
            Some("circle") => {
                <Circle as ::serde::Deserialize>::deserialize(deserializer)
                    .map(Self::Circle)
            }
            Some("square") => {
                <Square as ::serde::Deserialize>::deserialize(deserializer)
                    .map(Self::Square)
            }
            None => {
                Err(
                    ::serde::de::Error::custom(
                        format_args!("{} is missing its `{}` member", "Shape", "type"),
                    ),
                )
            }
            Some(other) => {
                Err(
                    ::serde::de::Error::custom(crate::rpc::DecodeError::UnknownTag {
                        kind: "Shape",
                        field: "type",
                        value: other.to_owned(),
                        expected: EXPECTED,
                    }),
                )
            }
        }
    }
}
impl<'de> ::serde::Deserialize<'de> for Shape {
    fn deserialize<D: ::serde::Deserializer<'de>>(
        deserializer: D,
    ) -> ::std::result::Result<Self, D::Error> {
        crate::rpc::tagged(deserializer)
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
pub const __DEFINITIONS: &[&str] = &["Circle", "Shape", "Square"];
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
            "Circle" => roundtrip::<Circle>(value),
            "Shape" => roundtrip::<Shape>(value),
            "Square" => roundtrip::<Square>(value),
            _ => return None,
        },
    )
}
impl Circle {
    /// A `Circle` from its required members (`radius`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(radius: ::serde_json::Number) -> Self {
        Self {
            type_: ::std::default::Default::default(),
            radius,
            extra: ::std::default::Default::default(),
        }
    }
}
impl Square {
    /// A `Square` from its required members (`side`); optional members start empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(side: i64) -> Self {
        Self {
            type_: ::std::default::Default::default(),
            side,
            extra: ::std::default::Default::default(),
        }
    }
}
crate::rpc::open_struct!(
    Circle { type_ : CircleType = "type" required, radius : ::serde_json::Number =
    "radius" required }
);
crate::rpc::open_struct!(
    Square { type_ : SquareType = "type" required, side : i64 = "side" required }
);
