//! `unity-assets mcp`: the pipelines as MCP tools, driven by our own rmcp
//! client in-process and by the official MCP Python SDK over stdio and
//! streamable HTTP (skipped, saying so, when no Python with `mcp` is found;
//! `.ci/run` installs one in target/venv-mcp).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProtocolVersion, ReadResourceRequestParams,
};
use rmcp::service::{ClientLifecycleMode, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Map, Value};

#[path = "support/mcp.rs"]
mod support;
use support::{args, connect, connect_as, example_project, text, unreachable_unity, BIN};

#[tokio::test]
async fn our_client_lists_and_calls_the_pipelines_in_process() {
    let project = example_project();
    let client = connect(project.path(), true).await;

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "build",
        "doctor",
        "graph",
        "index",
        "list_pipelines",
        "pick",
        "reindex",
        "search",
        "slow",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    // Sub-pipelines and pipelines without `expose: mcp` are not tools.
    assert!(!names.iter().any(|n| n.contains("retrieve")), "{names:?}");
    let search = tools.iter().find(|t| t.name == "search").unwrap();
    assert_eq!(search.input_schema["required"], json!(["query"]));
    assert_eq!(search.input_schema["properties"]["reindex"]["type"], json!("boolean"));
    assert!(search.description.as_deref().unwrap_or("").contains("search"));

    // The fixed lines (docs/contracts.md#exact-lines) stay in the text; the document is structured.
    let found = client
        .call_tool(
            CallToolRequestParams::new("search").with_arguments(args(json!({"query": "zombie enemy character"}))),
        )
        .await
        .expect("tools/call search");
    assert_ne!(found.is_error, Some(true), "{}", text(&found));
    let doc = found.structured_content.clone().expect("structured content");
    assert_eq!(doc["status"], "ok");
    assert!(text(&found).starts_with("[unity-assets:search] 1 sub-intent(s) for \"zombie enemy character\""));
    let top = doc["groups"][0]["candidates"][0]["guid"].as_str().unwrap().to_owned();

    let picked = client
        .call_tool(CallToolRequestParams::new("pick").with_arguments(args(json!({"index": "0"}))))
        .await
        .expect("tools/call pick");
    let recorded = format!("[unity-assets:pick] recorded: {top}");
    assert_eq!(text(&picked).lines().next(), Some(recorded.as_str()));

    // A refusal is a tool error carrying the same line and exit reason.
    let refused = client
        .call_tool(CallToolRequestParams::new("pick").with_arguments(args(json!({"index": "7"}))))
        .await
        .expect("tools/call pick 7");
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).starts_with("[unity-assets:pick] error: index 7 out of range (max 2)"));

    // A missing required input is an error naming it, before anything runs.
    let missing = client
        .call_tool(CallToolRequestParams::new("search").with_arguments(Map::new()))
        .await
        .expect("tools/call search without query");
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("query"), "{}", text(&missing));

    let graph = client
        .call_tool(CallToolRequestParams::new("graph").with_arguments(args(json!({"name": "pick"}))))
        .await
        .expect("tools/call graph");
    assert!(text(&graph).contains("flowchart TD"), "{}", text(&graph));

    let listing = client
        .call_tool(CallToolRequestParams::new("list_pipelines"))
        .await
        .expect("tools/call list_pipelines");
    let rows = listing.structured_content.unwrap()["pipelines"]
        .as_array()
        .unwrap()
        .clone();
    assert!(rows
        .iter()
        .any(|r| r["name"] == "search/retrieve" && r["tool"].is_null()));
    assert!(rows.iter().any(|r| r["name"] == "slow" && r["tool"] == "slow"));

    let result = client
        .read_resource(ReadResourceRequestParams::new("unity-assets://search-result.json"))
        .await
        .expect("resources/read");
    let body = serde_json::to_value(&result.contents[0]).unwrap();
    let doc: Value = serde_json::from_str(body["text"].as_str().unwrap()).unwrap();
    assert_eq!(doc["query"], "zombie enemy character");

    client.cancel().await.ok();
}

/// The example project with no MCP for Unity server to reach ([`unreachable_unity`]).
fn unreachable_unity_project() -> tempfile::TempDir {
    let project = example_project();
    unreachable_unity(project.path());
    project
}

/// Its request: three groups need a confirmation (enemies, the player —
/// best Assets/Prefabs/Player.prefab — and environment props); the fourth,
/// UI, is rejected: the project has none.
const REQUEST: &str = "좀비 서바이벌 프로토타입 만들어줘";

async fn build<C: ClientHandler>(client: &RunningService<RoleClient, C>, call: Value) -> rmcp::model::CallToolResult {
    let call = client.call_tool(CallToolRequestParams::new("build").with_arguments(args(call)));
    tokio::time::timeout(std::time::Duration::from_secs(60), call)
        .await
        .expect("build answered without a terminal")
        .expect("tools/call build")
}

#[tokio::test]
async fn build_over_mcp_never_waits_for_a_terminal() {
    let project = unreachable_unity_project();
    let client = connect(project.path(), true).await;
    // A client without elicitation gets the open groups back as choices.
    let built = build(&client, json!({"request": REQUEST})).await;
    let lines = text(&built);
    assert!(!lines.contains("> "), "a prompt was printed: {lines}");
    let doc = built.structured_content.expect("the build summary");
    let groups: Vec<&Value> = doc["unconfirmed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["group"])
        .collect();
    assert_eq!(groups, [1, 2, 3], "{doc}");
    assert_eq!(
        doc["unconfirmed"][1]["choices"][0]["path"],
        "Assets/Prefabs/Player.prefab"
    );
    // The plan, as on the command line: no MCP for Unity, every group's asset and place.
    let planned = build(&client, json!({"request": REQUEST, "plan": true})).await;
    assert_ne!(planned.is_error, Some(true), "{planned:?}");
    assert!(text(&planned).contains("(--plan: nothing is sent to MCP for Unity)"));
    let doc = planned.structured_content.expect("the plan");
    let player = doc["placements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == "Assets/Prefabs/Player.prefab")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(player["choice"], "proposed", "{doc}");
    assert_eq!(player["position"], json!([3.0, 0.0, 0.0]), "{doc}");
    client.cancel().await.ok();
}

/// A form the client was shown: its message and the choices offered.
type Asked = (String, Vec<String>);

/// A client whose user answers elicitation forms: `answer` picks one of the
/// offered choices (by its text) or declines with `None`. It keeps what it
/// was asked: each message and its choices.
#[derive(Clone)]
struct Eliciting {
    answer: fn(&str, &[String]) -> Option<String>,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl Eliciting {
    fn new(answer: fn(&str, &[String]) -> Option<String>) -> Self {
        Self {
            answer,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Eliciting {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("eliciting-test-client", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            panic!("a form was expected: {request:?}");
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        let choices: Vec<String> = schema["properties"]["choice"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("no enum of choices: {schema}"))
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect();
        let answer = (self.answer)(&message, &choices);
        self.asked.lock().unwrap().push((message, choices));
        Ok(match answer {
            Some(choice) => ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "choice": choice })),
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

#[tokio::test]
async fn build_over_mcp_asks_a_client_that_can_elicit() {
    let project = unreachable_unity_project();
    // The player group takes its first candidate; the others are declined.
    let user = Eliciting::new(|message, choices| message.contains("플레이어").then(|| choices[0].clone()));
    let client = connect_as(
        Some(project.path()),
        true,
        user.clone(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let built = build(&client, json!({"request": REQUEST})).await;
    let lines = text(&built);

    let asked = user.asked();
    assert_eq!(
        asked.len(),
        3,
        "one request per group needing a confirmation: {asked:?}"
    );
    let (message, choices) = &asked[1];
    assert!(message.contains("2. \"좀비 서바이벌 플레이어 캐릭터\""), "{message}");
    assert!(
        choices[0].starts_with("1. Assets/Prefabs/Player.prefab (0."),
        "{choices:?}"
    );
    assert_eq!(choices.last().map(String::as_str), Some("abort"));
    // With Player.prefab chosen there is a call to send: the build went on
    // to MCP for Unity (unreachable here) instead of listing the group.
    assert!(lines.contains("mcp_unavailable"), "{lines}");
    assert!(!lines.contains("unconfirmed"), "{lines}");
    client.cancel().await.ok();
}

#[tokio::test]
async fn a_declined_elicitation_skips_the_group_and_answers_in_the_call_are_not_asked_again() {
    let project = unreachable_unity_project();
    let user = Eliciting::new(|_, _| None);
    let client = connect_as(
        Some(project.path()),
        true,
        user.clone(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let built = build(&client, json!({"request": REQUEST})).await;
    assert_eq!(user.asked().len(), 3);
    let lines = text(&built);
    let doc = built.structured_content.expect("the build summary");
    assert_eq!(doc["unconfirmed"], json!([]), "{doc}");
    assert_eq!(doc["verdicts"], json!(["rejected", "rejected", "rejected", "rejected"]));
    for group in 1..=3 {
        let line = format!("[unity-assets:build] {group}. ");
        assert!(
            lines
                .lines()
                .any(|l| l.starts_with(&line) && l.ends_with("rejected: aborted by the user")),
            "{lines}"
        );
    }

    // `yes` in the call answers every group: nothing is asked.
    let built = build(&client, json!({"request": REQUEST, "yes": true})).await;
    assert_eq!(user.asked().len(), 3, "asked although the call answered");
    assert!(text(&built).contains("mcp_unavailable"), "{}", text(&built));
    client.cancel().await.ok();
}

/// A Python with the MCP SDK: `UNITY_ASSETS_MCP_PYTHON`, or the venv `.ci/run` makes.
fn python_with_sdk() -> Option<PathBuf> {
    let candidate = std::env::var_os("UNITY_ASSETS_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/venv-mcp/bin/python"));
    let ok = Command::new(&candidate)
        .args(["-c", "import mcp.client.streamable_http"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(candidate)
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_python_client.py")
}

/// What the Python client saw, checked the same way for both transports.
fn check_python_session(seen: &Value) {
    assert_eq!(seen["server"], "unity-assets");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in ["build", "doctor", "index", "pick", "reindex", "search", "slow"] {
        assert!(tools.contains(&expected), "{expected} missing from {tools:?}");
    }
    assert_eq!(seen["search"]["is_error"], false);
    assert_eq!(seen["search"]["status"], "ok");
    assert!(seen["pick"]["text"]
        .as_str()
        .unwrap()
        .starts_with("[unity-assets:pick] recorded: "));
    assert_eq!(seen["bad_pick"]["is_error"], true);
    assert_eq!(seen["search_result_query"], "zombie enemy character");
    assert!(
        seen["reindex_progress"].as_u64().unwrap() > 0,
        "no progress notification: {seen}"
    );
    // The cancelled 30 s call ended long before it would have, and the
    // server went on answering.
    assert!(seen["cancel"]["seconds"].as_f64().unwrap() < 15.0, "{seen}");
    assert_eq!(seen["cancel"]["answered_after"], true);
}

#[test]
fn the_python_sdk_client_drives_it_over_stdio() {
    let Some(python) = python_with_sdk() else {
        eprintln!("skipped: no Python with the `mcp` package (run .ci/install-mcp-server.sh)");
        return;
    };
    let project = example_project();
    let out = Command::new(python)
        .arg(client_script())
        .args(["stdio", BIN, project.path().to_str().unwrap()])
        .output()
        .expect("run the Python client");
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON");
    check_python_session(&seen);
}

#[test]
fn the_python_sdk_client_drives_it_over_http() {
    let Some(python) = python_with_sdk() else {
        eprintln!("skipped: no Python with the `mcp` package (run .ci/install-mcp-server.sh)");
        return;
    };
    let project = example_project();
    let mut server = Command::new(BIN)
        .args([
            "--project",
            project.path().to_str().unwrap(),
            "--trust",
            "mcp",
            "--http",
            "0",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the HTTP server");
    let url = {
        use std::io::BufRead;
        let stderr = server.stderr.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stderr).read_line(&mut line).unwrap();
        line.split_whitespace().last().unwrap_or_default().to_owned()
    };
    assert!(url.starts_with("http://127.0.0.1:"), "bound to {url}");
    let out = Command::new(python)
        .arg(client_script())
        .args(["http", &url])
        .output()
        .expect("run the Python client");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON");
    check_python_session(&seen);
}

#[tokio::test]
async fn an_untrusted_project_is_refused_over_mcp_as_on_the_cli() {
    let project = example_project();
    let marker = project.path().join("ran");
    let pipelines = project.path().join(".claude/unity-assets/pipelines");
    let hostile = format!(
        "pipeline: hostile\nexpose: mcp\nstages:\n  a:\n    exec: {{command: [touch, \"{}\"]}}\n",
        marker.display()
    );
    std::fs::write(pipelines.join("hostile.yaml"), hostile).unwrap();
    let client = connect(project.path(), false).await;
    for tool in ["hostile", "search"] {
        let refused = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args(json!({"query": "zombie"}))))
            .await
            .expect("tools/call");
        assert_eq!(refused.is_error, Some(true), "{tool}: {}", text(&refused));
        assert!(text(&refused).contains("is not trusted"), "{tool}: {}", text(&refused));
    }
    assert!(!marker.exists(), "the untrusted exec stage ran");
    client.cancel().await.ok();
}

#[tokio::test]
async fn a_session_on_protocol_2026_07_28_gets_the_choices_back() {
    // That protocol forbids requests from the server: elicitation would
    // fail the call, so the groups come back unconfirmed.
    let project = unreachable_unity_project();
    let user = Eliciting::new(|_, choices| Some(choices[0].clone()));
    let modern = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = connect_as(Some(project.path()), true, user.clone(), modern).await;
    let built = build(&client, json!({"request": REQUEST})).await;
    assert!(user.asked().is_empty(), "{:?}", user.asked());
    let doc = built.structured_content.expect("the build summary");
    assert_eq!(doc["unconfirmed"].as_array().map(Vec::len), Some(3), "{doc}");
    client.cancel().await.ok();
}

/// As `unity-assets doctor` on the CLI: a broken config does not hide the
/// tools, `doctor` reports it as a failed check, and every other tool says
/// what is wrong with the config.
#[tokio::test]
async fn doctor_over_mcp_reports_a_broken_config() {
    let project = example_project();
    std::fs::write(
        project.path().join(".claude/unity-assets.yml"),
        "index_depth: minimal\nbatch_size: [unclosed\n",
    )
    .unwrap();
    let client = connect(project.path(), true).await;
    let tools = client.list_all_tools().await.expect("tools/list on a broken config");
    assert!(tools.iter().any(|t| t.name == "doctor"));

    let doctor = client
        .call_tool(CallToolRequestParams::new("doctor").with_arguments(args(json!({"offline": true}))))
        .await
        .expect("tools/call");
    assert_eq!(
        doctor.is_error,
        Some(true),
        "a failed required check: {}",
        text(&doctor)
    );
    assert!(text(&doctor).contains("✗ config:"), "{}", text(&doctor));
    assert!(
        text(&doctor).contains(".claude/unity-assets.yml:3:1:"),
        "{}",
        text(&doctor)
    );
    assert!(text(&doctor).contains("✓ project root:"), "{}", text(&doctor));

    let search = client
        .call_tool(CallToolRequestParams::new("search").with_arguments(args(json!({"query": "zombie"}))))
        .await
        .expect("tools/call");
    assert_eq!(search.is_error, Some(true), "{}", text(&search));
    assert!(text(&search).contains(".claude/unity-assets.yml"), "{}", text(&search));
    client.cancel().await.ok();
}
