//! The two search stages filters add (`pipelines/search.yaml`):
//! `search.filters` resolves them against the index and counts the matches
//! once, `search.list` answers a query of filters only.

use engine::Registry;
use serde::{Deserialize, Serialize};

use super::Filters;
use crate::search::index_files;
use crate::search::rank::Candidate;
use crate::search::result::ResultGroup;
use engine::Reach;

#[derive(Deserialize)]
struct ResolveArgs {
    #[serde(default)]
    filters: Filters,
    /// The query's words (`query.validate`'s `query`).
    #[serde(default)]
    words: String,
}

#[derive(Serialize)]
struct ResolveOut {
    /// The filters every later stage narrows by, `ref:` paths resolved.
    filters: Filters,
    /// Whether the words rank: there are words, and some asset passes the filters.
    words: bool,
    /// With filters: how many assets pass them all.
    matched: Option<usize>,
}

#[derive(Deserialize)]
struct ListArgs {
    filters: Filters,
    /// Matches listed at most (`search.list_limit`).
    limit: usize,
    /// The confidence every listed match gets: a filter match is not a
    /// ranking, so it stands at the confirm threshold and `build` asks first.
    confidence: f32,
}

#[derive(Serialize)]
struct ListOut {
    groups: Vec<ResultGroup>,
}

pub(in crate::search) fn register(registry: &mut Registry) {
    registry
        .function(
            "search.filters",
            Reach::NONE,
            "resolve the query's filters against the index (ref: paths to guids) and count the assets they keep",
            |mut a: ResolveArgs, ctx| {
                let has_words = !a.words.trim().is_empty();
                if a.filters.is_empty() {
                    return Ok(ResolveOut {
                        filters: a.filters,
                        words: has_words,
                        matched: None,
                    });
                }
                let unresolved = index_files(ctx).resolve(&mut a.filters)?;
                let matched = index_files(ctx).narrowed(a.filters.clone()).count_matching()?;
                if !unresolved.is_empty() {
                    ctx.output.line(&format!(
                        "[unity-assets:search] warning: ref: {} names no asset of the index (write its path from Assets/ or its guid); that filter matches nothing",
                        unresolved.join(", ")
                    ));
                }
                Ok(ResolveOut {
                    filters: a.filters,
                    words: has_words && matched > 0,
                    matched: Some(matched),
                })
            },
        )
        .function(
            "search.list",
            Reach::NONE,
            "the assets matching a query of filters only, by path, capped",
            |a: ListArgs, ctx| {
                let rows = index_files(ctx).narrowed(a.filters.clone()).first_by_path(a.limit)?;
                let candidates: Vec<Candidate> = rows
                    .into_iter()
                    .map(|row| Candidate {
                        reasoning: format!(
                            "{} matching {}",
                            row.type_subtype.as_deref().unwrap_or(&row.asset_type),
                            a.filters
                        ),
                        guid: row.guid,
                        path: row.path,
                        confidence: a.confidence,
                        evidence: None,
                    })
                    .collect();
                Ok(ListOut {
                    groups: vec![ResultGroup {
                        sub_intent: a.filters.to_string(),
                        category_hint: None,
                        subtype_hint: None,
                        candidates,
                    }],
                })
            },
        );
}
