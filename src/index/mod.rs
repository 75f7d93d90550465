//! The Unity asset indexer: the native functions behind
//! `pipelines/index.yaml` (and `index/batch.yaml`).
//!
//! The index pipeline's stages, one narrow function each:
//! `index.lock` (wait for another run on the project, then hold the index
//! until this run ends) → `index.scan` (walk, parse metas, classify, package, label) →
//! `index.diff` (signatures against the last run) →
//! `index.plan_batches` (resume or start a run, split into batches) →
//! per batch: the `llm` tag stage (builtin `index.tag`) → `index.check_tags`
//! (rows to ask again) → a retry → `index.checkpoint` (fallback to the
//! builtin, append to the partial) → `index.finalize` (merge, write, close).

mod classify;
mod content;
pub mod data;
mod folder;
pub mod graph;
pub(crate) mod labels;
mod meta;
mod open;
mod packages;
mod packed;
pub mod record;
pub mod row;
pub mod run;
pub mod scan;
pub mod store;
pub mod tagger;
pub(crate) mod tolerant;
mod unity_yaml;
mod walk;
pub(crate) mod watch;

#[cfg(test)]
mod content_tests;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;

use engine::io::Limits;
use engine::Reach;
use engine::{CallContext, Registry};
use serde::Deserialize;

pub use data::IndexData;
pub use meta::{is_guid, is_written_guid};
pub use store::{index_freshness, Freshness, INDEX_DIR};

use record::Depth;
use run::{Batch, Diff};
use scan::{ScanOptions, ScanResult};
use store::TaggedBy;
use tagger::{TagBatch, TagRequest};

/// Gives the index functions the data tables in effect for a call (embedded
/// or overridden by the project), loaded by whoever owns the resources.
pub(crate) type DataSource = Arc<dyn Fn(&CallContext) -> anyhow::Result<Arc<IndexData>> + Send + Sync>;

/// How many lines of an index folder's `assets.jsonl` are no asset row, as
/// the search index built from those bytes counted them (`None`: there is
/// no search index of them), for the no-op fast path. Search owns that
/// file and sits above the index, so whoever registers the index functions
/// hands this in (`search::term_index::TermIndex::lines_not_rows`).
pub(crate) type LinesNotRows = fn(dir: &Path, manifest_version: Option<&str>, limits: &Limits) -> Option<usize>;

#[derive(Deserialize)]
struct UnchangedArgs {
    #[serde(flatten)]
    options: ScanOptions,
    #[serde(default)]
    force: bool,
}

#[derive(Deserialize)]
struct TouchArgs {
    started_at: String,
    /// `unchanged.tree` (an ejected pipeline without it keeps the last one).
    #[serde(default)]
    tree: Option<scan::Tree>,
}

#[derive(Deserialize)]
struct DiffArgs {
    scan: ScanResult,
    #[serde(default)]
    force: bool,
}

#[derive(Deserialize)]
struct PlanArgs {
    scan: ScanResult,
    diff: Diff,
    batch_size: usize,
}

#[derive(Deserialize)]
struct CheckArgs {
    batch: Batch,
    /// The tag stage's output; null when it was invalid even after repair.
    tags: Option<TagBatch>,
    #[serde(default)]
    index_depth: Depth,
}

#[derive(Deserialize)]
struct CheckpointArgs {
    batch: Batch,
    tags: Option<TagBatch>,
    /// The retry stage's output; null when nothing was retried.
    #[serde(default)]
    retry: Option<TagBatch>,
    /// `builtin` when the provider is the offline builtin, else `llm`.
    answered_by: TaggedBy,
    #[serde(default)]
    index_depth: Depth,
}

#[derive(Deserialize)]
struct FinalizeArgs {
    scan: run::ScanText,
    diff: Diff,
}

/// Register `index.*` functions and the `index.tag` builtin.
pub(crate) fn register(registry: &mut Registry, data: DataSource, lines_not_rows: LinesNotRows) {
    registry
        .function(
            "index.lock",
            Reach::NONE,
            "wait for another index run on this project to end, then hold the index until this run ends",
            |_: serde_json::Value, ctx| {
                let mut waited = false;
                // A log line (stderr, as `-q` wants it), not one of the run's
                // lines: eval keeps those to itself, and the wait must show.
                let lock = store::lock_index(&ctx.workdir, || {
                    waited = true;
                    tracing::warn!("{}", store::WAITING_LINE);
                })?;
                ctx.holdings.keep(lock);
                Ok(serde_json::json!({ "waited": waited }))
            },
        )
        .function(
            "index.scan",
            Reach::NONE,
            "walk Assets/ and Packages/, parse .meta files, classify and group assets",
            {
                let data = data.clone();
                move |options: ScanOptions, ctx: &CallContext| {
                    let data: Arc<IndexData> = data(ctx)?;
                    Ok(scan::scan(&ctx.workdir, &ctx.limits, &data, &options)?.into_value()?)
                }
            },
        )
        .function(
            "index.unchanged",
            Reach::NONE,
            "stat-only walk: has nothing a scan reads changed since the last finished run?",
            {
                let data = data.clone();
                move |a: UnchangedArgs, ctx: &CallContext| {
                    let data: Arc<IndexData> = data(ctx)?;
                    Ok(run::unchanged(
                        &ctx.workdir,
                        &ctx.limits,
                        &data,
                        &a.options,
                        a.force,
                        lines_not_rows,
                    )?)
                }
            },
        )
        .function(
            "index.touch",
            Reach::NONE,
            "close a run that found nothing changed: move last_run, keep every file's content",
            |a: TouchArgs, ctx| {
                Ok(run::touch(&ctx.workdir, &ctx.limits, &a.started_at, a.tree)
                    .inspect_err(|e| store::record_error(&ctx.workdir, &ctx.limits, e))?)
            },
        )
        .function(
            "index.diff",
            Reach::NONE,
            "compare scanned signatures with the last finished run",
            |a: DiffArgs, ctx| Ok(run::diff(&ctx.workdir, &ctx.limits, &a.scan, a.force)?),
        )
        .function(
            "index.plan_batches",
            Reach::NONE,
            "start or resume a run and split changed assets into batches",
            |a: PlanArgs, ctx| {
                Ok(run::plan_batches(
                    &ctx.workdir,
                    &ctx.limits,
                    &a.scan,
                    &a.diff,
                    a.batch_size,
                )?)
            },
        )
        .function(
            "index.check_tags",
            Reach::NONE,
            "list the assets of a batch whose tag rows must be asked again",
            |a: CheckArgs, _| Ok(run::check_tags(&a.batch, a.tags.as_ref(), a.index_depth)),
        )
        .function(
            "index.checkpoint",
            Reach::NONE,
            "keep good rows, tag the rest with the builtin, append the batch to the partial",
            |a: CheckpointArgs, ctx| {
                let answers: Vec<&TagBatch> = a.tags.iter().chain(a.retry.iter()).collect();
                Ok(run::checkpoint(
                    &ctx.workdir,
                    &ctx.limits,
                    &a.batch,
                    &answers,
                    a.answered_by,
                    a.index_depth,
                )
                .inspect_err(|e| store::record_error(&ctx.workdir, &ctx.limits, e))?)
            },
        )
        .function(
            "index.finalize",
            Reach::NONE,
            "merge tags and write assets.jsonl, packages.jsonl, manifest.json, state.json",
            {
                |a: FinalizeArgs, ctx| {
                    let finalized = run::finalize(&ctx.workdir, &ctx.limits, &a.scan, &a.diff)
                        .inspect_err(|e| store::record_error(&ctx.workdir, &ctx.limits, e))?;
                    for change in &finalized.label_changes {
                        ctx.output.line(&format!(
                            "[unity-assets:index] labels changed: {}: [{}] -> [{}]",
                            change.path,
                            change.before.join(", "),
                            change.after.join(", ")
                        ));
                    }
                    Ok(finalized)
                }
            },
        )
        .builtin(
            "index.tag",
            "tags and a summary from path, name, type, subtype, signals, labels and package",
            |request: TagRequest, _| Ok(tagger::tag_batch(&request)),
        );
}
