//! The pipeline's confidence thresholds, which the ranker's caps follow.

use serde::{Deserialize, Serialize};

use super::round3;

/// How far under confirm a record that cannot be placed without asking is
/// capped: clearly under, not a rounding away from it.
const UNDER_CONFIRM_MARGIN: f32 = 0.05;

/// The pipeline's `confidence_threshold` (`{auto, confirm}` as resolved
/// from the pipeline, the config and `--set`): what the caps derive from.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct Thresholds {
    pub(crate) auto: f32,
    pub(crate) confirm: f32,
}

impl Default for Thresholds {
    /// `pipelines/search.yaml`'s defaults.
    fn default() -> Self {
        Self {
            auto: 0.70,
            confirm: 0.40,
        }
    }
}

impl Thresholds {
    /// The most a record without the query's subject (or of a type the
    /// query rules out) may get: clearly under confirm (0.35 at 0.40).
    pub(crate) fn subject_missing_cap(self) -> f32 {
        round3((self.confirm - UNDER_CONFIRM_MARGIN).max(0.0))
    }

    /// The least a content record with the subject gets when the query has
    /// other words too: confirm, never auto (a missing modifier asks first).
    pub(crate) fn subject_found_floor(self) -> f32 {
        self.confirm.min(self.auto)
    }
}
