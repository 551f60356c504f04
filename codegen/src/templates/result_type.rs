/// What kind of result a response carries (`resultType`).
///
/// A result without `resultType` comes from a server of an earlier protocol version and
/// counts as [`ResultType::Complete`]; a value this version does not define (an
/// extension's, such as the tasks extension's `"task"`) is kept as [`ResultType::Other`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// `"complete"`: the request finished and the result is final.
    #[default]
    Complete,
    /// `"input_required"`: the server needs input before it can finish.
    InputRequired,
    /// Any other value, defined by an extension.
    Other(::std::string::String),
}

impl ResultType {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Other(s) => s,
        }
    }
}

impl ::std::fmt::Display for ResultType {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ::serde::Serialize for ResultType {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> ::serde::Deserialize<'de> for ResultType {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        let s = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(deserializer)?;
        Ok(match &*s {
            "complete" => Self::Complete,
            "input_required" => Self::InputRequired,
            other => Self::Other(other.to_owned()),
        })
    }
}
