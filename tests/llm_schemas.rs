//! Every schema an `llm` stage gates its answer with, as the openai provider
//! sends it in strict mode, checked against OpenAI's documented rules for
//! strict structured outputs: the root is an object (not anyOf); every
//! object lists its properties, requires all of them and sets
//! `additionalProperties: false`; only supported keywords appear; `$ref`s
//! point at `$defs` that exist. A real endpoint answers 400 to a schema that
//! breaks them, so a stage would fail before any answer.

use std::path::Path;

use engine::llm::structured::{Dialect, WireSchema};
use engine::llm::{LlmRequest, Tier};
use serde_json::Value;

const SUPPORTED: &[&str] = &[
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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `output:` of every stage with an `llm:` section, in every pipeline file.
fn stage_schemas() -> Vec<String> {
    let mut files = vec![];
    let mut dirs = vec![root().join("pipelines")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                let doc: Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                for stage in doc["stages"].as_object().into_iter().flat_map(|s| s.values()) {
                    if stage.get("llm").is_some() {
                        files.push(
                            stage["output"]
                                .as_str()
                                .expect("an llm stage has an output schema")
                                .to_owned(),
                        );
                    }
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

fn violations(schema: &Value, root: &Value, at: &str, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else { return };
    for key in map.keys() {
        if !SUPPORTED.contains(&key.as_str()) {
            out.push(format!("{at}: unsupported keyword `{key}`"));
        }
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        let target = r.strip_prefix("#/$defs/").and_then(|n| root["$defs"].get(n));
        if target.is_none() {
            out.push(format!("{at}: $ref {r} points nowhere"));
        }
    }
    let is_object = map
        .get("type")
        .is_some_and(|t| t == "object" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "object")));
    if is_object || map.contains_key("properties") {
        let props = map.get("properties").and_then(Value::as_object);
        match props {
            None => out.push(format!("{at}: an object without properties")),
            Some(props) => {
                let mut required: Vec<&str> = map["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
                required.sort_unstable();
                keys.sort_unstable();
                if required != keys {
                    out.push(format!("{at}: required {required:?} is not every property {keys:?}"));
                }
                for (name, sub) in props {
                    violations(sub, root, &format!("{at}.{name}"), out);
                }
            }
        }
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(format!("{at}: additionalProperties is not false"));
        }
    }
    if let Some(items) = map.get("items") {
        violations(items, root, &format!("{at}[]"), out);
    }
    for (i, sub) in map
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        violations(sub, root, &format!("{at}|{i}"), out);
    }
    for (name, sub) in map.get("$defs").and_then(Value::as_object).into_iter().flatten() {
        violations(sub, root, &format!("$defs.{name}"), out);
    }
}

#[test]
fn every_stage_schema_meets_openai_strict_mode_rules_on_the_wire() {
    let files = stage_schemas();
    assert!(files.len() >= 6, "{files:?}");
    let mut problems = vec![];
    for file in &files {
        let text = std::fs::read_to_string(root().join("schemas").join(file)).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let mut found = vec![];
        // The stage file itself breaks the rules (optional properties,
        // minLength, a free-form object): the point is what is sent.
        let request = LlmRequest {
            stage: "s".into(),
            system: None,
            cached: None,
            user: "u".into(),
            schema: Some(schema.clone()),
            schema_name: file.trim_end_matches(".schema.json").into(),
            tier: Tier::Default,
            max_tokens: None,
        };
        let wire = WireSchema::of(&request, Dialect::Strict).unwrap().schema;
        if wire.get("type") != Some(&Value::String("object".into())) {
            found.push("the root is not an object".to_owned());
        }
        violations(&wire, &wire, "$", &mut found);
        for forbidden in ["$schema", "$id", "title"] {
            if wire.to_string().contains(&format!("\"{forbidden}\"")) {
                found.push(format!("`{forbidden}` is sent"));
            }
        }
        for file_ref in ["prompts/", ".schema.json", ".j2"] {
            if wire.to_string().contains(file_ref) {
                found.push(format!("a description names a file ({file_ref})"));
            }
        }
        problems.extend(found.into_iter().map(|p| format!("{file}: {p}")));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The check above fails on the files as written: it is not vacuous.
#[test]
fn the_stage_files_themselves_break_the_rules_the_wire_form_fixes() {
    let text = std::fs::read_to_string(root().join("schemas/build-plan.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut found = vec![];
    violations(&schema, &schema, "$", &mut found);
    assert!(
        found.iter().any(|p| p.contains("an object without properties")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|p| p.contains("unsupported keyword `$schema`")),
        "{found:?}"
    );
}
