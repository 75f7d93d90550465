//! The project's files: its folder, the index, the feedback log, and
//! nothing stray in the index folder.

use std::path::Path;

use engine::io::Limits;
use serde::Deserialize;
use serde_json::Value;

use super::Check;
use crate::index::store::{self, Freshness};
use crate::index::watch;

/// Files the index folder may hold; anything else there is stray.
const INDEX_FILES: [&str; 12] = [
    store::MANIFEST_FILE,
    store::PACKAGES_FILE,
    store::ASSETS_FILE,
    store::STATE_FILE,
    store::SIGNATURES_FILE,
    crate::index::graph::GRAPH_FILE,
    crate::semantic::vectors::VECTORS_FILE,
    crate::semantic::VOCABULARY_FILE,
    crate::search::result::RESULT_FILE,
    crate::search::pick::FEEDBACK_FILE,
    crate::build::execute::AUDIT_FILE,
    crate::search::term_index::SEARCH_INDEX_FILE,
];

/// `Assets/` is where the doctor runs.
pub fn project(project: &Path) -> Check {
    const NAME: &str = "project root";
    if !project.is_dir() {
        Check::fail(
            NAME,
            format!("{} is not a folder", project.display()),
            "pass the Unity project's folder (the one holding Assets/) with --project DIR",
        )
    } else if project.join("Assets").is_dir() {
        Check::pass(NAME, format!("Assets/ found in {}", project.display()))
    } else {
        Check::fail(
            NAME,
            format!("no Assets/ folder in {}", project.display()),
            "run in the Unity project's root folder (the one holding Assets/) or pass --project DIR",
        )
    }
}

/// The `read` stage's output for a JSONL file: `{value, bad_rows}`, `value`
/// null when the file is missing.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ReadRows {
    #[serde(default)]
    pub value: Option<Vec<Value>>,
    #[serde(default)]
    pub bad_rows: Vec<Value>,
}

/// The index is present, fresh, and its rows satisfy the asset and package
/// schemas.
pub fn index(project: &Path, limits: &Limits, assets: &ReadRows, packages: &ReadRows) -> Check {
    const NAME: &str = "index";
    const REINDEX: &str = "run `unity-assets reindex`";
    let bad = assets.bad_rows.len();
    match store::index_freshness(project, limits) {
        Freshness::Missing { reason } => Check::fail(NAME, reason, "run `unity-assets index`"),
        Freshness::Stale { reason } if bad > 0 => Check::fail(
            NAME,
            format!("stale: {reason}; {}", bad_rows_note(store::ASSETS_FILE, assets)),
            REINDEX,
        ),
        Freshness::Stale { reason } => Check::fail(NAME, format!("stale: {reason}"), REINDEX),
        Freshness::Fresh { last_run } => {
            let ok = assets.value.as_ref().map_or(0, Vec::len);
            let version = match store::read_manifest(project, limits) {
                Ok(m) => m.map(|m| m.version).unwrap_or_default(),
                Err(e) => return Check::fail(NAME, format!("{e:#}"), REINDEX),
            };
            if let Err(e) = store::read_state(project, limits) {
                return Check::fail(NAME, format!("{e:#}"), REINDEX);
            }
            let detail = format!("{version}, fresh (last run {last_run}), {ok} rows valid, {bad} invalid");
            if bad > 0 {
                Check::fail(
                    NAME,
                    format!("{detail}: {}", bad_rows_note(store::ASSETS_FILE, assets)),
                    REINDEX,
                )
            } else if packages.value.is_none() || !packages.bad_rows.is_empty() {
                let note = match packages.value {
                    None => format!("{} does not exist", store::PACKAGES_FILE),
                    Some(_) => bad_rows_note(store::PACKAGES_FILE, packages),
                };
                // A no-op `index` finds such a file and writes it again.
                Check::fail(NAME, format!("{detail}; {note}"), "run `unity-assets index`")
            } else {
                Check::pass(NAME, detail)
            }
        }
    }
}

/// `assets.jsonl line 2 cannot be used: <why>` for the first bad row of
/// `file`, and how many more.
fn bad_rows_note(file: &str, rows: &ReadRows) -> String {
    let first = rows.bad_rows.first();
    let line = first
        .and_then(|b| b.get("line"))
        .map(Value::to_string)
        .unwrap_or_default();
    let reason = first.and_then(|b| b["reason"].as_str()).unwrap_or_default();
    let more = match rows.bad_rows.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    format!("{file} line {line} cannot be used: {reason}{more}")
}

/// `feedback.jsonl` rows are valid (n ok / n corrupted).
pub fn feedback(rows: &ReadRows) -> Check {
    const NAME: &str = "feedback";
    let Some(ok) = rows.value.as_ref().map(Vec::len) else {
        return Check::pass(NAME, "no feedback.jsonl yet (no picks recorded)");
    };
    let bad = rows.bad_rows.len();
    let detail = format!("{ok} ok / {bad} corrupted");
    if bad == 0 {
        Check::pass(NAME, detail)
    } else {
        let lines: Vec<String> = rows
            .bad_rows
            .iter()
            .filter_map(|b| b.get("line"))
            .map(Value::to_string)
            .collect();
        Check::fail(
            NAME,
            format!("{detail} (lines {})", lines.join(", ")),
            "search skips corrupted rows; delete those lines from feedback.jsonl to silence this",
        )
    }
}

/// Nothing but the contract's files in the index folder (an `index
/// --watch` watcher's included, and a live watcher said): no temp files,
/// lock files or partial files of finished runs.
pub fn temp_files(project: &Path, limits: &Limits) -> Check {
    const NAME: &str = "index folder";
    let dir = store::index_dir(project);
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Check::pass(NAME, "no index folder yet");
    };
    let in_progress = store::read_state(project, limits).ok().and_then(|s| s.in_progress_run);
    let mut stray: Vec<String> = read
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !INDEX_FILES.contains(&name.as_str()) && !watch::FILES.contains(&name.as_str()))
        .collect();
    stray.sort();
    let interrupted = in_progress.is_some() && stray.iter().any(|s| s == store::PARTIAL_FILE);
    let watcher = match watch::live_watcher(project, limits) {
        Some(Some(pid)) => format!("; a watcher (`index --watch` or `mcp --watch`) is running (pid {pid})"),
        Some(None) => "; a watcher (`index --watch` or `mcp --watch`) is running".to_owned(),
        None => String::new(),
    };
    if stray.is_empty() {
        Check::pass(NAME, format!("no stray files{watcher}"))
    } else if interrupted && stray.len() == 1 {
        Check::fail(
            NAME,
            "an index run was interrupted",
            "run `unity-assets index` to resume it",
        )
    } else {
        Check::fail(
            NAME,
            format!("stray files: {}{watcher}", stray.join(", ")),
            format!(
                "make sure no unity-assets command is running, then delete them from {}",
                store::INDEX_DIR
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_check() {
        let dir = tempfile::tempdir().unwrap();
        let check = project(&dir.path().join("missing"));
        assert!(!check.ok() && check.detail.ends_with("is not a folder"), "{check:?}");
        assert!(!project(dir.path()).ok());
        std::fs::create_dir(dir.path().join("Assets")).unwrap();
        assert!(project(dir.path()).ok());
    }

    #[test]
    fn feedback_counts_and_stray_files() {
        let rows = ReadRows {
            value: Some(vec![Value::Null; 3]),
            bad_rows: vec![serde_json::json!({"line": 2})],
        };
        let check = feedback(&rows);
        assert!(!check.ok());
        assert!(check.detail.starts_with("3 ok / 1 corrupted"), "{}", check.detail);
        assert!(feedback(&ReadRows::default()).ok());

        let dir = tempfile::tempdir().unwrap();
        let index = store::index_dir(dir.path());
        std::fs::create_dir_all(&index).unwrap();
        for written in [
            "assets.jsonl",
            "assets.vectors",
            "vocabulary.vectors",
            "search-index.bin",
        ] {
            std::fs::write(index.join(written), "").unwrap();
        }
        assert!(temp_files(dir.path(), &Limits::default()).ok());
        std::fs::write(index.join(".assets.jsonl.12.0.tmp"), "").unwrap();
        let check = temp_files(dir.path(), &Limits::default());
        assert!(
            !check.ok() && check.detail.contains(".assets.jsonl.12.0.tmp"),
            "{}",
            check.detail
        );
    }
}
