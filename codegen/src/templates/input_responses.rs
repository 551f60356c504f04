/// The client's answers to an [`InputRequests`] map, under the same keys (`inputResponses`).
///
/// An answer has no discriminator of its own: it is decoded by the method of the request
/// it answers. This type keeps the raw JSON, so a server can decode lazily (see
/// [`InputResponses::get`]) or all at once against the requests it sent
/// ([`InputResponses::decode`]); keys it did not ask for are ignored.
#[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
#[serde(transparent)]
pub struct InputResponses(pub ::serde_json::Map<::std::string::String, ::serde_json::Value>);

impl InputResponses {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the answer to the request under `key`.
    pub fn insert(&mut self, key: impl ::std::convert::Into<::std::string::String>, response: InputResponse) -> ::std::result::Result<(), ::serde_json::Error> {
        self.0.insert(key.into(), ::serde_json::to_value(response)?);
        Ok(())
    }

    /// Whether there is an answer under `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The number of answers.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no answers.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The raw answer under `key`.
    pub fn raw(&self, key: &str) -> ::std::option::Option<&::serde_json::Value> {
        self.0.get(key)
    }

    /// The answer under `key`, decoded as the result of the input method `M`; `None`
    /// when there is no answer under that key.
    pub fn get<M: crate::rpc::InputMethod>(&self, key: &str) -> ::std::option::Option<::std::result::Result<M::Result, crate::rpc::DecodeError>> {
        self.0
            .get(key)
            .map(|v| <M::Result as ::serde::Deserialize>::deserialize(v).map_err(crate::rpc::DecodeError::Json))
    }

    /// Decodes every answer whose key is in `requests`, by the method of that request.
    /// Keys with no request are ignored; requests with no answer are left out.
    pub fn decode(&self, requests: &InputRequests) -> ::std::result::Result<::std::collections::BTreeMap<::std::string::String, InputResponse>, crate::rpc::DecodeError> {
        let mut out = ::std::collections::BTreeMap::new();
        for (key, request) in requests.iter() {
            if let Some(value) = self.0.get(key) {
                out.insert(key.clone(), InputResponse::decode_for(request.method(), value)?);
            }
        }
        Ok(out)
    }
}

impl ::std::iter::FromIterator<(::std::string::String, InputResponse)> for InputResponses {
    fn from_iter<I: ::std::iter::IntoIterator<Item = (::std::string::String, InputResponse)>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .filter_map(|(k, v)| ::serde_json::to_value(v).ok().map(|v| (k, v)))
                .collect(),
        )
    }
}
