//! What in a project needs trust, read the way the product reads it: the
//! config through the loader's own parser, `.mcp.json` through the parser and
//! the server choice `build` uses, and pipeline stages through the engine's
//! outline and the registry's [`Reach`](engine::Reach) declarations. A file
//! that cannot be read this way is itself an item, never an empty review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use engine::resources::Resources;
use engine::{ActionKind, Registry};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::settings::settings_items;
use super::{Item, Review};
use crate::config::{CONFIG_FILE, OVERRIDES};

const MCP_JSON: &str = ".mcp.json";
/// A reviewed file larger than this is not a config or a pipeline.
const FILE_LIMIT: u64 = 16 * 1024 * 1024;
/// Templates rendered into a program's command line.
const PROGRAM_PROMPTS: [&str; 1] = ["prompts/web-search/command.j2"];
/// The override folders whose files a pipeline can read by name.
const OVERRIDE_FOLDERS: [&str; 4] = ["pipelines", "prompts", "schemas", "data"];

/// Every trust-requiring item of the project (and of `run_file`, a pipeline
/// file named on the command line, when it lies inside the project).
pub fn review(root: &Path, resources: &Resources, registry: &Registry, run_file: Option<&Path>) -> Review {
    let mut r = Reviewer {
        root,
        registry,
        items: Vec::new(),
        for_this_run: Vec::new(),
        notes: Vec::new(),
        files: BTreeMap::new(),
        pipelines_reach: false,
        read_paths: BTreeSet::new(),
    };
    r.config();
    r.mcp_json();
    let embedded: BTreeMap<String, &[u8]> = resources.embedded_files().into_iter().collect();
    let mut pipelines = Vec::new();
    for rel in resources.list("pipelines") {
        let file = format!("{OVERRIDES}/{rel}");
        let embedded_text = embedded.get(&rel).and_then(|e| std::str::from_utf8(e).ok());
        let (text, reaches) = match r.text(&file) {
            // An ejected copy, unedited, is the embedded pipeline.
            Some(text) if embedded_text != Some(text.as_str()) => {
                let found = r.pipeline(&file, &text);
                let reaches = !found.is_empty();
                r.add(&file, &text, found);
                (text, reaches)
            }
            _ => (embedded_text.unwrap_or_default().to_owned(), false),
        };
        let name = rel
            .trim_start_matches("pipelines/")
            .trim_end_matches(".yaml")
            .to_owned();
        pipelines.push((name, reaches, text));
    }
    // A prompt that becomes a program's arguments is part of what it runs.
    for rel in PROGRAM_PROMPTS {
        let file = format!("{OVERRIDES}/{rel}");
        let embedded_text = embedded.get(rel).and_then(|e| std::str::from_utf8(e).ok());
        if let Some(text) = r.text(&file).filter(|t| Some(t.as_str()) != embedded_text) {
            let item = Item {
                file: file.clone(),
                line: 1,
                what: "the prompt web search's `command` backend passes to its program as arguments".into(),
            };
            r.add(&file, &text, vec![item]);
        }
    }
    // Which pipelines run which matters only when one reaches out; reading
    // every pipeline's stages was a fifth of a search's start-up.
    let any_reaches = pipelines.iter().any(|(_, reaches, _)| *reaches);
    let graph = pipelines
        .into_iter()
        .map(|(name, reaches, text)| {
            let runs = if any_reaches { sub_pipelines(&text) } else { Vec::new() };
            (name, (reaches, runs))
        })
        .collect();
    // A name ending in .yaml/.yml is a file to the compiler, else a pipeline name.
    let is_file = |f: &&Path| matches!(f.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
    if let Some(rel) = run_file.filter(is_file).and_then(|f| inside(root, f)) {
        r.run_file(&rel, &mut BTreeSet::new());
    }
    // What a reaching stage reads can steer it: an override's data, prompt
    // or schema, or a project file it names, is covered by the digest.
    if r.pipelines_reach {
        for folder in OVERRIDE_FOLDERS {
            for rel in resources.list(folder) {
                let file = format!("{OVERRIDES}/{rel}");
                r.cover(&file);
            }
        }
        for path in std::mem::take(&mut r.read_paths) {
            r.cover(&path);
        }
    }
    Review {
        digest: r.digest(),
        pipelines: graph,
        items: r.items,
        for_this_run: r.for_this_run,
        notes: r.notes,
    }
}

struct Reviewer<'a> {
    root: &'a Path,
    registry: &'a Registry,
    items: Vec<Item>,
    /// Items of a pipeline file run by path: allowed only by `--trust`.
    for_this_run: Vec<Item>,
    notes: Vec<String>,
    /// The bytes of every file the digest covers (`None`: absent).
    files: BTreeMap<String, Option<Vec<u8>>>,
    /// A reviewed pipeline has a stage that reaches out.
    pipelines_reach: bool,
    /// Project files the `read:` stages of such pipelines name.
    read_paths: BTreeSet<String>,
}

impl Reviewer<'_> {
    /// Record `found` (and the file they come from, for the digest).
    fn add(&mut self, rel: &str, text: &str, found: Vec<Item>) {
        if !found.is_empty() {
            self.files.insert(rel.to_owned(), Some(text.as_bytes().to_vec()));
            self.items.extend(found);
        }
    }

    /// A file of the project as text (`None`: absent). One that exists but
    /// cannot be reviewed (a link out of the project, unreadable, not UTF-8)
    /// is itself an item: what cannot be reviewed is not used untrusted.
    fn text(&mut self, rel: &str) -> Option<String> {
        let why = match read(self.root, rel) {
            Ok(None) => return None,
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => return Some(text),
                Err(e) => format!("not UTF-8 text: {e}"),
            },
            Err(why) => why,
        };
        self.items.push(unreviewable(rel, why));
        self.files.insert(rel.to_owned(), None);
        None
    }

    /// Put a file (present or not) under the digest without reviewing it.
    fn cover(&mut self, rel: &str) {
        if self.files.contains_key(rel) {
            return;
        }
        match read(self.root, rel) {
            Ok(bytes) => {
                self.files.insert(rel.to_owned(), bytes);
            }
            Err(why) => self.items.push(unreviewable(rel, why)),
        }
    }

    fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for (rel, bytes) in &self.files {
            hasher.update(rel.as_bytes());
            hasher.update([0]);
            match bytes {
                Some(b) => {
                    hasher.update([1]);
                    hasher.update((b.len() as u64).to_le_bytes());
                    hasher.update(b);
                }
                None => hasher.update([0]),
            }
        }
        format!("sha256:{}", engine::digest::hex(&hasher.finalize()))
    }

    /// `.claude/unity-assets.yml`, parsed by the config loader's own parser.
    fn config(&mut self) {
        let Some(text) = self.text(CONFIG_FILE) else { return };
        let mut found = match crate::config::parse_document(CONFIG_FILE, &text) {
            Ok((values, source)) if values.is_object() => {
                settings_items(CONFIG_FILE, &values, |path| source.key(path).0, "")
            }
            Ok(_) => vec![unreviewable(CONFIG_FILE, "not a mapping of settings".into())],
            Err(d) => vec![unreviewable(CONFIG_FILE, d.to_string())],
        };
        found.extend(env_expansions(CONFIG_FILE, &text));
        self.add(CONFIG_FILE, &text, found);
    }

    /// `.mcp.json`: only the server unity-assets itself would start.
    fn mcp_json(&mut self) {
        let Some(text) = self.text(MCP_JSON) else { return };
        let servers = match engine::mcp::parse_mcp_json(&text, MCP_JSON) {
            Ok(servers) => servers,
            Err(e) => {
                self.add(MCP_JSON, &text, vec![unreviewable(MCP_JSON, e.to_string())]);
                return;
            }
        };
        let line_of = |name: &str| {
            let needle = format!("\"{name}\"");
            text.lines().position(|l| l.contains(&needle)).map_or(1, |i| i + 1)
        };
        let Some((name, entry)) = crate::build::execute::unity_entry(&servers) else {
            if !servers.is_empty() {
                let names: Vec<&str> = servers.keys().map(String::as_str).collect();
                self.notes.push(format!(
                    "{MCP_JSON}: {} not MCP for Unity; unity-assets never starts {}, so they need no trust",
                    names.join(", "),
                    if names.len() == 1 { "it" } else { "them" }
                ));
            }
            return;
        };
        let how = if entry.command.is_some() { "runs" } else { "connects to" };
        let shown = shown(&Value::String(entry.describe()));
        let mut found = vec![Item {
            file: MCP_JSON.into(),
            line: line_of(name),
            what: format!("MCP server `{name}`: {how} {shown}"),
        }];
        found.extend(env_expansions(MCP_JSON, &text));
        self.add(MCP_JSON, &text, found);
    }

    /// A pipeline file named on the command line, and the sibling files its
    /// `run:` stages would load, when they lie inside the project.
    fn run_file(&mut self, rel: &str, seen: &mut BTreeSet<String>) {
        if !seen.insert(rel.to_owned()) {
            return;
        }
        let Some(text) = self.text(rel) else { return };
        let found = self.pipeline(rel, &text);
        if !found.is_empty() {
            self.files.insert(rel.to_owned(), Some(text.as_bytes().to_vec()));
            self.for_this_run.extend(found);
        }
        let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
        for name in sub_pipelines(&text) {
            let sibling = dir.join(format!("{name}.yaml"));
            if self.root.join(&sibling).exists() {
                self.run_file(&sibling.to_string_lossy(), seen);
            }
        }
    }

    /// Stages that run a command, reach the network or start an MCP server,
    /// `fn:` stages calling a function declared to reach out, and params
    /// naming programs, addresses or credentials.
    fn pipeline(&mut self, file: &str, text: &str) -> Vec<Item> {
        // The engine's own parser: what it would run is what is reviewed.
        let Some(outline) = engine::outline(text) else {
            return vec![unreviewable(file, "not a pipeline the engine can read".into())];
        };
        let at = |line: usize, what: String| Item {
            file: file.to_owned(),
            line,
            what,
        };
        let registry = self.registry;
        let mut items = Vec::new();
        for stage in outline.stages() {
            let what = match (stage.action(), stage.function()) {
                (ActionKind::Exec, _) => "runs a command (exec)".to_owned(),
                (ActionKind::Http, _) => "sends an HTTP request (http)".to_owned(),
                (ActionKind::Mcp, _) => "calls an MCP server (mcp)".to_owned(),
                (ActionKind::Fn, Some(name)) if registry.reach(name).any() => {
                    format!("calls `{name}`, which {}", registry.reach(name).describe())
                }
                _ => continue,
            };
            items.push(at(stage.at().0, format!("stage `{}` {what}", stage.name())));
        }
        for stage in outline.stages() {
            let (ActionKind::Write | ActionKind::Append, Some(path)) = (stage.action(), stage.path()) else {
                continue;
            };
            let line = stage.at().0;
            match write_target(path).needs_trust(path) {
                None => self.notes.push(format!(
                    "{file}:{line}: stage `{}` writes {path}, inside the index folder: needs no trust",
                    stage.name()
                )),
                Some(why) => items.push(at(line, format!("stage `{}` {why}", stage.name()))),
            }
        }
        items.extend(settings_items(
            file,
            outline.params(),
            |p| outline.param_at(p).0,
            "params.",
        ));
        if items.is_empty() {
            return items;
        }
        self.pipelines_reach = true;
        for stage in outline.stages() {
            match stage.path().filter(|_| stage.action() == ActionKind::Read) {
                Some(path) if path.contains("{{") || path.contains("{%") => items.push(at(
                    stage.at().0,
                    format!(
                        "stage `{}` reads a file named only when it runs ({path}); its content is not covered by trust",
                        stage.name()
                    ),
                )),
                Some(path) => {
                    self.read_paths.insert(path.to_owned());
                }
                None => {}
            }
        }
        items
    }
}

/// Where a `write:` or `append:` stage of a project's pipeline writes:
/// untrusted, only into the index folder.
enum WriteTarget {
    IndexFolder,
    /// Somewhere else in the project.
    Project,
    /// Where no pipeline writes, trusted or not (a part of [`super::PROTECTED`]).
    Protected(String),
    /// A template: known only when the stage runs.
    Runtime,
}

fn write_target(path: &str) -> WriteTarget {
    if path.contains("{{") || path.contains("{%") {
        return WriteTarget::Runtime;
    }
    // The engine's own check names the protected part a path falls in.
    if let Err(engine::io::ConfineError::Protected(_, part)) = engine::io::refuse_protected(path, super::PROTECTED) {
        return WriteTarget::Protected(part);
    }
    let normal = |c: std::path::Component| matches!(c, std::path::Component::Normal(_));
    match Path::new(path).strip_prefix(crate::index::INDEX_DIR) {
        Ok(rest) if rest.components().next().is_some() && rest.components().all(normal) => WriteTarget::IndexFolder,
        _ => WriteTarget::Project,
    }
}

impl WriteTarget {
    /// Why writing `path` needs trust (`None`: it does not).
    fn needs_trust(&self, path: &str) -> Option<String> {
        let index = crate::index::INDEX_DIR;
        Some(match self {
            WriteTarget::IndexFolder => return None,
            WriteTarget::Project => format!("writes {path}, outside the index folder {index}/"),
            WriteTarget::Protected(p) => {
                format!("writes {path}, inside {p}, which no pipeline writes even when trusted")
            }
            WriteTarget::Runtime => {
                format!("writes a file named only when it runs ({path}); untrusted pipelines write only under {index}/")
            }
        })
    }
}

/// The pipelines a pipeline's `run:` stages name.
fn sub_pipelines(text: &str) -> Vec<String> {
    let outline = engine::outline(text);
    let stages = outline.iter().flat_map(|o| o.stages());
    stages
        .filter(|s| s.action() == ActionKind::Run)
        .filter_map(|s| s.function().map(str::to_owned))
        .collect()
}

/// `rel` below `root`, when `file` (a path as given, from the working
/// folder) resolves inside the project.
fn inside(root: &Path, file: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let file = file.canonicalize().ok()?;
    file.strip_prefix(&root)
        .ok()
        .map(|rel| rel.to_string_lossy().replace('\\', "/"))
}

/// A file's bytes (`None`: absent), confined to the project.
fn read(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, String> {
    let path = engine::io::confine(root, rel).map_err(|e| e.to_string())?;
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    engine::io::read_limited(&path, FILE_LIMIT, engine::io::FILE_KEY, &crate::PRODUCT)
        .map(Some)
        .map_err(|e| e.to_string())
}

fn unreviewable(rel: &str, why: String) -> Item {
    Item {
        file: rel.to_owned(),
        line: 1,
        what: format!("cannot be reviewed ({why}); nothing in it is used until it can be"),
    }
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

/// A config value for a message, control characters escaped.
pub(super) fn shown(v: &Value) -> String {
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    text.chars()
        .flat_map(char::escape_debug)
        .collect::<String>()
        .chars()
        .take(200)
        .collect()
}
