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

impl<'de, T: ::serde::de::DeserializeOwned> ::serde::Deserialize<'de> for Outcome<T> {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        let mut value = <::serde_json::Value as ::serde::Deserialize>::deserialize(deserializer)?;
        let kind = match value.get("resultType") {
            None => ResultType::Complete,
            Some(t) => ResultType::deserialize(t).map_err(::serde::de::Error::custom)?,
        };
        match kind {
            ResultType::Complete => {
                if let ::serde_json::Value::Object(map) = &mut value {
                    map.entry("resultType").or_insert_with(|| "complete".into());
                }
                crate::rpc::variant::<D, T>(value).map(Self::Complete)
            }
            ResultType::InputRequired => crate::rpc::variant::<D, InputRequiredResult>(value).map(Self::InputRequired),
            ResultType::Other(t) => Err(::serde::de::Error::custom(crate::rpc::DecodeError::UnknownResultType(t))),
        }
    }
}
