//! Search answered from the search index ([`super::term_index`]): the
//! stages that rank every asset with the builtin (`search.ranked`), write
//! the index after `index` (`search.write-index`), and the same in one call
//! for evaluation and tests ([`search_indexed`]).

use std::path::Path;

use engine::Registry;
use serde::{Deserialize, Serialize};

use super::filters::Filters;
use super::natives::Retrieved;
use super::rank::Thresholds;
use super::route;
use super::vocab::Vocabulary;
use super::{index_dir, index_files, load, rank_requests, term_index, Group, RankingArgs};
use engine::Reach;

#[derive(Deserialize)]
struct RankedArgs {
    #[serde(flatten)]
    ranking: RankingArgs,
    /// The query's filters: only matching rows are ranked.
    #[serde(default)]
    filters: Filters,
}

/// Per sub-intent, its candidates among every asset (`search.ranked`).
#[derive(Serialize)]
struct RankedOut {
    /// The index's asset count (what a map-reduce would have read).
    assets: usize,
    retrieved: Vec<Retrieved>,
}

/// Register `search.ranked` and `search.write-index`.
pub fn register(registry: &mut Registry) {
    registry
        .function(
            "search.ranked",
            Reach::NONE,
            "every asset ranked for each sub-intent from the search index: the builtin's exhaustive ranking, reading only the rows that hold a query word",
            |a: RankedArgs, ctx| {
                let requests = a.ranking.requests(a.ranking.top_k, ctx)?;
                let version = index_files(ctx).manifest_version();
                let (index, ranked) = term_index::rank(
                    &index_dir(ctx),
                    version.as_deref(),
                    &ctx.limits,
                    &requests,
                    &a.filters,
                    &mut |line| ctx.output.line(line),
                )?;
                Ok(RankedOut {
                    assets: index.lines(),
                    retrieved: ranked.into_iter().map(|candidates| Retrieved { candidates }).collect(),
                })
            },
        )
        .function(
            "search.write-index",
            Reach::NONE,
            "write the search index beside assets.jsonl when it is missing or stale",
            |_: serde_json::Value, ctx| {
                let version = index_files(ctx).manifest_version();
                let line = term_index::TermIndex::refresh(&index_dir(ctx), version.as_deref(), &ctx.limits)?;
                Ok(serde_json::json!({ "line": line }))
            },
        );
}

/// [`super::search_rows`] answered from the search index of the index folder
/// `dir` (rebuilt first when missing or stale, `announce` told): the same
/// groups, reading only the rows that hold a query word.
pub fn search_indexed(
    dir: &Path,
    limits: &engine::io::Limits,
    query: &str,
    vocab: &Vocabulary,
    top_k: usize,
    announce: &mut dyn FnMut(&str),
) -> anyhow::Result<Vec<Group>> {
    let sub_intents = route::route(query, vocab).sub_intents;
    let requests = rank_requests(&sub_intents, top_k, &[], vocab, Thresholds::default());
    let files = load::IndexFiles::new(dir, *limits);
    let (_, ranked) = term_index::rank(
        dir,
        files.manifest_version().as_deref(),
        limits,
        &requests,
        &Filters::default(),
        announce,
    )?;
    Ok(sub_intents
        .into_iter()
        .zip(ranked)
        .map(|(sub_intent, candidates)| Group { sub_intent, candidates })
        .collect())
}
