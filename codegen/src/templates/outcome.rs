/// The result of a request that may need input first: the complete result, or an
/// [`InputRequiredResult`] asking the client for input and a retry.
///
/// Decoding dispatches on `resultType`: `"complete"` or absent (a server of an earlier
/// version) is [`Outcome::Complete`], `"input_required"` is [`Outcome::InputRequired`],
/// and any other value is an error.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<T> {
    /// The request finished.
    Complete(T),
    /// The server needs input; retry the same request with the answers.
    InputRequired(InputRequiredResult),
}

impl<T> Outcome<T> {
    /// The complete result, if this is one.
    pub fn complete(self) -> ::std::option::Option<T> {
        match self {
            Self::Complete(t) => Some(t),
            Self::InputRequired(_) => None,
        }
    }

    /// The input-required result, if this is one.
    pub fn input_required(self) -> ::std::option::Option<InputRequiredResult> {
        match self {
            Self::Complete(_) => None,
            Self::InputRequired(r) => Some(r),
        }
    }
}

impl<T> crate::rpc::IntoAnswer for Outcome<T> {
    type Complete = T;
    type InputRequired = InputRequiredResult;
    fn into_answer(self) -> crate::rpc::Answer<T, InputRequiredResult> {
        match self {
            Self::Complete(t) => crate::rpc::Answer::Complete(t),
            Self::InputRequired(r) => crate::rpc::Answer::InputRequired(r),
        }
    }
}

/// A method that cannot ask for input has no input-required result to convert: a
/// server treats both sides of every method's [`crate::rpc::IntoAnswer`] alike.
impl ::std::convert::From<crate::rpc::Never> for InputRequiredResult {
    fn from(never: crate::rpc::Never) -> Self {
        match never {}
    }
}

impl<T> ::std::convert::From<InputRequiredResult> for Outcome<T> {
    fn from(r: InputRequiredResult) -> Self {
        Self::InputRequired(r)
    }
}

impl<T: ::serde::Serialize> ::serde::Serialize for Outcome<T> {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Complete(t) => t.serialize(serializer),
            Self::InputRequired(r) => r.serialize(serializer),
        }
    }
}

impl<T: ::serde::de::DeserializeOwned> crate::rpc::TaggedUnion for Outcome<T> {
    const TAG: &'static str = "resultType";
    // A complete result may leave `resultType` out: it is given to the result's own
    // decoder as if it had been sent.
    const IMPLIED: ::std::option::Option<&'static str> = ::std::option::Option::Some("\"complete\"");
    fn variant<'de, X: ::serde::Deserializer<'de>>(
        tag: ::std::option::Option<&str>,
        deserializer: X,
    ) -> ::std::result::Result<Self, X::Error> {
        match tag {
            None | Some("complete") => T::deserialize(deserializer).map(Self::Complete),
            Some("input_required") => <InputRequiredResult as ::serde::Deserialize>::deserialize(deserializer).map(Self::InputRequired),
            Some(t) => Err(::serde::de::Error::custom(crate::rpc::DecodeError::UnknownResultType(t.to_owned()))),
        }
    }
}

impl<'de, T: ::serde::de::DeserializeOwned> ::serde::Deserialize<'de> for Outcome<T> {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        crate::rpc::tagged(deserializer)
    }
}
