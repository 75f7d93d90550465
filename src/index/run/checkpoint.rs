//! `index.check_tags` and `index.checkpoint`: keep the usable rows of each
//! tagged batch and append them to the partial file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};

use super::plan::Batch;
use crate::index::record::{Depth, TagRow};
use crate::index::store::{self, PartialRow, TaggedBy};
use crate::index::tagger::{self, is_kebab_tag, TagBatch, TagSubject};

/// Longest accepted `llm_summary`: one sentence, not a paragraph.
const MAX_SUMMARY_CHARS: usize = 400;
const MAX_TAGS: usize = 20;
/// `state.json` is rewritten at most this often while batches finish: the
/// partial file, appended per batch, is what a resume trusts.
const STATE_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

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

/// The answers' rows by guid, in answer order: a batch of thousands of
/// assets finds each asset's rows without a pass over every row.
struct RowsByGuid<'a>(HashMap<&'a str, Vec<&'a TagRow>>);

impl<'a> RowsByGuid<'a> {
    fn new(answers: &[&'a TagBatch]) -> Self {
        let mut rows: HashMap<&str, Vec<&TagRow>> = HashMap::new();
        for row in answers.iter().flat_map(|a| a.rows.iter()) {
            rows.entry(row.guid.as_str()).or_default().push(row);
        }
        Self(rows)
    }

    /// Every row for `guid`, first answer first.
    fn of(&self, guid: &str) -> &[&'a TagRow] {
        self.0.get(guid).map_or(&[], Vec::as_slice)
    }

    /// The first usable row for `guid`.
    fn usable(&self, guid: &str, depth: Depth) -> Option<&'a TagRow> {
        self.of(guid).iter().copied().find(|r| row_problem(r, depth).is_none())
    }
}

/// The output of `index.check_tags`: the assets whose rows must be asked again.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TagCheck {
    #[serde(with = "crate::index::packed::lines")]
    pub(crate) retry: Vec<TagSubject>,
    /// `guid: problem` for each retried asset.
    pub problems: Vec<String>,
}

pub(crate) fn check_tags(batch: &Batch, tags: Option<&TagBatch>, depth: Depth) -> TagCheck {
    let mut check = TagCheck::default();
    let answers: Vec<&TagBatch> = tags.into_iter().collect();
    let rows = RowsByGuid::new(&answers);
    for asset in &batch.assets {
        if rows.usable(&asset.guid, depth).is_some() {
            continue;
        }
        let first_row = rows.of(&asset.guid).first();
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
    pub(crate) batch: String,
    pub(crate) llm: usize,
    pub(crate) builtin: usize,
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
    let rows = RowsByGuid::new(answers);
    for (asset, signature) in batch.assets.iter().zip(&batch.signatures) {
        let (tags, tagged_by) = match rows.usable(&asset.guid, depth) {
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

/// A run starts or closes: the batches counted for `project` are settled.
pub(super) fn forget_finished_batches(project: &Path) {
    ledger().lock().unwrap_or_else(|e| e.into_inner()).remove(project);
}
