//! `index.unchanged` and `index.touch`: the no-op fast path, where a
//! `stat`-only walk shows nothing changed.

use std::path::Path;

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::finalize::{elapsed_since, summary_line, Finalized};
use crate::index::data::IndexData;
use crate::index::scan::{self, ScanOptions, Tree};
use crate::index::store::{self, State};
use crate::index::LinesNotRows;

/// The output of `index.unchanged`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unchanged {
    /// Nothing a scan reads has changed since the last finished run.
    pub same: bool,
    /// When this run began (RFC 3339).
    pub started_at: String,
    /// The tree as this run saw it, for `touch` to record.
    #[serde(default)]
    pub tree: Option<Tree>,
}

/// The no-op fast path's test: the last run finished (no run in progress),
/// the index is fresh, its rows read whole (`files_sound`), and the tree as it is now (a `stat`-only walk, or
/// none when a watcher vouches for the last one) gives the fingerprint that
/// run's scan had. `force` (reindex) never takes the fast path.
pub fn unchanged(
    project: &Path,
    limits: &Limits,
    data: &IndexData,
    options: &ScanOptions,
    force: bool,
    lines_not_rows: LinesNotRows,
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
        && store::read_manifest(project, limits).ok().flatten().is_some_and(|m| {
            m.schema_tier == options.index_depth && files_sound(project, limits, &m.version, lines_not_rows)
        });
    let (same, tree) = match last_scan {
        Some(last) if candidate => {
            let tree = scan::current_tree(project, limits, options, last.tree.as_ref());
            let same = last.fingerprint == scan::fingerprint(project, limits, data, options, &tree)?;
            (same, Some(tree))
        }
        _ => (false, None),
    };
    Ok(Unchanged {
        same,
        started_at,
        tree: tree.filter(|_| same),
    })
}

/// Whether the rows a no-op run would keep read whole: a line of
/// `packages.jsonl` that is no package row, or a line of `assets.jsonl`
/// the search index found no row (or a search index built from other
/// bytes), makes the run a full one, which writes them again (each said,
/// with its line or count).
fn files_sound(project: &Path, limits: &Limits, version: &str, lines_not_rows: LinesNotRows) -> bool {
    let dir = store::index_dir(project);
    let packages = dir.join(store::PACKAGES_FILE);
    let packages_sound = match store::bad_package_rows(project, limits) {
        Ok(bad) => {
            for row in &bad {
                tracing::warn!(
                    "{}:{}: {}; this run writes it again",
                    packages.display(),
                    row.line,
                    row.reason
                );
            }
            bad.is_empty()
        }
        Err(e) => {
            tracing::warn!("{e}; this run writes it again");
            false
        }
    };
    // Every run ends by writing the search index of the rows it wrote: one
    // built from other bytes means `assets.jsonl` changed behind its back.
    let assets_sound = match lines_not_rows(&dir, Some(version), limits) {
        Some(0) => true,
        Some(n) => {
            tracing::warn!(
                "{}: {n} lines are no asset row (`unity-assets doctor` names them); this run writes it again",
                dir.join(store::ASSETS_FILE).display()
            );
            false
        }
        None => {
            tracing::debug!("index: the search index was not built from this assets.jsonl; scanning");
            false
        }
    };
    packages_sound && assets_sound
}

/// Close a run that found nothing changed: touch `assets.jsonl` and move
/// `last_run` in the manifest and state (the version stays), like finalize
/// does for an empty change set, and report the last run's counts. `tree`:
/// the tree the run saw (the same hash, maybe in a newer watcher epoch).
pub fn touch(project: &Path, limits: &Limits, started_at: &str, tree: Option<Tree>) -> anyhow::Result<Finalized> {
    let state = store::read_state(project, limits)?;
    let mut last = state
        .last_scan
        .clone()
        .context("state.json has no finished scan; run `unity-assets reindex`")?;
    if tree.is_some() {
        last.tree = tree;
    }
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
            last_scan: Some(last.clone()),
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
