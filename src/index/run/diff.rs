//! `index.diff`: what changed since the last finished run.

use std::collections::HashSet;
use std::path::Path;

use engine::io::Limits;
use serde::{Deserialize, Serialize};

use crate::index::scan::ScanResult;
use crate::index::store;

/// The output of `index.diff`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    /// Guids to (re)tag, in scan (path) order.
    pub changed: Vec<String>,
    pub(crate) added: usize,
    pub(crate) modified: usize,
    pub(crate) unchanged: usize,
    /// Guids of the last run that are gone, sorted.
    pub removed: Vec<String>,
    /// Why every asset is re-tagged, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) full_reason: Option<String>,
}

/// Compare the scan with the last finished run. `force` (reindex) re-tags everything.
pub fn diff(project: &Path, limits: &Limits, scan: &ScanResult, force: bool) -> anyhow::Result<Diff> {
    if force {
        store::discard_corrupt(project, limits)?;
    }
    let state = store::read_state(project, limits)?;
    let signatures = store::read_signatures(project, limits, &state)?;
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
    let current: HashSet<&str> = scan.assets.iter().map(|a| a.row.guid.as_str()).collect();
    // An asset whose row cannot be read (a corrupt `assets.jsonl`) is tagged again.
    let readable = match diff.full_reason {
        None => store::indexed_guids(project, limits),
        Some(_) => HashSet::new(),
    };
    for asset in &scan.assets {
        match signatures.get(&asset.row.guid) {
            None => diff.added += 1,
            Some(sig) if *sig != asset.signature => diff.modified += 1,
            Some(_) if diff.full_reason.is_none() && readable.contains(&asset.row.guid) => {
                diff.unchanged += 1;
                continue;
            }
            Some(_) => diff.modified += 1,
        }
        diff.changed.push(asset.row.guid.clone());
    }
    diff.removed = signatures
        .into_keys()
        .filter(|g| !current.contains(g.as_str()))
        .collect();
    diff.removed.sort_unstable();
    Ok(diff)
}
