//! What every protocol version shares: the method traits, constant discriminators and
//! decoding errors.

use std::borrow::Cow;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A request method: a marker type naming the method, its parameters and its result.
///
/// Each protocol method has one uninhabited marker type (for example
/// `v2026_07_28::method::CallTool`); routing and typed calls are generic over it.
pub trait Request: 'static {
    /// The JSON-RPC `method` string.
    const METHOD: &'static str;
    /// Whether the result is an `Outcome`: the complete result or an
    /// `InputRequiredResult` (true exactly for the markers implementing
    /// [`MayRequireInput`]).
    const MAY_REQUIRE_INPUT: bool;
    /// Whether the result requires `ttlMs` and `cacheScope`, so a client may cache it.
    const CACHEABLE: bool;
    /// Whether the (complete) result's type requires `resultType`, so its value always
    /// writes one and a server need not look for it in the written text.
    const WRITES_RESULT_TYPE: bool = false;
    /// The params member naming what the request acts on: `Some("name")` for
    /// `tools/call` and `prompts/get`, `Some("uri")` for `resources/read`.
    const TARGET: Option<&'static str>;
    /// The member of the receiver's capabilities that says it handles this method
    /// (`ServerCapabilities` for a client's request, `ClientCapabilities` for the
    /// server's), such as `tools` or `elicitation`; `None` when no capability gates it.
    const CAPABILITY: Option<&'static str>;
    /// Whether a 2025-11-25 session begins with it (`initialize`).
    const OPENS_SESSION: bool = false;
    /// Whether its answer is a stream that stays open until the client or the server
    /// ends it (`subscriptions/listen`): no request deadline applies.
    const NEVER_ENDS: bool = false;
    /// Whether its arguments may travel in `Mcp-Param-*` headers too, as its target's
    /// `inputSchema` marks them with `x-mcp-header` (`tools/call` in 2026-07-28).
    const PARAM_HEADERS: bool = false;
    /// Whether its result lists the targets whose `inputSchema` declares those headers
    /// (`tools/list` in 2026-07-28).
    const DECLARES_PARAM_HEADERS: bool = false;
    /// The `params` member of the request.
    type Params: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;
    /// The `result` member of a successful response.
    type Result: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;

    /// The `requestState` the client echoed, for the methods that may ask for input.
    fn request_state(params: &Self::Params) -> Option<&str> {
        let _ = params;
        None
    }

    /// Replaces the echoed `requestState` (a server puts the opened plaintext there
    /// before its handler reads it) and returns the one it replaced; does nothing for
    /// methods without one.
    fn set_request_state(params: &mut Self::Params, state: String) -> Option<String> {
        let _ = (params, state);
        None
    }

    /// The value of the [`TARGET`](Self::TARGET) member: the tool or prompt name, the
    /// resource URI.
    fn target(params: &Self::Params) -> Option<&str> {
        let _ = params;
        None
    }

    /// The request's `arguments`, as the JSON text of an object (borrowed when they
    /// are kept as text already), for requests with a target and arguments.
    fn arguments(params: &Self::Params) -> Option<Cow<'_, serde_json::value::RawValue>> {
        let _ = params;
        None
    }
}

/// Implements `Deserialize` for an open struct (one keeping unknown members in its
/// `extra` map) without serde's `flatten`, which would buffer every member into an owned
/// tree first: each member is read once, straight from the input, the unknown ones into
/// `extra`. A `default` member that is absent takes its default; a `required` one is an
/// error; a repeated one is an error, as with a derived `Deserialize`.
macro_rules! open_struct {
    ($name:ident { $($field:ident: $ty:ty = $wire:literal $mode:ident),* $(,)? }) => {
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct Members;
                impl<'de> ::serde::de::Visitor<'de> for Members {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("struct ", stringify!($name)))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> ::std::result::Result<$name, A::Error> {
                        $(let mut $field: ::std::option::Option<$ty> = ::std::option::Option::None;)*
                        let mut extra = ::serde_json::Map::new();
                        while let ::std::option::Option::Some(key) =
                            map.next_key::<$crate::rpc::MemberName<'de>>()?
                        {
                            match key.as_str() {
                                $($wire => {
                                    if $field.is_some() {
                                        return ::std::result::Result::Err(
                                            <A::Error as ::serde::de::Error>::duplicate_field($wire),
                                        );
                                    }
                                    $field = ::std::option::Option::Some(map.next_value()?);
                                })*
                                _ => {
                                    extra.insert(key.into_string(), map.next_value()?);
                                }
                            }
                        }
                        ::std::result::Result::Ok($name {
                            $($field: $crate::rpc::open_struct!(@finish $mode, $field, $wire, A),)*
                            extra,
                        })
                    }
                }
                deserializer.deserialize_map(Members)
            }
        }
    };
    (@finish default, $slot:ident, $wire:literal, $A:ident) => {
        $slot.unwrap_or_default()
    };
    (@finish required, $slot:ident, $wire:literal, $A:ident) => {
        $slot.ok_or_else(|| <$A::Error as ::serde::de::Error>::missing_field($wire))?
    };
}
pub(crate) use open_struct;

/// A member name as an open struct's generated `Deserialize` reads it: borrowed from
/// the input when the input allows (no escapes), owned otherwise.
#[doc(hidden)]
#[derive(Debug)]
pub struct MemberName<'de>(Cow<'de, str>);

impl MemberName<'_> {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name, owned.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for MemberName<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl<'de> serde::de::Visitor<'de> for Name {
            type Value = MemberName<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MemberName(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MemberName(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(MemberName(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// A request's `arguments` as the JSON text of an object: borrowed when they are kept
/// as text (a tool call's `ToolArguments`), written now
/// otherwise (a prompt's map of strings).
pub trait ArgumentsText {
    /// The arguments as JSON text.
    fn arguments_text(&self) -> Cow<'_, serde_json::value::RawValue>;
}

impl<K: Serialize + Ord, V: Serialize> ArgumentsText for std::collections::BTreeMap<K, V> {
    fn arguments_text(&self) -> Cow<'_, serde_json::value::RawValue> {
        written(self)
    }
}

impl ArgumentsText for serde_json::Map<String, serde_json::Value> {
    fn arguments_text(&self) -> Cow<'_, serde_json::value::RawValue> {
        written(self)
    }
}

/// `value` written as JSON text; `{}` when it does not serialize.
fn written<T: Serialize + ?Sized>(value: &T) -> Cow<'static, serde_json::value::RawValue> {
    Cow::Owned(serde_json::value::to_raw_value(value).unwrap_or_else(|_| {
        serde_json::value::RawValue::from_string("{}".to_owned()).unwrap_or_default()
    }))
}

/// A notification method: a marker type naming the method and its parameters.
pub trait Notification: 'static {
    /// The JSON-RPC `method` string.
    const METHOD: &'static str;
    /// Whether it ends a 2025-11-25 session's opening: normal operation begins once it
    /// is sent (`notifications/initialized`).
    const READIES_SESSION: bool = false;
    /// Whether its params name, by `requestId`, a request its receiver stops
    /// (`notifications/cancelled`).
    const CANCELS_REQUEST: bool = false;
    /// Whether its params carry a `progressToken`: progress of the request that gave the
    /// token (`notifications/progress`).
    const REPORTS_PROGRESS: bool = false;
    /// Whether its params carry a log `level`: sent only at or above the level its
    /// receiver asked for (`notifications/message`).
    const HAS_LEVEL: bool = false;
    /// The `params` member of the notification.
    type Params: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;
}

/// A request whose result may be an `InputRequiredResult` instead of the complete one
/// (`tools/call`, `prompts/get` and `resources/read` in 2026-07-28): what a multi
/// round-trip flow needs of it, beside its [`Request`] facts and retry view.
///
/// Its [`Request::Result`] is an `Outcome<Self::Complete>`; methods without this marker
/// cannot answer with input-required at all.
pub trait MayRequireInput: Request {
    /// The result type when the request completes.
    type Complete: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;
    /// The answers a retry carries (`inputResponses`).
    type InputResponses: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;
    /// Whether a server may answer the request with a task instead (`resultType:
    /// "task"`, the tasks extension), whose eventual result is [`Self::Complete`].
    const MAY_BECOME_TASK: bool = false;
    /// Writes a retry's answers and echoed `requestState` into `params`.
    fn set_round(
        params: &mut Self::Params,
        responses: Option<Self::InputResponses>,
        state: Option<String>,
    );
}

/// What a server does with a request's result: send it as the complete answer, or (a
/// method that may ask for input) check and seal an input-required one first.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<C, I> {
    /// The request finished with this result.
    Complete(C),
    /// The request needs input first.
    InputRequired(I),
}
/// A request's result, split by what it is, so a server decides from the type rather
/// than from the JSON. Every request's [`Request::Result`] implements it.
pub trait IntoAnswer {
    /// The complete result.
    type Complete;
    /// The input-required result ([`Never`] for methods that cannot ask).
    type InputRequired;
    /// Which of the two this result is.
    fn into_answer(self) -> Answer<Self::Complete, Self::InputRequired>;
}
/// The input-required side of a result that never asks: no value of it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Never {}
impl Serialize for Never {
    fn serialize<S: Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
        match *self {}
    }
}
/// A request the server sends to the client inside `InputRequiredResult.inputRequests`
/// (and, in 2025-11-25 sessions, as a JSON-RPC request of its own).
pub trait InputMethod: Request {}

/// A request a client sends to a server.
pub trait ClientRequestMethod: Request {}

/// A request a server sends to a client on a 2025-11-25 session.
pub trait ServerRequestMethod: Request {}

/// A notification a client sends to a server.
pub trait ClientNotificationMethod: Notification {}

/// A notification a server sends to a client.
pub trait ServerNotificationMethod: Notification {}

/// Code generic over a request marker, run for a method known only as a string
/// through a version's `method::visit_request`.
pub trait RequestVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the marker whose [`Request::METHOD`] matched.
    fn visit<M: Request>(self) -> Self::Output;
}

/// What a protocol version says about one method, without its types: one entry per
/// method in a version's `method::ALL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The JSON-RPC `method` string.
    pub method: &'static str,
    /// Whether it is a request (false for a notification).
    pub is_request: bool,
    /// A client sends it to a server as a request.
    pub client_request: bool,
    /// A server sends it to a client as a request (2025-11-25 sessions).
    pub server_request: bool,
    /// A server embeds it in `InputRequiredResult.inputRequests`.
    pub input_request: bool,
    /// A client sends it to a server as a notification.
    pub client_notification: bool,
    /// A server sends it to a client as a notification.
    pub server_notification: bool,
    /// [`Request::MAY_REQUIRE_INPUT`] (false for a notification).
    pub may_require_input: bool,
    /// [`Request::CACHEABLE`] (false for a notification).
    pub cacheable: bool,
    /// [`Request::TARGET`] (`None` for a notification).
    pub target: Option<&'static str>,
    /// [`Request::CAPABILITY`] (`None` for a notification).
    pub capability: Option<&'static str>,
    /// [`Request::OPENS_SESSION`].
    pub opens_session: bool,
    /// [`Notification::READIES_SESSION`].
    pub readies_session: bool,
    /// [`Request::NEVER_ENDS`].
    pub never_ends: bool,
    /// [`Request::PARAM_HEADERS`].
    pub param_headers: bool,
    /// [`Request::DECLARES_PARAM_HEADERS`].
    pub declares_param_headers: bool,
    /// [`Notification::CANCELS_REQUEST`].
    pub cancels_request: bool,
    /// [`Notification::REPORTS_PROGRESS`].
    pub reports_progress: bool,
    /// [`Notification::HAS_LEVEL`].
    pub has_level: bool,
}

/// A string the schema pins a member to, such as a content block's `type`.
pub trait ConstStr: Default {
    /// The only value the member may hold.
    const VALUE: &'static str;
}

/// Declares the zero-sized types of a version's string constants, one per
/// `Name = "value" in "member"`: each implements [`ConstStr`] and (de)serializes as
/// its only value, rejecting any other.
macro_rules! const_strs {
    ($($name:ident = $value:literal in $member:literal),* $(,)?) => {$(
        #[doc = concat!(" The constant `\"", $value, "\"` of a `", $member, "` member: any other value is rejected.")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name;
        impl $crate::rpc::ConstStr for $name {
            const VALUE: &'static str = $value;
        }
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                $crate::rpc::serialize_const::<S, Self>(serializer)
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                $crate::rpc::deserialize_const::<D, Self>(deserializer)
            }
        }
    )*};
}

pub(crate) use const_strs;

#[doc(hidden)]
pub fn serialize_const<S: Serializer, C: ConstStr>(serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(C::VALUE)
}

#[doc(hidden)]
pub fn deserialize_const<'de, D: Deserializer<'de>, C: ConstStr>(
    deserializer: D,
) -> Result<C, D::Error> {
    deserializer.deserialize_str(ConstVisitor::<C>(std::marker::PhantomData))
}

/// Reads a [`ConstStr`]: the text is compared where it lies, never copied.
struct ConstVisitor<C>(std::marker::PhantomData<C>);

impl<C: ConstStr> serde::de::Visitor<'_> for ConstVisitor<C> {
    type Value = C;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, got: &str) -> Result<C, E> {
        if got == C::VALUE {
            Ok(C::default())
        } else {
            Err(E::custom(format_args!(
                "expected \"{}\", got \"{}\"",
                C::VALUE,
                got
            )))
        }
    }
}

/// A JSON-RPC error code the schema pins a member to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ErrorCode<const CODE: i64>;

impl<const CODE: i64> ErrorCode<CODE> {
    /// The code.
    pub const VALUE: i64 = CODE;
}

impl<const CODE: i64> Serialize for ErrorCode<CODE> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(CODE)
    }
}

impl<'de, const CODE: i64> Deserialize<'de> for ErrorCode<CODE> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let got = i64::deserialize(deserializer)?;
        if got == CODE {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(format_args!(
                "expected error code {CODE}, got {got}"
            )))
        }
    }
}

/// Why a protocol message could not be decoded.
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// The `method` is not one this direction of this protocol version defines.
    UnknownMethod {
        /// What was being decoded, such as `ClientRequest`.
        kind: &'static str,
        /// The method that arrived.
        method: String,
    },
    /// A member that names the variant holds a value no variant has.
    UnknownTag {
        /// The union being decoded, such as `ContentBlock`.
        kind: &'static str,
        /// The member holding the tag, such as `type`.
        field: &'static str,
        /// The value that arrived.
        value: String,
        /// The values this version defines.
        expected: &'static [&'static str],
    },
    /// No variant's members match the value.
    NoVariant {
        /// The union being decoded.
        kind: &'static str,
    },
    /// A `resultType` that neither this version nor its extensions define.
    UnknownResultType(String),
    /// The JSON is well formed but does not fit the type.
    Json(serde_json::Error),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownMethod { kind, method } => {
                write!(f, "unknown method \"{method}\" for {kind}")
            }
            Self::UnknownTag {
                kind,
                field,
                value,
                expected,
            } => write!(
                f,
                "unknown {kind} `{field}` \"{value}\" (expected one of: {})",
                expected.join(", ")
            ),
            Self::NoVariant { kind } => write!(f, "the value matches no variant of {kind}"),
            Self::UnknownResultType(t) => write!(
                f,
                "unknown resultType \"{t}\" (expected \"complete\" or \"input_required\")"
            ),
            Self::Json(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl From<serde_json::Error> for DecodeError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(e)
    }
}

/// `text` (one JSON value, read as JSON already) as a string, when it is one: borrowed
/// unless it has escapes, as a member name is read.
#[doc(hidden)]
pub fn as_str(text: &str) -> Option<Cow<'_, str>> {
    if text.len() < 2 || !text.starts_with('"') {
        return None;
    }
    scan::member_name(text)
}

/// Reads the variant `T` of a union from the union's text, once its members have said
/// which variant it is.
#[doc(hidden)]
pub fn variant_of<'de, D: Deserializer<'de>, T: DeserializeOwned>(text: &str) -> Result<T, D::Error> {
    serde_json::from_str(text).map_err(serde::de::Error::custom)
}

mod unions;
pub use unions::*;

/// `object` (a JSON object's text) with `members` (each written `"name":value`) put in
/// front of its own; `None` when `object` is not an object.
#[doc(hidden)]
pub fn prepend_members<'m>(object: &str, members: impl IntoIterator<Item = &'m str>) -> Option<String> {
    let rest = object.strip_prefix('{')?;
    let mut out = String::with_capacity(object.len() + 64);
    out.push('{');
    for member in members {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(member);
    }
    if out.len() > 1 && !rest.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    Some(out)
}

/// Decodes a variant from an already-buffered value, turning its error into `D::Error`.
#[doc(hidden)]
pub fn variant<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, D::Error> {
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}
