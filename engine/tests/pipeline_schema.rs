//! `schemas/pipeline.schema.json` is what editors check pipeline files with:
//! it must be a valid draft 2020-12 schema, accept the language as documented
//! and as shipped, and reject the mistakes the compiler rejects.

use std::path::{Path, PathBuf};

use jsonschema::error::ValidationErrorKind;
use serde_json::{json, Value};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the engine crate sits inside the workspace")
        .to_path_buf()
}

fn schema() -> Value {
    let path = workspace().join("schemas/pipeline.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the pipeline schema compiles")
}

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).expect("test YAML parses")
}

/// The schema's complaints about `pipeline`, one line each.
fn errors(pipeline: &Value) -> Vec<String> {
    validator()
        .iter_errors(pipeline)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

fn assert_valid(pipeline: &Value) {
    let errors = errors(pipeline);
    assert!(errors.is_empty(), "rejected:\n{}", errors.join("\n"));
}

/// A minimal valid pipeline whose one stage is `stage`.
fn with_stage(stage: Value) -> Value {
    json!({"pipeline": "t", "stages": {"only": stage}})
}

#[test]
fn is_a_valid_draft_2020_12_schema() {
    jsonschema::draft202012::meta::validate(&schema()).expect("valid against the meta-schema");
    validator();
}

#[test]
fn every_property_has_a_description_for_editor_hints() {
    fn walk(value: &Value, path: &str, missing: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for (name, property) in properties {
                        if property.get("description").is_none() {
                            missing.push(format!("{path}/properties/{name}"));
                        }
                    }
                }
                for (key, child) in map {
                    walk(child, &format!("{path}/{key}"), missing);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    walk(child, &format!("{path}/{index}"), missing);
                }
            }
            _ => {}
        }
    }
    let mut missing = Vec::new();
    walk(&schema(), "#", &mut missing);
    assert!(missing.is_empty(), "no description: {missing:?}");
}

#[test]
fn accepts_every_action_and_modifier() {
    assert_valid(&yaml(
        r#"
pipeline: search/sample
summary: Every stage kind once
inputs:
  query: {type: string, description: what to look for}
  reindex: {type: boolean, default: false}
params:
  chunk: 500
  thresholds: {auto: 0.7}
output: "{{ answer }}"
stages:
  validate: {fn: query.validate, with: {query: "{{ inputs.query }}"}, summary: checks the query}
  route:
    needs: validate
    when: "{{ validate.ok }}"
    llm: {prompt: search/route.j2, builtin: search.route, tier: fast, repair: 1, max_tokens: 800}
    output: search-routing.schema.json
    on_invalid: {output: {sub_intents: []}}
  retrieve:
    needs: [route]
    for_each: {items: "{{ route.sub_intents }}", as: intent, concurrency: 4}
    run: search/retrieve
    with: {intent: "{{ intent }}"}
  ranked:
    needs: [retrieve]
    map_reduce:
      items: "{{ retrieve }}"
      chunk_size: "{{ params.chunk }}"
      reduce: {flatten: true, sort_by: confidence, order: desc, top_k: 3}
    llm: {prompt: search/rank.j2}
    on_invalid: fail
  widen:
    needs: [ranked]
    repeat: {over: [5, 8], as: k, until: "{{ result | length > 0 }}"}
    fn: search.top_k
  index: {read: {path: .claude/index/assets.jsonl, format: jsonl, schema: asset.schema.json, bad_rows: skip, missing: "null"}}
  save: {needs: widen, write: {path: out.json, value: "{{ widen }}", format: json}}
  log:
    needs: save
    append: {path: feedback.jsonl, value: {picked: "{{ widen }}"}}
    on_locked: {output: {locked: true}}
  choose: {ask: {prompt: Pick one, choices: [a, b], answer: "{{ inputs.query }}", default: a}}
  fetch: {http: {method: POST, url: "http://127.0.0.1/search", query: {q: x}, body: {}, timeout_s: 5}}
  shell: {exec: {command: [gemini, -p, "{{ inputs.query }}"], stdin: "", timeout_s: 30}}
  build: {mcp: {server: unity, tool: manage_scene, args: {action: create}, guard: scope, audit: audit.jsonl, sub_intent: 0}}
  answer: {needs: [index, log, choose, fetch, shell, build], emit: "done {{ inputs.query }}"}
  stop: {needs: answer, when: "{{ not answer }}", exit: {code: 1, status: no_match}}
"#,
    ));
}

#[test]
fn accepts_the_example_in_the_language_guide() {
    let guide = std::fs::read_to_string(workspace().join("docs/pipeline-language.md"))
        .expect("docs/pipeline-language.md exists");
    let example = guide
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the guide opens with a YAML example");
    assert_valid(&yaml(example));
}

#[test]
fn accepts_every_shipped_pipeline() {
    fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                yaml_files(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml") {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    yaml_files(&workspace().join("pipelines"), &mut files);
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable pipeline");
        let errors = errors(&yaml(&text));
        assert!(errors.is_empty(), "{}:\n{}", file.display(), errors.join("\n"));
    }
}

/// The one error the schema reports for a pipeline whose only stage is `stage`.
fn stage_error(stage: Value) -> ValidationErrorKind {
    let pipeline = with_stage(stage);
    let validator = validator();
    let mut errors: Vec<_> = validator.iter_errors(&pipeline).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = errors.remove(0).into_parts();
    assert_eq!(error.instance_path.as_str(), "/stages/only");
    error.kind
}

#[test]
fn rejects_a_stage_with_two_actions() {
    let kind = stage_error(json!({"fn": "a.b", "emit": "x"}));
    assert!(
        matches!(kind, ValidationErrorKind::OneOfMultipleValid { .. }),
        "{kind:?}"
    );
}

#[test]
fn rejects_a_stage_without_an_action() {
    let kind = stage_error(json!({"when": "{{ true }}"}));
    assert!(matches!(kind, ValidationErrorKind::OneOfNotValid { .. }), "{kind:?}");
}

#[test]
fn rejects_two_modifiers() {
    let kind = stage_error(json!({
        "fn": "a.b",
        "for_each": {"items": [1]},
        "repeat": {"times": 2}
    }));
    assert!(matches!(kind, ValidationErrorKind::Not { .. }), "{kind:?}");
}

#[test]
fn rejects_a_misspelt_stage_key_naming_it() {
    let kind = stage_error(json!({"fn": "a.b", "whne": "{{ x }}"}));
    let ValidationErrorKind::AdditionalProperties { unexpected } = kind else {
        panic!("{kind:?}");
    };
    assert_eq!(unexpected, ["whne"]);
}

#[test]
fn rejects_unknown_keys_and_bad_values() {
    let rejected = [
        json!({"llm": {"prompt": "p.j2", "tier": "slow"}}),
        json!({"llm": {"builtin": "no.prompt"}}),
        json!({"fn": "a.b", "repeat": {"over": [1], "times": 2}}),
        json!({"fn": "a.b", "repeat": {"as": "k"}}),
        json!({"fn": "a.b", "for_each": {"items": "not an expression"}}),
        json!({"fn": "a.b", "on_locked": "fail"}),
        json!({"fn": "a.b", "on_invalid": "ignore"}),
        json!({"exit": {"code": 300}}),
        json!({"write": {"path": "x.json"}}),
    ];
    for stage in rejected {
        assert!(!errors(&with_stage(stage.clone())).is_empty(), "accepted {stage}");
    }
    let mut unknown_top = with_stage(json!({"fn": "a.b"}));
    unknown_top["stagse"] = json!({});
    assert!(!errors(&unknown_top).is_empty());
    let bad_name = json!({"pipeline": "t", "stages": {"1st": {"fn": "a.b"}}});
    assert!(!errors(&bad_name).is_empty());
}
