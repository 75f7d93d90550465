//! `unity-assets pick N`: choose one candidate of the last search
//! by its global 0-based number and append a feedback row.
//!
//! Every outcome is one fixed stdout line and an exit code
//! (`docs/contracts.md#pick`, `docs/contracts.md#exact-lines`); the functions
//! return them instead of printing so the pipeline's `emit` and `exit` stages
//! show them and tests compare them byte for byte.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::hints::check_feedback_row;
use super::result::{self, SearchResult};

pub const FEEDBACK_FILE: &str = "feedback.jsonl";

/// The line to print and the exit code, plus the row to record on success.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PickOutcome {
    pub ok: bool,
    pub code: i32,
    pub line: String,
    /// What to do about a refusal, printed under the (fixed) line.
    pub help: Option<String>,
    /// The chosen candidate's path, printed under `recorded: <guid>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<FeedbackRow>,
}

impl PickOutcome {
    fn error(message: String) -> Self {
        Self {
            ok: false,
            code: 1,
            line: format!("[unity-assets:pick] error: {message}"),
            help: None,
            path: None,
            row: None,
        }
    }

    fn help(mut self, help: &str) -> Self {
        self.help = Some(help.to_owned());
        self
    }
}

/// One line of `feedback.jsonl` (`schemas/feedback-row.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRow {
    pub ts: String,
    pub query: String,
    pub sub_intent_id: String,
    pub picked_guid: String,
    pub candidate_guids: Vec<String>,
    pub confidence_before: f64,
    pub confidence_after: f64,
    pub source: String,
}

/// The refusal of a pick index that is not a whole number: one wording for
/// the CLI (which refuses it before the run) and the pipeline (MCP callers).
pub fn not_a_number(typed: &str) -> PickOutcome {
    PickOutcome::error(format!(
        "`{}` is not a candidate number; pass 0, 1, 2 … as the last search listed them",
        typed.escape_debug()
    ))
    .help(COUNTS_FROM_ZERO)
}

/// Whether `typed` is a whole number; a negative or huge one is a number
/// out of range, not text.
pub fn is_whole_number(typed: &str) -> bool {
    let digits = typed.trim();
    let digits = digits.strip_prefix(['-', '+']).unwrap_or(digits);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Said wherever a pick number is asked for: `build --choose G=N` counts from 1.
const COUNTS_FROM_ZERO: &str =
    "pick counts from 0, across all groups, as the search printed [0], [1], …; build's `--choose G=N` counts from 1";

/// Steps 1–4: load the result, check the manifest handshake, find the
/// candidate, build its feedback row (not yet written).
pub fn resolve(index_dir: &Path, limits: &engine::io::Limits, index: &str, now: time::OffsetDateTime) -> PickOutcome {
    if !is_whole_number(index) {
        return not_a_number(index);
    }
    let read = |name: &str| {
        engine::io::read_text_limited(
            &index_dir.join(name),
            limits.file_bytes,
            engine::io::FILE_KEY,
            &crate::PRODUCT,
        )
    };
    // The seed's fixed line names the Claude Code command; the help line
    // says it the shell's way.
    let no_result = || {
        PickOutcome::error("no search result; run /unity-assets:search first".into())
            .help("search first — in a shell `unity-assets search 'zombie enemy'` with your own words — then pick a number it lists")
    };
    let text = match result::read_text(index_dir, limits) {
        Ok(Some(text)) => text,
        Ok(None) => return no_result(),
        // Too large, a link out of the project, unreadable: say which.
        Err(e) => return PickOutcome::error(e.to_string()),
    };
    let Ok(result) = serde_json::from_str::<SearchResult>(&text) else {
        return no_result();
    };
    let current = read("manifest.json")
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m["version"].as_str().map(str::to_owned));
    if current.is_none() || current != result.manifest_version {
        // The fixed line says "reindex"; what actually helps is a new search,
        // so the advice goes on the help line under it.
        return PickOutcome::error("stale search result; reindex required".into()).help(&search_again(
            "the index changed after this search",
            result.query.as_deref().unwrap_or_default(),
        ));
    }
    let flat: Vec<(usize, usize)> = result
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| (0..group.candidates.len()).map(move |c| (g, c)))
        .collect();
    if flat.is_empty() {
        let query = result.query.as_deref().unwrap_or_default();
        return PickOutcome::error(format!("the last search (\"{query}\") has no candidate to pick"))
            .help("search again with other words, or run `unity-assets reindex` if assets were added, then pick");
    }
    let chosen = index.trim().parse::<usize>().ok().and_then(|i| flat.get(i));
    let Some(&(g, c)) = chosen else {
        let max = flat.len() - 1;
        return PickOutcome::error(format!("index {} out of range (max {max})", index.trim()))
            .help(&format!("{COUNTS_FROM_ZERO}; the last search holds [0]–[{max}]"));
    };
    let group = &result.groups[g];
    let candidate = &group.candidates[c];
    let before = f64::from(candidate.confidence);
    let row = FeedbackRow {
        ts: now
            .to_offset(time::UtcOffset::UTC)
            .format(time::macros::format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
            ))
            .unwrap_or_default(),
        query: result
            .query
            .clone()
            .filter(|q| !q.is_empty())
            .or(result.manifest_version.clone())
            .unwrap_or_default(),
        sub_intent_id: group.sub_intent.clone(),
        picked_guid: candidate.guid.clone(),
        candidate_guids: group.candidates.iter().map(|c| c.guid.clone()).collect(),
        confidence_before: round6(before),
        confidence_after: round6((before + 0.10).min(1.0)),
        source: "pick".into(),
    };
    PickOutcome {
        ok: true,
        code: 0,
        line: format!("[unity-assets:pick] recorded: {}", row.picked_guid),
        help: None,
        path: Some(candidate.path.clone()),
        row: Some(row),
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A pick records only an asset of the index at its indexed path, as build
/// uses only those: a hand-edited `search-result.json` naming another guid,
/// or a path elsewhere (`../../etc/passwd`, `/etc/passwd`), is refused.
pub fn require_indexed(index: &super::load::IndexFiles, out: PickOutcome) -> anyhow::Result<PickOutcome> {
    let (Some(row), Some(path)) = (out.row.as_ref().filter(|_| out.ok), out.path.as_deref()) else {
        return Ok(out);
    };
    let guid = row.picked_guid.as_str();
    let refusal = match index.indexed_paths(&std::collections::HashSet::from([guid]))?.get(guid) {
        // Every reader of the index skips a row outside the project
        // (`index::row::project_path`), so an indexed path is inside it.
        Some(indexed) if indexed == path => return Ok(out),
        Some(indexed) => format!("candidate {guid} names path `{path}`, not its indexed path `{indexed}`"),
        None => format!("candidate {guid} is not in the index"),
    };
    Ok(PickOutcome::error(refusal).help(&search_again(
        "search-result.json was edited or is out of date",
        &row.query,
    )))
}

/// A help line that says to search again for `query`, as a command to run.
fn search_again(why: &str, query: &str) -> String {
    format!(
        "{why}: run the search again, `unity-assets search {}`, then pick",
        engine::template::shell_word(query)
    )
}

/// Step 5: append the row under `feedback.jsonl.lock`.
pub fn record(index_dir: &Path, row: &FeedbackRow) -> anyhow::Result<PickOutcome> {
    let value = serde_json::to_value(row)?;
    check_feedback_row(&value).map_err(|e| anyhow::anyhow!("refusing to record an invalid feedback row: {e}"))?;
    match engine::io::append_line_locked(&index_dir.join(FEEDBACK_FILE), &value.to_string()) {
        Ok(()) => Ok(PickOutcome {
            ok: true,
            code: 0,
            line: format!("[unity-assets:pick] recorded: {}", row.picked_guid),
            help: None,
            path: None,
            row: None,
        }),
        Err(engine::io::AppendError::Locked { holder, .. }) => Ok(PickOutcome::error("feedback.jsonl locked".into())
            .help(&format!("feedback.jsonl.lock {holder}; pick again then"))),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::rank::Candidate;
    use crate::search::result::ResultGroup;

    fn setup(manifest: Option<&str>, result_version: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(v) = manifest {
            std::fs::write(dir.path().join("manifest.json"), format!("{{\"version\": \"{v}\"}}")).unwrap();
        }
        let candidate = |g: &str, conf: f32| Candidate {
            guid: g.into(),
            path: format!("Assets/{g}"),
            confidence: conf,
            reasoning: "r".into(),
            evidence: None,
        };
        let result = SearchResult::found(
            "좀비 + 메뉴",
            result_version.map(str::to_owned),
            vec![
                ResultGroup {
                    sub_intent: "좀비".into(),
                    category_hint: None,
                    subtype_hint: None,
                    candidates: vec![candidate("a", 0.95), candidate("b", 0.5)],
                },
                ResultGroup {
                    sub_intent: "메뉴".into(),
                    category_hint: None,
                    subtype_hint: None,
                    candidates: vec![candidate("c", 0.6)],
                },
            ],
        );
        std::fs::write(
            dir.path().join(result::RESULT_FILE),
            serde_json::to_string(&result).unwrap(),
        )
        .unwrap();
        dir
    }

    fn now() -> time::OffsetDateTime {
        time::macros::datetime!(2026-05-24 13:45:01 UTC)
    }

    #[test]
    fn a_result_over_the_limit_is_named_not_called_missing() {
        let dir = setup(Some("v1.0"), Some("v1.0"));
        let small = engine::io::Limits {
            file_bytes: 8,
            ..engine::io::Limits::default()
        };
        let line = resolve(dir.path(), &small, "0", now()).line;
        assert!(
            line.contains("limits.file_mb") && !line.contains("no search result"),
            "{line}"
        );
    }

    #[test]
    fn the_five_lines() {
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve(empty.path(), &engine::io::Limits::default(), "0", now()).line,
            "[unity-assets:pick] error: no search result; run /unity-assets:search first"
        );
        let stale = setup(Some("v2.0"), Some("v1.0"));
        assert_eq!(
            resolve(stale.path(), &engine::io::Limits::default(), "0", now()).line,
            "[unity-assets:pick] error: stale search result; reindex required"
        );
        assert!(resolve(stale.path(), &engine::io::Limits::default(), "0", now())
            .help
            .is_some_and(|h| h.contains("unity-assets search")));
        let no_manifest = setup(None, Some("v1.0"));
        assert_eq!(
            resolve(no_manifest.path(), &engine::io::Limits::default(), "0", now()).code,
            1
        );
        let dir = setup(Some("v1.0"), Some("v1.0"));
        for bad in ["3", "-1", "99999999999999999999999"] {
            let out = resolve(dir.path(), &engine::io::Limits::default(), bad, now());
            assert_eq!(
                out.line,
                format!("[unity-assets:pick] error: index {bad} out of range (max 2)")
            );
            assert_eq!(out.code, 1);
            assert!(out
                .help
                .is_some_and(|h| h.contains("pick counts from 0") && h.contains("[0]–[2]")));
        }
        // Text is "not a candidate number", as the CLI says before the run.
        for text in ["x", "1.5", ""] {
            let out = resolve(dir.path(), &engine::io::Limits::default(), text, now());
            assert_eq!(out, not_a_number(text));
            assert!(out.line.contains("is not a candidate number"), "{}", out.line);
        }
        let out = resolve(dir.path(), &engine::io::Limits::default(), "2", now());
        assert_eq!(out.line, "[unity-assets:pick] recorded: c");
        assert_eq!(out.path.as_deref(), Some("Assets/c"));
        let row = out.row.unwrap();
        assert_eq!(row.sub_intent_id, "메뉴");
        assert_eq!(row.candidate_guids, ["c"]);
        let out = resolve(dir.path(), &engine::io::Limits::default(), "0", now());
        let row = out.row.unwrap();
        assert_eq!((row.confidence_after, row.ts.as_str()), (1.0, "2026-05-24T13:45:01Z"));
        assert_eq!(
            record(dir.path(), &row).unwrap().line,
            "[unity-assets:pick] recorded: a"
        );
        std::fs::write(dir.path().join("feedback.jsonl.lock"), "").unwrap();
        assert_eq!(
            record(dir.path(), &row).unwrap().line,
            "[unity-assets:pick] error: feedback.jsonl locked"
        );
    }

    /// A search that found nothing leaves nothing to pick: say that, not "max -1".
    #[test]
    fn an_empty_result_says_there_is_nothing_to_pick() {
        let dir = setup(Some("v1.0"), Some("v1.0"));
        let empty = SearchResult::found("유니콘", Some("v1.0".into()), vec![]);
        std::fs::write(
            dir.path().join(result::RESULT_FILE),
            serde_json::to_string(&empty).unwrap(),
        )
        .unwrap();
        let out = resolve(dir.path(), &engine::io::Limits::default(), "0", now());
        assert_eq!(
            out.line,
            "[unity-assets:pick] error: the last search (\"유니콘\") has no candidate to pick"
        );
        assert!(!out.line.contains("-1") && out.help.is_some(), "{out:?}");
    }

    #[test]
    fn fifty_concurrent_picks_leave_fifty_intact_rows() {
        let dir = setup(Some("v1.0"), Some("v1.0"));
        let row = resolve(dir.path(), &engine::io::Limits::default(), "1", now())
            .row
            .unwrap();
        let recorded = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..50 {
                s.spawn(|| {
                    // A writer that finds the lock busy three times retries, as a user would.
                    while record(dir.path(), &row).unwrap().code != 0 {}
                    recorded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                });
            }
        });
        let text = std::fs::read_to_string(dir.path().join(FEEDBACK_FILE)).unwrap();
        let rows: Vec<_> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 50);
        assert!(rows.iter().all(|r| check_feedback_row(r).is_ok()));
        assert_eq!(recorded.into_inner(), 50);
    }
}
