//! Fixtures of the web-search end-to-end tests: backend answers in their
//! recorded shapes, golden files.

use std::path::Path;

use serde_json::{json, Value};
use test_support::llm_server::{LlmServer, Reply};

pub fn days_ago(n: i64) -> String {
    (time::OffsetDateTime::now_utc().date() - time::Duration::days(n)).to_string()
}

/// One SearXNG result in the shape its JSON API answers.
pub fn searx_row(url: &str, title: &str, content: &str, published: Option<&str>) -> Value {
    let host = url.split('/').nth(2).unwrap_or_default();
    json!({
        "url": url, "title": title, "content": content,
        "engine": "duckduckgo", "template": "default.html",
        "parsed_url": [url.split(':').next().unwrap_or("https"), host, "", "", "", ""],
        "engines": ["duckduckgo", "brave"], "positions": [1, 2], "score": 2.0,
        "category": "general", "publishedDate": published,
    })
}

/// A SearXNG `/search?format=json` answer.
pub fn searx_answer(query: &str, rows: Vec<Value>) -> Reply {
    Reply::json(
        200,
        json!({
            "query": query, "number_of_results": 0, "results": rows,
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
            "unresponsive_engines": [["wikidata", "timeout"]],
        }),
    )
}

/// Results exercising every tier, duplicates that differ only by scheme,
/// slash, fragment or utm parameters, and scores on each side of the
/// comprehensive minimum (60): velog.io maps to 60 (kept), an unknown blog
/// stays at 30 (dropped).
pub fn tiered_rows() -> Vec<Value> {
    let recent = days_ago(20);
    vec![
        searx_row("https://react.dev/reference/react/useState", "useState – React", "useState is a React Hook that lets you add a state variable to your component. Call useState at the top level of your component to declare a state variable.", None),
        searx_row("https://stackoverflow.com/questions/53219113/where-can-i-make-api-call-with-hooks-in-react", "Where can I make API call with hooks in React?", "In class components I made API calls in componentDidMount. Where should state updates from an API call go when using hooks?", Some(&recent)),
        searx_row("http://react.dev/reference/react/useState/", "useState (duplicate: http, slash)", "duplicate", None),
        searx_row("https://github.com/facebook/react/blob/main/packages/react/src/ReactHooks.js", "react/ReactHooks.js at main · facebook/react", "The source of the React hooks dispatcher.", None),
        searx_row("https://medium.com/@dev/react-hooks-state-explained-1234", "React hooks state, explained", "A walk through useState and useReducer with examples.", None),
        searx_row("https://react.dev/reference/react/useState#usage", "useState (duplicate: fragment)", "duplicate", None),
        searx_row("https://blog.reactjs.org/2019/02/06/react-v16.8.0.html", "React v16.8: The One With Hooks", "With React 16.8, React Hooks are available in a stable release.", None),
        searx_row("https://someones-notes.example/react-hooks", "My notes on hooks", "Personal notes about hooks and state.", None),
        searx_row("https://velog.io/@dev/react-hooks-state", "리액트 훅 상태 정리", "useState와 useEffect로 상태를 관리하는 방법을 정리했습니다.", None),
        searx_row("https://www.reddit.com/r/reactjs/comments/abc/hooks_state/?utm_source=share&utm_medium=web", "Hooks and state: what do you use?", "Discussion on managing state with hooks.", None),
        searx_row("https://reddit.com/r/reactjs/comments/abc/hooks_state", "Hooks and state (duplicate: utm, www)", "duplicate", None),
        searx_row("https://dev.to/dev/react-hooks-state-guide", "A guide to React hooks state", "Step by step guide to state in hooks.", None),
    ]
}

pub fn searx_config(url: &str) -> String {
    format!("web_search:\n  backends: [searxng]\n  searxng: {{url: \"{url}\"}}\n  timeout_s: 5\n")
}

/// stdout with the servers' ports and the project's temp folder (which
/// suggested commands name) replaced, so golden files are stable.
pub fn stable(text: &str, servers: &[&LlmServer]) -> String {
    let text = servers
        .iter()
        .fold(text.to_owned(), |t, s| t.replace(&s.url(), "http://127.0.0.1:PORT"));
    let flag = "`unity-assets --project ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(flag) {
        out.push_str(&rest[..at + flag.len()]);
        out.push_str("PROJECT");
        rest = &rest[at + flag.len()..];
        rest = &rest[rest.find(' ').unwrap_or(rest.len())..];
    }
    out.push_str(rest);
    out
}

pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/web-search")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        actual,
        expected,
        "{} differs (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
}

pub fn assert_valid(value: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/web-search-result.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "invalid document: {errors:?}\n{value:#}");
}
