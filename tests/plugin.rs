//! The Claude Code plugin shipped in the repo: `.claude-plugin/marketplace.json`
//! at the root and `plugin/` with its manifest, slash commands and `.mcp.json`.
//! Checked against the documented shapes, and every command against the MCP
//! tools the pipelines really offer.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The plugin's slash commands, `/unity-assets:<name>`.
const COMMANDS: &[&str] = &["build", "doctor", "index", "pick", "reindex", "search", "web-search"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_marketplace_lists_the_plugin_folder() {
    let market = json(&repo().join(".claude-plugin/marketplace.json"));
    assert_eq!(market["name"], "unity-assets");
    assert!(market["owner"]["name"].as_str().is_some_and(|n| !n.is_empty()));
    let plugins = market["plugins"].as_array().expect("plugins: [...]");
    assert_eq!(plugins.len(), 1);
    let entry = &plugins[0];
    let source = entry["source"].as_str().expect("a relative source");
    assert!(source.starts_with("./"), "sources are relative to the repo: {source}");
    let manifest = json(&repo().join(source).join(".claude-plugin/plugin.json"));
    // The plugin's name is the slash commands' namespace: /unity-assets:search.
    assert_eq!(manifest["name"], "unity-assets");
    assert_eq!(entry["name"], manifest["name"]);
    assert_eq!(entry["version"], manifest["version"]);
    assert!(manifest["description"].as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn the_plugin_registers_the_mcp_server() {
    let mcp = json(&repo().join("plugin/.mcp.json"));
    let server = &mcp["mcpServers"]["unity-assets"];
    assert_eq!(server["command"], "unity-assets");
    assert_eq!(server["args"], serde_json::json!(["mcp"]));
}

/// `---\nkey: value\n---\nbody` → (keys, body).
fn front_matter(text: &str) -> (Vec<(String, String)>, String) {
    let rest = text.strip_prefix("---\n").expect("a command starts with front matter");
    let (head, body) = rest.split_once("\n---\n").expect("front matter is closed by ---");
    let keys = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    (keys, body.to_owned())
}

#[test]
fn every_command_calls_a_tool_the_pipelines_offer() {
    let dir = repo().join("plugin/commands");
    let found: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".md").map(str::to_owned))
        .collect();
    let expected: BTreeSet<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
    assert_eq!(found, expected);

    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("Assets")).unwrap();
    let project = unity_assets::project::Project::open(project.path(), None, None).expect("open");
    let tools = unity_assets::mcp_server::pipeline_tools(&project);

    for name in COMMANDS {
        let text = std::fs::read_to_string(dir.join(format!("{name}.md"))).unwrap();
        let (keys, body) = front_matter(&text);
        let description = keys.iter().find(|(k, _)| k == "description").map(|(_, v)| v.as_str());
        assert!(description.is_some_and(|d| !d.is_empty()), "{name}: no description");
        for (k, _) in &keys {
            assert!(
                ["description", "argument-hint", "allowed-tools", "model"].contains(&k.as_str()),
                "{name}: unknown front matter key {k}"
            );
        }
        let takes_arguments = keys.iter().any(|(k, _)| k == "argument-hint");
        assert_eq!(
            body.contains("$ARGUMENTS"),
            takes_arguments,
            "{name}: $ARGUMENTS vs argument-hint"
        );
        let tool = body
            .split("Call the `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("{name}: names no tool"));
        assert!(
            tools.iter().any(|t| t == tool),
            "{name}: tool `{tool}` is not offered ({tools:?})"
        );
        assert!(
            body.contains(&format!("unity-assets {}", name)),
            "{name}: no CLI fallback"
        );
    }
}
