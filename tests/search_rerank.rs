//! Retrieve, then rerank, through the real binary against a scripted
//! OpenAI-compatible server that reads each prompt (a stand-in model that
//! ranks rows in the order it is given them): what a search costs in each
//! mode, that no request is sent twice in a run, and what a failing model
//! leaves the user with.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use test_support::llm_server::{self, LlmServer, Recorded, Reply};
use test_support::project::{Project, INDEX_DIR};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

/// The wire name of the schema a request asks for (`reranked-assets`, …).
fn schema_of(request: &Recorded) -> String {
    request.body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn user_text(request: &Recorded) -> String {
    request.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect()
}

fn openai(answer: Value) -> Reply {
    Reply::openai_content(
        &answer.to_string(),
        json!({"prompt_tokens": 100, "completion_tokens": 20}),
    )
}

/// A stand-in model: routes to `sub_intents`, reranks by keeping the rows'
/// own order (the retriever's), finds nothing in map-reduce chunks or
/// package lists. `rerank` overrides the rerank answer.
fn model(sub_intents: Value, rerank: Option<Reply>) -> llm_server::Responder {
    Arc::new(move |request: &Recorded| match schema_of(request).as_str() {
        "search-routing" => openai(json!({"multi_category": false, "sub_intents": sub_intents})),
        "reranked-assets" => rerank.clone().unwrap_or_else(|| {
            let ids: Vec<u64> = user_text(request)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|row| row["id"].as_u64())
                .take(3)
                .collect();
            let candidates: Vec<Value> = ids
                .iter()
                .map(|id| json!({"id": id, "confidence": 0.8, "reasoning": "In the order given."}))
                .collect();
            openai(json!({ "candidates": candidates }))
        }),
        "package-selection" => openai(json!({"groups": []})),
        _ => openai(json!({"groups": []})),
    })
}

/// Everything a request puts on the wire: the length of its JSON body.
fn input_chars(requests: &[Recorded]) -> usize {
    requests.iter().map(|r| r.body.to_string().chars().count()).sum()
}

fn assert_no_duplicates(requests: &[Recorded]) {
    let mut seen = HashSet::new();
    for r in requests {
        assert!(
            seen.insert(r.body.to_string()),
            "a request was sent twice: {}",
            schema_of(r)
        );
    }
}

fn zombie() -> Value {
    json!([{"intent": "dark zombie", "category_hint": "character", "subtype_hint": null}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerank_costs_under_a_tenth_of_exhaustive_and_never_sends_a_request_twice() {
    let project = Project::generated(BIN, 4000);
    let run = tokio::task::block_in_place(|| project.run(&["reindex"]));
    assert_eq!(run.code, 0, "{run:?}");

    // The builtin alone, retrieving the same way: the order the model gets.
    project.configure("search: {mode: rerank}\n");
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie"]));
    assert_eq!(run.code, 0, "{run:?}");
    let builtin = project.result_guids();
    assert_eq!(builtin[0].len(), 3, "{run:?}");

    let server = LlmServer::respond_with(model(zombie(), None)).await;
    let llm = format!("llm: {{provider: openai, base_url: \"{}/v1\"}}\n", server.url());
    project.configure(&llm); // search.mode auto: rerank, with a model
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie"]));
    assert_eq!(run.code, 0, "{run:?}");
    let rerank = server.requests();
    assert_eq!(
        rerank.iter().map(schema_of).collect::<Vec<_>>(),
        ["search-routing", "reranked-assets"],
        "one routing call, one rerank call for the one sub-intent"
    );
    let rows = user_text(&rerank[1])
        .lines()
        .filter(|l| l.starts_with("{\"id\":"))
        .count();
    assert_eq!(rows, 40, "rerank_top_n rows, no more");
    assert!(
        !user_text(&rerank[1]).contains(&format!("{:032x}", 0)),
        "no guid is sent"
    );
    assert_eq!(
        project.result_guids(),
        builtin,
        "a model ranking in the retriever's order keeps the builtin's answer: ids map back to the same guids"
    );

    project.configure(&format!("{llm}search: {{mode: exhaustive}}\n"));
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie"]));
    assert_eq!(run.code, 0, "{run:?}");
    let all = server.requests();
    let exhaustive = &all[rerank.len()..];
    // 4000 rows in chunks of 500; every chunk finds nothing, so the fallback
    // stages run, and stage 2 is the same map-reduce again: answered from the
    // run's cache, not sent.
    assert!(
        run.stdout.contains("map-reduce 분기 활성 (assets=4000, chunks=8)"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("fallback stage 2: map-reduce forced (chunks=8)"),
        "{run:?}"
    );
    let chunk_calls = exhaustive.iter().filter(|r| schema_of(r) == "ranked-assets").count();
    assert_eq!(
        chunk_calls, 8,
        "stage 2 re-sends none of the 8 chunks; stage 1 ranks no empty row set"
    );
    assert_no_duplicates(&rerank);
    assert_no_duplicates(exhaustive);
    let (cheap, full) = (input_chars(&rerank), input_chars(exhaustive));
    println!("input characters per search: rerank {cheap}, exhaustive {full}");
    assert!(cheap * 10 < full, "rerank {cheap} chars vs exhaustive {full}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_retrieval_finds_nothing_for_falls_back_to_the_exhaustive_map_reduce() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let nothing = json!([{"intent": "quantum hologram", "category_hint": null, "subtype_hint": null}]);
    let server = LlmServer::respond_with(model(nothing, None)).await;
    project.configure(&format!(
        "llm: {{provider: openai, base_url: \"{}/v1\"}}\n",
        server.url()
    ));
    let run = tokio::task::block_in_place(|| project.run(&["search", "quantum hologram"]));
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("fallback stage")).collect();
    assert_eq!(
        lines,
        [
            "[unity-assets:search] fallback stage 2: map-reduce forced (chunks=1)",
            "[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)"
        ],
        "{run:?}"
    );
    let schemas: Vec<String> = server.requests().iter().map(schema_of).collect();
    assert_eq!(
        schemas,
        ["search-routing", "ranked-assets"],
        "no rerank call without rows"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_answering_prose_gets_one_repair_turn_then_the_builtin_ranking_stands() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let prose = Reply::openai_content(
        "The best row is probably the third one.",
        json!({"prompt_tokens": 100, "completion_tokens": 9}),
    );
    let server = LlmServer::respond_with(model(zombie(), Some(prose))).await;
    project.configure(&format!(
        "llm: {{provider: openai, base_url: \"{}/v1\"}}\n",
        server.url()
    ));
    let report = project.dir.path().join("report.json");
    let run =
        tokio::task::block_in_place(|| project.run(&["search", "dark zombie", "--report", report.to_str().unwrap()]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "[unity-assets:search] warning: the model failed on 1 of 1 sub-intents; the builtin ranking stands for them"
        ),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "routing, rerank, one repair turn");
    assert!(
        user_text(&requests[2]).contains("Your previous answer could not be used: no JSON in the message"),
        "{}",
        user_text(&requests[2])
    );
    assert_eq!(project.result_guids()[0].len(), 3, "the builtin's candidates");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let calls: u64 = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, 3, "every request sent is in the report, failed ones too");
    let usage = report["llm_usage"].as_array().unwrap();
    let priced_calls: u64 = usage.iter().map(|m| m["calls"].as_u64().unwrap()).sum();
    assert_eq!(priced_calls, 3, "{usage:?}");
    // gpt-4.1 (the default tier's model, named for the failed calls) is in data/llm-prices.yml.
    let failed = usage
        .iter()
        .find(|m| m["model"] == "openai/gpt-4.1")
        .expect("the failing model");
    assert_eq!(failed["calls"], 2);
    assert_eq!(
        failed["input_tokens"], 200,
        "the prose answers' tokens count: they were paid for"
    );
    assert!(failed["estimated_cost_usd"].is_number(), "{failed}");
    assert!(
        Path::new(&project.dir.path().join(INDEX_DIR).join("search-result.json")).exists(),
        "{run:?}"
    );
}

/// A team that would rather not pay for a whole-index pass turns it off:
/// the search ends in no_match after the routing call alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_exhaustive_fallback_an_empty_retrieval_is_no_match_at_once() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let nothing = json!([{"intent": "quantum hologram", "category_hint": null, "subtype_hint": null}]);
    let server = LlmServer::respond_with(model(nothing, None)).await;
    project.configure(&format!(
        "llm: {{provider: openai, base_url: \"{}/v1\"}}\nsearch: {{exhaustive_fallback: false}}\n",
        server.url()
    ));
    let run = tokio::task::block_in_place(|| project.run(&["search", "quantum hologram"]));
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("fallback stage")).collect();
    assert_eq!(
        lines,
        ["[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)"],
        "{run:?}"
    );
    assert_eq!(server.requests().len(), 1, "the routing call only");
}

/// The same hand-off over Anthropic's wire: a forced tool whose input is the
/// answer; the rerank request carries compact rows and no guid, and the ids
/// map back to the builtin retriever's guids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerank_over_the_anthropic_wire_maps_tool_answers_back_to_guids() {
    let project = Project::generated(BIN, 400);
    assert_eq!(project.run(&["reindex"]).code, 0);
    project.configure("search: {mode: rerank}\n");
    assert_eq!(project.run(&["search", "dark zombie"]).code, 0);
    let builtin = project.result_guids();
    let server = LlmServer::respond_with(Arc::new(|request: &Recorded| {
        let tool = request.body["tools"][0]["name"].as_str().unwrap_or_default().to_owned();
        let text: String = request.body["messages"][0]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect();
        let input = match tool.as_str() {
            "search-routing" => json!({"multi_category": false, "sub_intents": zombie()}),
            "reranked-assets" => {
                let candidates: Vec<Value> = text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter_map(|row| row["id"].as_u64())
                    .take(3)
                    .map(|id| json!({"id": id, "confidence": 0.9, "reasoning": "In the order given."}))
                    .collect();
                json!({ "candidates": candidates })
            }
            _ => json!({"groups": []}),
        };
        Reply::anthropic_tool(&tool, input, json!({"input_tokens": 100, "output_tokens": 20}))
    }))
    .await;
    project.configure(&format!(
        "llm: {{provider: anthropic, base_url: \"{}\"}}\n",
        server.url()
    ));
    let run = tokio::task::block_in_place(|| {
        // A base_url with a key is for trusted projects (issue 11's gate, where merged).
        project.run_with(
            &["search", "dark zombie"],
            &[("ANTHROPIC_API_KEY", "sk-ant-test"), ("UNITY_ASSETS_TRUST", "1")],
        )
    });
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    let tools: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.body["tools"][0]["name"].as_str())
        .collect();
    assert_eq!(tools, ["search-routing", "reranked-assets"]);
    let schema = requests[1].body["tools"][0]["input_schema"].to_string();
    assert!(!schema.contains("$schema") && !schema.contains("\"title\""), "{schema}");
    assert_no_duplicates(&requests);
    assert_eq!(project.result_guids(), builtin);
}

/// The drill-down asks for every sub-intent's packages in one call, so the
/// package list travels once per drill-down, not once per sub-intent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drill_down_sends_the_package_list_once_for_all_sub_intents() {
    let project = Project::generated(BIN, 60);
    assert_eq!(project.run(&["reindex"]).code, 0);
    let two = json!([
        {"intent": "dark zombie", "category_hint": "character", "subtype_hint": null},
        {"intent": "footstep sound", "category_hint": "audio", "subtype_hint": null},
    ]);
    let server = LlmServer::respond_with(model(two, None)).await;
    project.configure(&format!(
        "llm: {{provider: openai, base_url: \"{}/v1\"}}\nsearch: {{mode: drill-down}}\n",
        server.url()
    ));
    let run = tokio::task::block_in_place(|| project.run(&["search", "dark zombie and footstep sound"]));
    assert_eq!(run.code, 0, "{run:?}");
    let selections: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| schema_of(r) == "package-selection")
        .collect();
    // The main drill-down, then fallback stage 1 at K=5 and K=8 (the
    // scripted model chooses no package): one call each, for both requests.
    assert_eq!(selections.len(), 3, "{run:?}");
    for r in &selections {
        let user = user_text(r);
        assert_eq!(user.matches("Packages (one JSON object per line)").count(), 1);
        assert!(
            user.contains("\n1. dark zombie (category: character)\n2. footstep sound (category: audio)"),
            "{user}"
        );
    }
    assert_no_duplicates(&server.requests());
}
