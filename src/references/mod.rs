//! What uses an asset and what it uses: the native functions behind
//! `pipelines/refs.yaml`, `deps.yaml` and `unused.yaml`, over the index's
//! reference graph ([`crate::index::graph`]).
//!
//! [`resolve`] finds the asset a call names, [`walk`] follows references
//! either way to a depth, [`roots`] reads what a build starts from and
//! [`unused`] lists what none of it reaches.

pub(crate) mod resolve;
pub(crate) mod roots;
pub(crate) mod unused;
pub(crate) mod walk;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use engine::{CallContext, Registry};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::index::graph::{self, ReferenceGraph};
use crate::index::record::Depth;
use crate::index::store;
use crate::search::result::shown_confidence;
use engine::Reach;
use resolve::{Candidate, FoundBy, Resolution, SearchSource};
use walk::Direction;

/// An asset as the commands show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssetRef {
    pub guid: String,
    pub path: String,
    #[serde(rename = "type")]
    pub asset_type: String,
}

impl AssetRef {
    pub fn of(graph: &ReferenceGraph, index: u32) -> Self {
        let node = graph.node(index);
        Self {
            guid: node.guid.clone(),
            path: node.path.clone(),
            asset_type: node.asset_type.clone(),
        }
    }
}

/// A stage's answer: the lines to show, the exit code when it refuses, and
/// the document `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub ok: bool,
    pub code: i32,
    pub status: String,
    /// The refusal (with its candidates), or the readable answer (`unused`).
    pub line: String,
    pub help: Option<String>,
    /// Lines said before the answer: a rebuilt graph, a stale index.
    pub notes: Vec<String>,
    /// The asset found (resolve only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asset: Option<AssetRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_by: Option<FoundBy>,
    pub document: Value,
}

impl Outcome {
    fn refused(command: &str, code: i32, status: &str, asset: &str, line: String, help: &str) -> Self {
        Self {
            ok: false,
            code,
            status: status.to_owned(),
            line: format!("[unity-assets:{command}] error: {line}"),
            help: Some(help.to_owned()),
            notes: vec![],
            asset: None,
            found_by: None,
            document: json!({"status": status, "asset": asset, "reason": line, "help": help}),
        }
    }

    fn with_candidates(mut self, candidates: Vec<Candidate>) -> Self {
        for c in candidates.iter().take(5) {
            self.line.push_str(&format!(
                "\n  {}  {}  ({})",
                shown_confidence(c.confidence),
                c.path,
                c.guid
            ));
        }
        self.document["candidates"] = json!(candidates);
        self
    }

    fn noted(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }
}

/// A graph to answer from, with the lines its loading said.
type Usable = (Arc<ReferenceGraph>, Vec<String>);

/// The graph with the lines its loading said, or the refusal when there is
/// nothing to load (no index; an index that reads no references).
fn load_graph(command: &str, ctx: &CallContext, asset: &str) -> anyhow::Result<Result<Usable, Outcome>> {
    let project = &ctx.workdir;
    let manifest = store::read_manifest(project, &ctx.limits)?;
    if manifest.as_ref().is_some_and(|m| m.schema_tier == Depth::Minimal) {
        return Ok(Err(Outcome::refused(
            command,
            crate::exit::FAILED,
            "no_references",
            asset,
            "the index was built at index_depth: minimal, which reads no references".into(),
            "set `index_depth: normal` in .claude/unity-assets.yml, then run `unity-assets index`",
        )));
    }
    let Some((graph, rebuilt)) = cached_graph(project, &ctx.limits)? else {
        return Ok(Err(Outcome::refused(
            command,
            crate::exit::FAILED,
            "no_index",
            asset,
            format!("no index in {}", store::INDEX_DIR),
            "run `unity-assets index` first",
        )));
    };
    let mut notes: Vec<String> = rebuilt
        .into_iter()
        .map(|why| format!("[unity-assets:{command}] {why}"))
        .collect();
    if let store::Freshness::Stale { reason } = store::index_freshness(project, &ctx.limits) {
        notes.push(format!(
            "[unity-assets:{command}] warning: the index is stale ({reason}); references are as of the last index run: run `unity-assets index` for current ones"
        ));
    }
    Ok(Ok((graph, notes)))
}

/// What identifies the graph a process has loaded: the files it came from.
type Stamp = Vec<Option<(SystemTime, u64)>>;

fn stamp(project: &Path) -> Stamp {
    let dir = store::index_dir(project);
    [store::MANIFEST_FILE, store::ASSETS_FILE, graph::GRAPH_FILE]
        .iter()
        .map(|file| {
            std::fs::metadata(dir.join(file))
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())))
        })
        .collect()
}

/// The last graph loaded in this process, so the stages of one run (and
/// the calls of an MCP server) load it once while its files stay the same.
static LOADED: Mutex<Option<(PathBuf, Stamp, Arc<ReferenceGraph>)>> = Mutex::new(None);

fn cached_graph(
    project: &Path,
    limits: &engine::io::Limits,
) -> anyhow::Result<Option<(Arc<ReferenceGraph>, Option<String>)>> {
    let before = stamp(project);
    if let Some((dir, seen, graph)) = LOADED
        .lock()
        .map_err(|_| anyhow::anyhow!("graph cache poisoned"))?
        .as_ref()
    {
        if dir == project && *seen == before {
            return Ok(Some((graph.clone(), None)));
        }
    }
    let Some(loaded) = graph::load(project, limits)? else {
        return Ok(None);
    };
    let graph = Arc::new(loaded.graph);
    if let Ok(mut slot) = LOADED.lock() {
        *slot = Some((project.to_owned(), stamp(project), graph.clone()));
    }
    Ok(Some((graph, loaded.rebuilt)))
}

#[derive(Deserialize)]
struct ResolveArgs {
    command: String,
    asset: String,
    /// The search's auto threshold: a query's pick under it is refused.
    auto: f32,
    /// The lead a query's pick needs over the next candidate.
    margin: f32,
}

#[derive(Deserialize)]
struct WalkArgs {
    guid: String,
    direction: Direction,
    #[serde(default = "one")]
    depth: u32,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
struct UnusedArgs {
    #[serde(default)]
    roots: Vec<String>,
}

fn resolve_asset(a: ResolveArgs, ctx: &CallContext) -> anyhow::Result<Outcome> {
    let (graph, notes) = match load_graph(&a.command, ctx, &a.asset)? {
        Ok(loaded) => loaded,
        Err(refusal) => return Ok(refusal),
    };
    let index_dir = store::index_dir(&ctx.workdir);
    let rows = || resolve::search_rows(&index_dir, ctx.limits);
    let vocabulary = || crate::search::vocabulary(None, ctx);
    let source = SearchSource {
        rows: &rows,
        vocabulary: &vocabulary,
        auto: a.auto,
        margin: a.margin,
    };
    Ok(
        match resolve::resolve(&a.command, &ctx.workdir, &graph, &a.asset, &source)? {
            Resolution::Refused(refusal) => refusal.noted(notes),
            Resolution::Found(index, found_by) => {
                let asset = AssetRef::of(&graph, index);
                Outcome {
                    ok: true,
                    code: crate::exit::OK,
                    status: "ok".into(),
                    line: String::new(),
                    help: None,
                    notes,
                    document: json!({"status": "ok", "asset": asset, "found_by": found_by}),
                    asset: Some(asset),
                    found_by: Some(found_by),
                }
            }
        },
    )
}

/// Register `references.*`.
pub fn register(registry: &mut Registry) {
    registry
        .function(
            "references.resolve",
            Reach::NONE,
            "find the asset a path, guid, file name or confident search pick names, in the reference graph",
            |a: ResolveArgs, ctx| Ok(resolve_asset(a, ctx)?),
        )
        .function(
            "references.walk",
            Reach::NONE,
            "the assets that use an asset (used_by) or that it uses (uses), to a depth, with readable lines",
            |a: WalkArgs, ctx| {
                // Resolve loaded it (and said what there was to say): this is the cached graph.
                let (graph, _) = cached_graph(&ctx.workdir, &ctx.limits)?
                    .ok_or_else(|| anyhow::anyhow!("the index was removed during the run; run `unity-assets index`"))?;
                let start = graph
                    .by_guid(&a.guid)
                    .ok_or_else(|| anyhow::anyhow!("guid {} left the index during the run; run again", a.guid))?;
                Ok(walk::report(&graph, start, a.direction, a.depth))
            },
        )
        .function(
            "references.unused",
            Reach::NONE,
            "the assets no build-settings scene, Resources/ folder, Addressables entry or --roots path reaches",
            |a: UnusedArgs, ctx| {
                let (graph, notes) = match load_graph("unused", ctx, "")? {
                    Ok(loaded) => loaded,
                    Err(refusal) => return Ok(refusal),
                };
                Ok(unused::unused(&ctx.workdir, &ctx.limits, &graph, &a.roots)?.noted(notes))
            },
        );
}

/// What placing `guid` pulls in, in one line (build's audit line), or
/// `None` when the index holds no graph or no such asset.
pub fn pulls_in(project: &Path, limits: &engine::io::Limits, guid: &str) -> Option<String> {
    let (graph, _) = cached_graph(project, limits).ok()??;
    let start = graph.by_guid(guid)?;
    Some(walk::pulls_in(&graph, start))
}
