//! `llm` stages run through providers built from YAML config, against a
//! local server speaking each vendor's wire format that records what it is
//! sent: the config's settings must reach the request on the wire.

mod engine_util;
mod support;

use engine::llm::{connect_with_env, LlmConfig};
use engine::run::Flow;
use engine::Registry;
use engine_util::Project;
use serde_json::{json, Value};
use support::llm_server::{LlmServer, Reply};

/// A one-stage pipeline asking for `{"label": …}`; `max_tokens` is the
/// stage's own setting, if any.
fn label_project(max_tokens: Option<u32>) -> Project {
    let p = Project::new();
    p.file("prompts/classify.j2", "Label: {{ text }}");
    p.file(
        "schemas/label.schema.json",
        r#"{"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}"#,
    );
    let max_tokens = max_tokens.map(|n| format!(", max_tokens: {n}")).unwrap_or_default();
    p.pipeline(
        "label",
        &format!(
            "pipeline: label\ninputs:\n  text: {{type: string}}\noutput: \"{{{{ classify }}}}\"\nstages:\n  classify:\n    llm: {{prompt: classify.j2{max_tokens}}}\n    with: {{text: \"{{{{ inputs.text }}}}\"}}\n    output: label.schema.json\n"
        ),
    );
    p
}

/// The answer `{"label": "cat"}` in the wire format of `vendor`.
fn cat_answer(vendor: &str) -> Reply {
    match vendor {
        "anthropic" => Reply::anthropic_text("{\"label\": \"cat\"}", "end_turn"),
        _ => Reply::openai_content(
            "{\"label\": \"cat\"}",
            json!({"prompt_tokens": 9, "completion_tokens": 4}),
        ),
    }
}

/// Runs the label pipeline against `vendor`'s wire format with `config`
/// (YAML lines of `llm:`) and returns the one request body the server got.
async fn run_recorded(vendor: &str, stage_max_tokens: Option<u32>, config: &str) -> Value {
    let server = LlmServer::start(vec![cat_answer(vendor)]).await;
    let yaml = format!("provider: {vendor}\nbase_url: {}\n{config}", server.url());
    let config: LlmConfig = serde_yaml::from_str(&yaml).expect("test config parses");
    let provider = connect_with_env(&config, 1, |_| Some("test-key".into()))
        .expect("provider connects")
        .expect("not builtin");
    let p = label_project(stage_max_tokens);
    let (outcome, _) = p
        .run("label", &Registry::new(), json!({"text": "meow"}), Some(provider))
        .await;
    assert!(
        matches!(&outcome.result, Ok(Flow::Value(v)) if *v == json!({"label": "cat"})),
        "{:?}",
        outcome.result
    );
    let [sent] = server.requests().try_into().expect("one request");
    sent.body
}

const VENDORS: [&str; 2] = ["anthropic", "openai"];

#[tokio::test]
async fn a_stage_max_tokens_wins_over_the_config() {
    for vendor in VENDORS {
        let body = run_recorded(vendor, Some(300), "max_tokens: 100").await;
        assert_eq!(body["max_tokens"], 300, "{vendor}: {body}");
    }
}

#[tokio::test]
async fn the_config_max_tokens_applies_to_a_stage_setting_none() {
    for vendor in VENDORS {
        let body = run_recorded(vendor, None, "max_tokens: 100").await;
        assert_eq!(body["max_tokens"], 100, "{vendor}: {body}");
    }
}

#[tokio::test]
async fn without_either_the_default_is_sent() {
    for vendor in VENDORS {
        let body = run_recorded(vendor, None, "").await;
        assert_eq!(body["max_tokens"], 4096, "{vendor}: {body}");
    }
}
