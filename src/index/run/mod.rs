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

mod checkpoint;
mod diff;
mod finalize;
mod plan;
mod unchanged;

pub(crate) use checkpoint::check_tags;
pub use checkpoint::{checkpoint, row_problem, Checkpoint, TagCheck};
pub use diff::{diff, Diff};
pub use finalize::{finalize, Finalized, LabelChange, ScanText};
pub use plan::{plan_batches, Batch, Plan};
pub use unchanged::{touch, unchanged, Unchanged};
