/// A tool call's `arguments`: a JSON object, kept as the text it came in.
///
/// A server reads a call's arguments once, when the tool decodes them into its own type
/// ([`ToolArguments::decode`]), straight from the text; the digest that binds sealed
/// state to the arguments is computed from the same text. No `serde_json` tree is built
/// for them unless one is asked for ([`ToolArguments::to_map`], [`ToolArguments::get`]).
#[derive(Clone)]
pub struct ToolArguments(::std::boxed::Box<::serde_json::value::RawValue>);

impl ToolArguments {
    /// No arguments: `{}`.
    pub fn new() -> Self {
        Self(::serde_json::value::RawValue::from_string("{}".to_owned()).expect("`{}` is JSON"))
    }

    /// The arguments `value` serializes to; an error unless that is a JSON object.
    pub fn from_value<T: ::serde::Serialize + ?::std::marker::Sized>(value: &T) -> ::std::result::Result<Self, ::serde_json::Error> {
        let raw = ::serde_json::value::to_raw_value(value)?;
        if !raw.get().starts_with('{') {
            return Err(<::serde_json::Error as ::serde::ser::Error>::custom("tool arguments must be a JSON object"));
        }
        Ok(Self(raw))
    }

    /// The arguments as JSON text (an object).
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The arguments as a raw JSON value (an object).
    pub fn as_raw(&self) -> &::serde_json::value::RawValue {
        &self.0
    }

    /// The arguments decoded into `T`, straight from their text.
    pub fn decode<T: ::serde::de::DeserializeOwned>(&self) -> ::std::result::Result<T, ::serde_json::Error> {
        ::serde_json::from_str(self.0.get())
    }

    /// The arguments as a `serde_json` map (a tree built now).
    pub fn to_map(&self) -> ::std::result::Result<::serde_json::Map<::std::string::String, ::serde_json::Value>, ::serde_json::Error> {
        self.decode()
    }

    /// The text of the member named `key`: the last one, as a map keeps it.
    fn find(&self, key: &str) -> ::std::option::Option<&str> {
        let text = self.0.get();
        let mut found = None;
        crate::rpc::scan::each_member(text.as_bytes(), |name, value| {
            if crate::rpc::scan::member_name(text.get(name)?)? == key {
                found = text.get(value);
            }
            Some(())
        })?;
        found
    }

    /// The argument named `key`, as a JSON value; `None` when there is none.
    pub fn get(&self, key: &str) -> ::std::option::Option<::serde_json::Value> {
        ::serde_json::from_str(self.find(key)?).ok()
    }

    /// The argument named `key`, as its raw JSON.
    pub fn get_raw(&self, key: &str) -> ::std::option::Option<&::serde_json::value::RawValue> {
        ::serde_json::from_str(self.find(key)?).ok()
    }

    /// Whether there is an argument named `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        let text = self.0.get().as_bytes();
        let open = crate::rpc::scan::blank(text, 0);
        text.get(crate::rpc::scan::blank(text, open + 1)) == Some(&b'}')
    }
}

impl ::std::default::Default for ToolArguments {
    fn default() -> Self {
        Self::new()
    }
}

impl ::std::fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        f.debug_tuple("ToolArguments").field(&self.0.get()).finish()
    }
}

/// Two argument objects are equal when they hold the same members, whatever their
/// order or spacing.
impl ::std::cmp::PartialEq for ToolArguments {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get() || {
            let read = |a: &Self| ::serde_json::from_str::<::serde_json::Value>(a.0.get()).ok();
            read(self) == read(other)
        }
    }
}

impl ::serde::Serialize for ToolArguments {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Read as text, once: refused unless it is a JSON object.
impl<'de> ::serde::Deserialize<'de> for ToolArguments {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        let raw = <::std::boxed::Box<::serde_json::value::RawValue>>::deserialize(deserializer)?;
        if !raw.get().starts_with('{') {
            return Err(<D::Error as ::serde::de::Error>::custom("arguments must be a JSON object"));
        }
        Ok(Self(raw))
    }
}

impl ::std::convert::From<::serde_json::Map<::std::string::String, ::serde_json::Value>> for ToolArguments {
    fn from(map: ::serde_json::Map<::std::string::String, ::serde_json::Value>) -> Self {
        Self::from(&map)
    }
}

impl ::std::convert::From<&::serde_json::Map<::std::string::String, ::serde_json::Value>> for ToolArguments {
    fn from(map: &::serde_json::Map<::std::string::String, ::serde_json::Value>) -> Self {
        // A map of JSON values always serializes, as an object.
        Self::from_value(map).unwrap_or_default()
    }
}

impl ::std::convert::TryFrom<::serde_json::Value> for ToolArguments {
    type Error = ::serde_json::Error;

    fn try_from(value: ::serde_json::Value) -> ::std::result::Result<Self, Self::Error> {
        Self::from_value(&value)
    }
}

impl crate::rpc::ArgumentsText for ToolArguments {
    fn arguments_text(&self) -> ::std::borrow::Cow<'_, ::serde_json::value::RawValue> {
        ::std::borrow::Cow::Borrowed(&self.0)
    }
}
