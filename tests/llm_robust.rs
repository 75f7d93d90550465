//! What a failing model leaves a user with, through the real binary against
//! a scripted OpenAI-compatible server: the command still ends (exit 0) with
//! the builtin's work where the model's failed, says so naming the model,
//! and never pays twice for a request that failed.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;

use test_support::llm_server::{LlmServer, Recorded, Reply};
use test_support::project::Project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

fn openai_at(server: &LlmServer) -> String {
    format!("llm: {{provider: openai, base_url: \"{}/v1\"}}\n", server.url())
}

fn assert_no_duplicates(requests: &[Recorded]) {
    let mut seen = HashSet::new();
    for r in requests {
        assert!(seen.insert(r.body.to_string()), "a request was sent twice: {}", r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_over_the_cap_fails_at_once_saying_so_and_the_builtin_answers() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let server = LlmServer::start(vec![
        Reply::error(429, "Rate limit reached").with_header("retry-after", "120")
    ])
    .await;
    project.configure(&openai_at(&server));
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        server.requests().len(),
        2,
        "routing and rerank, each once: no retry, no repair"
    );
    assert!(
        run.stderr.contains(
            "model `gpt-4.1-mini` (openai) failed: openai: HTTP 429: Rate limit reached; the server asked to wait 120s \
             (Retry-After), longer than llm.retry_after_max_s (60s), so it was not retried"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(
            "[unity-assets:search] warning: the model failed on 1 of 1 sub-intents; the builtin ranking stands"
        ),
        "{run:?}"
    );
    assert_eq!(project.result_guids()[0].len(), 3, "the builtin's candidates: {run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_invalid_model_in_exhaustive_mode_is_named_and_never_asked_the_same_twice() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let server = LlmServer::start(vec![Reply::openai_content(
        "{\"nope\": 1}",
        json!({"prompt_tokens": 10, "completion_tokens": 3}),
    )])
    .await;
    project.configure(&format!("{}search: {{mode: exhaustive}}\n", openai_at(&server)));
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie"]));
    assert_eq!(run.code, 0, "{run:?}");
    let warning = "[unity-assets:search] warning: the model failed on 1 of 1 chunks; their assets were not ranked";
    assert!(run.stdout.contains(warning), "{run:?}");
    assert!(
        run.stdout.contains("fallback stage 2: map-reduce forced (chunks=1)"),
        "{run:?}"
    );
    assert!(run.stderr.contains("(earlier in this run; not sent again)"), "{run:?}");
    assert!(
        run.stdout
            .contains("[unity-assets:search] note: model calls failed during this search"),
        "the index is not blamed alone: {run:?}"
    );
    let requests = server.requests();
    assert_no_duplicates(&requests);
    // routing + repair, chunk + repair, select-packages + repair for K=5 and
    // K=8 (their rows are empty: no rank call); stage 2's chunk: not re-sent.
    assert_eq!(
        requests.len(),
        8,
        "{:#?}",
        requests
            .iter()
            .map(|r| &r.body["response_format"]["json_schema"]["name"])
            .collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tagging_model_answering_prose_leaves_the_index_tagged_by_the_builtin() {
    let project = Project::generated(BIN, 45);
    let server = LlmServer::respond_with(Arc::new(|_: &Recorded| {
        Reply::openai_content(
            "Sure! Here are some tags for your assets.",
            json!({"prompt_tokens": 10, "completion_tokens": 8}),
        )
    }))
    .await;
    project.configure(&openai_at(&server));
    let run = tokio::task::block_in_place(|| project.run(&["reindex"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("tagged by llm 0 / builtin 45"), "{run:?}");
    assert_no_duplicates(&server.requests());
}

/// `providers check` asks with every stage's own schema, named as the stage
/// names it: an endpoint rejecting one fails the check, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_check_fails_where_a_stage_would() {
    let project = Project::generated(BIN, 1);
    let server = LlmServer::respond_with(Arc::new(|r: &Recorded| {
        match r.body["response_format"]["json_schema"]["name"].as_str() {
            Some("build-plan") => Reply::error(400, "Invalid schema for response_format 'build-plan'"),
            Some("check") => {
                Reply::openai_content("{\"ok\": true}", json!({"prompt_tokens": 5, "completion_tokens": 2}))
            }
            _ => Reply::openai_content("{}", json!({"prompt_tokens": 5, "completion_tokens": 2})),
        }
    }))
    .await;
    project.configure(&openai_at(&server));
    let run = tokio::task::block_in_place(|| project.run(&["providers", "check"]));
    assert_eq!(run.code, 1, "{run:?}");
    for accepted in [
        "search-routing",
        "reranked-assets",
        "index-tags",
        "package-selection",
        "ranked-assets",
    ] {
        assert!(
            run.stdout.contains(&format!("schema:   {accepted} accepted")),
            "{run:?}"
        );
    }
    assert!(
        run.stdout
            .contains("schema:   build-plan failed: openai: HTTP 400: Invalid schema for response_format 'build-plan'"),
        "{run:?}"
    );
    assert!(run.stderr.contains("1 of 7 stage schemas were not accepted"), "{run:?}");
}

/// The project's `limits.http_mb` reaches the provider: a model answer over
/// it fails the check, naming the key, instead of being read into memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_answer_over_limits_http_mb_is_refused_naming_the_key() {
    let project = Project::generated(BIN, 1);
    let padded = json!({"ok": true, "note": "z".repeat(1536 * 1024)}).to_string();
    let server = LlmServer::start(vec![Reply::openai_content(&padded, json!({}))]).await;
    project.configure(&format!("{}limits: {{http_mb: 1}}\n", openai_at(&server)));
    let run = tokio::task::block_in_place(|| project.run(&["providers", "check"]));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(
            "openai: the answer is larger than 1048576 bytes (the limit `limits.http_mb`; \
             raise it in .claude/unity-assets.yml if the answer is genuine)"
        ),
        "{run:?}"
    );
}
