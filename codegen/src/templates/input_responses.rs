/// The client's answers to an [`InputRequests`] map, under the same keys (`inputResponses`).
///
/// An answer has no discriminator of its own: it is decoded by the method of the request
/// it answers. This type keeps the object as the JSON text it came in (checked to be an
/// object whose keys are unique), so a server decodes an answer straight from its text,
/// lazily ([`InputResponses::get`]) or all at once against the requests it sent
/// ([`InputResponses::decode`]), and builds no tree for it; keys it did not ask for are
/// never read.
#[derive(Clone, Debug)]
pub struct InputResponses(
    ::std::boxed::Box<::serde_json::value::RawValue>,
    /// Where the first answer's key and text lie in the text, when reading the map found
    /// them (the usual map has one answer): that key is then found without a scan.
    ::std::option::Option<(::std::ops::Range<usize>, ::std::ops::Range<usize>)>,
);

impl InputResponses {
    /// An empty map.
    pub fn new() -> Self {
        Self::from_text("{}".to_owned())
    }

    /// Text this type wrote itself: an object, by construction.
    fn from_text(text: ::std::string::String) -> Self {
        Self(::serde_json::value::RawValue::from_string(text).expect("tern writes JSON objects"), None)
    }

    /// Adds the answer to the request under `key`, in place of an answer already there.
    pub fn insert(&mut self, key: impl ::std::convert::Into<::std::string::String>, response: InputResponse) -> ::std::result::Result<(), ::serde_json::Error> {
        self.rewrite(key.into(), Answer::Typed(&response))
    }

    /// Adds `answer`, as it is, under `key`, in place of an answer already there (to be
    /// decoded by whoever asked).
    pub fn insert_raw(&mut self, key: impl ::std::convert::Into<::std::string::String>, answer: &::serde_json::value::RawValue) -> ::std::result::Result<(), ::serde_json::Error> {
        self.rewrite(key.into(), Answer::Raw(answer))
    }

    /// The map again, without `key`'s answer if it had one, and with `value` under `key`
    /// last. Written by serde_json from answers that are JSON already, so not read again.
    fn rewrite(&mut self, key: ::std::string::String, value: Answer<'_>) -> ::std::result::Result<(), ::serde_json::Error> {
        let members = self.members();
        let mut answers: ::std::vec::Vec<(&str, Answer<'_>)> = members
            .iter()
            .filter(|(name, _)| *name != key)
            .map(|(name, answer)| (&**name, Answer::Raw(answer)))
            .collect();
        answers.push((&key, value));
        *self = Self(::serde_json::value::to_raw_value(&Answers(answers))?, None);
        Ok(())
    }

    /// Each answer: its key and its raw JSON, in order.
    fn members(&self) -> ::std::vec::Vec<(::std::borrow::Cow<'_, str>, &::serde_json::value::RawValue)> {
        let text = self.0.get();
        let mut out = ::std::vec::Vec::new();
        let _ = crate::rpc::scan::each_member(text.as_bytes(), |name, value| {
            let answer: &::serde_json::value::RawValue = ::serde_json::from_str(text.get(value)?).ok()?;
            out.push((crate::rpc::scan::member_name(text.get(name)?)?, answer));
            Some(())
        });
        out
    }

    /// Each answer's key and raw JSON, in the order they came.
    pub fn iter(&self) -> impl ::std::iter::Iterator<Item = (::std::borrow::Cow<'_, str>, &::serde_json::value::RawValue)> {
        self.members().into_iter()
    }

    /// The text of the answer under `key`, found without reading the others'.
    fn find(&self, key: &str) -> ::std::option::Option<&str> {
        let text = self.0.get();
        if let ::std::option::Option::Some((name, value)) = &self.1 {
            let first = text.get(name.clone()).and_then(crate::rpc::scan::member_name);
            if first.is_some_and(|first| first == key) {
                return text.get(value.clone());
            }
        }
        let mut found = None;
        let _ = crate::rpc::scan::each_member(text.as_bytes(), |name, value| {
            if crate::rpc::scan::member_name(text.get(name)?)? == key {
                found = text.get(value);
                // Found: the scan stops here (keys are unique).
                return None;
            }
            Some(())
        });
        found
    }

    /// Whether there is an answer under `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// The number of answers.
    pub fn len(&self) -> usize {
        let mut len = 0;
        let _ = crate::rpc::scan::each_member(self.0.get().as_bytes(), |_, _| {
            len += 1;
            Some(())
        });
        len
    }

    /// Whether there are no answers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answer under `key` as the client sent it, its JSON text read no further.
    pub fn text(&self, key: &str) -> ::std::option::Option<&str> {
        self.find(key)
    }

    /// The raw answer under `key`.
    pub fn raw(&self, key: &str) -> ::std::option::Option<&::serde_json::value::RawValue> {
        ::serde_json::from_str(self.find(key)?).ok()
    }

    /// The answer under `key`, decoded as the result of the input method `M`; `None`
    /// when there is no answer under that key.
    pub fn get<M: crate::rpc::InputMethod>(&self, key: &str) -> ::std::option::Option<::std::result::Result<M::Result, crate::rpc::DecodeError>> {
        self.find(key)
            .map(|text| ::serde_json::from_str::<M::Result>(text).map_err(crate::rpc::DecodeError::Json))
    }

    /// Decodes every answer whose key is in `requests`, by the method of that request.
    /// Keys with no request are ignored; requests with no answer are left out.
    pub fn decode(&self, requests: &InputRequests) -> ::std::result::Result<::std::collections::BTreeMap<::std::string::String, InputResponse>, crate::rpc::DecodeError> {
        let mut out = ::std::collections::BTreeMap::new();
        for (key, request) in requests.iter() {
            if let Some(text) = self.find(key) {
                let mut de = ::serde_json::Deserializer::from_str(text);
                out.insert(key.clone(), InputResponse::decode_for(request.method(), &mut de)?);
            }
        }
        Ok(out)
    }
}

/// An answer as [`InputResponses::rewrite`] writes it: as it came, or from its type.
enum Answer<'a> {
    Raw(&'a ::serde_json::value::RawValue),
    Typed(&'a InputResponse),
}

impl ::serde::Serialize for Answer<'_> {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Raw(raw) => raw.serialize(serializer),
            Self::Typed(response) => response.serialize(serializer),
        }
    }
}

/// Answers under their keys, written as one object in their order.
struct Answers<'a>(::std::vec::Vec<(&'a str, Answer<'a>)>);

impl ::serde::Serialize for Answers<'_> {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        use ::serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, answer) in &self.0 {
            map.serialize_entry(key, answer)?;
        }
        map.end()
    }
}

impl ::std::default::Default for InputResponses {
    fn default() -> Self {
        Self::new()
    }
}

/// Two maps are equal when they hold the same answers under the same keys, whatever
/// their order or spacing.
impl ::std::cmp::PartialEq for InputResponses {
    fn eq(&self, other: &Self) -> bool {
        let read = |r: &Self| ::serde_json::from_str::<::serde_json::Value>(r.0.get()).ok();
        read(self) == read(other)
    }
}

impl ::serde::Serialize for InputResponses {
    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Read as text, once: refused unless it is an object whose keys are unique (a repeated
/// key would leave which answer counts to the reader).
impl<'de> ::serde::Deserialize<'de> for InputResponses {
    fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
        use ::serde::de::Error as _;
        let raw = <::std::boxed::Box<::serde_json::value::RawValue>>::deserialize(deserializer)?;
        let text = raw.get();
        // The usual answer has one key, which cannot repeat: names are gathered (and
        // allocated for) only from the second on.
        // The first member: its name, and where its name and its answer lie.
        let mut first = None;
        let mut names = ::std::vec::Vec::new();
        crate::rpc::scan::each_member(text.as_bytes(), |name_at, value_at| {
            let name = crate::rpc::scan::member_name(text.get(name_at.clone())?)?;
            match first {
                None => first = Some((name, name_at, value_at)),
                Some(_) => names.push(name),
            }
            Some(())
        })
        .ok_or_else(|| D::Error::custom("inputResponses must be an object"))?;
        if !names.is_empty() {
            names.extend(first.as_ref().map(|(name, ..)| name.clone()));
            names.sort_unstable();
            if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
                return Err(D::Error::custom(format_args!("inputResponses repeats the key `{}`", pair[0])));
            }
        }
        drop(names);
        let first_at = first.map(|(_, name_at, value_at)| (name_at, value_at));
        Ok(Self(raw, first_at))
    }
}

impl ::std::iter::FromIterator<(::std::string::String, InputResponse)> for InputResponses {
    fn from_iter<I: ::std::iter::IntoIterator<Item = (::std::string::String, InputResponse)>>(iter: I) -> Self {
        let mut responses = Self::new();
        for (key, response) in iter {
            // An answer that does not serialise is left out, as before.
            let _ = responses.insert(key, response);
        }
        responses
    }
}
