//! `unity-assets doctor`: read-only checks, each a [`Check`] with a one-line fix.
//!
//! The checks never write: a doctor run on a broken project must not make it
//! worse. `pipelines/doctor.yaml` runs them (and the provider and MCP checks
//! other modules register), prints one ✓/✗ line per check with [`report`],
//! and exits 1 when a required check fails.

use std::path::Path;

use engine::io::Limits;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::labels::CuratedLabels;
use super::store::{self, Freshness};

/// Where the optional project config lives, relative to the project.
pub const CONFIG_FILE: &str = ".claude/unity-assets.yml";

/// Files the index folder may hold; anything else there is stray.
const INDEX_FILES: [&str; 7] = [
    store::MANIFEST_FILE,
    store::PACKAGES_FILE,
    store::ASSETS_FILE,
    store::STATE_FILE,
    "search-result.json",
    "feedback.jsonl",
    "orchestrator-audit.jsonl",
];

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    #[serde(default)]
    pub name: String,
    pub ok: bool,
    /// Whether a failure makes `doctor` exit 1.
    #[serde(default = "required_by_default")]
    pub required: bool,
    #[serde(default)]
    pub detail: String,
    /// What to do when it failed (empty when ok).
    #[serde(default)]
    pub fix: String,
    /// A check that prints its own ✓/✗ line (the MCP check) brings it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

fn required_by_default() -> bool {
    true
}

impl Check {
    fn pass(name: &str, detail: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: true,
            required: true,
            detail: detail.into(),
            fix: String::new(),
            line: None,
        }
    }

    fn fail(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: false,
            required: true,
            detail: detail.into(),
            fix: fix.into(),
            line: None,
        }
    }
}

/// `Assets/` is where the doctor runs.
pub fn project(project: &Path) -> Check {
    const NAME: &str = "project root";
    if project.join("Assets").is_dir() {
        Check::pass(NAME, format!("Assets/ found in {}", project.display()))
    } else {
        Check::fail(
            NAME,
            format!("no Assets/ folder in {}", project.display()),
            "run in the Unity project's root folder (the one holding Assets/) or pass --project DIR",
        )
    }
}

/// `.claude/unity-assets.yml` and `.claude/unity-assets.labels.yml` parse and
/// hold values of the right kinds.
pub fn config(project: &Path) -> Check {
    const NAME: &str = "config";
    let path = project.join(CONFIG_FILE);
    let limit = Limits::default().file_bytes;
    let problems = match engine::io::read_text_if_present(&path, limit, engine::io::FILE_KEY) {
        Ok(None) => Vec::new(),
        Err(e) => vec![format!("cannot read {CONFIG_FILE}: {e}")],
        Ok(Some(text)) => match serde_yaml::from_str::<Value>(&text) {
            Err(e) => vec![format!("{CONFIG_FILE} is not valid YAML: {e}")],
            Ok(Value::Null) => Vec::new(),
            Ok(Value::Object(map)) => config_problems(&map),
            Ok(_) => vec![format!("{CONFIG_FILE} must be a mapping of keys to values")],
        },
    };
    let labels = CuratedLabels::load(project).err().map(|e| format!("{e:#}"));
    let problems: Vec<String> = problems.into_iter().chain(labels).collect();
    match problems.as_slice() {
        [] if path.is_file() => Check::pass(NAME, format!("{CONFIG_FILE} is valid")),
        [] => Check::pass(NAME, format!("no {CONFIG_FILE}; defaults apply")),
        _ => Check::fail(
            NAME,
            problems.join("; "),
            format!("correct {CONFIG_FILE} (see the README's configuration keys)"),
        ),
    }
}

fn config_problems(map: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(depth) = map.get("index_depth") {
        if !matches!(depth.as_str(), Some("minimal" | "normal" | "rich")) {
            problems.push(format!("index_depth is {depth}; expected minimal, normal or rich"));
        }
    }
    for key in ["batch_size", "parallel_subagents", "max_assets_in_context"] {
        if let Some(value) = map.get(key) {
            if value.as_u64().is_none_or(|n| n == 0) {
                problems.push(format!("{key} is {value}; expected a positive whole number"));
            }
        }
    }
    if let Some(thresholds) = map.get("confidence_threshold") {
        for key in ["auto", "confirm"] {
            if let Some(value) = thresholds.get(key) {
                if !value.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) {
                    problems.push(format!(
                        "confidence_threshold.{key} is {value}; expected a number from 0 to 1"
                    ));
                }
            }
        }
    }
    if let Some(paths) = map.get("ignore_paths") {
        if !paths.as_array().is_some_and(|list| list.iter().all(Value::is_string)) {
            problems.push("ignore_paths must be a list of project-relative paths".to_owned());
        }
    }
    problems
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

/// The index is present, fresh, and its rows satisfy the asset schema.
pub fn index(project: &Path, limits: &Limits, assets: &ReadRows) -> Check {
    const NAME: &str = "index";
    const REINDEX: &str = "run `unity-assets reindex`";
    match store::index_freshness(project, limits) {
        Freshness::Missing { reason } => Check::fail(NAME, reason, "run `unity-assets index`"),
        Freshness::Stale { reason } => Check::fail(NAME, format!("stale: {reason}"), REINDEX),
        Freshness::Fresh { last_run } => {
            let ok = assets.value.as_ref().map_or(0, Vec::len);
            let bad = assets.bad_rows.len();
            let version = match store::read_manifest(project, limits) {
                Ok(m) => m.map(|m| m.version).unwrap_or_default(),
                Err(e) => return Check::fail(NAME, format!("{e:#}"), REINDEX),
            };
            if let Err(e) = store::read_state(project, limits) {
                return Check::fail(NAME, format!("{e:#}"), REINDEX);
            }
            let detail = format!("{version}, fresh (last run {last_run}), {ok} rows valid, {bad} invalid");
            if bad == 0 {
                Check::pass(NAME, detail)
            } else {
                Check::fail(NAME, detail, REINDEX)
            }
        }
    }
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

/// Nothing but the contract's files in the index folder: no temp files,
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
        .filter(|name| !INDEX_FILES.contains(&name.as_str()))
        .collect();
    stray.sort();
    let interrupted = in_progress.is_some() && stray.iter().any(|s| s == store::PARTIAL_FILE);
    if stray.is_empty() {
        Check::pass(NAME, "no stray files")
    } else if interrupted && stray.len() == 1 {
        Check::fail(
            NAME,
            "an index run was interrupted",
            "run `unity-assets index` to resume it",
        )
    } else {
        Check::fail(
            NAME,
            format!("stray files: {}", stray.join(", ")),
            format!(
                "make sure no unity-assets command is running, then delete them from {}",
                store::INDEX_DIR
            ),
        )
    }
}

/// The printed lines and whether every required check passed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub ok: bool,
    pub text: String,
    /// The checks as given, for `doctor --json`.
    pub checks: Vec<Check>,
}

pub fn report(checks: &[Check]) -> Report {
    let lines: Vec<String> = checks
        .iter()
        .map(|c| {
            let mark = if c.ok { "✓" } else { "✗" };
            let optional = if c.ok || c.required { "" } else { " (optional)" };
            let fix = if c.ok || c.fix.is_empty() {
                String::new()
            } else {
                format!(" — fix: {}", c.fix)
            };
            match &c.line {
                Some(line) => format!("{line}{optional}{fix}"),
                None => format!("{mark} {}: {}{optional}{fix}", c.name, c.detail),
            }
        })
        .collect();
    Report {
        ok: checks.iter().all(|c| c.ok || !c.required),
        text: lines.join("\n"),
        checks: checks.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_and_config_checks() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!project(dir.path()).ok);
        std::fs::create_dir(dir.path().join("Assets")).unwrap();
        assert!(project(dir.path()).ok);
        assert!(config(dir.path()).ok);
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "index_depth: deep\nbatch_size: 0\n").unwrap();
        let check = config(dir.path());
        assert!(!check.ok);
        assert!(
            check.detail.contains("index_depth") && check.detail.contains("batch_size"),
            "{}",
            check.detail
        );
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "index_depth: rich\nignore_paths: [Assets/Plugins]\n",
        )
        .unwrap();
        assert!(config(dir.path()).ok);
    }

    #[test]
    fn feedback_counts_and_stray_files() {
        let rows = ReadRows {
            value: Some(vec![Value::Null; 3]),
            bad_rows: vec![serde_json::json!({"line": 2})],
        };
        let check = feedback(&rows);
        assert!(!check.ok);
        assert!(check.detail.starts_with("3 ok / 1 corrupted"), "{}", check.detail);
        assert!(feedback(&ReadRows::default()).ok);

        let dir = tempfile::tempdir().unwrap();
        let index = store::index_dir(dir.path());
        std::fs::create_dir_all(&index).unwrap();
        std::fs::write(index.join("assets.jsonl"), "").unwrap();
        assert!(temp_files(dir.path(), &Limits::default()).ok);
        std::fs::write(index.join(".assets.jsonl.12.0.tmp"), "").unwrap();
        let check = temp_files(dir.path(), &Limits::default());
        assert!(
            !check.ok && check.detail.contains(".assets.jsonl.12.0.tmp"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn report_marks_and_exit_status() {
        let mcp: Check = serde_json::from_value(
            serde_json::json!({"ok": false, "required": false, "line": "✗ MCP down", "fix": "start it"}),
        )
        .unwrap();
        let r = report(&[Check::pass("project root", "ok here"), mcp]);
        assert!(r.ok, "an optional check does not fail the doctor");
        assert_eq!(r.text, "✓ project root: ok here\n✗ MCP down (optional) — fix: start it");
        let r = report(&[Check::fail("index", "missing", "run it")]);
        assert!(!r.ok);
        assert_eq!(r.text, "✗ index: missing — fix: run it");
    }
}
