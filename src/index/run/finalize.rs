//! `index.finalize`: merge every source of tags with the scan and write the
//! index files.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use engine::io::{AtomicFile, Limits};
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::checkpoint::forget_finished_batches;
use super::diff::Diff;
use crate::index::graph;
use crate::index::labels::tags_without_labels;
use crate::index::packed;
use crate::index::record::{Depth, PackageRecord, ScannedAsset, TagRow};
use crate::index::row::AssetRow;
use crate::index::scan::{warning_counts, PackageInfo, Tree, Warning, WarningKind};
use crate::index::store::{self, LastScan, State, TaggedBy};
use crate::index::tagger::{self, TagSubject};

/// A label that differs from the previous index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelChange {
    /// The asset's guid.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    pub(crate) before: Vec<String>,
    pub(crate) after: Vec<String>,
}

/// The output of `index.finalize`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finalized {
    /// How many assets the index now holds.
    pub assets: usize,
    pub(crate) packages: usize,
    pub(crate) changed: usize,
    pub(crate) removed: usize,
    pub(crate) unchanged: usize,
    pub(crate) tagged_llm: usize,
    pub(crate) tagged_builtin: usize,
    pub(crate) warnings: usize,
    pub(crate) warnings_by_kind: BTreeMap<String, usize>,
    /// Each warning with its file (`--json`; `-v` prints them), so a
    /// duplicate guid hiding an asset is visible.
    #[serde(default)]
    pub warning_list: Vec<crate::index::scan::Warning>,
    pub(crate) label_changes: Vec<LabelChange>,
    pub(crate) manifest_version: String,
    pub(crate) last_run: String,
    /// Whether `assets.jsonl` got new content (else only its time moved).
    pub(crate) assets_rewritten: bool,
    /// The run's one-line summary.
    pub summary: String,
}

/// The scan as finalize reads it: the assets stay text, each decoded when
/// its row is written (`packed::Text`).
#[derive(Deserialize)]
pub struct ScanText {
    /// The depth the scan read at.
    pub index_depth: Depth,
    /// When the scan began (RFC 3339).
    pub started_at: String,
    /// The scanned assets, one JSON line each.
    pub assets: packed::Text,
    pub(crate) packages: Vec<PackageInfo>,
    pub(crate) warnings: Vec<Warning>,
    pub(crate) fingerprint: String,
    pub(crate) tree: Tree,
}

/// Merge tags (partial rows, previous index, builtin) with the scan, write
/// every index file, and close the run.
pub fn finalize(project: &Path, limits: &Limits, scan: &ScanText, diff: &Diff) -> anyhow::Result<Finalized> {
    use rayon::prelude::*;
    let depth = scan.index_depth;
    let partial = store::PartialRows::read(project, limits);
    let previous: HashMap<String, AssetRow> = store::read_assets(project, limits)
        .into_iter()
        .map(|r| (r.guid.clone(), r))
        .collect();
    let changed: HashSet<&str> = diff.changed.iter().map(String::as_str).collect();
    let package_names: HashMap<&str, &str> = scan
        .packages
        .iter()
        .map(|p| (p.package_id.as_str(), p.name.as_str()))
        .collect();

    let lines = scan.assets.lines();
    // Rows go out in guid order; each asset is decoded only to write its row.
    let mut sorted: Vec<(std::borrow::Cow<str>, usize)> = lines
        .par_iter()
        .enumerate()
        .map(|(i, line)| packed::Text::guid(line).map(|guid| (guid, i)))
        .collect::<serde_json::Result<_>>()
        .context("the scan's assets do not parse")?;
    sorted.par_sort_unstable();
    let (mut tagged_llm, mut tagged_builtin) = (0, 0);
    let mut label_changes = Vec::new();
    let mut signatures = Vec::with_capacity(sorted.len());
    // Each row is written as it is made: a million rows are never all held
    // as records, only as the bytes of `assets.jsonl`.
    let node_maker = (depth != Depth::Minimal).then(|| graph::NodeMaker::new(sorted.iter().map(|(g, _)| g.as_ref())));
    let dir = store::index_dir(project);
    let assets_path = dir.join(store::ASSETS_FILE);
    let mut rows = Rows::new(AtomicFile::create(&assets_path).with_context(|| cannot_write(&assets_path))?);
    for chunk in sorted.chunks(store::ROWS_DECODED_AT_ONCE) {
        let assets: Vec<ScannedAsset> = chunk
            .par_iter()
            .map(|(_, i)| packed::Text::decode(lines[*i]))
            .collect::<serde_json::Result<_>>()
            .context("the scan's assets do not parse")?;
        for asset in &assets {
            let earlier = previous.get(&asset.row.guid);
            let tags = match (partial.get(&asset.row.guid, &asset.signature), earlier) {
                (Some(row), _) => {
                    match row.tagged_by {
                        TaggedBy::Llm => tagged_llm += 1,
                        TaggedBy::Builtin => tagged_builtin += 1,
                    }
                    row.tags
                }
                (None, Some(prev)) if !changed.contains(asset.row.guid.as_str()) && carries_tier(prev, depth) => {
                    TagRow {
                        guid: prev.guid.clone(),
                        llm_tags: prev.llm_tags.clone(),
                        llm_summary: prev.llm_summary.clone(),
                        llm_use_cases: prev.llm_use_cases.clone(),
                    }
                }
                _ => {
                    tagged_builtin += 1;
                    tagger::tag_one(&TagSubject::of(asset, &package_names), depth)
                }
            };
            let row = tagged_row(asset.row.clone(), tags).at_depth(depth);
            // The graph keeps every reference; the row a bounded list of them.
            let node = node_maker.as_ref().map(|maker| maker.node(&row));
            let row = row.bounded();
            if let Some(prev) = earlier.filter(|p| p.labels != row.labels) {
                label_changes.push(LabelChange {
                    guid: row.guid.clone(),
                    path: row.path.clone(),
                    before: prev.labels.clone(),
                    after: row.labels.clone(),
                });
            }
            rows.add(asset.package_id(), &row, node, limits)?;
        }
        signatures.extend(assets.into_iter().map(|a| (a.row.guid, a.signature)));
    }
    drop(node_maker);

    let packages = package_records(&scan.packages, rows.tallies);
    let assets_bytes = rows.len;
    let assets_rewritten = rows
        .out
        .commit_if_changed()
        .with_context(|| cannot_write(&assets_path))?;
    let packages_path = dir.join(store::PACKAGES_FILE);
    let packages_rewritten = write_if_changed(&packages_path, &jsonl(&packages)?)?;
    let last_run = if assets_rewritten {
        store::mtime_rfc3339(&assets_path)?
    } else {
        store::touch(&assets_path)?
    };

    let previous_manifest = store::read_manifest(project, limits)?;
    let version = store::next_version(
        previous_manifest.as_ref(),
        depth,
        assets_rewritten || packages_rewritten,
    );
    let graph = write_graph(project, &rows.nodes, depth, &version, assets_bytes)?;
    let manifest = store::Manifest {
        version,
        last_run: last_run.clone(),
        schema_tier: depth,
        // The embed stage that follows brings the vectors up to date.
        embedding: previous_manifest.as_ref().and_then(|m| m.embedding.clone()),
        graph,
    };
    store::write_manifest(project, &manifest)?;
    for w in &scan.warnings {
        tracing::info!("index warning: {:?} {}: {}", w.kind, w.path, w.detail);
    }
    for w in &rows.too_long {
        tracing::warn!("{}: {}", w.path, w.detail);
    }
    let warnings: Vec<Warning> = scan.warnings.iter().chain(&rows.too_long).cloned().collect();
    let warnings_by_kind: BTreeMap<String, usize> = warning_counts(&warnings)
        .into_iter()
        .map(|(kind, n)| {
            (
                serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                n,
            )
        })
        .collect();
    store::write_signatures(project, signatures.iter().map(|(guid, signature)| (guid, signature)))?;
    let state = State {
        last_run: Some(last_run.clone()),
        last_scan: Some(LastScan {
            fingerprint: scan.fingerprint.clone(),
            tree: Some(scan.tree.clone()),
            assets: rows.count,
            packages: packages.len(),
            warnings_by_kind: warnings_by_kind.clone(),
        }),
        ..State::default()
    };
    store::write_state(project, &state)?;
    store::remove_if_present(&dir.join(store::PARTIAL_FILE))?;
    forget_finished_batches(project);

    let mut finalized = Finalized {
        assets: rows.count,
        packages: packages.len(),
        changed: diff.changed.len(),
        removed: diff.removed.len(),
        unchanged: diff.unchanged,
        tagged_llm,
        tagged_builtin,
        warnings: warnings.len(),
        warnings_by_kind,
        warning_list: warnings,
        label_changes,
        manifest_version: manifest.version,
        last_run,
        assets_rewritten,
        summary: String::new(),
    };
    finalized.summary = summary_line(&finalized, elapsed_since(&scan.started_at));
    Ok(finalized)
}

pub(super) fn elapsed_since(started_at: &str) -> Duration {
    OffsetDateTime::parse(started_at, &Rfc3339)
        .map(|start| OffsetDateTime::now_utc() - start)
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .unwrap_or_default()
}

/// The reference graph of the rows, beside them (before the manifest that
/// names it); at minimal depth the rows hold no references, so there is none.
fn write_graph(
    project: &Path,
    nodes: &[graph::Node],
    depth: Depth,
    version: &str,
    assets_bytes: u64,
) -> anyhow::Result<Option<graph::GraphEntry>> {
    let path = store::index_dir(project).join(graph::GRAPH_FILE);
    if depth == Depth::Minimal {
        store::remove_if_present(&path)?;
        return Ok(None);
    }
    graph::write(project, nodes, version, assets_bytes)?;
    Ok(Some(graph::entry_of(nodes)))
}

/// The rows of `assets.jsonl` as they are made, sorted by guid: written to
/// the file as they come (a million rows are 600 MB never held at once),
/// what `packages.jsonl` counts of them, and their reference graph nodes.
struct Rows {
    out: AtomicFile,
    /// Bytes written to `out`, and the line being written.
    len: u64,
    line: Vec<u8>,
    count: usize,
    tallies: HashMap<String, PackageTally>,
    nodes: Vec<graph::Node>,
    /// Rows over `limits.line_kb`, left out.
    too_long: Vec<Warning>,
}

/// One package's rows: their types and their tags and labels, counted.
#[derive(Default)]
struct PackageTally {
    types: BTreeMap<String, usize>,
    tags: BTreeMap<String, usize>,
}

impl Rows {
    fn new(out: AtomicFile) -> Self {
        Self {
            out,
            len: 0,
            line: Vec::new(),
            count: 0,
            tallies: HashMap::new(),
            nodes: Vec::new(),
            too_long: Vec::new(),
        }
    }

    /// Write `row`; `node` joins the graph either way (nodes are
    /// numbered by guid over every asset scanned).
    fn add(&mut self, package: &str, row: &AssetRow, node: Option<graph::Node>, limits: &Limits) -> anyhow::Result<()> {
        self.nodes.extend(node);
        self.line.clear();
        serde_json::to_writer(&mut self.line, row)?;
        self.line.push(b'\n');
        // A bounded row fits the default line limit many times over; under
        // a lowered one it is left out (its readers would skip it) and said.
        if self.line.len() as u64 > limits.line_bytes {
            self.too_long.push(Warning {
                kind: WarningKind::RowTooLong,
                path: row.path.clone(),
                detail: format!(
                    "its row is {} bytes, over the limit `limits.line_kb` ({} bytes): left out of the index; raise limits.line_kb in .claude/unity-assets.yml",
                    self.line.len(),
                    limits.line_bytes
                ),
            });
            return Ok(());
        }
        self.out.write_all(&self.line)?;
        self.len += self.line.len() as u64;
        self.count += 1;
        if !self.tallies.contains_key(package) {
            self.tallies.insert(package.to_owned(), PackageTally::default());
        }
        let tally = self.tallies.get_mut(package).expect("inserted above");
        count(&mut tally.types, &row.asset_type);
        for tag in row.llm_tags.iter().chain(&row.labels) {
            count(&mut tally.tags, tag);
        }
        Ok(())
    }
}

/// One more of `key` (its key allocated only the first time).
fn count(counts: &mut BTreeMap<String, usize>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_owned(), 1);
        }
    }
}

/// Whether a previous row has the fields the current tier needs from the tagger.
fn carries_tier(previous: &AssetRow, depth: Depth) -> bool {
    depth == Depth::Minimal || previous.llm_use_cases.is_some()
}

/// A scanned row with its tags: the tagger's use cases, when it gave
/// them, in place of the taxonomy's.
fn tagged_row(mut row: AssetRow, tags: TagRow) -> AssetRow {
    row.llm_tags = tags_without_labels(tags.llm_tags, &row.labels);
    row.llm_summary = tags.llm_summary;
    if tags.llm_use_cases.is_some() {
        row.llm_use_cases = tags.llm_use_cases;
    }
    row
}

/// One record per package with its type histogram and a one-line summary.
fn package_records(packages: &[PackageInfo], mut tallies: HashMap<String, PackageTally>) -> Vec<PackageRecord> {
    packages
        .iter()
        .map(|p| {
            let PackageTally { types: histogram, tags } = tallies.remove(p.package_id.as_str()).unwrap_or_default();
            let count = histogram.values().sum();
            let summary = package_summary(&p.name, count, &histogram, &tags);
            PackageRecord {
                package_id: p.package_id.clone(),
                name: p.name.clone(),
                root: p.root.clone(),
                asset_count: count,
                type_histogram: histogram,
                summary,
            }
        })
        .collect()
}

/// `ZombieKit: 24 assets, mostly Prefab (8), Texture2D (6), AudioClip (4); about zombie, enemy, character.`
fn package_summary(
    name: &str,
    count: usize,
    histogram: &BTreeMap<String, usize>,
    tags: &BTreeMap<String, usize>,
) -> String {
    let by_count = |a: &(&String, &usize), b: &(&String, &usize)| b.1.cmp(a.1).then(a.0.cmp(b.0));
    let mut types: Vec<(&String, &usize)> = histogram.iter().collect();
    types.sort_by(by_count);
    let types: Vec<String> = types.iter().take(3).map(|(t, n)| format!("{t} ({n})")).collect();
    let mut top: Vec<(&String, &usize)> = tags.iter().collect();
    top.sort_by(by_count);
    let top: Vec<&str> = top.iter().take(5).map(|(t, _)| t.as_str()).collect();
    let noun = if count == 1 { "asset" } else { "assets" };
    let mut summary = format!("{name}: {count} {noun}, mostly {}", types.join(", "));
    if !top.is_empty() {
        summary.push_str(&format!("; about {}", top.join(", ")));
    }
    summary.push('.');
    summary
}

fn jsonl<T: Serialize>(rows: &[T]) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(rows.len() * 256);
    for row in rows {
        serde_json::to_writer(&mut bytes, row)?;
        bytes.push(b'\n');
    }
    Ok(bytes)
}

/// Atomically replace `path` unless it already holds exactly `bytes`.
fn write_if_changed(path: &Path, bytes: &[u8]) -> anyhow::Result<bool> {
    let mut file = AtomicFile::create(path).with_context(|| cannot_write(path))?;
    file.write_all(bytes).with_context(|| cannot_write(path))?;
    file.commit_if_changed().with_context(|| cannot_write(path))
}

fn cannot_write(path: &Path) -> String {
    format!("cannot write {}", path.display())
}

pub(super) fn summary_line(f: &Finalized, elapsed: Duration) -> String {
    let warnings = if f.warnings_by_kind.is_empty() {
        String::new()
    } else {
        let kinds: Vec<String> = f.warnings_by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(" ({}; `-v` lists each with its file)", kinds.join(", "))
    };
    format!(
        "[unity-assets:index] {} assets, {} packages; changed {}, removed {}, skipped {} unchanged; \
         tagged by llm {} / builtin {}; warnings {}{warnings}; {:.2}s",
        f.assets,
        f.packages,
        f.changed,
        f.removed,
        f.unchanged,
        f.tagged_llm,
        f.tagged_builtin,
        f.warnings,
        elapsed.as_secs_f64()
    )
}
