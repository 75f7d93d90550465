//! Natural-language asset search: the native pieces the search and pick
//! pipelines call (`pipelines/search.yaml`, `pipelines/pick.yaml`).
//!
//! Each piece is narrow and testable on its own: [`text`] tokenises,
//! [`vocab`] loads `data/aliases.yml`, [`query`] turns a query into concepts,
//! [`route`] splits it into sub-intents, [`rank`] scores packages and assets.
//! The pipeline YAML owns the flow, thresholds and K values.

pub mod hints;
pub mod query;
pub mod rank;
pub mod records;
pub mod route;
pub mod text;
pub mod validate;
pub mod vocab;

use rank::{Candidate, RankOptions};
use records::AssetRow;
use route::SubIntent;
use vocab::Vocabulary;

/// One sub-intent and its ranked candidates.
#[derive(Debug, Clone)]
pub struct Group {
    pub sub_intent: SubIntent,
    pub candidates: Vec<Candidate>,
}

/// The builtin search in one call, without the pipeline: route the query,
/// then rank every row for each sub-intent. For evaluation and benchmarks;
/// the CLI runs `pipelines/search.yaml`, whose stages call the same pieces.
pub fn search_rows(rows: &[AssetRow], query: &str, vocab: &Vocabulary, top_k: usize) -> Vec<Group> {
    route::route(query, vocab)
        .sub_intents
        .into_iter()
        .map(|sub_intent| {
            let analysed = query::Query::analyze(&sub_intent.intent, vocab);
            let options = RankOptions { subtype_hint: sub_intent.subtype_hint.as_deref(), top_k, ..Default::default() };
            let candidates = rank::rank_assets(rows, &analysed, &options);
            Group { sub_intent, candidates }
        })
        .collect()
}
