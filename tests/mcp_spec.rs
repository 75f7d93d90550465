//! `unity-assets mcp` against the MCP spec: tool metadata (annotations,
//! input and output schemas), structured content that validates, progress
//! that increases, JSON-RPC errors over stdio, Origin and DELETE over
//! HTTP, and the project found from roots, CLAUDE_PROJECT_DIR or upward.

// Roots are deprecated by SEP-2577, and still what Claude Code and Cursor send.
#![allow(deprecated)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ListRootsResult, NumberOrString,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, RequestMetaObject, Root,
};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};

#[path = "support/mcp.rs"]
mod support;
use support::{args, connect, connect_as, connect_to, example_project, text, unreachable_unity, BIN};
use unity_assets::mcp_server::{PipelineServer, ServerOptions};

#[tokio::test]
async fn every_tool_says_what_it_does_and_takes_only_what_a_caller_sets() {
    let project = example_project();
    let client = connect(project.path(), true).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for tool in &tools {
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        assert!(
            a.read_only_hint.is_some()
                && a.destructive_hint.is_some()
                && a.idempotent_hint.is_some()
                && a.open_world_hint.is_some(),
            "{}: {a:?}",
            tool.name
        );
        // Every array says what it holds.
        for (name, prop) in tool.input_schema["properties"].as_object().unwrap() {
            if prop["type"] == "array" {
                assert!(prop.get("items").is_some(), "{}.{name} has no items", tool.name);
            }
        }
    }
    let hint = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .annotations
            .clone()
            .unwrap()
    };
    assert_eq!(
        hint("search").read_only_hint,
        Some(false),
        "search writes search-result.json"
    );
    assert_eq!(hint("build").destructive_hint, Some(true), "build changes a scene");
    assert_eq!(
        hint("web_search").open_world_hint,
        Some(true),
        "web_search reaches the web"
    );
    assert_eq!(hint("doctor").read_only_hint, Some(true));

    let doctor = tools.iter().find(|t| t.name == "doctor").unwrap();
    let inputs: Vec<&String> = doctor.input_schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(inputs, ["offline"], "doctor shows its internal inputs");
    let build = tools.iter().find(|t| t.name == "build").unwrap();
    assert_eq!(
        build.input_schema["properties"]["choose"]["items"],
        json!({"type": "string"})
    );
    assert!(build.input_schema["properties"].get("caller").is_none());

    // An internal input cannot be set by a caller either.
    let forged = client
        .call_tool(CallToolRequestParams::new("doctor").with_arguments(args(json!({"trusted": true}))))
        .await
        .expect("tools/call");
    assert_eq!(forged.is_error, Some(true), "{}", text(&forged));

    // `graph` takes every format its enum lists, and no other.
    let graph = tools.iter().find(|t| t.name == "graph").unwrap();
    let formats = graph.input_schema["properties"]["format"]["enum"]
        .as_array()
        .unwrap()
        .clone();
    for format in &formats {
        let drawn = client
            .call_tool(
                CallToolRequestParams::new("graph").with_arguments(args(json!({"name": "pick", "format": format}))),
            )
            .await
            .expect("tools/call graph");
        assert_ne!(drawn.is_error, Some(true), "{format}: {}", text(&drawn));
    }
    assert!(formats.contains(&json!("svg")), "{formats:?}");
    for unlisted in ["png", "MERMAID"] {
        let refused = client
            .call_tool(
                CallToolRequestParams::new("graph").with_arguments(args(json!({"name": "pick", "format": unlisted}))),
            )
            .await
            .expect("tools/call graph");
        assert_eq!(refused.is_error, Some(true), "{unlisted}: {}", text(&refused));
    }
    client.cancel().await.ok();
}

/// The hints and output schema each shipped pipeline declares in its
/// `mcp:` block, as a client sees them: (read-only, destructive,
/// idempotent, open world, has an output schema).
const SHIPPED_TOOLS: &[(&str, [bool; 4], bool)] = &[
    ("search", [false, false, true, false], true),
    ("pick", [false, false, false, false], true),
    ("build", [false, true, false, false], true),
    ("index", [false, false, true, false], true),
    ("reindex", [false, false, true, false], true),
    ("doctor", [true, false, true, false], true),
    ("refs", [false, false, true, false], false),
    ("deps", [false, false, true, false], false),
    ("unused", [false, false, true, false], false),
    ("web_search", [true, false, true, true], true),
];

/// A team's pipeline that says what its tool does, and fills an input.
const TEAM: &str = "pipeline: team
summary: A team's read-only report
expose: mcp
mcp: {read_only: true, destructive: false, idempotent: true, open_world: false, output_schema: doctor-report.schema.json}
inputs:
  who: {type: string, default: team}
  caller: {type: string, default: cli, filled: true}
stages:
  say: {emit: \"{{ inputs.who }}\"}
";

#[tokio::test]
async fn each_pipeline_declares_what_its_tool_does_and_a_team_pipeline_that_declares_nothing_is_cautious() {
    let project = example_project();
    std::fs::write(project.path().join(".claude/unity-assets/pipelines/team.yaml"), TEAM).unwrap();
    let client = connect(project.path(), true).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let seen = |name: &str| {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is no tool"));
        let a = tool.annotations.clone().unwrap();
        let hints = [
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ]
        .map(Option::unwrap);
        (hints, tool.output_schema.is_some(), tool)
    };
    for (name, hints, has_schema) in SHIPPED_TOOLS {
        let (seen_hints, seen_schema, _) = seen(name);
        assert_eq!((seen_hints, seen_schema), (*hints, *has_schema), "{name}");
    }
    let (hints, has_schema, team) = seen("team");
    assert_eq!((hints, has_schema), ([true, false, true, false], true));
    let inputs: Vec<&String> = team.input_schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(inputs, ["who"], "a filled input is no tool input");
    // The example's `slow` declares nothing: it may do anything, anywhere, each call.
    assert_eq!(seen("slow").0, [false, true, false, true]);
    assert!(!seen("slow").1);

    let forged = client
        .call_tool(CallToolRequestParams::new("team").with_arguments(args(json!({"caller": "cli"}))))
        .await
        .expect("tools/call");
    assert_eq!(forged.is_error, Some(true), "{}", text(&forged));
    assert!(
        text(&forged).contains("input `caller` is filled by unity-assets itself"),
        "{}",
        text(&forged)
    );
    client.cancel().await.ok();
}

/// Calls every tool that answers with a document and checks the document
/// against the tool's declared `outputSchema`.
#[tokio::test]
async fn structured_content_validates_against_each_output_schema() {
    let project = example_project();
    unreachable_unity(project.path());
    let client = connect(project.path(), true).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let calls = [
        ("search", json!({"query": "zombie enemy character"})),
        ("search", json!({"query": "!!"})),
        ("pick", json!({"index": "0"})),
        ("pick", json!({"index": "9"})),
        ("build", json!({"request": "좀비 서바이벌 프로토타입 만들어줘"})),
        ("index", json!({})),
        ("reindex", json!({})),
        ("doctor", json!({"offline": true})),
        ("web_search", json!({"query": "ab"})),
        ("list_pipelines", json!({})),
    ];
    for (tool, arguments) in calls {
        let declared = tools.iter().find(|t| t.name == tool).unwrap();
        let schema = Value::Object(
            declared
                .output_schema
                .as_deref()
                .unwrap_or_else(|| panic!("{tool} declares no outputSchema"))
                .clone(),
        );
        assert_eq!(schema["type"], "object", "{tool}");
        let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{tool}: {e}"));
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args(arguments.clone())))
            .await
            .expect("tools/call");
        let doc = result
            .structured_content
            .unwrap_or_else(|| panic!("{tool} {arguments}: no structured content"));
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool} {arguments}: {errors:?}\n{doc}");
    }
    client.cancel().await.ok();
}

#[tokio::test]
async fn build_over_mcp_speaks_its_own_arguments_and_the_result_is_json() {
    let project = example_project();
    unreachable_unity(project.path());
    let client = connect(project.path(), true).await;
    let built = client
        .call_tool(
            CallToolRequestParams::new("build")
                .with_arguments(args(json!({"request": "좀비 서바이벌 프로토타입 만들어줘"}))),
        )
        .await
        .expect("tools/call build");
    let lines = text(&built);
    assert!(!lines.contains("--choose") && !lines.contains("--yes"), "{lines}");
    assert!(
        lines.contains(r#"call `build` again with "choose": ["1=N"] (N counts from 1) or "yes": true"#),
        "{lines}"
    );

    let read = client
        .read_resource(ReadResourceRequestParams::new("unity-assets://search-result.json"))
        .await
        .expect("resources/read");
    let body = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(body["mimeType"], "application/json", "{body}");
    client.cancel().await.ok();
}

/// A client that keeps the progress notifications it receives.
#[derive(Clone, Default)]
struct Watching {
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Watching {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.progress);
    }
}

#[tokio::test]
async fn progress_increases_with_every_notification() {
    let project = example_project();
    // One asset per batch: many ticks from concurrent batches; and two
    // fan-outs in one call, a team pipeline indexing twice.
    std::fs::write(
        project.path().join(".claude/unity-assets.yml"),
        "builtin_batch_size: 1\n",
    )
    .unwrap();
    let twice = "pipeline: twice\nexpose: mcp\nstages:\n  first: {run: index, with: {force: true}}\n  again: {needs: [first], run: index, with: {force: true}}\n";
    std::fs::write(project.path().join(".claude/unity-assets/pipelines/twice.yaml"), twice).unwrap();
    let watching = Watching::default();
    let client = connect_as(
        Some(project.path()),
        true,
        watching.clone(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let mut call = CallToolRequestParams::new("twice");
    call.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        NumberOrString::Number(7),
    )));
    let done = client.call_tool(call).await.expect("tools/call twice");
    assert_ne!(done.is_error, Some(true), "{}", text(&done));
    // Notifications sent before the answer may still be on their way.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = watching.progress.lock().unwrap().clone();
    assert!(seen.len() > 10, "too few notifications: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "progress went back: {seen:?}");
    client.cancel().await.ok();
}

/// A client whose roots are the given folders.
#[derive(Clone)]
struct Rooted(Vec<String>);

impl ClientHandler for Rooted {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_roots().build(),
            Implementation::new("rooted-test-client", "0"),
        )
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(
            self.0.iter().map(|uri| Root::new(uri.clone())).collect(),
        ))
    }
}

#[tokio::test]
async fn the_project_comes_from_the_clients_roots() {
    let project = example_project();
    let elsewhere = tempfile::tempdir().unwrap();
    let uri = |p: &Path| format!("file://{}", p.display());
    let client = Rooted(vec![uri(elsewhere.path()), uri(project.path())]);
    // No --project: the server's working folder (the test's) is no Unity project.
    let client = connect_as(None, true, client, ClientLifecycleMode::Initialize).await;
    let found = client
        .call_tool(CallToolRequestParams::new("search").with_arguments(args(json!({"query": "zombie"}))))
        .await
        .expect("tools/call");
    assert_ne!(found.is_error, Some(true), "{}", text(&found));
    assert_eq!(found.structured_content.unwrap()["status"], "ok");
    client.cancel().await.ok();
}

/// `unity-assets mcp` over stdio, started in `cwd` with `env`: the
/// server's answers to `lines` (initialize is sent first), by id.
fn stdio_session(cwd: &Path, env: &[(&str, &Path)], lines: &[String]) -> Vec<Value> {
    let mut command = Command::new(BIN);
    command
        .args(["--trust", "mcp"])
        .current_dir(cwd)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut server = command.spawn().expect("start the server");
    let mut stdin = server.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    for line in lines {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    let expected = lines.len() + 1;
    let stdout = BufReader::new(server.stdout.take().unwrap());
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    // A line left unanswered must not hang the test: a minute for all.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answers = vec![];
    while answers.len() < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = received.recv_timeout(left) else { break };
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    answers
}

fn call(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        .to_string()
}

fn answer(answers: &[Value], id: Value) -> &Value {
    answers
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no answer {id} in {answers:?}"))
}

#[test]
fn stdio_answers_every_line_as_json_rpc_says() {
    let project = example_project();
    let answers = stdio_session(
        project.path(),
        &[],
        &[
            "this is not json".into(),
            "[1, 2".into(),
            r#"{"jsonrpc":"2.0","id":5,"result":7,"method":1}"#.into(),
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "search", "arguments": ["zombie"]}})
                .to_string(),
            call(7, "search", json!({"query": {"text": "zombie"}})),
        ],
    );
    let errors: Vec<(i64, &Value)> = answers
        .iter()
        .filter_map(|a| Some((a["error"]["code"].as_i64()?, &a["id"])))
        .collect();
    assert!(errors.contains(&(-32700, &Value::Null)), "{answers:?}");
    assert_eq!(
        errors.iter().filter(|(code, _)| *code == -32700).count(),
        2,
        "{answers:?}"
    );
    assert!(errors.contains(&(-32600, &json!(5))), "{answers:?}");
    // `arguments` as an array: invalid params, not "method not found".
    assert!(errors.contains(&(-32602, &json!(6))), "{answers:?}");
    // A query given as an object is refused, not searched as its JSON text.
    let object_query = answer(&answers, json!(7));
    assert_eq!(object_query["result"]["isError"], true, "{object_query}");
    let message = object_query["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("`query`: expected a string, got an object"),
        "{message}"
    );
}

#[test]
fn without_project_the_server_looks_in_claude_project_dir_then_upward_and_says_where() {
    let project = example_project();
    let nowhere = tempfile::tempdir().unwrap();
    let search = call(1, "search", json!({"query": "zombie"}));
    let status = |answers: &[Value]| answer(answers, json!(1))["result"].clone();

    let from_env = stdio_session(
        nowhere.path(),
        &[("CLAUDE_PROJECT_DIR", project.path())],
        std::slice::from_ref(&search),
    );
    assert_eq!(status(&from_env)["structuredContent"]["status"], "ok", "{from_env:?}");

    let deep = project.path().join("Assets/Prefabs");
    let upward = stdio_session(&deep, &[], std::slice::from_ref(&search));
    assert_eq!(status(&upward)["structuredContent"]["status"], "ok", "{upward:?}");

    let lost = stdio_session(nowhere.path(), &[], &[search]);
    let result = status(&lost);
    assert_eq!(result["isError"], true, "{result}");
    let message = result["content"][0]["text"].as_str().unwrap();
    for part in [
        "no Unity project found",
        "the client's roots",
        "CLAUDE_PROJECT_DIR: not set",
        "and the folders above it: none holds Assets/",
        "--project DIR",
    ] {
        assert!(message.contains(part), "{part} missing from {message}");
    }
}

/// The HTTP server on a free port, and its address.
fn http_server(project: &Path) -> (std::process::Child, String) {
    let mut server = Command::new(BIN)
        .args(["--project", project.to_str().unwrap(), "--trust", "mcp", "--http", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the HTTP server");
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // Keep reading, so the server's later log lines never meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = line.split_whitespace().last().unwrap_or_default();
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    (server, addr)
}

/// One HTTP/1.1 request; the status and headers of the answer (its head).
fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = vec![0; 4096];
    let n = stream.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

#[test]
fn http_refuses_foreign_origins_and_deleting_a_session_answers_no_content() {
    let project = example_project();
    let (mut server, addr) = http_server(project.path());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    .to_string();
    let post = |origin: Option<&str>| {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(o) = origin {
            headers.push(("Origin", o));
        }
        request(&addr, "POST", &headers, &init)
    };
    let (foreign, refused) = post(Some("http://evil.example"));
    let (local, head) = post(Some("http://localhost:5173"));
    let (own, _) = post(Some(&format!("http://{addr}")));
    let session = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp-session-id: ")
                .or_else(|| l.strip_prefix("Mcp-Session-Id: "))
        })
        .map(str::trim)
        .unwrap_or_default()
        .to_owned();
    let (deleted, _) = request(&addr, "DELETE", &[("Mcp-Session-Id", &session)], "");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(foreign, 403, "{addr}: {refused}");
    assert_eq!(local, 200, "{head}");
    assert_eq!(own, 200);
    assert!(!session.is_empty(), "{head}");
    assert!(matches!(deleted, 200 | 204), "DELETE answered {deleted}");
}

/// The top candidate's guid of a search answer.
fn top_guid(found: &rmcp::model::CallToolResult) -> String {
    let doc = found.structured_content.as_ref().expect("a search result");
    doc["groups"][0]["candidates"][0]["guid"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn each_session_picks_from_its_own_last_search() {
    let project = example_project();
    let server = PipelineServer::new(ServerOptions {
        root: Some(project.path().to_path_buf()),
        provider: None,
        model: None,
        trust: true,
    });
    let zombie_side = connect_to(server.new_session(), (), ClientLifecycleMode::Initialize).await;
    let player_side = connect_to(server.new_session(), (), ClientLifecycleMode::Initialize).await;
    let search = |query: &str| CallToolRequestParams::new("search").with_arguments(args(json!({ "query": query })));
    let zombie = top_guid(&zombie_side.call_tool(search("zombie enemy character")).await.unwrap());
    let player = top_guid(&player_side.call_tool(search("player character prefab")).await.unwrap());
    assert_ne!(zombie, player);
    let pick = || CallToolRequestParams::new("pick").with_arguments(args(json!({"index": "0"})));
    let picked = zombie_side.call_tool(pick()).await.unwrap();
    assert_eq!(
        text(&picked).lines().next().unwrap_or_default(),
        format!("[unity-assets:pick] recorded: {zombie}"),
        "picked from another session's search"
    );
    let picked = player_side.call_tool(pick()).await.unwrap();
    assert_eq!(
        text(&picked).lines().next().unwrap_or_default(),
        format!("[unity-assets:pick] recorded: {player}")
    );
    // The file stays the CLI's contract: it holds the result the last call used.
    let file = std::fs::read_to_string(project.path().join(".claude/unity-asset-index/search-result.json")).unwrap();
    assert!(file.contains("player character prefab"), "{file}");
    zombie_side.cancel().await.ok();
    player_side.cancel().await.ok();
}
