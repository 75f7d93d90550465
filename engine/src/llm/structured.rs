//! How a stage's output schema travels to a provider.
//!
//! Vendors constrain structured output: a tool's `input_schema` and a strict
//! `json_schema` must describe an object, and their names must match
//! `^[a-zA-Z0-9_-]{1,64}$`. Providers without structured output get the
//! schema as written instructions instead.

use serde_json::{json, Value};

use super::LlmRequest;

/// The property a non-object answer is wrapped in, see [`WireSchema`].
const WRAPPER: &str = "value";

/// A schema as sent on the wire, remembering whether it had to be wrapped.
pub(crate) struct WireSchema {
    pub name: String,
    pub schema: Value,
    wrapped: bool,
}

impl WireSchema {
    /// The request's schema made acceptable as a tool input / strict format;
    /// `None` when the request has no schema.
    pub(crate) fn of(request: &LlmRequest) -> Option<Self> {
        let schema = request.schema.as_ref()?;
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
        let (schema, wrapped) = if is_object {
            (schema.clone(), false)
        } else {
            let wrapper = json!({
                "type": "object",
                "properties": {WRAPPER: schema},
                "required": [WRAPPER],
                "additionalProperties": false,
            });
            (wrapper, true)
        };
        Some(Self {
            name: wire_name(&request.schema_name),
            schema,
            wrapped,
        })
    }

    /// The stage's value from what the model produced for the wire schema.
    pub(crate) fn unwrap(&self, produced: Value) -> Value {
        match produced {
            Value::Object(mut map) if self.wrapped && map.contains_key(WRAPPER) => {
                map.remove(WRAPPER).unwrap_or_default()
            }
            other => other,
        }
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
    match schema {
        Some(schema) => format!(
            "Answer with one JSON value only, no prose, that satisfies this JSON Schema:\n{}",
            serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string())
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
            max_tokens: 0,
        }
    }

    #[test]
    fn object_schemas_travel_unchanged_under_a_valid_name() {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let wire = WireSchema::of(&request(schema.clone(), "search-routing.schema.json")).unwrap();
        assert_eq!(wire.name, "search-routing_schema_json");
        assert_eq!(wire.schema, schema);
        assert_eq!(wire.unwrap(json!({"ok": true})), json!({"ok": true}));
    }

    #[test]
    fn other_schemas_are_wrapped_and_unwrapped() {
        let wire = WireSchema::of(&request(json!({"type": "array"}), "")).unwrap();
        assert_eq!(wire.name, "output");
        assert_eq!(wire.schema["properties"]["value"], json!({"type": "array"}));
        assert_eq!(wire.unwrap(json!({"value": [1]})), json!([1]));
    }
}
