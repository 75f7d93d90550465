//! The most confidence a record can reach, known before it is read: from
//! how each of the query's concepts matches it (the search index's
//! postings say in which fields, how often, with which terms) and its
//! past-pick boost. What only the record itself says — its type, whether
//! it is content, its subtype — is taken at its most favourable. The
//! search index reads only the records whose bound can still reach a
//! query's top K ([`super::super::term_index`]), so every step here must
//! stay at or above the matching step of [`super::calibrate`].

use super::super::intent::TypeIntents;
use super::super::query::Query;
use super::bm25f::scored_concepts;
use super::{confidence, part_fields, round3, RankOptions, SubtypeTier, MAX_CONFIDENCE, STRONG_SUBJECT};

/// Slack for float sums taken in another order than scoring takes them
/// (a record's terms in query order, not in the order it holds them).
pub const SUM_SLACK: f32 = 1e-5;

/// Upper bounds of one query's calibrated confidences.
pub struct ConfidenceBound {
    /// The subject's concept, when the subject is scored.
    subject: Option<usize>,
    /// Whether the query scores more than one concept (the subject's lift needs it).
    several: bool,
    /// The floor a record with its subject may be lifted to, and the cap
    /// of one without it.
    floor: f32,
    cap: f32,
    /// The most the subtype tier adds.
    tier: f32,
    /// The most the type intent's preference adds.
    preference: f32,
}

impl ConfidenceBound {
    /// The bound of the confidences `query` can give under `options`.
    pub fn new(query: &Query, options: &RankOptions) -> Self {
        let concepts = scored_concepts(query).len();
        let tier = match options.subtype_hint {
            Some(_) => SubtypeTier::Exact.bonus(),
            None => SubtypeTier::NoHint.bonus(),
        };
        Self {
            subject: query.subject.filter(|&i| i < concepts),
            several: concepts > 1,
            floor: options.thresholds.subject_found_floor(),
            cap: options.thresholds.subject_missing_cap(),
            tier,
            preference: TypeIntents::embedded().most_preferred(query.type_intent.as_deref()),
        }
    }

    /// The most confidence a record can get whose concepts match with
    /// `coverage`, per concept `strength` and `found_in` fields (as
    /// [`super::Scored`] holds them, up to [`SUM_SLACK`]), with past-pick
    /// boost `past`.
    pub fn of(&self, coverage: f32, strength: &[f32], found_in: &[u16], past: f32) -> f32 {
        let raw = confidence(coverage + SUM_SLACK, self.tier + past);
        let lifted = match self.subject {
            None => raw,
            Some(i) if found_in[i] & !part_fields() != 0 => {
                match strength[i] + SUM_SLACK >= STRONG_SUBJECT && self.several {
                    true => raw.max(self.floor),
                    false => raw,
                }
            }
            Some(_) => raw.min(self.cap),
        };
        if lifted >= self.floor {
            round3((lifted + self.preference).min(MAX_CONFIDENCE))
        } else {
            lifted
        }
    }
}
