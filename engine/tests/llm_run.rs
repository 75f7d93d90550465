//! `llm` stages run through providers built from YAML config, against a
//! local server speaking each vendor's wire format that records what it is
//! sent: the config's settings must reach the request on the wire, and the
//! run's `limits.http_mb` must bound the answer, and the requests and
//! messages name the product the engine runs for.

mod engine_util;

use engine::io::Limits;
use engine::llm::{connect_with_env, LlmConfig};
use engine::{Ending, RunOutcome};
use engine::{Product, Registry};
use engine_util::Project;
use serde_json::{json, Value};
use test_support::llm_server::{LlmServer, Recorded, Reply};

/// The product these runs are for: its name and settings file reach the
/// wire and the messages.
const ACME: Product = Product::new("acme", ".acme/settings.yml");

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

/// Runs the label pipeline against `server` as `vendor` with `config`
/// (YAML lines of `llm:`) under `limits`.
async fn run_label(
    server: &LlmServer,
    vendor: &str,
    stage_max_tokens: Option<u32>,
    config: &str,
    limits: &Limits,
) -> RunOutcome {
    let yaml = format!("provider: {vendor}\nbase_url: {}\n{config}", server.url());
    let config: LlmConfig = serde_yaml::from_str(&yaml).expect("test config parses");
    let provider = connect_with_env(&config, 1, limits, &ACME, |_| Some("test-key".into()))
        .expect("provider connects")
        .expect("not builtin");
    let p = label_project(stage_max_tokens);
    let (outcome, _) = p
        .run("label", &Registry::new(), json!({"text": "meow"}), Some(provider))
        .await;
    outcome
}

/// Runs the label pipeline against a server answering `{"label": "cat"}` in
/// `vendor`'s wire format and returns the one request the server got.
async fn run_recorded_request(vendor: &str, stage_max_tokens: Option<u32>, config: &str) -> Recorded {
    let server = LlmServer::start(vec![cat_answer(vendor)]).await;
    let outcome = run_label(&server, vendor, stage_max_tokens, config, &Limits::default()).await;
    assert!(
        matches!(&outcome.result, Ok(Ending::Finished(v)) if *v == json!({"label": "cat"})),
        "{:?}",
        outcome.result
    );
    let [sent] = server.requests().try_into().expect("one request");
    sent
}

/// The one request body [`run_recorded_request`] returns.
async fn run_recorded(vendor: &str, stage_max_tokens: Option<u32>, config: &str) -> Value {
    run_recorded_request(vendor, stage_max_tokens, config).await.body
}

#[tokio::test]
async fn requests_name_the_product_in_their_user_agent() {
    for vendor in VENDORS {
        let sent = run_recorded_request(vendor, None, "").await;
        assert_eq!(
            sent.header("user-agent"),
            Some(concat!("acme-engine/", env!("CARGO_PKG_VERSION"))),
            "{vendor}: {:?}",
            sent.headers
        );
    }
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

/// A valid answer of `vendor` padded past 1 MiB, sent with or without a
/// length (then the client finds its size only by reading it).
fn oversized_answer(vendor: &str, sized: bool) -> Reply {
    let padded = json!({"label": "cat", "note": "z".repeat(1536 * 1024)}).to_string();
    let reply = match vendor {
        "anthropic" => Reply::anthropic_text(&padded, "end_turn"),
        _ => Reply::openai_content(&padded, json!({})),
    };
    match reply {
        Reply::Respond { body, .. } if !sized => Reply::Unsized { body },
        sized => sized,
    }
}

#[tokio::test]
async fn an_answer_over_limits_http_mb_fails_naming_the_key_and_is_not_retried() {
    let limits = Limits::from_config(None, Some(1), None);
    for vendor in VENDORS {
        for sized in [true, false] {
            let server = LlmServer::start(vec![oversized_answer(vendor, sized)]).await;
            let outcome = run_label(&server, vendor, None, "retries: 2", &limits).await;
            let error = match &outcome.result {
                Err(e) => e.to_string(),
                // Not the value itself: it is over a MiB.
                other => panic!(
                    "{vendor} (sized: {sized}): expected a failure, got {:?}",
                    other.as_ref().map(|_| "a value")
                ),
            };
            assert!(
                error.contains(&format!(
                    "{vendor}: the answer is larger than 1048576 bytes (the limit `limits.http_mb`; \
                     raise it in .acme/settings.yml if the answer is genuine)"
                )),
                "{vendor} (sized: {sized}): {error}"
            );
            assert_eq!(server.requests().len(), 1, "{vendor} (sized: {sized}): not retried");
        }
    }
}

#[tokio::test]
async fn the_same_answer_within_the_limit_is_read() {
    for vendor in VENDORS {
        let server = LlmServer::start(vec![oversized_answer(vendor, false)]).await;
        let limits = Limits::from_config(None, Some(2), None);
        let outcome = run_label(&server, vendor, None, "", &limits).await;
        assert!(
            matches!(&outcome.result, Ok(Ending::Finished(v)) if v["label"] == "cat"),
            "{vendor}: {:?}",
            outcome.result.map(|_| ())
        );
    }
}
