//! Short constructors for the values of a multi round-trip exchange: the questions a
//! server asks, the input-required result that carries them, and the answers a client
//! gives.
//!
//! ```
//! use serde_json::json;
//! use tern_mcp::ask;
//!
//! let region = ask::elicit_form(
//!     "Which region should the database live in?",
//!     json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}),
//! )?;
//! let result = ask::input_required([("region", region)], Some("provision-v1"));
//! assert_eq!(result.request_state.as_deref(), Some("provision-v1"));
//!
//! let answer = ask::accept([("region", "eu-west-1")]);
//! assert_eq!(answer.content.unwrap()["region"].as_str(), Some("eu-west-1"));
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde_json::Value;

use crate::types::v2026_07_28::{
    ContentBlock, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestFormParams, ElicitRequestFormParamsRequestedSchema, ElicitRequestParams,
    ElicitRequestUrlParams, ElicitResult, ElicitResultAction, ElicitValue, FormMode, InputRequest,
    InputRequests, InputRequiredResult, ListRootsRequest, PrimitiveSchemaDefinition, Role,
    SamplingMessage, SamplingMessageContent, SamplingMessageContentBlock, TextContent,
};

/// A form elicitation: `message` shown to the user, `schema` the form (an object schema
/// of primitive properties).
pub fn elicit_form(
    message: impl Into<String>,
    schema: Value,
) -> Result<InputRequest, serde_json::Error> {
    let form = ElicitForm {
        message: message.into(),
        schema: serde_json::from_value(schema)?,
    };
    Ok(form.into_request())
}

/// A form elicitation built from typed fields: what [`elicit_form`] asks, without a
/// JSON tree to build and convert, and without a conversion that can fail.
///
/// ```
/// use tern_mcp::ask::{self, ElicitForm};
/// use tern_mcp::types::v2026_07_28::{BooleanSchema, InputRequest, StringSchema};
///
/// let question: InputRequest = ElicitForm::new("Which region should the database live in?")
///     .required("region", StringSchema::new())
///     .optional("replicated", BooleanSchema::new())
///     .into();
/// let same = ask::elicit_form(
///     "Which region should the database live in?",
///     serde_json::json!({"type": "object", "properties": {
///         "region": {"type": "string"}, "replicated": {"type": "boolean"}
///     }, "required": ["region"]}),
/// )?;
/// assert_eq!(question, same);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ElicitForm {
    message: String,
    schema: ElicitRequestFormParamsRequestedSchema,
}

impl ElicitForm {
    /// A form showing `message`, with no fields yet.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            schema: ElicitRequestFormParamsRequestedSchema::new(Default::default()),
        }
    }

    /// Adds the field `name`, which the user must fill in.
    pub fn required(
        mut self,
        name: impl Into<String>,
        field: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        let name = name.into();
        let required = self.schema.required.get_or_insert_with(Vec::new);
        if !required.contains(&name) {
            required.push(name.clone());
        }
        self.schema.properties.insert(name, field.into());
        self
    }

    /// Adds the field `name`, which the user may leave empty.
    pub fn optional(
        mut self,
        name: impl Into<String>,
        field: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        let name = name.into();
        if let Some(required) = &mut self.schema.required {
            required.retain(|r| *r != name);
        }
        self.schema.properties.insert(name, field.into());
        self
    }

    /// The form as an input request.
    pub(crate) fn into_request(self) -> InputRequest {
        let mut params = ElicitRequestFormParams::new(self.message, self.schema);
        // Said, though `form` is the default: a reader finds the variant at the first
        // member.
        params.mode = Some(FormMode);
        InputRequest::Elicit(ElicitRequest::new(ElicitRequestParams::Form(params)))
    }
}

impl From<ElicitForm> for InputRequest {
    fn from(form: ElicitForm) -> Self {
        form.into_request()
    }
}

/// A URL elicitation: the user completes a step out of band at `url`.
pub fn elicit_url(message: impl Into<String>, url: impl Into<String>) -> InputRequest {
    InputRequest::Elicit(ElicitRequest::new(ElicitRequestParams::Url(
        ElicitRequestUrlParams::new(message, url),
    )))
}

/// A sampling request: one user message of text, answered by the client's model.
pub fn sample(prompt: impl Into<String>, max_tokens: i64) -> InputRequest {
    let message = SamplingMessage::new(
        SamplingMessageContent::One(SamplingMessageContentBlock::Text(TextContent::new(prompt))),
        Role::User,
    );
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        max_tokens,
        vec![message],
    )))
}

/// A request for the client's roots.
pub fn list_roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::new())
}

/// An `InputRequiredResult` asking `requests` (under the given keys) and carrying
/// `state` for the retry.
#[inline]
pub fn input_required<K: Into<String>>(
    requests: impl IntoIterator<Item = (K, InputRequest)>,
    state: Option<&str>,
) -> InputRequiredResult {
    // Inserted one by one (a later key replaces an earlier one, as `collect` would):
    // `collect` gathers them into a vector and sorts it first, an allocation more for
    // the one or two questions a round usually asks.
    let mut asked = std::collections::BTreeMap::new();
    for (key, request) in requests {
        asked.insert(key.into(), request);
    }
    let mut result = InputRequiredResult::new();
    if !asked.is_empty() {
        result.input_requests = Some(InputRequests(asked));
    }
    result.request_state = state.map(str::to_owned);
    result
}

/// An accepted elicitation with the given form values.
pub fn accept<K: Into<String>, V: Into<ElicitValue>>(
    fields: impl IntoIterator<Item = (K, V)>,
) -> ElicitResult {
    let mut result = ElicitResult::new(ElicitResultAction::Accept);
    result.content = Some(
        fields
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect(),
    );
    result
}

/// A declined elicitation.
pub fn decline() -> ElicitResult {
    ElicitResult::new(ElicitResultAction::Decline)
}

/// A cancelled elicitation.
pub fn cancel() -> ElicitResult {
    ElicitResult::new(ElicitResultAction::Cancel)
}

/// A text content block.
pub fn text(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::v2026_07_28::{BooleanSchema, StringSchema};

    fn schema_of(request: &InputRequest) -> Value {
        let InputRequest::Elicit(elicit) = request else {
            panic!("not an elicitation: {request:?}");
        };
        serde_json::to_value(&elicit.params).expect("serializable")
    }

    #[test]
    fn a_form_lists_each_field_once_and_requires_only_what_was_required_last() {
        let form = ElicitForm::new("Where?")
            .required("region", StringSchema::new())
            .required("region", StringSchema::new())
            .required("zone", StringSchema::new())
            .optional("zone", BooleanSchema::new())
            .into_request();
        let written = schema_of(&form);
        assert_eq!(written["mode"], "form");
        assert_eq!(written["message"], "Where?");
        assert_eq!(
            written["requestedSchema"]["required"],
            serde_json::json!(["region"])
        );
        assert_eq!(
            written["requestedSchema"]["properties"]["zone"]["type"],
            "boolean"
        );
    }

    #[test]
    fn a_form_without_required_fields_says_none() {
        let form = ElicitForm::new("Anything to add?").optional("note", StringSchema::new());
        let written = schema_of(&form.into_request());
        assert!(written["requestedSchema"].get("required").is_none());
    }

    #[test]
    fn a_key_asked_twice_asks_its_last_question_and_no_keys_ask_nothing() {
        let asked = input_required(
            [
                ("region", ElicitForm::new("First?").into()),
                ("zone", list_roots()),
                ("region", ElicitForm::new("Second?").into()),
            ],
            Some("s"),
        );
        let requests = asked.input_requests.expect("questions");
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["region", "zone"]);
        assert_eq!(schema_of(&requests["region"])["message"], "Second?");
        assert_eq!(asked.request_state.as_deref(), Some("s"));
        let none = input_required(Vec::<(String, InputRequest)>::new(), None);
        assert!(none.input_requests.is_none() && none.request_state.is_none());
    }
}
