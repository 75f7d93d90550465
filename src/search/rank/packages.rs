//! Ranking packages for drill-down: the same scores, with free places for
//! packages that may hide a word.

use serde::{Deserialize, Serialize};

use super::super::query::Query;
use super::super::records::PackageRow;
use super::{confidence, explain, score, three_decimals, top_k_sorted, Scored, FLOOR};

/// A package chosen for drill-down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackageChoice {
    /// The package's id, as asset rows name it.
    pub package_id: String,
    /// How sure the ranker is that the package holds what was asked for (0 to 1).
    #[serde(serialize_with = "three_decimals")]
    pub confidence: f32,
    /// Why it was chosen, in words a person reads.
    pub reasoning: String,
}

/// The best `top_k` packages for `query`; free places go to packages
/// whose shown words are fewer than their assets (they may hide a match).
pub fn rank_packages(packages: &[PackageRow], query: &Query, top_k: usize) -> Vec<PackageChoice> {
    let mut scored: Vec<(f32, Scored)> = score(packages, query)
        .into_iter()
        .map(|s| (confidence(s.coverage, 0.0), s))
        .collect();
    top_k_sorted(&mut scored, top_k, |a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.bm25.total_cmp(&a.1.bm25))
            .then_with(|| packages[a.1.index].package_id.cmp(&packages[b.1.index].package_id))
    });
    let chosen: Vec<usize> = scored.iter().map(|(_, s)| s.index).collect();
    let mut choices: Vec<PackageChoice> = scored
        .into_iter()
        .map(|(confidence, s)| PackageChoice {
            package_id: packages[s.index].package_id.clone(),
            confidence,
            reasoning: explain(&packages[s.index], query, &s),
        })
        .collect();
    // A package shows only its most used words, so a rare query word
    // ("door" among a thousand assets) may hide in one that matched
    // nothing: free places go to those, largest first.
    let mut hidden: Vec<&PackageRow> = packages
        .iter()
        .enumerate()
        .filter(|(i, p)| !chosen.contains(i) && p.asset_count > p.asset_vocabulary.len() as u64)
        .map(|(_, p)| p)
        .collect();
    hidden.sort_by(|a, b| {
        b.asset_count
            .cmp(&a.asset_count)
            .then_with(|| a.package_id.cmp(&b.package_id))
    });
    let free = top_k.saturating_sub(choices.len());
    choices.extend(hidden.into_iter().take(free).map(|p| PackageChoice {
        package_id: p.package_id.clone(),
        confidence: FLOOR,
        reasoning: format!(
            "No query word is among the {} words shown for its {} assets, which may hold one.",
            p.asset_vocabulary.len(),
            p.asset_count
        ),
    }));
    choices
}
