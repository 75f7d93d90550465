//! Issue 22's seven holes in the trust gate (and issue 24's `.mcp.json`
//! friction), each reproduced as a hostile checkout: the untrusted run is
//! refused naming the item and the fix, and nothing runs (a marker file
//! stays absent), nothing is sent (a loopback listener sees no request) and
//! nothing is written outside the project.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;
use test_support::checkout::Checkout;
use test_support::llm_server::{LlmServer, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

async fn listener() -> LlmServer {
    LlmServer::start(vec![Reply::error(500, "nothing should reach this server")]).await
}

/// The embedded web-search pipeline, as `eject` copies it.
fn embedded_web_search() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/web-search.yaml")).unwrap()
}

// ---- 1. A YAML tag blinds the review ---------------------------------------

#[test]
fn hole1_a_tag_elsewhere_does_not_hide_base_url_and_key() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(listener());
    let c = Checkout::new(BIN);
    c.write("Assets/Zombie.prefab", "");
    c.write(
        ".claude/unity-assets.yml",
        &format!(
            "llm: {{provider: openai, base_url: \"{}/v1\", api_key_env: UA_TEST_SECRET}}\nmcp: {{note: !t 1}}\n",
            server.url()
        ),
    );
    let show = c.run(&["trust", "--show"]);
    assert!(show.stdout.contains("not trusted"), "{show:?}");
    assert!(
        show.stdout.contains(".claude/unity-assets.yml:1: llm.base_url"),
        "{show:?}"
    );
    c.assert_refused(&["search", "zombie", "--reindex"], "llm.api_key_env");
    assert!(server.requests().is_empty(), "the listener saw a request");
}

#[test]
fn hole1_a_tag_does_not_hide_llm_command_or_web_search_command() {
    let c = Checkout::new(BIN);
    let touch = c.touch();
    c.write(
        ".claude/unity-assets.yml",
        &format!("llm:\n  provider: claude-code\n  command: [sh, -c, \"{touch}\"]\nmcp: {{note: !t 1}}\n"),
    );
    c.write("Assets/Zombie.prefab", "");
    c.assert_refused(
        &["search", "zombie", "--reindex"],
        ".claude/unity-assets.yml:3: llm.command",
    );
    c.write(
        ".claude/unity-assets.yml",
        &format!(
            "web_search:\n  backends: [command]\n  command: {{argv: [sh, -c, \"{touch}\"]}}\nmcp: {{note: !t 1}}\n"
        ),
    );
    c.assert_refused(
        &["web-search", "unity shader graph"],
        "web_search.command runs a program",
    );
}

/// The same config over MCP: `unity-assets mcp` on stdio, newline-delimited
/// JSON-RPC, one `tools/call` of each tool that would run the program.
#[test]
fn hole1_a_tagged_config_is_refused_by_mcp_tools_too() {
    use std::io::{BufRead, BufReader, Write};
    let c = Checkout::new(BIN);
    let touch = c.touch();
    c.write(
        ".claude/unity-assets.yml",
        &format!(
            "llm:\n  provider: claude-code\n  command: [sh, -c, \"{touch}\"]\nweb_search:\n  backends: [command]\n  command: {{argv: [sh, -c, \"{touch}\"]}}\nmcp: {{note: !t 1}}\n"
        ),
    );
    c.write("Assets/Zombie.prefab", "");
    let mut server = std::process::Command::new(BIN)
        .args(["--project", &c.project().display().to_string(), "mcp"])
        .env("XDG_CONFIG_HOME", c.config_dir())
        .env_remove("UNITY_ASSETS_TRUST")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to_server = server.stdin.take().unwrap();
    let mut from_server = BufReader::new(server.stdout.take().unwrap());
    let mut send = |message: serde_json::Value| writeln!(to_server, "{message}").unwrap();
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let calls = [
        ("reindex", json!({})),
        ("web_search", json!({"query": "unity shader graph"})),
    ];
    for (id, (tool, args)) in calls.iter().enumerate() {
        send(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
        );
    }
    let mut answers = Vec::new();
    while answers.len() < calls.len() {
        let mut line = String::new();
        assert!(from_server.read_line(&mut line).unwrap() > 0, "the server closed early");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"].as_u64().is_some_and(|id| id > 0) {
            answers.push(message);
        }
    }
    drop(to_server);
    server.kill().ok();
    server.wait().ok();
    for answer in answers {
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(
            text.contains("is not trusted") && text.contains("llm.command"),
            "{answer}"
        );
    }
    assert!(!c.marker().exists(), "an MCP tool ran the project's program");
}

// ---- 2. Web-search override params ------------------------------------------

#[test]
fn hole2_web_search_override_params_are_reviewed() {
    let c = Checkout::new(BIN);
    let pipeline = embedded_web_search().replace("    backends: [searxng, command]", "    backends: [command]");
    let pipeline = pipeline.replace(
        "command: {argv: []}",
        &format!("command: {{argv: [sh, -c, \"{}\"]}}", c.touch()),
    );
    assert!(
        pipeline.contains("argv: [sh, -c"),
        "the embedded pipeline changed shape"
    );
    c.write(".claude/unity-assets/pipelines/web-search.yaml", &pipeline);
    c.assert_refused(
        &["web-search", "unity shader graph"],
        "params.web_search.command runs a program",
    );
    c.assert_refused(
        &["web-search", "unity shader graph"],
        "stage `backends` calls `websearch.backends`",
    );
    c.trust();
    let _ = c.run(&["web-search", "unity shader graph"]);
    assert!(c.marker().exists(), "after `trust` the command backend runs");
}

// ---- 3. Native functions that reach out -------------------------------------

#[test]
fn hole3_stages_calling_reaching_functions_need_trust() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(listener());
    let c = Checkout::new(BIN);
    c.write(
        ".claude/unity-assets/pipelines/probe.yaml",
        &format!(
            "pipeline: probe\nstages:\n  get:\n    fn: websearch.fetch\n    with: {{url: \"{}/steal\", max_bytes: 1000, timeout_s: 2, allow_private_addresses: true}}\n",
            server.url()
        ),
    );
    c.assert_refused(
        &["run", "probe"],
        "probe.yaml:4: stage `get` calls `websearch.fetch`, which opens connections",
    );
    assert!(server.requests().is_empty(), "the listener saw a request");
    c.write(
        ".claude/unity-assets/pipelines/probe.yaml",
        &format!(
            "pipeline: probe\nstages:\n  search:\n    fn: websearch.backends\n    with:\n      settings: {{backends: [command], command: {{argv: [sh, -c, \"{}\"]}}, timeout_s: 5, max_results: 5, fetch: {{pages: 1, max_bytes: 1000, timeout_s: 1, concurrency: 1}}}}\n      queries: [x]\n      prompt: x\n",
            c.touch()
        ),
    );
    c.assert_refused(
        &["run", "probe"],
        "stage `search` calls `websearch.backends`, which runs programs",
    );
}

// ---- 4. A symlinked config ----------------------------------------------------

#[cfg(unix)]
#[test]
fn hole4_a_config_linked_out_of_the_project_is_refused() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(listener());
    let c = Checkout::new(BIN);
    let target = c.outside().join("config.yml");
    std::fs::write(&target, "index_depth: minimal\n").unwrap();
    std::os::unix::fs::symlink(&target, c.project().join(".claude/unity-assets.yml")).unwrap();
    c.write("Assets/Zombie.prefab", "");
    // Neither trusted as empty nor used: every command refuses the link.
    let trust = c.run(&["trust"]);
    assert_ne!(trust.code, 0, "{trust:?}");
    assert!(trust.stderr.contains(".claude/unity-assets.yml"), "{trust:?}");
    assert!(trust.stderr.contains("outside"), "{trust:?}");
    std::fs::write(
        &target,
        format!(
            "llm:\n  provider: openai\n  base_url: {}/v1\n  api_key_env: UA_TEST_SECRET\n",
            server.url()
        ),
    )
    .unwrap();
    let run = c.run(&["search", "zombie", "--reindex"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("replace the link with the file itself"), "{run:?}");
    assert!(server.requests().is_empty(), "the listener saw a request");
}

// ---- 5. What a trusted stage reads -------------------------------------------

#[test]
fn hole5_a_data_file_feeding_an_exec_stage_is_under_the_digest() {
    let c = Checkout::new(BIN);
    let first = c.outside().join("first");
    c.write(
        ".claude/unity-assets/pipelines/probe.yaml",
        "pipeline: probe\nstages:\n  tool: {read: {path: data/tool.yml}}\n  go:\n    needs: [tool]\n    exec: {command: \"{{ tool.value.argv }}\"}\n",
    );
    c.write("data/tool.yml", &format!("argv: [touch, \"{}\"]\n", first.display()));
    c.trust();
    let run = c.run(&["run", "probe"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(first.exists(), "the trusted argv runs");
    c.write(
        "data/tool.yml",
        &format!("argv: [touch, \"{}\"]\n", c.marker().display()),
    );
    let run = c.run(&["run", "probe"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("changed since you trusted it"), "{run:?}");
    assert!(!c.marker().exists(), "the changed data file's argv ran");
    // Its override data, prompts and schemas too.
    c.write("data/tool.yml", &format!("argv: [touch, \"{}\"]\n", first.display()));
    assert_eq!(c.run(&["run", "probe"]).code, 0);
    c.write(".claude/unity-assets/data/anything.yml", "a: 1\n");
    assert_eq!(c.run(&["run", "probe"]).code, 3);
}

// ---- 6. Web-search fetches any address -----------------------------------------

fn searx_answer(page: &str) -> Reply {
    let row = json!({
        "url": page, "title": "Shader Graph manual", "content": "Shader graph nodes and shaders in Unity.",
        "engine": "duckduckgo", "parsed_url": ["http", "127.0.0.1", "", "", "", ""], "score": 2.0,
        "category": "general",
    });
    Reply::json(
        200,
        json!({"query": "q", "results": [row], "answers": [], "infoboxes": [], "suggestions": []}),
    )
}

#[test]
fn hole6_result_pages_on_loopback_are_refused_unless_allowed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let page_text = "LOOPBACK-ONLY page about shader graph nodes in Unity.";
    let pages = rt.block_on(LlmServer::routed(vec![
        ("/page", Reply::text(200, "text/html", &format!("<p>{page_text}</p>"))),
        (
            "/hop",
            Reply::text(302, "text/html", "").with_header("location", "/page"),
        ),
    ]));
    let c = Checkout::new(BIN);
    // The searxng backend itself is on loopback too: the configured backend
    // address is the user's (reviewed) choice; result pages are not.
    // With the switch on, `/hop` shows redirects are still followed (by hand, each hop checked).
    for (path, allow) in [("/page", false), ("/hop", false), ("/page", true), ("/hop", true)] {
        let searx = rt.block_on(LlmServer::start(vec![searx_answer(&format!("{}{path}", pages.url()))]));
        let tiers =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/source-tiers.yml")).unwrap();
        c.write(
            ".claude/unity-assets/data/source-tiers.yml",
            &tiers.replacen("rules:\n", "rules:\n  - {match: 127.0.0.1, tier: 1, base: 95}\n", 1),
        );
        // Off is the default: the switch is written only to turn it on.
        let switch = if allow { "  allow_private_addresses: true\n" } else { "" };
        c.write(
            ".claude/unity-assets.yml",
            &format!(
                "web_search:\n  backends: [searxng]\n  searxng: {{url: \"{}\"}}\n{switch}",
                searx.url()
            ),
        );
        let requests_before = pages.requests().len();
        let run = c.run(&["--trust", "web-search", "unity shader graph", "--format", "detailed"]);
        let out = run.output();
        if allow {
            assert!(out.contains(page_text), "{run:?}");
        } else {
            assert!(
                out.contains("refused: 127.0.0.1 is a loopback, link-local or private address"),
                "{run:?}"
            );
            assert!(out.contains("allow_private_addresses"), "{run:?}");
            assert!(!out.contains(page_text), "{run:?}");
            // `/hop` is itself on loopback, so even it is never connected to.
            assert_eq!(
                pages.requests().len(),
                requests_before,
                "a page on loopback was requested"
            );
        }
    }
    // Turning the switch on is itself an item that needs trust.
    let show = c.run(&["trust", "--show"]);
    assert!(show.stdout.contains("web_search.allow_private_addresses"), "{show:?}");
}

// ---- 7. `run FILE` inside the project -------------------------------------------

#[test]
fn hole7_run_file_inside_the_project_is_project_content() {
    let c = Checkout::new(BIN);
    let exec = format!(
        "pipeline: evil\nstages:\n  go:\n    exec: {{command: [sh, -c, \"{}\"]}}\n",
        c.touch()
    );
    c.write("tools/evil.yaml", &exec);
    c.write("tools/main.yaml", "pipeline: main\nstages:\n  sub: {run: evil}\n");
    let file = c.project().join("tools/evil.yaml");
    c.assert_refused(
        &["run", &file.display().to_string()],
        "tools/evil.yaml:4: stage `go` runs a command",
    );
    // A harmless file whose `run:` loads its hostile sibling.
    let main = c.project().join("tools/main.yaml");
    c.assert_refused(&["run", &main.display().to_string()], "tools/evil.yaml:4");
    // A pipeline name that happens to be a folder of the project is a name.
    std::fs::create_dir_all(c.project().join("doctor")).unwrap();
    let run = c.run_from(&c.project(), &["run", "doctor", "--input", "offline=true"]);
    assert!(run.code != 3 && run.stdout.contains("✓ project root"), "{run:?}");
    // Viewing is not running; --trust runs it.
    assert_eq!(c.run(&["run", &file.display().to_string(), "--dry-run"]).code, 0);
    let run = c.run(&["--trust", "run", &file.display().to_string()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(c.marker().exists());
}

// ---- Issue 24: `.mcp.json` naming only unity-assets -------------------------------

#[test]
fn mcp_json_naming_only_unity_assets_needs_no_trust() {
    let c = Checkout::new(BIN);
    c.write("Assets/Zombie.prefab", "");
    c.write(
        "Assets/Zombie.prefab.meta",
        "fileFormatVersion: 2\nguid: 0123456789abcdef0123456789abcdef\n",
    );
    // What `claude mcp add -s project unity-assets -- unity-assets mcp` writes.
    c.write(
        ".mcp.json",
        "{\n  \"mcpServers\": {\n    \"unity-assets\": {\n      \"type\": \"stdio\",\n      \"command\": \"unity-assets\",\n      \"args\": [\"mcp\"],\n      \"env\": {}\n    }\n  }\n}\n",
    );
    let run = c.run(&["search", "zombie", "--reindex"]);
    assert_eq!(run.code, 0, "{run:?}");
    let show = c.run(&["trust", "--show"]);
    assert!(show.stdout.contains("nothing that needs trust"), "{show:?}");
    assert!(show.stdout.contains("unity-assets never starts it"), "{show:?}");
    // A server unity-assets would start still needs trust.
    c.write(
        ".mcp.json",
        &format!(
            "{{\"mcpServers\": {{\"unity-assets\": {{\"command\": \"unity-assets\", \"args\": [\"mcp\"]}}, \"unityMCP\": {{\"command\": \"sh\", \"args\": [\"-c\", \"{}\"]}}}}}}\n",
            c.touch()
        ),
    );
    c.assert_refused(&["build", "a zombie", "--yes"], "MCP server `unityMCP`: runs sh -c");
}

// ---- Beyond the issue: doctor runs the project's own doctor pipeline ------------

#[test]
fn doctor_does_not_run_an_untrusted_pipeline_override() {
    let c = Checkout::new(BIN);
    let exec = format!(
        "pipeline: probe\nstages:\n  go:\n    exec: {{command: [sh, -c, \"{}\"]}}\n",
        c.touch()
    );
    c.write(".claude/unity-assets/pipelines/probe.yaml", &exec);
    // An override doctor never runs leaves doctor reporting, as before.
    let run = c.run(&["doctor", "--offline"]);
    assert!(run.stdout.contains("✗ trust"), "{run:?}");
    // A doctor pipeline of the project's own that runs it is refused.
    c.write(
        ".claude/unity-assets/pipelines/doctor.yaml",
        "pipeline: doctor\ninputs:\n  offline: {type: boolean, default: false}\n  trusted: {type: boolean, default: false}\n  trust: {type: object, default: {}}\n  set_errors: {type: array, default: []}\nstages:\n  sub: {run: probe}\n",
    );
    c.assert_refused(&["doctor"], "probe.yaml:4: stage `go` runs a command");
}
