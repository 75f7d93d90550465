//! The native functions the search and pick pipelines call by name
//! (`pipelines/search.yaml`, `pipelines/pick.yaml`): each one's arguments
//! and output as the stages pass them, and the glue between the pieces of
//! [`super`]. The builtin provider's stages (`search.route`,
//! `search.select-packages`, `search.rank-assets`) are registered here too.

use std::collections::HashSet;
use std::path::PathBuf;

use engine::{CallContext, Registry};
use serde::{Deserialize, Serialize};

use super::filters::{self, Filters};
use super::hints::{self, PastPickGroup};
use super::query::Query;
use super::rank::{self, Candidate, PackageChoice, Thresholds};
use super::records::{self, AssetRow, PackageRow};
use super::result::{self, ResultGroup, SearchResult};
use super::route::{self, SubIntent};
use super::{index_dir, index_files, indexed, pick, rerank, validate, vocabulary, RankingArgs};
use engine::Reach;

#[derive(Deserialize)]
struct QueryArgs {
    query: String,
    #[serde(default)]
    aliases: Option<PathBuf>,
}

#[derive(Serialize)]
struct FreshnessOut {
    fresh: bool,
    /// No index at all: there is nothing to search.
    missing: bool,
    reason: Option<String>,
    /// The structured warning naming both ways out: reindex yourself, or
    /// search with `--reindex` (`docs/contracts.md#stale-index`).
    warning: Option<String>,
}

#[derive(Deserialize)]
struct HintsArgs {
    query: String,
    #[serde(default)]
    aliases: Option<PathBuf>,
    #[serde(default = "default_feedback_rows")]
    feedback_rows: usize,
    #[serde(default = "default_picks_per_intent")]
    picks_per_intent: usize,
}

fn default_feedback_rows() -> usize {
    20
}

fn default_picks_per_intent() -> usize {
    3
}

#[derive(Serialize)]
struct HintsOut {
    aliases_block: Option<String>,
    past_picks_block: Option<String>,
    past_picks: Vec<PastPickGroup>,
    /// Set when feedback rows were skipped: the line of the last bad one, and why.
    skipped_line: Option<usize>,
    skipped_why: Option<String>,
}

#[derive(Serialize)]
struct IndexOut {
    manifest_version: Option<String>,
    total_assets: usize,
}

#[derive(Deserialize)]
struct PackagesArgs {
    /// Give each package this many words of its assets' vocabulary (0: none),
    /// for choosing packages by what they hold.
    #[serde(default)]
    vocabulary_words: usize,
    /// The query's filters: a package holding no matching asset drops out.
    #[serde(default)]
    filters: Filters,
}

#[derive(Serialize)]
struct PackagesOut {
    packages: Vec<PackageRow>,
}

#[derive(Deserialize)]
struct RowsArgs {
    /// Only these packages' rows; all rows when absent.
    #[serde(default)]
    package_ids: Option<Vec<String>>,
    /// The query's filters: only matching rows.
    #[serde(default)]
    filters: Filters,
}

#[derive(Serialize)]
struct RowsOut {
    count: usize,
    /// Each row as its `assets.jsonl` line.
    rows: Vec<String>,
}

#[derive(Deserialize)]
struct SelectPackagesArgs {
    intents: Vec<SubIntent>,
    packages: Vec<PackageRow>,
    top_k: usize,
    #[serde(default)]
    aliases: Option<PathBuf>,
}

/// Per sub-intent, in order: its packages (package-selection.schema.json).
#[derive(Serialize, Deserialize, Default)]
struct PackageSelection {
    #[serde(default)]
    groups: Vec<ChosenPackages>,
}

#[derive(Serialize, Deserialize, Default)]
struct ChosenPackages {
    #[serde(default)]
    packages: Vec<PackageChoice>,
}

#[derive(Deserialize)]
struct ChosenArgs {
    sub_intents: Vec<SubIntent>,
    selection: PackageSelection,
}

/// A sub-intent with the ids of the packages chosen for it.
#[derive(Serialize)]
struct ChosenItem {
    intent: SubIntent,
    package_ids: Vec<String>,
}

#[derive(Deserialize)]
struct RankArgs {
    #[serde(flatten)]
    ranking: RankingArgs,
    /// Rows as `assets.jsonl` lines (what `search.rows` gives) or objects.
    rows: Vec<serde_json::Value>,
}

/// Per sub-intent, in the order asked: its candidates among the rows.
#[derive(Serialize, Deserialize, Default)]
struct Ranked {
    #[serde(default)]
    groups: Vec<Retrieved>,
    /// Set by the stage's `on_invalid`: the model failed on this chunk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    failed: bool,
}

#[derive(Deserialize)]
struct MergeArgs {
    /// `map_reduce` items: one [`Ranked`] per chunk (null for a chunk that failed).
    chunks: Vec<Option<Ranked>>,
    intents: usize,
    top_k: usize,
}

#[derive(Serialize)]
struct MergeOut {
    retrieved: Vec<Retrieved>,
    /// Chunks whose call failed: their rows were not ranked.
    failed: usize,
}

#[derive(Deserialize)]
struct GroupsArgs {
    sub_intents: Vec<SubIntent>,
    /// Per sub-intent, in the same order: `{candidates}` (or null when skipped).
    retrieved: Vec<Option<Retrieved>>,
    /// The query's filters: a candidate failing them (a model's invention) is dropped.
    #[serde(default)]
    filters: Filters,
}

#[derive(Serialize, Deserialize, Default)]
pub(super) struct Retrieved {
    #[serde(default)]
    pub(super) candidates: Vec<Candidate>,
}

#[derive(Serialize)]
struct GroupsOut {
    groups: Vec<ResultGroup>,
    best_confidence: f32,
}

#[derive(Deserialize)]
struct ResultArgs {
    query: String,
    manifest_version: Option<String>,
    /// The groups of the first retrieval that succeeded; none means no_match.
    #[serde(default)]
    groups: Option<Vec<ResultGroup>>,
    /// Set for a rejected query (status no_query).
    #[serde(default)]
    no_query_reason: Option<String>,
    #[serde(default = "default_shown")]
    shown_per_group: usize,
    /// With no_match: the groups of the last retrieval, all under confirm.
    #[serde(default)]
    closest: Option<Vec<ResultGroup>>,
    /// The confirm threshold the search ran with.
    #[serde(default = "default_confirm")]
    confirm: f32,
    /// Whether the index was fresh (or rebuilt first).
    #[serde(default = "default_true")]
    index_fresh: bool,
    /// Why search by meaning did not run (`None`: it ran, an embedder with vectors).
    #[serde(default)]
    meaning_off: Option<String>,
    /// End a found answer with the pick-or-build step (not within build).
    #[serde(default = "default_true")]
    pick_or_build: bool,
    /// The query's filters (`search.filters`), recorded in the document.
    #[serde(default)]
    filters: Filters,
    /// With filters: how many assets pass them.
    #[serde(default)]
    matched: Option<usize>,
    /// The groups are `search.list`'s listing (a query of filters only).
    #[serde(default)]
    listing: bool,
}

fn default_confirm() -> f32 {
    Thresholds::default().confirm
}

fn default_true() -> bool {
    true
}

fn default_shown() -> usize {
    3
}

#[derive(Serialize)]
struct ResultOut {
    document: SearchResult,
    summary: String,
}

#[derive(Deserialize)]
struct PickArgs {
    index: serde_json::Value,
}

#[derive(Deserialize)]
struct RecordArgs {
    row: pick::FeedbackRow,
}

/// Register the search and pick functions and the search builtins.
pub fn register(registry: &mut Registry) {
    rerank::register(registry);
    filters::register(registry);
    indexed::register(registry);
    registry
        .function(
            "query.validate",
            Reach::NONE,
            "reject empty, unbalanced, emoji-only or meaningless queries",
            |a: QueryArgs, ctx| Ok(validate::validate(&a.query, &*vocabulary(a.aliases.as_deref(), ctx)?)),
        )
        .function(
            "search.freshness",
            Reach::NONE,
            "is the index present and fresh (assets.jsonl mtime = state.json last_run)?",
            |_: serde_json::Value, ctx| {
                let freshness = crate::index::index_freshness(&ctx.workdir, &ctx.limits);
                let reason = match &freshness {
                    crate::index::Freshness::Fresh { .. } => None,
                    crate::index::Freshness::Missing { reason } | crate::index::Freshness::Stale { reason } => {
                        Some(reason.clone())
                    }
                };
                // Outside a Unity project, reindexing cannot help: say where to run instead.
                let warning = reason
                    .as_ref()
                    .map(|r| match crate::index::scan::require_unity_project(&ctx.workdir) {
                        Ok(()) => stale_warning(r),
                        Err(e) => format!("[unity-assets:search] error: {e:#}"),
                    });
                Ok(FreshnessOut {
                    fresh: freshness.is_fresh(),
                    missing: matches!(freshness, crate::index::Freshness::Missing { .. }),
                    reason,
                    warning,
                })
            },
        )
        .function(
            "search.hints",
            Reach::NONE,
            "the aliases and past-picks hint blocks of the routing prompt",
            |a: HintsArgs, ctx| {
                let vocab = vocabulary(a.aliases.as_deref(), ctx)?;
                let picks = hints::past_picks(
                    &index_dir(ctx).join(pick::FEEDBACK_FILE),
                    a.feedback_rows,
                    a.picks_per_intent,
                    &ctx.limits,
                )?;
                Ok(HintsOut {
                    aliases_block: hints::aliases_block(&Query::analyze(&a.query, &vocab)),
                    past_picks_block: picks.block,
                    past_picks: picks.groups,
                    skipped_line: picks.skipped_line,
                    skipped_why: picks.skipped_why,
                })
            },
        )
        .function(
            "search.index",
            Reach::NONE,
            "the manifest version and asset count of the index",
            |_: serde_json::Value, ctx| {
                let index = index_files(ctx);
                Ok(IndexOut {
                    manifest_version: index.manifest_version(),
                    total_assets: index.count_assets()?,
                })
            },
        )
        .function(
            "search.packages",
            Reach::NONE,
            "the index's packages, with the words their assets use most",
            |a: PackagesArgs, ctx| {
                let packages = match (a.vocabulary_words, a.filters.is_empty()) {
                    (0, true) => index_files(ctx).packages()?,
                    (words, _) => index_files(ctx).narrowed(a.filters).packages_with_vocabulary(words)?,
                };
                Ok(PackagesOut { packages })
            },
        )
        .function(
            "search.rows",
            Reach::NONE,
            "asset rows of the chosen packages (all rows without a choice)",
            |a: RowsArgs, ctx| {
                let wanted: Option<HashSet<String>> = a.package_ids.map(|ids| ids.into_iter().collect());
                let rows = index_files(ctx).narrowed(a.filters).asset_lines(wanted.as_ref())?;
                Ok(RowsOut {
                    count: rows.len(),
                    rows,
                })
            },
        )
        .function(
            "search.chosen-packages",
            Reach::NONE,
            "pair each sub-intent with the package ids chosen for it (none when its answer is missing)",
            |a: ChosenArgs, _| {
                let mut groups = a.selection.groups.into_iter();
                let items: Vec<ChosenItem> = a
                    .sub_intents
                    .into_iter()
                    .map(|intent| ChosenItem {
                        intent,
                        package_ids: groups
                            .next()
                            .map(|g| g.packages.into_iter().map(|p| p.package_id).collect())
                            .unwrap_or_default(),
                    })
                    .collect();
                Ok(serde_json::json!({ "items": items }))
            },
        )
        .function(
            "search.merge-chunks",
            Reach::NONE,
            "per sub-intent: the candidates of every chunk, by confidence, top-K",
            |a: MergeArgs, _| {
                let failed = a.chunks.iter().filter(|c| c.as_ref().is_none_or(|c| c.failed)).count();
                Ok(MergeOut {
                    retrieved: merge_chunks(a.chunks, a.intents, a.top_k),
                    failed,
                })
            },
        )
        .function(
            "search.groups",
            Reach::NONE,
            "pair sub-intents with their indexed candidates; the best confidence",
            |a: GroupsArgs, ctx| {
                let mut groups: Vec<ResultGroup> = a
                    .sub_intents
                    .into_iter()
                    .zip(a.retrieved.into_iter().chain(std::iter::repeat_with(|| None)))
                    .map(|(s, r)| ResultGroup {
                        sub_intent: s.intent,
                        category_hint: s.category_hint,
                        subtype_hint: s.subtype_hint,
                        candidates: r.map(|r| r.candidates).unwrap_or_default(),
                    })
                    .collect();
                keep_indexed(&mut groups, &a.filters, ctx)?;
                Ok(GroupsOut {
                    best_confidence: SearchResult::best_confidence(&groups),
                    groups,
                })
            },
        )
        .function(
            "search.result",
            Reach::NONE,
            "the search-result.json document and the answer for a person",
            |a: ResultArgs, _| {
                let document = match (a.no_query_reason, a.groups) {
                    (Some(reason), _) => SearchResult::no_query(&a.query, a.manifest_version, &reason),
                    (None, Some(groups)) => SearchResult::found(&a.query, a.manifest_version, groups),
                    (None, None) => SearchResult::no_match(&a.query, a.manifest_version, a.closest.unwrap_or_default()),
                }
                .narrowed(a.filters, a.matched, a.listing);
                let situation = result::Situation {
                    confirm: a.confirm,
                    index_fresh: a.index_fresh,
                    meaning_off: a.meaning_off,
                    pick_or_build: a.pick_or_build,
                };
                Ok(ResultOut {
                    summary: document.summary(a.shown_per_group, &situation),
                    document,
                })
            },
        )
        .function(
            "pick.resolve",
            Reach::NONE,
            "find candidate N of the last search and build its feedback row",
            |a: PickArgs, ctx| {
                let index = match &a.index {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let out = pick::resolve(&index_dir(ctx), &ctx.limits, &index, time::OffsetDateTime::now_utc());
                Ok(pick::require_indexed(&index_files(ctx), out)?)
            },
        )
        .function(
            "pick.record",
            Reach::NONE,
            "append the feedback row under feedback.jsonl.lock",
            |a: RecordArgs, ctx| Ok(pick::record(&index_dir(ctx), &a.row)?),
        )
        .builtin(
            "search.route",
            "split a query into sub-intents with category and subtype hints",
            |a: QueryArgs, ctx| Ok(route::route(&a.query, &*vocabulary(a.aliases.as_deref(), ctx)?)),
        )
        .builtin(
            "search.select-packages",
            "top-K packages for each sub-intent, with confidence",
            |a: SelectPackagesArgs, ctx| {
                let vocab = vocabulary(a.aliases.as_deref(), ctx)?;
                let groups = a
                    .intents
                    .iter()
                    .map(|intent| ChosenPackages {
                        packages: rank::rank_packages(&a.packages, &intent.query(&vocab), a.top_k),
                    })
                    .collect();
                Ok(PackageSelection { groups })
            },
        )
        .builtin(
            "search.rank-assets",
            "BM25F ranking of asset rows for each sub-intent, with calibrated confidences",
            |a: RankArgs, ctx| {
                let rows: Vec<AssetRow> = a.rows.into_iter().filter_map(records::decode_row).collect();
                Ok(Ranked {
                    groups: rank::rank_assets_each(&rows, &a.ranking.requests(a.ranking.top_k, ctx)?)
                        .into_iter()
                        .map(|candidates| Retrieved { candidates })
                        .collect(),
                    failed: false,
                })
            },
        );
}

/// Per sub-intent, the candidates of every chunk, best first, `top_k` kept.
/// The sort is stable (equal confidences keep chunk order), and a guid named
/// by two chunks (a model echoing a row) counts once, at its best.
fn merge_chunks(chunks: Vec<Option<Ranked>>, intents: usize, top_k: usize) -> Vec<Retrieved> {
    let mut merged: Vec<Retrieved> = (0..intents).map(|_| Retrieved::default()).collect();
    for chunk in chunks.into_iter().flatten() {
        for (into, group) in merged.iter_mut().zip(chunk.groups) {
            into.candidates.extend(group.candidates);
        }
    }
    for group in &mut merged {
        group.candidates.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        let mut seen = HashSet::new();
        group.candidates.retain(|c| seen.insert(c.guid.clone()));
        group.candidates.truncate(top_k);
    }
    merged
}

/// A candidate is an asset of the index, with the index's path: a model's
/// answer is data, so a guid it invented (or one the query's filters
/// exclude) is dropped with a warning and a path it altered is replaced —
/// `pick` and `build` only ever see indexed assets that pass the filters.
fn keep_indexed(groups: &mut [ResultGroup], filters: &Filters, ctx: &CallContext) -> anyhow::Result<()> {
    let wanted: HashSet<&str> = groups
        .iter()
        .flat_map(|g| g.candidates.iter().map(|c| c.guid.as_str()))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let paths = index_files(ctx).narrowed(filters.clone()).indexed_paths(&wanted)?;
    for group in groups.iter_mut() {
        group.candidates.retain_mut(|c| match paths.get(&c.guid) {
            Some(path) => {
                c.path.clone_from(path);
                true
            }
            None => {
                let why = match filters.is_empty() {
                    true => "not in the index",
                    false => "not in the index or excluded by the query's filters",
                };
                ctx.output.line(&format!(
                    "[unity-assets:search] warning: dropped candidate {:?} ({:?}): {why}",
                    c.guid, c.path
                ));
                false
            }
        });
    }
    Ok(())
}

/// The structured stale-index warning with both options: A, run `reindex`
/// then search again; B, search with `--reindex` (`docs/contracts.md#stale-index`).
fn stale_warning(reason: &str) -> String {
    format!(
        "[unity-assets:search] warning: the index is missing or stale ({reason}).\n  \
         Option A: run `unity-assets reindex`, then search again.\n  \
         Option B: rerun the search with `--reindex` (or write \"{}\" in the query) to index first, then search.",
        validate::REINDEX_PHRASE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_merge_per_sub_intent_best_first_each_guid_once() {
        let candidate = |guid: &str, confidence: f32| Candidate {
            guid: guid.into(),
            path: format!("Assets/{guid}"),
            confidence,
            reasoning: "r".into(),
            evidence: None,
        };
        let chunk = |groups: Vec<Vec<Candidate>>| {
            Some(Ranked {
                groups: groups.into_iter().map(|candidates| Retrieved { candidates }).collect(),
                failed: false,
            })
        };
        let chunks = vec![
            chunk(vec![
                vec![candidate("a", 0.5), candidate("b", 0.7)],
                vec![candidate("m", 0.4)],
            ]),
            None,                                                        // a chunk whose call failed
            chunk(vec![vec![candidate("c", 0.5), candidate("b", 0.9)]]), // answers the first sub-intent only
        ];
        let merged = merge_chunks(chunks, 3, 3);
        let guids = |r: &Retrieved| r.candidates.iter().map(|c| c.guid.clone()).collect::<Vec<_>>();
        assert_eq!(
            guids(&merged[0]),
            ["b", "a", "c"],
            "b once, at 0.9; a before c (chunk order)"
        );
        assert_eq!(merged[0].candidates[0].confidence, 0.9);
        assert_eq!(guids(&merged[1]), ["m"]);
        assert!(merged[2].candidates.is_empty());
    }

    #[test]
    fn registers_every_name_the_pipelines_use() {
        let mut registry = engine::Registry::new();
        super::register(&mut registry);
        let functions: Vec<&str> = registry.function_names().collect();
        for name in [
            "query.validate",
            "search.freshness",
            "search.hints",
            "search.index",
            "search.packages",
            "search.rows",
            "search.ranked",
            "search.write-index",
            "search.merge-chunks",
            "search.groups",
            "search.result",
            "search.filters",
            "search.list",
            "pick.resolve",
            "pick.record",
        ] {
            assert!(functions.contains(&name), "{name} missing");
        }
        for name in ["search.route", "search.select-packages", "search.rank-assets"] {
            assert!(registry.get_builtin(name).is_some(), "{name} missing");
        }
    }
}
