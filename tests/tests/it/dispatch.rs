//! Decoding dispatches on discriminators the schema defines, never by guessing, and
//! keeps what the protocol leaves open.

use serde_json::{Value, json};
use tern_types::rpc::{ClientRequestMethod, InputMethod, MayRequireInput, ServerRequestMethod};
use tern_types::v2026_07_28 as v;

fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

#[test]
fn jsonrpc_other_than_2_0_is_rejected() {
    let err =
        decode::<v::JsonRpcRequest>(json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}))
            .unwrap_err();
    assert!(err.contains("expected \"2.0\", got \"1.0\""), "{err}");
    let err = decode::<v::ClientRequest>(
        json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}),
    )
    .unwrap_err();
    assert!(err.contains("2.0"), "{err}");
    let err =
        decode::<v::JsonRpcMessage>(json!({"jsonrpc": "1.0", "id": 1, "method": "x"})).unwrap_err();
    assert!(err.contains("2.0"), "{err}");
}

#[test]
fn a_constant_reads_from_text_as_it_lies_escaped_or_not_and_only_as_a_string() {
    let read = |text: &str| {
        serde_json::from_str::<v::JsonRpcRequest>(text)
            .map(|r| r.method)
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        read(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Ok("ping".into())
    );
    // Escaped: the text is unescaped before it is compared.
    assert_eq!(
        read(r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#),
        Ok("ping".into())
    );
    let err = read(r#"{"jsonrpc":"2\u002e1","id":1,"method":"ping"}"#).unwrap_err();
    assert!(err.contains("expected \"2.0\", got \"2.1\""), "{err}");
    let err = read(r#"{"jsonrpc":2,"id":1,"method":"ping"}"#).unwrap_err();
    assert!(err.contains("expected a string"), "{err}");
}

#[test]
fn an_untagged_union_is_told_apart_by_its_members_from_text_or_tree_escaped_or_not() {
    let kind = |schema: v::PrimitiveSchemaDefinition| match schema {
        v::PrimitiveSchemaDefinition::String(_) => "string",
        v::PrimitiveSchemaDefinition::UntitledSingleSelectEnum(_) => "single select",
        v::PrimitiveSchemaDefinition::UntitledMultiSelectEnum(_) => "multi select",
        _ => "other",
    };
    let from_text = |text: &str| {
        serde_json::from_str(text)
            .map(kind)
            .map_err(|e| e.to_string())
    };
    assert_eq!(from_text(r#"{"type":"string"}"#), Ok("string"));
    // An escape in a discriminating member is read, not compared as written.
    assert_eq!(
        from_text(r#"{"type":"str\u0069ng","enum":["a"]}"#),
        Ok("single select")
    );
    assert_eq!(
        from_text(r#"{"items":{"enum":["a"],"type":"string"},"type":"array"}"#),
        Ok("multi select")
    );
    // From a tree, as from text.
    let tree = json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}});
    assert_eq!(
        decode::<v::PrimitiveSchemaDefinition>(tree).map(kind),
        Ok("multi select")
    );
    let err = from_text(r#"{"type":"array"}"#).unwrap_err();
    assert!(err.contains("PrimitiveSchemaDefinition"), "{err}");
}

#[test]
fn an_unknown_method_is_a_clear_error() {
    let err = decode::<v::ClientRequest>(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/frobnicate", "params": {}}),
    )
    .unwrap_err();
    assert!(
        err.contains("unknown ClientRequest `method` \"tools/frobnicate\""),
        "{err}"
    );
    assert!(
        err.contains("tools/call"),
        "the error lists the known methods: {err}"
    );
    let err = decode::<v::InputRequest>(json!({"method": "ping"})).unwrap_err();
    assert!(err.contains("\"ping\""), "{err}");
}

#[test]
fn an_audio_block_is_audio_not_image() {
    let block: v::ContentBlock =
        decode(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})).unwrap();
    assert!(matches!(block, v::ContentBlock::Audio(_)), "{block:?}");
    let block: v::ContentBlock =
        decode(json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})).unwrap();
    assert!(matches!(block, v::ContentBlock::Image(_)), "{block:?}");
    let err = decode::<v::ContentBlock>(json!({"type": "video", "data": ""})).unwrap_err();
    assert!(err.contains("\"video\"") && err.contains("audio"), "{err}");
}

#[test]
fn tools_list_is_not_server_discover() {
    let request: v::ClientRequest = decode(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta()}}),
    )
    .unwrap();
    assert!(
        matches!(request, v::ClientRequest::ListTools(_)),
        "{request:?}"
    );
    assert_eq!(request.method(), "tools/list");
    let request: v::ClientRequest = decode(json!({"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": meta()}})).unwrap();
    assert!(
        matches!(request, v::ClientRequest::Discover(_)),
        "{request:?}"
    );
}

#[test]
fn result_type_dispatches_complete_input_required_missing_and_unknown() {
    let complete = json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]});
    assert!(matches!(
        decode::<v::CallToolOutcome>(complete).unwrap(),
        v::Outcome::Complete(_)
    ));

    let input_required = json!({"resultType": "input_required", "requestState": "s1"});
    match decode::<v::CallToolOutcome>(input_required).unwrap() {
        v::Outcome::InputRequired(r) => assert_eq!(r.request_state.as_deref(), Some("s1")),
        other => panic!("expected input-required, got {other:?}"),
    }

    // A server of an earlier version sends no resultType: the result is complete.
    let missing = json!({"content": [{"type": "text", "text": "legacy"}]});
    match decode::<v::CallToolOutcome>(missing).unwrap() {
        v::Outcome::Complete(r) => assert_eq!(r.result_type, v::ResultType::Complete),
        other => panic!("expected complete, got {other:?}"),
    }

    let err = decode::<v::CallToolOutcome>(json!({"resultType": "task", "task": {}})).unwrap_err();
    assert!(err.contains("unknown resultType \"task\""), "{err}");
}

#[test]
fn unknown_meta_keys_survive_a_round_trip() {
    let params = json!({
        "name": "provision",
        "arguments": {"name": "orders"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "com.example/tenant": {"id": 42, "weights": [0.5, null]}
        },
        "com.example/extra-param": true
    });
    let typed: v::CallToolRequestParams = decode(params.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), params);

    let result = json!({
        "resultType": "complete",
        "content": [],
        "_meta": {"traceparent": "00-abc-def-01", "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    });
    let typed: v::CallToolResult = decode(result.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), result);
}

#[test]
fn a_tool_input_schema_survives_untouched() {
    let tool = json!({
        "name": "deploy",
        "inputSchema": {
            "type": "object",
            "$defs": {"region": {"type": "string", "enum": ["eu-west-1", "us-east-1"]}},
            "properties": {
                "region": {"$ref": "#/$defs/region", "x-mcp-header": "Region"},
                "target": {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 0.5}]}
            },
            "required": ["region"]
        }
    });
    let typed: v::Tool = decode(tool.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), tool);
}

#[test]
fn empty_capability_objects_differ_from_absent_ones() {
    let caps: v::ClientCapabilities = decode(json!({"elicitation": {}, "roots": {}})).unwrap();
    assert!(caps.elicitation.is_some());
    assert!(caps.roots.is_some());
    assert!(caps.sampling.is_none());
    assert_eq!(
        serde_json::to_value(&caps).unwrap(),
        json!({"elicitation": {}, "roots": {}})
    );
}

#[test]
fn input_responses_decode_by_the_method_of_their_request() {
    let requests: v::InputRequests = decode(json!({
        "region": {"method": "elicitation/create", "params": {"message": "Region?", "requestedSchema": {"type": "object", "properties": {"region": {"type": "string"}}}}},
        "summary": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}},
        "roots": {"method": "roots/list"}
    }))
    .unwrap();
    let responses: v::InputResponses = decode(json!({
        "region": {"action": "accept", "content": {"region": "eu-west-1"}},
        "summary": {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"},
        "roots": {"roots": [{"uri": "file:///work"}]},
        "forged": {"action": "accept"}
    }))
    .unwrap();
    let decoded = responses.decode(&requests).unwrap();
    assert_eq!(decoded.len(), 3, "the unknown key is ignored");
    assert!(matches!(decoded["region"], v::InputResponse::Elicit(_)));
    assert!(matches!(
        decoded["summary"],
        v::InputResponse::CreateMessage(_)
    ));
    assert!(matches!(decoded["roots"], v::InputResponse::ListRoots(_)));

    // Lazily, one key at a time, typed by the input method.
    let elicit = responses
        .get::<v::method::Elicit>("region")
        .unwrap()
        .unwrap();
    assert_eq!(
        elicit.content.unwrap()["region"],
        v::ElicitValue::String("eu-west-1".into())
    );
    assert!(responses.get::<v::method::Elicit>("absent").is_none());

    // The same JSON answering a different request is decoded by that request.
    let err =
        v::InputResponse::decode_for("sampling/createMessage", responses.raw("region").unwrap())
            .unwrap_err();
    assert!(
        err.to_string().contains("`type`"),
        "an elicitation answer is not a sampling result: {err}"
    );
}

#[test]
fn input_responses_keep_each_key_once_with_its_last_answer_in_order() {
    let region = v::InputResponse::Elicit(
        decode(json!({"action": "accept", "content": {"region": "eu-west-1"}})).unwrap(),
    );
    let roots = serde_json::value::RawValue::from_string(r#"{"roots": []}"#.into()).unwrap();
    let mut responses = v::InputResponses::new();
    responses.insert("re\"gion", region).unwrap();
    responses.insert_raw("roots", &roots).unwrap();
    assert_eq!(
        serde_json::to_string(&responses).unwrap(),
        r#"{"re\"gion":{"action":"accept","content":{"region":"eu-west-1"}},"roots":{"roots": []}}"#
    );
    // Answered again: the new answer, last; the raw one as it came.
    responses.insert_raw("re\"gion", &roots).unwrap();
    let text = serde_json::to_string(&responses).unwrap();
    assert_eq!(text, r#"{"roots":{"roots": []},"re\"gion":{"roots": []}}"#);
    let read: v::InputResponses = serde_json::from_str(&text).unwrap();
    assert_eq!((read.len(), read), (2, responses));
}

#[test]
fn elicitation_params_default_to_form_mode() {
    let params: v::ElicitRequestParams =
        decode(json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}))
            .unwrap();
    assert!(matches!(params, v::ElicitRequestParams::Form(_)));
    let params: v::ElicitRequestParams =
        decode(json!({"mode": "url", "message": "m", "url": "https://example.com/auth"})).unwrap();
    assert!(matches!(params, v::ElicitRequestParams::Url(_)));
}

#[test]
fn schema_definitions_are_told_apart_by_their_members() {
    let cases = [
        (json!({"type": "string"}), "String"),
        (json!({"type": "integer", "minimum": 1}), "Number"),
        (json!({"type": "boolean"}), "Boolean"),
        (
            json!({"type": "string", "enum": ["a", "b"]}),
            "UntitledSingleSelectEnum",
        ),
        (
            json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
            "LegacyTitledEnum",
        ),
        (
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
            "TitledSingleSelectEnum",
        ),
        (
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
            "UntitledMultiSelectEnum",
        ),
        (
            json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
            "TitledMultiSelectEnum",
        ),
    ];
    for (schema, expected) in cases {
        let decoded: v::PrimitiveSchemaDefinition = decode(schema.clone()).unwrap();
        let name = format!("{decoded:?}");
        assert!(
            name.starts_with(&format!("{expected}(")),
            "{schema} decoded as {name}"
        );
        assert_eq!(serde_json::to_value(&decoded).unwrap(), schema);
    }
}

#[test]
fn method_markers_name_params_results_and_input_required() {
    fn may_require_input<M: MayRequireInput>() -> &'static str {
        M::METHOD
    }
    assert_eq!(may_require_input::<v::method::CallTool>(), "tools/call");
    assert_eq!(may_require_input::<v::method::GetPrompt>(), "prompts/get");
    assert_eq!(
        may_require_input::<v::method::ReadResource>(),
        "resources/read"
    );
    fn client<M: ClientRequestMethod>() -> &'static str {
        M::METHOD
    }
    assert_eq!(client::<v::method::Discover>(), "server/discover");
    fn input<M: InputMethod>() -> &'static str {
        M::METHOD
    }
    assert_eq!(input::<v::method::Elicit>(), "elicitation/create");
    assert_eq!(
        input::<v::method::CreateMessage>(),
        "sampling/createMessage"
    );
    assert_eq!(input::<v::method::ListRoots>(), "roots/list");
}

#[test]
fn the_2025_era_has_initialize_ping_and_server_to_client_requests() {
    use tern_types::v2025_11_25 as legacy;
    fn server_to_client<M: ServerRequestMethod>() -> &'static str {
        M::METHOD
    }
    fn client_to_server<M: ClientRequestMethod>() -> &'static str {
        M::METHOD
    }
    assert_eq!(
        client_to_server::<legacy::method::Initialize>(),
        "initialize"
    );
    assert_eq!(client_to_server::<legacy::method::Ping>(), "ping");
    assert_eq!(server_to_client::<legacy::method::Ping>(), "ping");
    assert_eq!(
        server_to_client::<legacy::method::Elicit>(),
        "elicitation/create"
    );
    assert_eq!(
        server_to_client::<legacy::method::CreateMessage>(),
        "sampling/createMessage"
    );
    assert_eq!(
        server_to_client::<legacy::method::ListRoots>(),
        "roots/list"
    );
    let request: legacy::ServerRequest = decode(json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {"message": "Region?", "requestedSchema": {"type": "object", "properties": {}}}})).unwrap();
    assert!(
        matches!(request, legacy::ServerRequest::Elicit(_)),
        "{request:?}"
    );
}

#[test]
fn json_values_accept_null_and_floats() {
    let result = json!({"resultType": "complete", "content": [], "structuredContent": {"ratio": 0.25, "missing": null}});
    let typed: v::CallToolResult = decode(result.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), result);
    let logged = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": null}});
    let typed: v::LoggingMessageNotification = decode(logged.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), logged);
}

/// Open structs read their members one by one (no `flatten` buffering): from text and
/// from a tree alike, unknown members kept in order, absent optional members empty,
/// a missing required member and a repeated one refused, as a derived reader would.
#[test]
fn open_structs_read_like_derived_ones_from_text_and_from_a_tree() {
    let text = r#"{"z-unknown":1,"name":"provision","arguments":{"b":2,"a":1},"requestState":null,"x\u002descaped":[true]}"#;
    let from_text: v::CallToolRequestParams = serde_json::from_str(text).unwrap();
    let from_tree: v::CallToolRequestParams =
        decode(serde_json::from_str::<Value>(text).unwrap()).unwrap();
    assert_eq!(from_text, from_tree);
    assert_eq!(from_text.name, "provision");
    assert_eq!(from_text.request_state, None);
    assert!(from_text.meta.is_none());
    let unknown: Vec<&str> = from_text.extra.keys().map(String::as_str).collect();
    assert_eq!(unknown, ["z-unknown", "x-escaped"]);

    let missing = serde_json::from_str::<v::CallToolRequestParams>(r#"{"arguments":{}}"#)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing field `name`"), "{missing}");
    let repeated = serde_json::from_str::<v::CallToolRequestParams>(r#"{"name":"a","name":"b"}"#)
        .unwrap_err()
        .to_string();
    assert!(repeated.contains("duplicate field `name`"), "{repeated}");
    let not_an_object = serde_json::from_str::<v::CallToolRequestParams>("[1]")
        .unwrap_err()
        .to_string();
    assert!(
        not_an_object.contains("struct CallToolRequestParams"),
        "{not_an_object}"
    );
}

/// Unions are buffered as text to read their discriminator: from text and from a tree
/// they decode alike, a missing `resultType` still means complete, and an unknown tag
/// still says what it is.
#[test]
fn unions_decode_alike_from_text_and_from_a_tree() {
    let texts = [
        r#"{"content":[{"type":"text","text":"done"}]}"#,
        r#"{"resultType":"complete","content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
        r#"{"resultType":"input_required","inputRequests":{"r":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s"}"#,
    ];
    for text in texts {
        let from_text: v::CallToolOutcome = serde_json::from_str(text).unwrap();
        let from_tree: v::CallToolOutcome =
            decode(serde_json::from_str::<Value>(text).unwrap()).unwrap();
        assert_eq!(from_text, from_tree, "{text}");
    }
    // The tag first or later: the same block.
    let first: v::ContentBlock =
        serde_json::from_str(r#"{"type":"text","text":"t","_meta":{"k":[1]}}"#).unwrap();
    let later: v::ContentBlock =
        serde_json::from_str(r#"{"text":"t","_meta":{"k":[1]},"type":"text"}"#).unwrap();
    assert_eq!(first, later);
    assert!(matches!(first, v::ContentBlock::Text(_)));
    let not_a_string = serde_json::from_str::<v::ContentBlock>(r#"{"type":7,"text":"t"}"#);
    assert!(not_a_string.is_err());
    let unknown = serde_json::from_str::<v::ContentBlock>(r#"{"type":"hologram"}"#)
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("hologram"), "{unknown}");
    let missing = serde_json::from_str::<v::ContentBlock>(r#"{"text":"t"}"#)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing its `type` member"), "{missing}");
}

/// tern writes each union's tag as its first member (and an input-required result its
/// `resultType`), so a reader knows the variant before it reads the rest.
#[test]
fn tern_writes_tags_first() {
    let block = v::ContentBlock::Text(v::TextContent::new("t"));
    let question = tern_mcp::ask::elicit_form(
        "Which region?",
        json!({"type": "object", "properties": {"region": {"type": "string"}}}),
    )
    .unwrap();
    let result = v::InputRequiredResult {
        request_state: Some("s".into()),
        ..v::InputRequiredResult::new()
    };
    let written = [
        (serde_json::to_string(&block).unwrap(), r#"{"type":"text""#),
        (
            serde_json::to_string(&question).unwrap(),
            r#"{"method":"elicitation/create","params":{"mode":"form""#,
        ),
        (
            serde_json::to_string(&result).unwrap(),
            r#"{"resultType":"input_required""#,
        ),
    ];
    for (text, start) in written {
        assert!(text.starts_with(start), "{text}");
    }
}

/// The members before a tag are kept as text and read again after it: nested objects
/// with a member of the tag's name do not confuse it, a repeated tag is refused, and
/// what the variant reads is the same whatever the order.
#[test]
fn a_tag_after_other_members_is_found_at_its_own_level() {
    let nested: v::ContentBlock = serde_json::from_str(
        r#"{"_meta":{"type":"image","x":{"type":"audio"}},"text":"t","type":"text"}"#,
    )
    .unwrap();
    match nested {
        v::ContentBlock::Text(t) => {
            assert_eq!(t.text, "t");
            assert_eq!(t.meta.unwrap().0["type"], "image");
        }
        other => panic!("expected text, got {other:?}"),
    }
    let repeated =
        serde_json::from_str::<v::ContentBlock>(r#"{"type":"text","text":"t","type":"text"}"#);
    assert!(repeated.is_err());
    let escaped: v::ContentBlock =
        serde_json::from_str(r#"{"text":"a\"b","\u0074ype":"text"}"#).unwrap();
    assert!(matches!(escaped, v::ContentBlock::Text(t) if t.text == "a\"b"));
}

/// A union's value is held as text borrowed from the input when the input is text; from
/// a tree it is written out, and decodes the same.
#[test]
fn a_buffered_value_borrows_from_text_input() {
    let input = r#"{"a":[1,{"b":"c"}],"d":true}"#;
    let mut reader = serde_json::Deserializer::from_str(input);
    let buffered = tern_types::rpc::buffer(&mut reader).unwrap();
    assert_eq!(buffered.get(), input);
    assert_eq!(
        buffered.get().as_ptr(),
        input.as_ptr(),
        "copied, not borrowed"
    );

    let tree: Value = serde_json::from_str(input).unwrap();
    let from_tree = tern_types::rpc::buffer(tree.clone()).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(from_tree.get()).unwrap(),
        tree
    );
}
