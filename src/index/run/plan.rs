//! `index.plan_batches`: the changed assets in tag batches, the run recorded.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use engine::io::Limits;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::checkpoint::forget_finished_batches;
use super::diff::Diff;
use crate::index::record::ScannedAsset;
use crate::index::scan::ScanResult;
use crate::index::store;
use crate::index::tagger::TagSubject;

/// One batch for the tag stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub(crate) id: String,
    /// One JSON line per asset: a million assets in batches are held as
    /// strings, not as a map per field (`packed::lines`).
    #[serde(with = "crate::index::packed::lines")]
    pub assets: Vec<TagSubject>,
    /// The signature of each asset, in the same order (not shown to the model).
    pub signatures: Vec<String>,
}

/// The output of `index.plan_batches`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub(crate) run_id: String,
    /// The batches to tag, in order.
    pub batches: Vec<Batch>,
    /// Rows reused from the partial file of an interrupted run.
    pub(crate) resumed: usize,
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
                .map(|a| (a.row.guid.as_str(), a.signature.as_str()))
                .collect();
            let done: HashSet<String> = store::read_partial(project, limits)
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

    let by_guid: HashMap<&str, &ScannedAsset> = scan.assets.iter().map(|a| (a.row.guid.as_str(), a)).collect();
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
            assets: chunk.iter().map(|a| TagSubject::of(a, &package_names)).collect(),
            signatures: chunk.iter().map(|a| a.signature.clone()).collect(),
        })
        .collect();

    // Nothing to tag and nothing to resume: no run to record.
    if !batches.is_empty() || state.in_progress_run.is_some() {
        state.in_progress_run = Some(run_id.clone());
        state.pending_batches = batches.iter().map(|b| b.id.clone()).collect();
        store::write_state(project, &state)?;
    }
    forget_finished_batches(project);
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
