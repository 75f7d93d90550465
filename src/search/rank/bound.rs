//! The most confidence a record can reach, known before it is read: from
//! which of the query's concepts it holds (the search index's postings
//! tell) and its past-pick boost. The search index reads only the records
//! whose bound can still reach a query's top K
//! ([`super::super::term_index`]), so every step here must stay at or above
//! the matching step of [`super::calibrate`].

use super::super::intent::TypeIntents;
use super::super::query::Query;
use super::bm25f::{coverage_weights, scored_concepts};
use super::{confidence, round3, RankOptions, SubtypeTier, MAX_CONFIDENCE};

/// Upper bounds of one query's calibrated confidences.
pub struct ConfidenceBound {
    /// Per scored concept, its weight in coverage; and their sum.
    weights: Vec<f32>,
    total: f32,
    /// The subject's concept bit, when the subject is scored.
    subject: Option<u32>,
    /// The floor a record with its subject may be lifted to.
    floor: f32,
    /// The most the subtype tier adds.
    tier: f32,
    /// The most the type intent's preference adds.
    preference: f32,
}

impl ConfidenceBound {
    /// The bounds of `query` in a corpus of `docs` records, `df[c]` of
    /// which hold scored concept `c` (as [`super::Corpus`] counts them).
    pub fn new(query: &Query, options: &RankOptions, df: &[f32], docs: usize) -> Self {
        let concepts: Vec<_> = scored_concepts(query).iter().collect();
        let (weights, total) = coverage_weights(&concepts, df, docs.max(1) as f32);
        let tier = match options.subtype_hint {
            Some(_) => SubtypeTier::Exact.bonus(),
            None => SubtypeTier::NoHint.bonus(),
        };
        Self {
            weights,
            total,
            subject: query.subject.filter(|&i| i < concepts.len()).map(|i| 1 << i),
            floor: options.thresholds.subject_found_floor(),
            tier,
            preference: TypeIntents::embedded().most_preferred(query.type_intent.as_deref()),
        }
    }

    /// The most confidence a record holding the concepts of `held` (bit
    /// `c` for scored concept `c`) with past-pick boost `past` can get.
    pub fn of(&self, held: u32, past: f32) -> f32 {
        // Each concept's match is at most a whole one (its strength ≤ 1):
        // the same sum, in the same order, as coverage with every held
        // concept fully matched.
        let mut covered = 0.0;
        for (c, w) in self.weights.iter().enumerate() {
            if held & (1 << c) != 0 {
                covered += w;
            }
        }
        let raw = confidence(covered / self.total, self.tier + past);
        let lifted = match self.subject {
            Some(bit) if held & bit != 0 => raw.max(self.floor),
            _ => raw,
        };
        if lifted >= self.floor {
            round3((lifted + self.preference).min(MAX_CONFIDENCE))
        } else {
            lifted
        }
    }
}
