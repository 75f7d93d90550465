//! Which settings need trust: those that run a program, reach the network,
//! pick a credential, or raise what a run may spend (model calls on the
//! user's key, memory, CPU). A project may lower a limit on its own; raising
//! one is the user's (`--set`) or needs `unity-assets trust`.

use serde_json::Value;

use super::review::shown;
use super::Item;
use crate::websearch::config::{TrustItem, WebSearchConfig};

/// `llm.command`, `llm.provider` (other than builtin), `llm.base_url`,
/// `llm.api_key_env`, what raises spend (`llm.models`, `llm.max_tokens`,
/// `search.mode: exhaustive`, `limits.*` above their
/// defaults), `embeddings.base_url`, `embeddings.api_key_env`, `mcp:` and
/// `web_search:` of a settings mapping (the config, or a pipeline's `params:`, `prefix`
/// naming which). `line`: where a dotted key is written.
pub(super) fn settings_items(file: &str, values: &Value, line: impl Fn(&str) -> usize, prefix: &str) -> Vec<Item> {
    let at = |path: &str, what: String| Item {
        file: file.to_owned(),
        line: line(path),
        what: format!("{prefix}{what}"),
    };
    let mut items = Vec::new();
    let llm = &values["llm"];
    if !llm["command"].is_null() {
        items.push(at(
            "llm.command",
            format!("llm.command runs a program: {}", shown(&llm["command"])),
        ));
    }
    if let Some(provider) = llm["provider"].as_str().filter(|p| *p != "builtin") {
        let what = match provider {
            "claude-code" => "runs the `claude` program (Claude Code, an agent with tools) with your login".to_owned(),
            vendor => format!("sends your prompts to {vendor}, on your key"),
        };
        items.push(at("llm.provider", format!("llm.provider {provider} {what}")));
    }
    items.extend(spend(values).into_iter().map(|(path, what)| at(&path, what)));
    // A model server and an embeddings server receive the project's text
    // and the key the variable holds.
    for (section, sends) in [("llm", "your prompts"), ("embeddings", "your asset names and queries")] {
        let settings = &values[section];
        if !settings["base_url"].is_null() {
            items.push(at(
                &format!("{section}.base_url"),
                format!(
                    "{section}.base_url sends {sends} and API key to {}",
                    shown(&settings["base_url"])
                ),
            ));
        }
        if !settings["api_key_env"].is_null() {
            items.push(at(
                &format!("{section}.api_key_env"),
                format!(
                    "{section}.api_key_env chooses which environment variable is sent as the key: {}",
                    shown(&settings["api_key_env"])
                ),
            ));
        }
    }
    if let Some(mcp) = values.get("mcp").filter(|m| !m.is_null()) {
        items.push(at(
            "mcp",
            format!("mcp: starts or connects to an MCP server: {}", describe_server(mcp)),
        ));
    }
    for item in WebSearchConfig::trust_items(&values["web_search"]) {
        items.push(match item {
            TrustItem::Program(argv) => at(
                "web_search.command.argv",
                format!("web_search.command runs a program: {}", argv.join(" ")),
            ),
            TrustItem::Url { backend, url } => at(
                &format!("web_search.{backend}.url"),
                format!("web_search.{backend}.url sends your queries (and its key) to {url}"),
            ),
            TrustItem::KeyEnv { backend, var } => at(
                &format!("web_search.{backend}.api_key_env"),
                format!(
                    "web_search.{backend}.api_key_env chooses which environment variable is sent as the key: {var}"
                ),
            ),
            TrustItem::PrivateAddresses => at(
                "web_search.allow_private_addresses",
                "web_search.allow_private_addresses lets result pages on this machine and your private network be fetched"
                    .to_owned(),
            ),
        });
    }
    items
}

fn describe_server(v: &Value) -> String {
    match (v.get("command"), v.get("url")) {
        (Some(c), _) if !c.is_null() => {
            let args: Vec<String> = v["args"].as_array().into_iter().flatten().map(shown).collect();
            format!("runs {} {}", shown(c), args.join(" ")).trim_end().to_owned()
        }
        (_, Some(u)) if !u.is_null() => format!("connects to {}", shown(u)),
        _ => shown(v),
    }
}

/// Settings that raise what a run spends: model calls and tokens on the
/// user's key, memory and CPU (`limits.*` above their defaults), as
/// `(dotted key, why)`.
fn spend(values: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let llm = &values["llm"];
    if !llm["models"].is_null() {
        found.push((
            "llm.models".into(),
            format!(
                "llm.models chooses the models your key pays for: {}",
                shown(&llm["models"])
            ),
        ));
    }
    let defaults = engine::llm::config::LlmConfig::default();
    let default_tokens = defaults.max_tokens;
    if let Some(v) = llm["max_tokens"].as_f64().filter(|v| *v > f64::from(default_tokens)) {
        found.push((
            "llm.max_tokens".into(),
            format!("llm.max_tokens: {v} raises the tokens a model call may spend (default {default_tokens})"),
        ));
    }
    if values["search"]["mode"] == "exhaustive" {
        found.push((
            "search.mode".into(),
            "search.mode: exhaustive sends every row of the index to the model, a call per chunk, on every search"
                .into(),
        ));
    }
    let limits = engine::io::Limits::default();
    const MIB: u64 = 1024 * 1024;
    for (key, default) in [
        ("file_mb", limits.file_bytes / MIB),
        ("data_mb", limits.data_bytes / MIB),
        ("http_mb", limits.http_bytes / MIB),
        ("line_kb", limits.line_bytes / 1024),
        ("template_fuel", limits.template_fuel),
    ] {
        if let Some(v) = values["limits"][key].as_f64().filter(|v| *v > default as f64) {
            found.push((
                format!("limits.{key}"),
                format!("limits.{key}: {v} raises the default {default} (a project may only lower a limit; raise it with --set)"),
            ));
        }
    }
    found
}
