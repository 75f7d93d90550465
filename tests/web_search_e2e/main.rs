//! `unity-assets web-search` end to end: the real binary against local
//! servers on 127.0.0.1 that speak each backend's wire format (SearXNG JSON,
//! Brave Search, Tavily) with answers in their recorded shapes, a `command`
//! backend script, and a page server for `detailed`. Nothing reaches the
//! internet. The three layouts are compared with golden files
//! (tests/golden/web-search/; `UPDATE_GOLDEN=1` rewrites them).

use std::path::Path;

use serde_json::json;

use test_support::llm_server::{LlmServer, Reply};
use test_support::project::Project;

mod fixtures;
use fixtures::*;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

#[test]
fn every_validation_message_exits_2_before_any_request() {
    // A backend that would fail loudly if it were ever asked.
    let p = Project::configured(
        BIN,
        "web_search:\n  backends: [command]\n  command: {argv: [/nonexistent/program]}\n",
    );
    let cases: [(&[&str], &str); 5] = [
        (&["web-search", "ab"], "검색어는 최소 3자 이상이어야 합니다."),
        (&["web-search", "리액"], "검색어는 최소 3자 이상이어야 합니다."),
        (&["web-search", "  a  "], "검색어는 최소 3자 이상이어야 합니다."),
        (
            &["web-search", "react hooks", "--type", "docs"],
            "잘못된 검색 타입입니다. (허용: official, comprehensive, best-practice)",
        ),
        (
            &["web-search", "react hooks", "--format", "table"],
            "잘못된 출력 형식입니다. (허용: summary, detailed, progressive)",
        ),
    ];
    for (args, message) in cases {
        let run = p.run(args);
        assert_eq!(run.code, 2, "{args:?}\n{run:?}");
        assert_eq!(run.lines(), [message], "{args:?}\n{run:?}");
        assert!(!run.stdout.contains("backend"), "{run:?}");
    }
    // --json: the document on stdout, the message on stderr.
    let run = p.run(&["web-search", "ab", "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let doc = run.json();
    assert_valid(&doc);
    assert_eq!(doc["status"], "invalid");
    assert_eq!(doc["answer"], "검색어는 최소 3자 이상이어야 합니다.");
    assert!(run.stderr.contains("검색어는 최소 3자 이상이어야 합니다."), "{run:?}");
    // 3 characters (not bytes) pass, and an empty format is summary: the
    // search goes on to the backends (which fail here: exit 1).
    let run = p.run(&["web-search", "리액트", "--format", "", "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.json()["format"], "summary");
    assert_eq!(run.json()["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_wire_format_tiers_dedupe_threshold_and_summary_golden() {
    // Each run sends 4 queries: the first answers, the layers add nothing.
    let answers = |_| {
        [tiered_rows(), vec![], vec![], vec![]]
            .into_iter()
            .map(|rows| searx_answer("react hooks state", rows))
    };
    let searx = LlmServer::start((0..2).flat_map(answers).collect()).await;
    let p = Project::configured(BIN, &searx_config(&searx.url()));
    let run = p.run(&["web-search", "react hooks state"]);
    assert_eq!(run.code, 0, "{run:?}");
    golden("summary.txt", &stable(&run.stdout, &[&searx]));

    // The wire: GET /search?q=…&format=json, one request per strategy query.
    let requests = searx.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(requests
        .iter()
        .all(|r| r.method == "GET" && r.path.starts_with("/search?")));
    assert!(requests[0].path.contains("format=json"), "{}", requests[0].path);
    assert!(requests[0].path.contains("q=react+hooks+state"), "{}", requests[0].path);
    assert!(
        requests[1]
            .path
            .contains("site%3Areact.dev+OR+site%3Agithub.com%2Ffacebook%2Freact"),
        "{}",
        requests[1].path
    );

    let run = p.run(&["web-search", "react hooks state", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_valid(&doc);
    assert_eq!(doc["backend"], "searxng");
    assert_eq!(doc["type"], "comprehensive");
    assert_eq!(doc["rewritten_query"], "react hooks state");
    let urls: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    // Duplicates (scheme, slash, fragment, utm + www) gone, the first kept.
    assert_eq!(
        urls.iter()
            .filter(|u| u.contains("react.dev/reference/react/useState"))
            .count(),
        1
    );
    assert!(urls.contains(&"https://react.dev/reference/react/useState"));
    assert_eq!(urls.iter().filter(|u| u.contains("reddit.com")).count(), 1);
    assert!(urls[urls.len() - 1].contains("velog.io") || urls.contains(&"https://velog.io/@dev/react-hooks-state"));
    // 30 < 60: dropped; 60 ≥ 60: kept.
    assert!(!urls.iter().any(|u| u.contains("someones-notes")));
    let tiers: Vec<u64> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tier"].as_u64().unwrap())
        .collect();
    assert!(tiers.windows(2).all(|w| w[0] <= w[1]), "{tiers:?}");
    for t in 1..=4 {
        assert!(tiers.contains(&t), "tier {t} missing: {tiers:?}");
    }
    // --json: the answer is in the document, not on stdout as text.
    assert!(doc["answer"].as_str().unwrap().contains("Sources:"));
    assert!(
        run.stderr
            .contains("[unity-assets:web-search] backend searxng: 12 results"),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progressive_golden_and_official_rewrite() {
    let searx = LlmServer::start(vec![searx_answer("react hooks state", tiered_rows())]).await;
    let p = Project::configured(BIN, &searx_config(&searx.url()));
    let run = p.run(&["web-search", "react hooks state", "--format", "progressive"]);
    assert_eq!(run.code, 0, "{run:?}");
    golden("progressive.txt", &stable(&run.stdout, &[&searx]));

    // official: site: operators and "latest"; only tiers 1-2 at 90 or more.
    let run = p.run(&["web-search", "react hooks state", "--type", "official", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(
        doc["rewritten_query"],
        "react hooks state latest site:react.dev OR site:github.com/facebook/react"
    );
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(results
        .iter()
        .all(|r| r["tier"].as_u64() <= Some(2) && r["reliability_score"].as_u64() >= Some(90)));
    let last = searx.requests().pop().unwrap();
    assert!(last.path.contains("latest+site%3Areact.dev"), "{}", last.path);
}

/// A later query of the strategy failing is a line; the first query's results stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_layer_query_keeps_the_others() {
    let searx = LlmServer::start(vec![
        searx_answer("react hooks state", tiered_rows()),
        Reply::json(500, json!({"message": "engine crashed"})),
        searx_answer("react hooks state", vec![]),
    ])
    .await;
    let p = Project::configured(BIN, &searx_config(&searx.url()));
    let run = p.run(&["web-search", "react hooks state", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("[unity-assets:web-search] backend searxng: query 2 skipped: HTTP 500: engine crashed"),
        "{run:?}"
    );
    assert_eq!(run.json()["results"].as_array().unwrap().len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_results_block() {
    let searx = LlmServer::start(vec![searx_answer("zzqx", vec![])]).await;
    let p = Project::configured(BIN, &searx_config(&searx.url()));
    let run = p.run(&["web-search", "zzqx nothing", "--type", "best-practice"]);
    assert_eq!(run.code, 0, "{run:?}");
    let block = "검색 결과를 찾을 수 없습니다.\n\n**제안**:\n1. 검색어를 더 구체적으로 변경\n2. 다른 검색 타입 시도 (official → comprehensive)\n3. 영어 키워드로 재검색\n\n원래 검색어: \"zzqx nothing\"\n검색 타입: best-practice\n";
    assert!(run.stdout.ends_with(block), "{run:?}");
    // Results that all fall under the minimum end the same way.
    let low = LlmServer::start(vec![searx_answer(
        "q",
        vec![searx_row("https://someones-notes.example/x", "notes", "n", None)],
    )])
    .await;
    let p = Project::configured(BIN, &searx_config(&low.url()));
    let run = p.run(&["web-search", "zzqx nothing", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_valid(&doc);
    assert_eq!(doc["status"], "no_results");
    assert!(doc["answer"]
        .as_str()
        .unwrap()
        .starts_with("검색 결과를 찾을 수 없습니다."));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fallback_order_with_one_line_per_skipped_backend() {
    let tavily = LlmServer::start(vec![Reply::json(
        432,
        json!({"detail": {"error": "This request exceeds your plan's set usage limit."}}),
    )])
    .await;
    let p = Project::configured(BIN, "");
    let log = p.path().join("prompt.txt");
    let script = p.script(
        "search.sh",
        &format!(
            "printf '%s' \"$1\" > '{}'\ncat <<'J'\nHere are the results:\n```json\n[{{\"title\": \"Addressables | Unity\", \"url\": \"https://docs.unity3d.com/Packages/com.unity.addressables@2.0/manual/index.html\", \"snippet\": \"The Addressables package provides tools to manage assets.\", \"source_type\": \"official\"}},\n {{\"title\": \"Loading addressables\", \"url\": \"https://discussions.unity.com/t/addressables/1\", \"snippet\": \"How do I load an addressable?\", \"source_type\": \"community\"}}]\n```\nJ\n",
            log.display()
        ),
    );
    std::fs::write(
        p.path().join(".claude/unity-assets.yml"),
        format!(
            "web_search:\n  backends: [searxng, brave, tavily, command]\n  brave: {{api_key_env: TEST_BRAVE_KEY}}\n  tavily: {{url: \"{}/search\", api_key_env: TEST_TAVILY_KEY}}\n  command: {{argv: [\"{}\", \"{{prompt}}\"]}}\n",
            tavily.url(),
            script.display()
        ),
    )
    .unwrap();
    let run = p.run_with(
        &["web-search", "unity addressables"],
        &[("TEST_TAVILY_KEY", "tvly-test-1")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.lines();
    assert_eq!(
        lines[..4],
        [
            "[unity-assets:web-search] backend searxng skipped: not configured (set web_search.searxng.url)",
            "[unity-assets:web-search] backend brave skipped: not configured: TEST_BRAVE_KEY is not set",
            "[unity-assets:web-search] backend tavily skipped: HTTP 432: This request exceeds your plan's set usage limit.",
            "[unity-assets:web-search] backend command: 2 results",
        ],
        "{run:?}"
    );
    // The script got prompts/web-search/command.j2 with the first rewritten query.
    let prompt = std::fs::read_to_string(&log).unwrap();
    assert!(
        prompt.starts_with("google_search 도구로 'unity addressables' 검색하고 상위 20개 결과의"),
        "{prompt}"
    );
    assert!(run.stdout.contains(
        "- [Addressables | Unity](https://docs.unity3d.com/Packages/com.unity.addressables@2.0/manual/index.html)"
    ));
    assert!(
        run.stdout.contains("(tier 3, 70/100)"),
        "community base 50, mapped into 70-79: {run:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_answers_over_the_limit_are_refused_naming_the_key() {
    let big = format!("{{\"results\": [], \"pad\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let searx = LlmServer::start(vec![Reply::text(200, "application/json", &big)]).await;
    // `yes` prints without end: it is cut off at the limit, not buffered.
    let p = Project::configured(BIN, &format!(
        "limits: {{http_mb: 1}}\nweb_search:\n  backends: [searxng, command]\n  searxng: {{url: \"{}\"}}\n  command: {{argv: [yes]}}\n  timeout_s: 30\n",
        searx.url()
    ));
    let run = p.run(&["web-search", "react hooks"]);
    assert_eq!(run.code, 1, "{run:?}");
    for backend in ["searxng", "command"] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("[unity-assets:web-search] backend {backend} skipped")))
            .unwrap_or_default();
        assert!(
            line.contains("larger than 1048576 bytes") && line.contains("limits.http_mb"),
            "{run:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_backends_failed_block_exit_1() {
    let searx = LlmServer::start(vec![Reply::text(502, "text/html", "<h1>502 Bad Gateway</h1>")]).await;
    let p = Project::configured(BIN, &format!(
        "web_search:\n  backends: [searxng, command]\n  searxng: {{url: \"{}\"}}\n  command: {{argv: [no-such-search-program-x, \"{{prompt}}\"]}}\n",
        searx.url()
    ));
    let run = p.run(&["web-search", "react hooks"]);
    assert_eq!(run.code, 1, "{run:?}");
    let expected = "\
[unity-assets:web-search] backend searxng skipped: HTTP 502: 502 Bad Gateway
[unity-assets:web-search] backend command skipped: not installed: `no-such-search-program-x` is not on PATH
웹 검색 중 오류가 발생했습니다.

**가능한 원인**:
- 네트워크 연결 문제
- WebSearch API 제한
- 잘못된 도메인 필터

**백엔드별 원인**:
- searxng: HTTP 502: 502 Bad Gateway
- command: not installed: `no-such-search-program-x` is not on PATH

다시 시도하거나 검색 타입을 변경해주세요.
";
    assert_eq!(run.stdout, expected, "{run:?}");
    assert!(run.stderr.contains("all_backends_failed"), "{run:?}");
    // A backend that does not answer in time fails the same way.
    let silent = LlmServer::start(vec![Reply::Silence]).await;
    let p = Project::configured(
        BIN,
        &format!(
            "web_search:\n  backends: [searxng]\n  searxng: {{url: \"{}\"}}\n  timeout_s: 1\n",
            silent.url()
        ),
    );
    let run = p.run(&["web-search", "react hooks", "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    assert_valid(&doc);
    assert_eq!(doc["skipped_backends"][0]["reason"], "no answer within 1s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_and_tavily_wire_formats_and_key_redaction() {
    const BRAVE_KEY: &str = "BSA-secret-key-0123456789";
    const TAVILY_KEY: &str = "tvly-secret-key-9876543210";
    // Brave rejects the key and echoes it back, as APIs do.
    let brave = LlmServer::start(vec![Reply::json(
        422,
        json!({"type": "ErrorResponse", "error": {"id": "c7f2", "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID",
               "detail": format!("The provided subscription token {BRAVE_KEY} is invalid."), "meta": {"component": "authentication"}},
               "time": 1_700_000_000}),
    )])
    .await;
    // Tavily answers, one result echoing the key.
    let tavily = LlmServer::start(vec![Reply::json(
        200,
        json!({"query": "react hooks", "follow_up_questions": null, "answer": null, "images": [],
               "results": [
                   {"title": "Built-in React Hooks – React", "url": "https://react.dev/reference/react/hooks",
                    "content": "Hooks let you use different React features from your components.", "score": 0.91, "raw_content": null},
                   {"title": "Debug page", "url": "https://dev.to/x/debug",
                    "content": format!("request token was {TAVILY_KEY} in this log"), "score": 0.4, "raw_content": null,
                    "published_date": days_ago(3)},
               ],
               "response_time": 1.05}),
    )])
    .await;
    let p = Project::configured(BIN, &format!(
        "web_search:\n  backends: [brave, tavily]\n  brave: {{url: \"{}/res/v1/web/search\", api_key_env: TEST_BRAVE_KEY}}\n  tavily: {{url: \"{}/search\", api_key_env: TEST_TAVILY_KEY}}\n",
        brave.url(),
        tavily.url()
    ));
    let env = [("TEST_BRAVE_KEY", BRAVE_KEY), ("TEST_TAVILY_KEY", TAVILY_KEY)];
    for args in [
        &["web-search", "react hooks"][..],
        &["web-search", "react hooks", "--json"],
        &["web-search", "react hooks", "--format", "progressive", "-vv"],
    ] {
        let run = p.run_with(args, &env);
        assert_eq!(run.code, 0, "{run:?}");
        for key in [BRAVE_KEY, TAVILY_KEY] {
            assert!(
                !run.stdout.contains(key) && !run.stderr.contains(key),
                "key leaked: {run:?}"
            );
        }
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            all.contains("backend brave skipped: HTTP 422: The provided subscription token [redacted] is invalid."),
            "{run:?}"
        );
        // 2 results for each of the comprehensive strategy's 4 queries.
        assert!(all.contains("backend tavily: 8 results"), "{run:?}");
    }
    // The keys went where each API expects them, and nowhere else.
    let b = &brave.requests()[0];
    assert_eq!(b.method, "GET");
    assert!(
        b.path.starts_with("/res/v1/web/search?q=react+hooks&count=20"),
        "{}",
        b.path
    );
    assert_eq!(b.header("x-subscription-token"), Some(BRAVE_KEY));
    assert_eq!(b.header("accept"), Some("application/json"));
    let t = &tavily.requests()[0];
    assert_eq!((t.method.as_str(), t.path.as_str()), ("POST", "/search"));
    assert_eq!(t.header("authorization"), Some(format!("Bearer {TAVILY_KEY}").as_str()));
    assert_eq!(t.body["query"], "react hooks");
    assert_eq!(t.body["max_results"], 20);
    assert!(!t.body.to_string().contains(TAVILY_KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_results_are_read() {
    let brave = LlmServer::start(vec![Reply::json(
        200,
        json!({"type": "search", "query": {"original": "unity shader graph", "more_results_available": true},
               "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
               "web": {"type": "search", "family_friendly": true, "results": [
                   {"title": "Shader Graph | <strong>Unity</strong> Manual", "url": "https://docs.unity3d.com/Manual/shader-graph.html",
                    "is_source_local": false, "is_source_both": false,
                    "description": "<strong>Shader Graph</strong> lets you build shaders visually.", "page_age": "2024-05-01T00:00:00",
                    "profile": {"name": "Unity", "url": "https://docs.unity3d.com", "long_name": "docs.unity3d.com"},
                    "language": "en", "family_friendly": true, "type": "search_result", "subtype": "generic",
                    "meta_url": {"scheme": "https", "netloc": "docs.unity3d.com", "hostname": "docs.unity3d.com", "path": "› Manual"},
                    "age": "May 1, 2024"}]}}),
    )])
    .await;
    let p = Project::configured(
        BIN,
        &format!(
        "web_search:\n  backends: [brave]\n  brave: {{url: \"{}/res/v1/web/search\", api_key_env: TEST_BRAVE_KEY}}\n",
        brave.url()
    ),
    );
    let run = p.run_with(
        &["web-search", "unity shader graph", "--type", "official", "--json"],
        &[("TEST_BRAVE_KEY", "k")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(
        doc["rewritten_query"],
        "unity shader graph latest site:docs.unity3d.com"
    );
    assert_eq!(
        doc["results"][0],
        json!({"title": "Shader Graph | Unity Manual", "url": "https://docs.unity3d.com/Manual/shader-graph.html",
               "snippet": "Shader Graph lets you build shaders visually.", "tier": 1, "reliability_score": 97,
               "source": "공식 문서", "published_at": "2024-05-01T00:00:00"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detailed_reads_pages_within_limits_and_golden() {
    let article = "<!doctype html><html><head><title>Hooks</title><style>body{}</style></head><body>\
        <nav>Home | Docs</nav><h1>Using the State Hook</h1>\
        <p>Hooks are a feature that let you use state without writing a class.</p>\
        <p>The useState hook declares a state variable that React preserves between renders.</p>\
        <p>Our community meetup is next week in Seoul.</p>\
        <p>Call the setter returned by useState to update the state and trigger a render.</p>\
        <p>Effects with useEffect run after every render by default.</p></body></html>";
    let qa = "<html><body><h1>Why does my state not update?</h1>\
        <p>State updates in hooks are asynchronous, so the state value is stale right after calling the setter.</p>\
        <p>Use the functional update form when the next state depends on the previous state.</p>\
        <p>Thanks for reading, please upvote.</p></body></html>";
    let big = format!("<html><body><p>{}</p></body></html>", "hooks state ".repeat(2000));
    let pages = LlmServer::routed(vec![
        (
            "/docs/hooks-state",
            Reply::text(200, "text/html; charset=utf-8", article),
        ),
        ("/qa/state-not-updating", Reply::text(200, "text/html", qa)),
        ("/docs/huge", Reply::text(200, "text/html", &big)),
        ("/docs/slow", Reply::Silence),
        (
            "/docs/manual.pdf",
            Reply::text(200, "application/pdf", "%PDF-1.7 hooks state"),
        ),
        (
            "/qa/broken",
            Reply::Bytes {
                status: 200,
                content_type: "text/html; charset=utf-8".into(),
                body: b"<p>hooks state \xff\xfe broken</p>".to_vec(),
            },
        ),
    ])
    .await;
    let base = pages.url();
    let row = |path: &str, title: &str, content: &str| searx_row(&format!("{base}{path}"), title, content, None);
    let searx = LlmServer::start(vec![searx_answer(
        "react hooks state",
        vec![
            row(
                "/docs/hooks-state",
                "Using the State Hook",
                "Hooks let you use state without a class.",
            ),
            row(
                "/docs/huge",
                "Hooks API reference",
                "Every hook, in one very long page.",
            ),
            row("/docs/slow", "Hooks FAQ", "Answers to common questions about hooks."),
            row("/docs/manual.pdf", "Hooks manual (PDF)", "The printable manual."),
            row(
                "/qa/state-not-updating",
                "Why does my state not update?",
                "A community answer about stale state.",
            ),
            row(
                "/qa/broken",
                "State updates, explained",
                "A community post with a broken page.",
            ),
        ],
    )])
    .await;
    let p = Project::configured(BIN, &format!(
        "web_search:\n  backends: [searxng]\n  searxng: {{url: \"{}\"}}\n  fetch: {{pages: 6, max_bytes: 10000, timeout_s: 2, concurrency: 3}}\n  allow_private_addresses: true\n",
        searx.url()
    ));
    // The local page server stands for two kinds of source: /docs official,
    // /qa community (on loopback, so fetched only with allow_private_addresses).
    let tiers = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/source-tiers.yml")).unwrap();
    p.override_file(
        "data/source-tiers.yml",
        &tiers.replacen(
            "rules:\n",
            "rules:\n  - {match: 127.0.0.1/docs, tier: 1, base: 95}\n  - {match: 127.0.0.1/qa, tier: 3, base: 60}\n",
            1,
        ),
    );
    let run = p.run(&["web-search", "react hooks state", "--format", "detailed"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = stable(&run.stdout, &[&pages, &searx]);
    // One clear line per page that could not be used (in completion order).
    for line in [
        "[unity-assets:web-search] page not summarised: http://127.0.0.1:PORT/docs/huge — larger than the 10000 byte limit (web_search.fetch.max_bytes)",
        "[unity-assets:web-search] page not summarised: http://127.0.0.1:PORT/docs/slow — no answer within 2s",
        "[unity-assets:web-search] page not summarised: http://127.0.0.1:PORT/docs/manual.pdf — not HTML (application/pdf)",
        "[unity-assets:web-search] page not summarised: http://127.0.0.1:PORT/qa/broken — broken encoding: not valid UTF-8",
    ] {
        assert_eq!(out.lines().filter(|l| *l == line).count(), 1, "{line}\n{out}");
    }
    // The others are still summarised from their pages.
    assert!(
        out.contains("Hooks are a feature that let you use state without writing a class."),
        "{out}"
    );
    assert!(
        out.contains("- Call the setter returned by useState to update the state and trigger a render."),
        "{out}"
    );
    assert!(!out.contains("meetup"), "{out}");
    assert!(out.contains("State updates in hooks are asynchronous"), "{out}");
    // Lines arrive in completion order; the layout itself is golden.
    let layout: String = out
        .lines()
        .filter(|l| !l.starts_with("[unity-assets:web-search] page not summarised"))
        .map(|l| format!("{l}\n"))
        .collect();
    golden("detailed.txt", &layout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strategy_file_that_cannot_be_loaded() {
    let searx = LlmServer::start(vec![searx_answer("q", vec![])]).await;
    let p = Project::configured(BIN, &searx_config(&searx.url()));
    p.override_file("prompts/web-search/official.j2", "{{ query ");
    let run = p.run(&["web-search", "react hooks", "--type", "official"]);
    assert_eq!(run.code, 2, "{run:?}");
    let file = p.path().join(".claude/unity-assets/prompts/web-search/official.j2");
    let lines = run.lines();
    assert_eq!(
        lines[..3],
        [
            "검색 전략을 로드할 수 없습니다.".to_owned(),
            format!("전략 파일: {}", file.display()),
            "관리자에게 문의하세요.".to_owned(),
        ],
        "{run:?}"
    );
    assert!(searx.requests().is_empty(), "no request after a strategy failure");
    let run = p.run(&["web-search", "react hooks", "--type", "official", "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let doc = run.json();
    assert_valid(&doc);
    assert_eq!(doc["status"], "strategy_error");
    assert!(doc["answer"]
        .as_str()
        .unwrap()
        .starts_with("검색 전략을 로드할 수 없습니다.\n전략 파일: "));
}

#[test]
fn graph_shows_every_step_and_config_keys_are_checked() {
    let p = Project::configured(BIN, "");
    let run = p.run(&["graph", "web-search"]);
    assert_eq!(run.code, 0, "{run:?}");
    for stage in [
        "validate: fn websearch.validate",
        "strategy: fn websearch.strategy",
        "backends: fn websearch.backends",
        "classify: fn websearch.classify",
        "filter: fn websearch.filter",
        "dedupe: fn websearch.dedupe",
        "rank: fn websearch.rank",
        "fetch: for_each(fn) websearch.fetch",
        "summarise: for_each(llm) web-search/summarise.j2",
        "answer-doc: fn websearch.format",
    ] {
        assert!(run.stdout.contains(stage), "{stage}\n{run:?}");
    }
    let p = Project::configured(BIN,
        "web_search:\n  backends: [searxng, brave, tavily, command]\n  searxng: {url: http://127.0.0.1:8888}\n  brave: {api_key_env: BRAVE_API_KEY}\n  tavily: {api_key_env: TAVILY_API_KEY}\n  command: {argv: [gemini, -p, \"{prompt}\"]}\n  timeout_s: 15\n",
    );
    assert_eq!(p.run(&["validate", "web-search"]).code, 0);
    let p = Project::configured(BIN, "web_search:\n  backends: [google]\n  timeout: 3\n");
    let run = p.run(&["web-search", "react hooks"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("unknown key `web_search.timeout`"), "{run:?}");
}

/// With a model configured, the `summarise` and `digest` stages ask it (here
/// an OpenAI-compatible server) instead of the builtin extractive summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_model_summarises() {
    let usage = json!({"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60});
    let llm = LlmServer::start(vec![Reply::openai_content(
        &json!({"summary": "A model wrote this answer about hooks.", "points": []}).to_string(),
        usage,
    )])
    .await;
    let searx = LlmServer::start(vec![searx_answer("react hooks", tiered_rows())]).await;
    let p = Project::configured(
        BIN,
        &format!(
            "llm: {{provider: openai, base_url: \"{}/v1\"}}\n{}",
            llm.url(),
            searx_config(&searx.url())
        ),
    );
    let run = p.run_with(
        &["web-search", "react hooks", "--type", "official"],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("## 답변\n\nA model wrote this answer about hooks.\n"),
        "{run:?}"
    );
    let asked = &llm.requests()[0];
    let prompt = asked.body["messages"].to_string();
    assert!(prompt.contains("Query: react hooks"), "{prompt}");
    assert!(prompt.contains("useState is a React Hook"), "{prompt}");
}
