//! The stages after the scan: diff against the last run, plan tag batches,
//! check and checkpoint each tagged batch, finalize the index files.
//!
//! Crash safety: planning records the run in `state.json`
//! (`in_progress_run`, `pending_batches`); each finished batch appends its
//! rows to `assets.jsonl.partial` in one write and moves to
//! `completed_batches`; finalize writes the index files atomically, then the
//! state without `in_progress_run`, then removes the partial. A rerun after a
//! crash finds `in_progress_run` and reuses every partial row whose asset
//! still has the signature it was tagged at; a partial without
//! `in_progress_run` is left over from a finished run and discarded.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::data::IndexData;
use super::labels::tags_without_labels;
use super::record::{AssetRecord, Depth, PackageRecord, ScannedAsset, TagRow};
use super::scan::{self, warning_counts, ScanOptions, ScanResult};
use super::store::{self, LastScan, PartialRow, State, TaggedBy};
use super::tagger::{self, is_kebab_tag, TagBatch, TagSubject};

/// Longest accepted `llm_summary`: one sentence, not a paragraph.
const MAX_SUMMARY_CHARS: usize = 400;
const MAX_TAGS: usize = 20;
/// `state.json` is rewritten at most this often while batches finish: the
/// partial file, appended per batch, is what a resume trusts.
const STATE_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// The output of `index.diff`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    /// Guids to (re)tag, in scan (path) order.
    pub changed: Vec<String>,
    pub added: usize,
    pub modified: usize,
    pub unchanged: usize,
    /// Guids of the last run that are gone, sorted.
    pub removed: Vec<String>,
    /// Why every asset is re-tagged, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_reason: Option<String>,
}

/// Compare the scan with the last finished run. `force` (reindex) re-tags everything.
pub fn diff(project: &Path, limits: &Limits, scan: &ScanResult, force: bool) -> anyhow::Result<Diff> {
    if force {
        store::discard_corrupt(project, limits)?;
    }
    let state = store::read_state(project, limits)?;
    let manifest = store::read_manifest(project, limits)?;
    let assets_present = store::index_dir(project).join(store::ASSETS_FILE).is_file();
    let full_reason = if force {
        Some("reindex requested".to_owned())
    } else if !assets_present || manifest.is_none() {
        Some("no previous index".to_owned())
    } else if manifest.as_ref().is_some_and(|m| m.schema_tier != scan.index_depth) {
        Some(format!("index_depth changed to {}", scan.index_depth.as_str()))
    } else {
        None
    };

    let mut diff = Diff {
        full_reason,
        ..Diff::default()
    };
    let current: HashSet<&str> = scan.assets.iter().map(|a| a.guid.as_str()).collect();
    for asset in &scan.assets {
        match state.guid_signatures.get(&asset.guid) {
            None => diff.added += 1,
            Some(sig) if *sig != asset.signature => diff.modified += 1,
            Some(_) if diff.full_reason.is_none() => {
                diff.unchanged += 1;
                continue;
            }
            Some(_) => diff.modified += 1,
        }
        diff.changed.push(asset.guid.clone());
    }
    diff.removed = state
        .guid_signatures
        .keys()
        .filter(|g| !current.contains(g.as_str()))
        .cloned()
        .collect();
    Ok(diff)
}

/// One batch for the tag stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub id: String,
    pub assets: Vec<TagSubject>,
    /// The signature of each asset, in the same order (not shown to the model).
    pub signatures: Vec<String>,
}

/// The output of `index.plan_batches`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub run_id: String,
    pub batches: Vec<Batch>,
    /// Rows reused from the partial file of an interrupted run.
    pub resumed: usize,
}

/// Split the changed assets into batches of `batch_size`, resuming an
/// interrupted run, and record the run in `state.json`.
pub fn plan_batches(
    project: &Path,
    limits: &Limits,
    scan: &ScanResult,
    diff: &Diff,
    batch_size: usize,
) -> anyhow::Result<Plan> {
    anyhow::ensure!(batch_size > 0, "batch_size must be at least 1");
    let mut state = store::read_state(project, limits)?;
    let partial_path = store::index_dir(project).join(store::PARTIAL_FILE);

    let (run_id, done) = match state.in_progress_run.clone() {
        Some(run_id) => {
            let signatures: HashMap<&str, &str> = scan
                .assets
                .iter()
                .map(|a| (a.guid.as_str(), a.signature.as_str()))
                .collect();
            let done: HashSet<String> = store::read_partial(project, limits)?
                .into_iter()
                .filter(|row| signatures.get(row.tags.guid.as_str()) == Some(&row.signature.as_str()))
                .map(|row| row.tags.guid)
                .collect();
            (run_id, done)
        }
        None => {
            store::remove_if_present(&partial_path)?;
            state.completed_batches.clear();
            (new_run_id(), HashSet::new())
        }
    };

    let by_guid: HashMap<&str, &ScannedAsset> = scan.assets.iter().map(|a| (a.guid.as_str(), a)).collect();
    let package_names: HashMap<&str, &str> = scan
        .packages
        .iter()
        .map(|p| (p.package_id.as_str(), p.name.as_str()))
        .collect();
    let to_tag: Vec<&ScannedAsset> = diff
        .changed
        .iter()
        .filter(|g| !done.contains(*g))
        .filter_map(|g| by_guid.get(g.as_str()).copied())
        .collect();

    let first_number = state.completed_batches.len() + 1;
    let batches: Vec<Batch> = to_tag
        .chunks(batch_size)
        .enumerate()
        .map(|(i, chunk)| Batch {
            id: format!("batch-{:05}", first_number + i),
            assets: chunk.iter().map(|a| tag_subject(a, &package_names)).collect(),
            signatures: chunk.iter().map(|a| a.signature.clone()).collect(),
        })
        .collect();

    // Nothing to tag and nothing to resume: no run to record.
    if !batches.is_empty() || state.in_progress_run.is_some() {
        state.in_progress_run = Some(run_id.clone());
        state.pending_batches = batches.iter().map(|b| b.id.clone()).collect();
        store::write_state(project, &state)?;
    }
    ledger().lock().unwrap_or_else(|e| e.into_inner()).remove(project);
    Ok(Plan {
        run_id,
        batches,
        resumed: done.len(),
    })
}

fn new_run_id() -> String {
    let now = OffsetDateTime::now_utc();
    format!("run-{}", now.unix_timestamp_nanos())
}

fn tag_subject(asset: &ScannedAsset, package_names: &HashMap<&str, &str>) -> TagSubject {
    TagSubject {
        guid: asset.guid.clone(),
        path: asset.path.clone(),
        name: asset.name.clone(),
        asset_type: asset.asset_type.clone(),
        type_subtype: asset.type_subtype.clone(),
        filename_signals: asset.filename_signals.clone(),
        labels: asset.labels.clone(),
        package: package_names
            .get(asset.package_id.as_str())
            .copied()
            .unwrap_or(&asset.package_id)
            .to_owned(),
        use_cases: asset.use_cases.clone(),
    }
}

/// Whether a tagger's row is usable as it is.
pub fn row_problem(row: &TagRow, depth: Depth) -> Option<String> {
    if row.llm_tags.is_empty() || row.llm_tags.len() > MAX_TAGS {
        return Some(format!("llm_tags must hold 1 to {MAX_TAGS} tags"));
    }
    if let Some(bad) = row.llm_tags.iter().find(|t| !is_kebab_tag(t)) {
        return Some(format!("tag `{bad}` is not kebab-case"));
    }
    let summary = row.llm_summary.trim();
    if summary.is_empty() || summary.contains('\n') || summary.chars().count() > MAX_SUMMARY_CHARS {
        return Some(format!(
            "llm_summary must be one sentence of at most {MAX_SUMMARY_CHARS} characters"
        ));
    }
    if depth >= Depth::Normal {
        match &row.llm_use_cases {
            Some(uses) if !uses.is_empty() && uses.iter().all(|u| is_kebab_tag(u)) => {}
            _ => return Some("llm_use_cases must be a non-empty list of kebab-case items".to_owned()),
        }
    }
    None
}

/// The usable row for `guid` among `answers`, first answer first.
fn usable_row<'a>(guid: &str, answers: &[&'a TagBatch], depth: Depth) -> Option<&'a TagRow> {
    answers
        .iter()
        .flat_map(|a| a.rows.iter())
        .find(|r| r.guid == guid && row_problem(r, depth).is_none())
}

/// The output of `index.check_tags`: the assets whose rows must be asked again.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TagCheck {
    pub retry: Vec<TagSubject>,
    /// `guid: problem` for each retried asset.
    pub problems: Vec<String>,
}

pub fn check_tags(batch: &Batch, tags: Option<&TagBatch>, depth: Depth) -> TagCheck {
    let mut check = TagCheck::default();
    let answers: Vec<&TagBatch> = tags.into_iter().collect();
    for asset in &batch.assets {
        if usable_row(&asset.guid, &answers, depth).is_some() {
            continue;
        }
        let first_row = answers
            .iter()
            .flat_map(|a| a.rows.iter())
            .find(|r| r.guid == asset.guid);
        let problem = first_row
            .and_then(|r| row_problem(r, depth))
            .unwrap_or_else(|| "no row".to_owned());
        check.problems.push(format!("{}: {problem}", asset.guid));
        check.retry.push(asset.clone());
    }
    check
}

/// The output of `index.checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub batch: String,
    pub llm: usize,
    pub builtin: usize,
}

/// Keep the first usable row per asset from the tagger's answer, then from
/// the retry, else tag it with the builtin; append the rows to the partial
/// file and mark the batch complete. `answered_by` says who produced
/// `answers` (the builtin provider answers tag stages with the builtin too).
pub fn checkpoint(
    project: &Path,
    limits: &Limits,
    batch: &Batch,
    answers: &[&TagBatch],
    answered_by: TaggedBy,
    depth: Depth,
) -> anyhow::Result<Checkpoint> {
    let mut result = Checkpoint {
        batch: batch.id.clone(),
        llm: 0,
        builtin: 0,
    };
    let mut lines = String::new();
    for (asset, signature) in batch.assets.iter().zip(&batch.signatures) {
        let (tags, tagged_by) = match usable_row(&asset.guid, answers, depth) {
            Some(row) => (normalised(row.clone()), answered_by),
            None => (tagger::tag_one(asset, depth), TaggedBy::Builtin),
        };
        match tagged_by {
            TaggedBy::Llm => result.llm += 1,
            TaggedBy::Builtin => result.builtin += 1,
        }
        let row = PartialRow {
            batch: batch.id.clone(),
            signature: signature.clone(),
            tagged_by,
            tags,
        };
        lines.push_str(&serde_json::to_string(&row)?);
        lines.push('\n');
    }
    let partial = store::index_dir(project).join(store::PARTIAL_FILE);
    let mut ledger = ledger().lock().unwrap_or_else(|e| e.into_inner());
    // One locked write per batch: a crash leaves whole batches, at most one torn line.
    engine::io::append_line_locked(&partial, lines.trim_end_matches('\n'))
        .with_context(|| format!("cannot checkpoint {}", batch.id))?;
    let entry = ledger.entry(project.to_path_buf()).or_insert_with(|| Ledger {
        finished: Vec::new(),
        flushed_at: None,
    });
    entry.finished.push(batch.id.clone());
    if entry.flushed_at.is_none_or(|at| at.elapsed() >= STATE_FLUSH_INTERVAL) {
        let mut state = store::read_state(project, limits)?;
        for id in entry.finished.drain(..) {
            state.pending_batches.retain(|p| *p != id);
            state.completed_batches.push(id);
        }
        store::write_state(project, &state)?;
        entry.flushed_at = Some(Instant::now());
    }
    Ok(result)
}

/// Deduplicated tags, trimmed summary.
fn normalised(mut row: TagRow) -> TagRow {
    let mut seen = HashSet::new();
    row.llm_tags.retain(|t| seen.insert(t.clone()));
    row.llm_summary = row.llm_summary.trim().to_owned();
    row
}

/// Batches finished since `state.json` was last written, per project.
struct Ledger {
    finished: Vec<String>,
    flushed_at: Option<Instant>,
}

/// Also serialises checkpoints: concurrent batches append and update the state one at a time.
fn ledger() -> &'static Mutex<HashMap<PathBuf, Ledger>> {
    static LEDGER: OnceLock<Mutex<HashMap<PathBuf, Ledger>>> = OnceLock::new();
    LEDGER.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A label that differs from the previous index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelChange {
    pub guid: String,
    pub path: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// The output of `index.finalize`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finalized {
    pub assets: usize,
    pub packages: usize,
    pub changed: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub tagged_llm: usize,
    pub tagged_builtin: usize,
    pub warnings: usize,
    pub warnings_by_kind: BTreeMap<String, usize>,
    /// Each warning with its file (`--json`; `-v` prints them), so a
    /// duplicate guid hiding an asset is visible.
    #[serde(default)]
    pub warning_list: Vec<super::scan::Warning>,
    pub label_changes: Vec<LabelChange>,
    pub manifest_version: String,
    pub last_run: String,
    /// Whether `assets.jsonl` got new content (else only its time moved).
    pub assets_rewritten: bool,
    /// The run's one-line summary.
    pub summary: String,
}

/// Merge tags (partial rows, previous index, builtin) with the scan, write
/// every index file, and close the run.
pub fn finalize(project: &Path, limits: &Limits, scan: &ScanResult, diff: &Diff) -> anyhow::Result<Finalized> {
    let depth = scan.index_depth;
    let signatures: HashMap<&str, &str> = scan
        .assets
        .iter()
        .map(|a| (a.guid.as_str(), a.signature.as_str()))
        .collect();
    let partial: HashMap<String, PartialRow> = store::read_partial(project, limits)?
        .into_iter()
        .filter(|row| signatures.get(row.tags.guid.as_str()) == Some(&row.signature.as_str()))
        .map(|row| (row.tags.guid.clone(), row))
        .collect();
    let previous: HashMap<String, AssetRecord> = store::read_assets(project, limits)?
        .into_iter()
        .map(|r| (r.guid.clone(), r))
        .collect();
    let changed: HashSet<&str> = diff.changed.iter().map(String::as_str).collect();
    let package_names: HashMap<&str, &str> = scan
        .packages
        .iter()
        .map(|p| (p.package_id.as_str(), p.name.as_str()))
        .collect();

    let mut sorted: Vec<&ScannedAsset> = scan.assets.iter().collect();
    sorted.sort_unstable_by(|a, b| a.guid.cmp(&b.guid));
    let (mut tagged_llm, mut tagged_builtin) = (0, 0);
    let mut label_changes = Vec::new();
    let mut records = Vec::with_capacity(sorted.len());
    for asset in sorted {
        let earlier = previous.get(&asset.guid);
        let tags = match (partial.get(&asset.guid), earlier) {
            (Some(row), _) => {
                match row.tagged_by {
                    TaggedBy::Llm => tagged_llm += 1,
                    TaggedBy::Builtin => tagged_builtin += 1,
                }
                row.tags.clone()
            }
            (None, Some(prev)) if !changed.contains(asset.guid.as_str()) && carries_tier(prev, depth) => TagRow {
                guid: prev.guid.clone(),
                llm_tags: prev.llm_tags.clone(),
                llm_summary: prev.llm_summary.clone(),
                llm_use_cases: prev.llm_use_cases.clone(),
            },
            _ => {
                tagged_builtin += 1;
                tagger::tag_one(&tag_subject(asset, &package_names), depth)
            }
        };
        if let Some(prev) = earlier.filter(|p| p.labels != asset.labels) {
            label_changes.push(LabelChange {
                guid: asset.guid.clone(),
                path: asset.path.clone(),
                before: prev.labels.clone(),
                after: asset.labels.clone(),
            });
        }
        records.push(asset_record(asset, tags, depth));
    }

    let packages = package_records(scan, &records);
    let dir = store::index_dir(project);
    let assets_bytes = jsonl(&records)?;
    let packages_bytes = jsonl(&packages)?;
    let assets_path = dir.join(store::ASSETS_FILE);
    let packages_path = dir.join(store::PACKAGES_FILE);
    let assets_rewritten = write_if_changed(&assets_path, &assets_bytes)?;
    let packages_rewritten = write_if_changed(&packages_path, &packages_bytes)?;
    let last_run = if assets_rewritten {
        store::mtime_rfc3339(&assets_path)?
    } else {
        store::touch(&assets_path)?
    };

    let previous_manifest = store::read_manifest(project, limits)?;
    let manifest = store::Manifest {
        version: store::next_version(
            previous_manifest.as_ref(),
            depth,
            assets_rewritten || packages_rewritten,
        ),
        last_run: last_run.clone(),
        schema_tier: depth,
    };
    store::write_manifest(project, &manifest)?;
    for w in &scan.warnings {
        tracing::info!("index warning: {:?} {}: {}", w.kind, w.path, w.detail);
    }
    let warnings_by_kind: BTreeMap<String, usize> = warning_counts(&scan.warnings)
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
    let state = State {
        last_run: Some(last_run.clone()),
        guid_signatures: scan
            .assets
            .iter()
            .map(|a| (a.guid.clone(), a.signature.clone()))
            .collect(),
        last_scan: Some(LastScan {
            fingerprint: scan.fingerprint.clone(),
            assets: records.len(),
            packages: packages.len(),
            warnings_by_kind: warnings_by_kind.clone(),
        }),
        ..State::default()
    };
    store::write_state(project, &state)?;
    store::remove_if_present(&dir.join(store::PARTIAL_FILE))?;
    ledger().lock().unwrap_or_else(|e| e.into_inner()).remove(project);

    let mut finalized = Finalized {
        assets: records.len(),
        packages: packages.len(),
        changed: diff.changed.len(),
        removed: diff.removed.len(),
        unchanged: diff.unchanged,
        tagged_llm,
        tagged_builtin,
        warnings: scan.warnings.len(),
        warnings_by_kind,
        warning_list: scan.warnings.clone(),
        label_changes,
        manifest_version: manifest.version,
        last_run,
        assets_rewritten,
        summary: String::new(),
    };
    finalized.summary = summary_line(&finalized, elapsed_since(&scan.started_at));
    Ok(finalized)
}

fn elapsed_since(started_at: &str) -> Duration {
    OffsetDateTime::parse(started_at, &Rfc3339)
        .map(|start| OffsetDateTime::now_utc() - start)
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .unwrap_or_default()
}

/// The output of `index.unchanged`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unchanged {
    /// Nothing a scan reads has changed since the last finished run.
    pub same: bool,
    pub started_at: String,
}

/// The no-op fast path's test: the last run finished (no run in progress),
/// the index is fresh, and a `stat`-only walk gives the fingerprint that
/// run's scan had. `force` (reindex) never takes the fast path.
pub fn unchanged(
    project: &Path,
    limits: &Limits,
    data: &IndexData,
    options: &ScanOptions,
    force: bool,
) -> anyhow::Result<Unchanged> {
    let started_at = OffsetDateTime::now_utc().format(&Rfc3339)?;
    let state = store::read_state_head(project, limits);
    let last_scan = state
        .as_ref()
        .ok()
        .filter(|s| s.in_progress_run.is_none())
        .and_then(|s| s.last_scan.clone());
    let candidate = !force
        && last_scan.is_some()
        && store::freshness_of(project, state).is_fresh()
        && store::read_manifest(project, limits)
            .ok()
            .flatten()
            .is_some_and(|m| m.schema_tier == options.index_depth);
    let same =
        candidate && last_scan.is_some_and(|last| last.fingerprint == scan::tree_fingerprint(project, data, options));
    Ok(Unchanged { same, started_at })
}

/// Close a run that found nothing changed: touch `assets.jsonl` and move
/// `last_run` in the manifest and state (the version stays), like finalize
/// does for an empty change set, and report the last run's counts.
pub fn touch(project: &Path, limits: &Limits, started_at: &str) -> anyhow::Result<Finalized> {
    let state = store::read_state(project, limits)?;
    let last = state
        .last_scan
        .clone()
        .context("state.json has no finished scan; run `unity-assets reindex`")?;
    let mut manifest =
        store::read_manifest(project, limits)?.context("manifest.json is missing; run `unity-assets reindex`")?;
    let last_run = store::touch(&store::index_dir(project).join(store::ASSETS_FILE))?;
    manifest.last_run = last_run.clone();
    store::write_manifest(project, &manifest)?;
    store::write_state(
        project,
        &State {
            last_run: Some(last_run.clone()),
            last_error: None,
            ..state
        },
    )?;
    let mut finalized = Finalized {
        assets: last.assets,
        packages: last.packages,
        changed: 0,
        removed: 0,
        unchanged: last.assets,
        tagged_llm: 0,
        tagged_builtin: 0,
        warnings: last.warnings_by_kind.values().sum(),
        warnings_by_kind: last.warnings_by_kind,
        // The no-op run keeps only counts; `reindex -v` names the files.
        warning_list: Vec::new(),
        label_changes: Vec::new(),
        manifest_version: manifest.version,
        last_run,
        assets_rewritten: false,
        summary: String::new(),
    };
    finalized.summary = summary_line(&finalized, elapsed_since(started_at));
    Ok(finalized)
}

/// Whether a previous row has the fields the current tier needs from the tagger.
fn carries_tier(previous: &AssetRecord, depth: Depth) -> bool {
    depth == Depth::Minimal || previous.llm_use_cases.is_some()
}

fn asset_record(asset: &ScannedAsset, tags: TagRow, depth: Depth) -> AssetRecord {
    let details = asset.details.clone().unwrap_or_default();
    let normal = depth >= Depth::Normal;
    AssetRecord {
        guid: asset.guid.clone(),
        path: asset.path.clone(),
        name: asset.name.clone(),
        asset_type: asset.asset_type.clone(),
        type_subtype: asset.type_subtype.clone(),
        filename_signals: asset.filename_signals.clone(),
        labels: asset.labels.clone(),
        llm_tags: tags_without_labels(tags.llm_tags, &asset.labels),
        llm_summary: tags.llm_summary,
        size: normal.then_some(asset.size),
        last_modified: normal.then(|| asset.last_modified.clone()),
        package_id: normal.then(|| asset.package_id.clone()),
        dependencies: normal.then_some(details.dependencies),
        llm_use_cases: if normal {
            Some(tags.llm_use_cases.unwrap_or_else(|| asset.use_cases.clone()))
        } else {
            None
        },
        component_types: details.component_types,
        shader_props: details.shader_props,
        animator_states: details.animator_states,
    }
}

/// One record per package with its type histogram and a one-line summary.
fn package_records(scan: &ScanResult, records: &[AssetRecord]) -> Vec<PackageRecord> {
    let package_of: HashMap<&str, &str> = scan
        .assets
        .iter()
        .map(|a| (a.guid.as_str(), a.package_id.as_str()))
        .collect();
    let mut histograms: HashMap<&str, BTreeMap<String, usize>> = HashMap::new();
    let mut tag_counts: HashMap<&str, BTreeMap<&str, usize>> = HashMap::new();
    for record in records {
        let package = package_of.get(record.guid.as_str()).copied().unwrap_or_default();
        *histograms
            .entry(package)
            .or_default()
            .entry(record.asset_type.clone())
            .or_default() += 1;
        let tags = tag_counts.entry(package).or_default();
        for tag in record.llm_tags.iter().chain(&record.labels) {
            *tags.entry(tag.as_str()).or_default() += 1;
        }
    }
    scan.packages
        .iter()
        .map(|p| {
            let histogram = histograms.remove(p.package_id.as_str()).unwrap_or_default();
            let count = histogram.values().sum();
            let tags = tag_counts.remove(p.package_id.as_str()).unwrap_or_default();
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
    tags: &BTreeMap<&str, usize>,
) -> String {
    let by_count = |a: &(&String, &usize), b: &(&String, &usize)| b.1.cmp(a.1).then(a.0.cmp(b.0));
    let mut types: Vec<(&String, &usize)> = histogram.iter().collect();
    types.sort_by(by_count);
    let types: Vec<String> = types.iter().take(3).map(|(t, n)| format!("{t} ({n})")).collect();
    let mut top: Vec<(&&str, &usize)> = tags.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<&str> = top.iter().take(5).map(|(t, _)| **t).collect();
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
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    engine::io::write_atomic(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

fn summary_line(f: &Finalized, elapsed: Duration) -> String {
    let warnings = if f.warnings_by_kind.is_empty() {
        String::new()
    } else {
        let kinds: Vec<String> = f.warnings_by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(" ({})", kinds.join(", "))
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
