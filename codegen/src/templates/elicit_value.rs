/// One value of a submitted elicitation form (`ElicitResult.content`).
///
/// Decoded by its JSON type; a number with a fraction is kept as [`ElicitValue::Number`]
/// because forms may ask for `"type": "number"`.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitValue {
    /// A string.
    String(::std::string::String),
    /// A whole number.
    Integer(i64),
    /// A number with a fraction.
    Number(f64),
    /// A boolean.
    Boolean(bool),
    /// The choices of a multi-select field.
    List(::std::vec::Vec<::std::string::String>),
}

impl ElicitValue {
    /// The string, if this is one.
    pub fn as_str(&self) -> ::std::option::Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }
}

impl ::serde::Serialize for ElicitValue {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        match self {
            Self::String(s) => serializer.serialize_str(s),
            Self::Integer(i) => serializer.serialize_i64(*i),
            Self::Number(n) => serializer.serialize_f64(*n),
            Self::Boolean(b) => serializer.serialize_bool(*b),
            Self::List(l) => l.serialize(serializer),
        }
    }
}

impl<'de> ::serde::Deserialize<'de> for ElicitValue {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(deserializer)?;
        match value {
            ::serde_json::Value::String(s) => Ok(Self::String(s)),
            ::serde_json::Value::Bool(b) => Ok(Self::Boolean(b)),
            ::serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(Self::Integer(i)),
                None => n.as_f64().map(Self::Number).ok_or_else(|| ::serde::de::Error::custom("a number out of range")),
            },
            v @ ::serde_json::Value::Array(_) => crate::rpc::variant::<D, ::std::vec::Vec<::std::string::String>>(v).map(Self::List),
            _ => Err(::serde::de::Error::custom("a form value must be a string, number, boolean or list of strings")),
        }
    }
}

impl ::std::convert::From<&str> for ElicitValue {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl ::std::convert::From<::std::string::String> for ElicitValue {
    fn from(s: ::std::string::String) -> Self {
        Self::String(s)
    }
}

impl ::std::convert::From<bool> for ElicitValue {
    fn from(b: bool) -> Self {
        Self::Boolean(b)
    }
}

impl ::std::convert::From<i64> for ElicitValue {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}

impl ::std::convert::From<f64> for ElicitValue {
    fn from(n: f64) -> Self {
        Self::Number(n)
    }
}
