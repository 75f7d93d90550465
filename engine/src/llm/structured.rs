//! How a stage's output schema travels to a provider.
//!
//! Vendors constrain structured output: a tool's `input_schema` and a strict
//! `json_schema` must describe an object, and their names must match
//! `^[a-zA-Z0-9_-]{1,64}$`. Every dialect drops what only our files need
//! (`$schema`, `$id`, `title`, descriptions naming files the model cannot
//! see). OpenAI's strict mode further needs every property required (an
//! optional one becomes nullable), `additionalProperties: false` on every
//! object, and only the keywords it supports; a free-form object (no
//! properties) cannot be strict, so it travels as a JSON-encoded string.
//! [`WireSchema::unwrap`] undoes all of it, so the stage's own schema gate
//! sees the answer in the stage's shape.

use serde_json::{json, Value};

use super::LlmRequest;

/// The property a non-object answer is wrapped in, see [`WireSchema`].
const WRAPPER: &str = "value";

/// Keywords OpenAI's strict structured outputs accept; others are dropped
/// (the stage's gate still checks them on the answer).
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords that describe our files, not the answer.
const FILE_KEYWORDS: &[&str] = &["$schema", "$id", "title", "$comment", "examples"];

/// How strictly a provider's endpoint reads a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI `response_format: json_schema, strict: true`.
    Strict,
    /// Anthropic tool `input_schema`, or written instructions.
    Loose,
}

/// A schema as sent on the wire, with what is needed to read the answer back.
pub struct WireSchema {
    /// The tool or `response_format` name, in the characters the wire allows.
    pub name: String,
    /// The schema as sent: wrapped in an object when it is not one, made strict for [`Dialect::Strict`].
    pub schema: Value,
    /// The stage's schema (without our file keywords), for [`Self::unwrap`].
    original: Value,
    wrapped: bool,
}

impl WireSchema {
    /// The request's schema made acceptable to `dialect`; `None` when the
    /// request has no schema.
    pub fn of(request: &LlmRequest, dialect: Dialect) -> Option<Self> {
        let original = for_model(request.schema.as_ref()?);
        let is_object = original.get("type").and_then(Value::as_str) == Some("object");
        let (mut schema, wrapped) = if is_object {
            (original.clone(), false)
        } else {
            let mut wrapper = json!({
                "type": "object",
                "properties": {WRAPPER: original.clone()},
                "required": [WRAPPER],
                "additionalProperties": false,
            });
            // $defs stay at the root, where `#/$defs/…` points.
            if let Some(defs) = wrapper["properties"][WRAPPER]
                .as_object_mut()
                .and_then(|o| o.remove("$defs"))
            {
                wrapper["$defs"] = defs;
            }
            (wrapper, true)
        };
        if dialect == Dialect::Strict {
            strict(&mut schema);
        }
        Some(Self {
            name: wire_name(&request.schema_name),
            schema,
            original,
            wrapped,
        })
    }

    /// The stage's value from what the model produced for the wire schema:
    /// unwrapped, nulls of optional properties removed, encoded free-form
    /// objects decoded.
    pub fn unwrap(&self, produced: Value) -> Value {
        let mut value = match produced {
            Value::Object(mut map) if self.wrapped && map.contains_key(WRAPPER) => {
                map.remove(WRAPPER).unwrap_or_default()
            }
            other => other,
        };
        restore(&mut value, &self.original, &self.original);
        value
    }
}

/// The schema without keywords that describe our files: `$schema`, `$id`,
/// `title`, and descriptions that name a file (`prompts/…`, `….json`).
pub(crate) fn for_model(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| {
                    !(FILE_KEYWORDS.contains(&k.as_str()) || k.as_str() == "description" && names_a_file(v))
                })
                .map(|(k, v)| {
                    // Property names are data, not keywords: keep them all.
                    let v = match k.as_str() {
                        "properties" | "$defs" => Value::Object(
                            v.as_object()
                                .map(|m| m.iter().map(|(n, s)| (n.clone(), for_model(s))).collect())
                                .unwrap_or_default(),
                        ),
                        _ => for_model(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(for_model).collect()),
        other => other.clone(),
    }
}

fn names_a_file(description: &Value) -> bool {
    let text = description.as_str().unwrap_or_default();
    [
        "prompts/",
        "schemas/",
        "data/",
        "pipelines/",
        ".json",
        ".yml",
        ".yaml",
        ".j2",
    ]
    .iter()
    .any(|p| text.contains(p))
}

/// An object schema that lists no properties: any object goes.
fn is_free_form(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object") && schema.get("properties").is_none()
}

/// Rewrite `schema` in place for OpenAI's strict mode.
fn strict(schema: &mut Value) {
    if is_free_form(schema) {
        let note = "A JSON object, encoded as a string";
        let description = match schema.get("description").and_then(Value::as_str) {
            Some(d) => format!("{}. {note}.", d.trim_end_matches('.')),
            None => format!("{note}."),
        };
        *schema = json!({"type": "string", "description": description});
        return;
    }
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(one_of)) = map.remove("oneOf") {
        map.insert("anyOf".into(), Value::Array(one_of));
    }
    map.retain(|k, _| STRICT_KEYWORDS.contains(&k.as_str()));
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key).filter(|v| v.is_object()) {
            strict(sub);
        }
    }
    if let Some(Value::Array(subs)) = map.get_mut("anyOf") {
        subs.iter_mut().for_each(strict);
    }
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        defs.values_mut().for_each(strict);
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut all = None;
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, sub) in props.iter_mut() {
            strict(sub);
            if !required.contains(name) {
                nullable(sub);
            }
        }
        all = Some(props.keys().cloned().map(Value::String).collect());
    }
    if let Some(all) = all {
        map.insert("required".into(), Value::Array(all));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// `schema` that also accepts null.
fn nullable(schema: &mut Value) {
    let accepts_null = |t: &Value| t == "null" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "null"));
    match schema.get("type").cloned() {
        Some(t) if accepts_null(&t) => {}
        Some(Value::String(t)) if schema.get("enum").is_none() => schema["type"] = json!([t, "null"]),
        Some(Value::Array(mut types)) if schema.get("enum").is_none() => {
            types.push(json!("null"));
            schema["type"] = Value::Array(types);
        }
        _ => *schema = json!({"anyOf": [schema.take(), {"type": "null"}]}),
    }
}

/// Undo the strict rewrite on an answer, walking it with the stage's schema
/// (`root` resolves `#/$defs/…`): drop nulls the stage's schema does not
/// accept for optional properties, decode strings standing for free-form
/// objects.
fn restore(value: &mut Value, schema: &Value, root: &Value) {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => match r.strip_prefix("#/$defs/").and_then(|name| root["$defs"].get(name)) {
            Some(target) => target,
            None => return,
        },
        None => schema,
    };
    if is_free_form(schema) {
        if let Some(decoded) = value.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
            *value = decoded;
        }
        return;
    }
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = |name: &str| {
                schema["required"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|n| n == name))
            };
            map.retain(|name, v| !(v.is_null() && !required(name) && !accepts_null(props.get(name))));
            for (name, v) in map.iter_mut() {
                if let Some(sub) = props.get(name) {
                    restore(v, sub, root);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                items.iter_mut().for_each(|v| restore(v, item_schema, root));
            }
        }
        _ => {}
    }
}

fn accepts_null(schema: Option<&Value>) -> bool {
    let Some(schema) = schema else { return false };
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => schema["anyOf"]
            .as_array()
            .is_some_and(|a| a.iter().any(|s| accepts_null(Some(s)))),
    }
}

/// `name` reduced to the characters vendors accept in tool and format names.
fn wire_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "output".to_owned()
    } else {
        cleaned
    }
}

/// The instruction appended to the prompt when the provider cannot be told
/// the schema structurally.
pub(crate) fn json_instructions(schema: Option<&Value>) -> String {
    match schema.map(for_model) {
        Some(schema) => format!(
            "Answer with one JSON value only, no prose, that satisfies this JSON Schema:\n{}",
            serde_json::to_string(&schema).unwrap_or_else(|_| schema.to_string())
        ),
        None => "Answer with one JSON value only, no prose.".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Tier;

    fn request(schema: Value, name: &str) -> LlmRequest {
        LlmRequest {
            stage: "s".into(),
            system: None,
            cached: None,
            user: "u".into(),
            schema: Some(schema),
            schema_name: name.into(),
            tier: Tier::Default,
            max_tokens: None,
        }
    }

    #[test]
    fn loose_schemas_lose_only_file_keywords_and_travel_under_a_valid_name() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x.schema.json", "title": "X",
            "description": "Output of stage x (prompts/x.j2)",
            "type": "object", "properties": {"ok": {"type": "boolean", "description": "whether it worked"}},
        });
        let wire = WireSchema::of(&request(schema, "search-routing.schema.json"), Dialect::Loose).unwrap();
        assert_eq!(wire.name, "search-routing_schema_json");
        assert_eq!(
            wire.schema,
            json!({"type": "object", "properties": {"ok": {"type": "boolean", "description": "whether it worked"}}})
        );
        assert_eq!(wire.unwrap(json!({"ok": true})), json!({"ok": true}));
    }

    #[test]
    fn other_schemas_are_wrapped_and_unwrapped() {
        let wire = WireSchema::of(&request(json!({"type": "array"}), ""), Dialect::Strict).unwrap();
        assert_eq!(wire.name, "output");
        assert_eq!(wire.schema["properties"]["value"], json!({"type": "array"}));
        assert_eq!(wire.unwrap(json!({"value": [1]})), json!([1]));
    }

    #[test]
    fn strict_schemas_require_every_property_and_read_the_answer_back() {
        let schema = json!({
            "type": "object", "required": ["calls"],
            "properties": {
                "calls": {"type": "array", "maxItems": 3, "items": {
                    "type": "object", "required": ["tool"],
                    "properties": {"tool": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
                }},
                "note": {"type": "string"},
                "hint": {"type": ["string", "null"]},
            },
        });
        let wire = WireSchema::of(&request(schema, "plan"), Dialect::Strict).unwrap();
        assert_eq!(wire.schema["required"], json!(["calls", "note", "hint"]));
        assert_eq!(wire.schema["additionalProperties"], false);
        assert_eq!(wire.schema["properties"]["note"]["type"], json!(["string", "null"]));
        assert_eq!(wire.schema["properties"]["hint"]["type"], json!(["string", "null"]));
        let call = &wire.schema["properties"]["calls"]["items"];
        assert_eq!(call["required"], json!(["tool", "args"]));
        assert_eq!(
            call["properties"]["tool"],
            json!({"type": "string"}),
            "minLength is not a strict keyword"
        );
        assert_eq!(
            call["properties"]["args"]["type"],
            json!(["string", "null"]),
            "a free-form object travels encoded"
        );
        let answer = json!({"calls": [{"tool": "t", "args": "{\"a\": 1}"}, {"tool": "u", "args": null}], "note": null, "hint": null});
        assert_eq!(
            wire.unwrap(answer),
            json!({"calls": [{"tool": "t", "args": {"a": 1}}, {"tool": "u"}], "hint": null}),
            "optional nulls the stage does not accept are dropped; encoded objects decoded"
        );
    }
}
