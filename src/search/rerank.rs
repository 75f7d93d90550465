//! Retrieve, then rerank: the builtin lexical ranker picks the top N rows
//! per sub-intent from the whole index, and only those go to the model, as
//! compact rows under short per-call ids (a guid is a sixth of a raw row's
//! tokens and tells a model nothing). The model's ids are mapped back to the
//! index's guids and paths here, never trusted as written.

use std::collections::HashMap;

use anyhow::Context as _;
use engine::Registry;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::hints::PastPickGroup;
use super::natives::Retrieved;
use super::rank::Candidate;
use super::records::AssetRow;
use super::route::SubIntent;
use super::{index_dir, index_files, term_index, RankingArgs};
use engine::Reach;

#[derive(Deserialize)]
struct RetrieveArgs {
    /// `top_k`: the candidates of the builtin answer (the offline rerank and
    /// the fallback when the model fails).
    #[serde(flatten)]
    ranking: RankingArgs,
    /// Rows kept per sub-intent for the model (`search.rerank_top_n`).
    top_n: usize,
    /// Per sub-intent, guids found by meaning (`semantic.nearest`), added
    /// after the builtin's rows so the model judges both.
    #[serde(default)]
    also: Vec<Vec<String>>,
    /// The query's filters: only matching rows are retrieved.
    #[serde(default)]
    filters: super::filters::Filters,
}

/// One sub-intent's retrieval, in the ids the model sees.
#[derive(Serialize, Deserialize)]
struct Retrieval {
    /// The sub-intent's position in the routing.
    index: usize,
    intent: SubIntent,
    /// Compact rows, in the retriever's order; `id` is the position + 1.
    rows: Vec<Value>,
    /// guid and path per id (`refs[id - 1]`), to map the answer back.
    refs: Vec<(String, String)>,
    /// The builtin's own top-K, by id: what the offline provider answers
    /// and what stands in when the model fails.
    builtin: Vec<IdCandidate>,
}

#[derive(Serialize)]
struct RetrieveOut {
    total_assets: usize,
    /// The sub-intents with at least one row (none: nothing to send).
    retrieved: Vec<Retrieval>,
}

/// A candidate by per-call id, as the model answers (`reranked-assets.schema.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IdCandidate {
    id: usize,
    confidence: f32,
    reasoning: String,
}

#[derive(Deserialize)]
struct Reranked {
    #[serde(default)]
    candidates: Vec<IdCandidate>,
    /// Set by the stage's `on_invalid`: the model failed on this sub-intent.
    #[serde(default)]
    failed: bool,
}

#[derive(Deserialize)]
struct ResolveArgs {
    sub_intents: usize,
    retrieved: Vec<Retrieval>,
    /// Per entry of `retrieved`, in order: the rerank stage's answer.
    reranked: Vec<Option<Reranked>>,
    top_k: usize,
}

#[derive(Serialize)]
struct ResolveOut {
    /// Per sub-intent, in the routing's order.
    retrieved: Vec<Retrieved>,
    /// Sub-intents whose model call failed (their builtin ranking stands).
    failed: usize,
}

#[derive(Deserialize)]
struct ModeArgs {
    mode: String,
    provider: String,
}

/// How a search reaches its candidates (`search.mode`).
const MODES: &[&str] = &["auto", "rerank", "exhaustive", "drill-down"];

pub(super) fn register(registry: &mut Registry) {
    registry
        .function(
            "search.mode",
            Reach::NONE,
            "the search mode in effect: auto is rerank with a model, drill-down offline",
            |a: ModeArgs, _| {
                let mode = match a.mode.as_str() {
                    "auto" if a.provider == "builtin" => "drill-down",
                    "auto" => "rerank",
                    m if MODES.contains(&m) => m,
                    other => {
                        let modes = MODES.join(", ");
                        return Err(format!(
                            "search.mode `{other}` is not a mode; use one of {modes} (in .claude/unity-assets.yml or --set search.mode=…)"
                        )
                        .into());
                    }
                };
                Ok(json!({"mode": mode}))
            },
        )
        .function(
            "search.retrieve",
            Reach::NONE,
            "the builtin's top N rows per sub-intent, as compact rows for a model to rerank",
            |a: RetrieveArgs, ctx| {
                // Every row ranked from the search index (the same ranking as a scan),
                // then the rows of the ranked and the found-by-meaning guids only.
                let requests = a.ranking.requests(a.top_n, ctx)?;
                let version = index_files(ctx).manifest_version();
                let (index, mut ranked) = term_index::rank(
                    &index_dir(ctx),
                    version.as_deref(),
                    &ctx.limits,
                    &requests,
                    &a.filters,
                    &mut |line| ctx.output.line(line),
                )?;
                let wanted = ranked.iter().flatten().map(|c| c.guid.as_str()).chain(a.also.iter().flatten().map(String::as_str));
                let rows = index.rows_of(wanted)?.with_context(term_index::changed_while_searched)?;
                let by_guid: HashMap<&str, &AssetRow> = rows.iter().map(|r| (r.guid.as_str(), r)).collect();
                for (candidates, also) in ranked.iter_mut().zip(&a.also) {
                    add_found_by_meaning(candidates, also, &by_guid);
                }
                let retrieved = a
                    .ranking
                    .intents
                    .into_iter()
                    .zip(ranked)
                    .enumerate()
                    .filter(|(_, (_, candidates))| !candidates.is_empty())
                    .map(|(index, (intent, candidates))| {
                        let picked = picked_before(&a.ranking.past_picks, &intent.intent);
                        retrieval(index, intent, &candidates, &by_guid, &picked, a.ranking.top_k)
                    })
                    .collect();
                Ok(RetrieveOut {
                    total_assets: index.rows(),
                    retrieved,
                })
            },
        )
        .function(
            "search.rerank-resolve",
            Reach::NONE,
            "map the model's row ids back to indexed guids and paths, per sub-intent",
            |a: ResolveArgs, _| Ok(resolve(a)),
        )
        .builtin(
            "search.rerank",
            "the retriever's own order: the builtin's top-K of the rows retrieved",
            |a: Value, _| Ok(json!({"candidates": a.get("builtin").cloned().unwrap_or_else(|| json!([]))})),
        );
}

/// Rows found by meaning join the builtin's, once each, after them: the
/// model sees both lists; the builtin's own answer is unchanged.
fn add_found_by_meaning(candidates: &mut Vec<Candidate>, guids: &[String], by_guid: &HashMap<&str, &AssetRow>) {
    for guid in guids {
        if let Some(row) = by_guid.get(guid.as_str()) {
            if !candidates.iter().any(|c| &c.guid == guid) {
                candidates.push(Candidate {
                    guid: guid.clone(),
                    path: row.path.clone(),
                    confidence: 0.0,
                    reasoning: "found by meaning".into(),
                    evidence: None,
                });
            }
        }
    }
}

/// The guids picked before for this sub-intent, marked in its rows.
fn picked_before(past_picks: &[PastPickGroup], intent: &str) -> Vec<String> {
    past_picks
        .iter()
        .filter(|g| g.sub_intent == intent)
        .flat_map(|g| g.picks.iter().map(|p| p.guid.clone()))
        .collect()
}

fn retrieval(
    index: usize,
    intent: SubIntent,
    candidates: &[Candidate],
    by_guid: &HashMap<&str, &AssetRow>,
    picked: &[String],
    top_k: usize,
) -> Retrieval {
    let mut rows = Vec::with_capacity(candidates.len());
    let mut refs = Vec::with_capacity(candidates.len());
    let mut builtin = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let id = i + 1;
        if let Some(row) = by_guid.get(c.guid.as_str()) {
            rows.push(compact_row(id, row, picked.contains(&row.guid)));
        }
        refs.push((c.guid.clone(), c.path.clone()));
        if builtin.len() < top_k && c.confidence > 0.0 {
            builtin.push(IdCandidate {
                id,
                confidence: c.confidence,
                reasoning: c.reasoning.clone(),
            });
        }
    }
    Retrieval {
        index,
        intent,
        rows,
        refs,
        builtin,
    }
}

/// What a model needs to judge a row, and nothing it cannot use: the id,
/// the path (which holds the file name and folders), the name only when it
/// is not the file's stem, type or type/subtype, labels and tags as one
/// list without the words the path and type already say, the summary;
/// empty fields are left out.
fn compact_row(id: usize, row: &AssetRow, picked_before: bool) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    out.insert("path".into(), json!(row.path));
    let stem = row
        .path
        .rsplit('/')
        .next()
        .map(|f| f.rsplit_once('.').map_or(f, |(s, _)| s))
        .unwrap_or_default();
    if !row.name.is_empty() && row.name != stem {
        out.insert("name".into(), json!(row.name));
    }
    let kind = row.type_subtype.clone().unwrap_or_else(|| row.asset_type.clone());
    if !kind.is_empty() {
        out.insert("type".into(), json!(kind));
    }
    let said = format!("{} {kind}", row.path).to_lowercase();
    let mut tags: Vec<&str> = Vec::new();
    for t in row.labels.iter().chain(&row.llm_tags) {
        let repeats = t.split(['-', '_', ' ']).all(|w| said.contains(&w.to_lowercase()));
        if !repeats && !tags.contains(&t.as_str()) {
            tags.push(t);
        }
    }
    if !tags.is_empty() {
        out.insert("tags".into(), json!(tags));
    }
    if !row.llm_summary.is_empty() {
        out.insert("summary".into(), json!(row.llm_summary));
    }
    if picked_before {
        out.insert("picked_before".into(), json!(true));
    }
    Value::Object(out)
}

/// Per sub-intent: the model's candidates as indexed assets (an id outside
/// the call's rows is dropped, a repeated one counts once), or the builtin's
/// when the call failed; sub-intents with no rows get none.
fn resolve(a: ResolveArgs) -> ResolveOut {
    let mut out: Vec<Retrieved> = (0..a.sub_intents).map(|_| Retrieved::default()).collect();
    let mut failed = 0;
    for (retrieval, answer) in a.retrieved.into_iter().zip(a.reranked) {
        let answer = answer.unwrap_or(Reranked {
            candidates: vec![],
            failed: true,
        });
        let chosen = if answer.failed {
            failed += 1;
            retrieval.builtin
        } else {
            answer.candidates
        };
        let mut seen = std::collections::HashSet::new();
        let candidates = chosen
            .into_iter()
            .filter(|c| c.id >= 1 && c.id <= retrieval.refs.len() && seen.insert(c.id))
            .take(a.top_k)
            .map(|c| {
                let (guid, path) = retrieval.refs[c.id - 1].clone();
                Candidate {
                    guid,
                    path,
                    confidence: c.confidence.clamp(0.0, 1.0),
                    reasoning: c.reasoning,
                    evidence: None,
                }
            })
            .collect();
        if let Some(slot) = out.get_mut(retrieval.index) {
            slot.candidates = candidates;
        }
    }
    ResolveOut { retrieved: out, failed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(guid: &str, path: &str) -> AssetRow {
        AssetRow {
            guid: guid.into(),
            path: path.into(),
            name: "Zombie_Fast".into(),
            asset_type: "Prefab".into(),
            type_subtype: Some("Prefab/character".into()),
            labels: vec!["enemy".into()],
            llm_tags: vec!["zombie".into(), "enemy".into()],
            ..AssetRow::default()
        }
    }

    #[test]
    fn compact_rows_omit_the_guid_empty_fields_and_a_name_the_path_holds() {
        let r = row("0123456789abcdef0123456789abcdef", "Assets/Z/Zombie_Fast.prefab");
        let compact = compact_row(7, &r, false);
        assert_eq!(
            compact,
            json!({"id": 7, "path": "Assets/Z/Zombie_Fast.prefab", "type": "Prefab/character", "tags": ["enemy"]}),
            "`zombie` is in the path already"
        );
        let mut other = r.clone();
        other.name = "Fast zombie".into();
        other.llm_summary = "A fast zombie.".into();
        let compact = compact_row(1, &other, true);
        assert_eq!(compact["name"], "Fast zombie");
        assert_eq!(compact["summary"], "A fast zombie.");
        assert_eq!(compact["picked_before"], true);
    }

    #[test]
    fn ids_map_back_to_indexed_guids_and_failures_keep_the_builtin_order() {
        let refs = vec![
            ("g1".to_owned(), "Assets/a".to_owned()),
            ("g2".into(), "Assets/b".into()),
        ];
        let candidate = |id, confidence| IdCandidate {
            id,
            confidence,
            reasoning: "r".into(),
        };
        let retrieval = |index, builtin| Retrieval {
            index,
            intent: SubIntent {
                intent: "x".into(),
                category_hint: None,
                subtype_hint: None,
                meanings: vec![],
                theme: None,
            },
            rows: vec![],
            refs: refs.clone(),
            builtin,
        };
        let out = resolve(ResolveArgs {
            sub_intents: 3,
            retrieved: vec![retrieval(0, vec![]), retrieval(2, vec![candidate(2, 0.5)])],
            reranked: vec![
                Some(Reranked {
                    // 9 was never sent, 2 is named twice
                    candidates: vec![
                        candidate(9, 0.9),
                        candidate(2, 0.8),
                        candidate(2, 0.7),
                        candidate(1, 1.5),
                    ],
                    failed: false,
                }),
                Some(Reranked {
                    candidates: vec![],
                    failed: true,
                }),
            ],
            top_k: 3,
        });
        let guids = |r: &Retrieved| r.candidates.iter().map(|c| c.guid.clone()).collect::<Vec<_>>();
        assert_eq!(guids(&out.retrieved[0]), ["g2", "g1"]);
        assert_eq!(out.retrieved[0].candidates[1].confidence, 1.0);
        assert!(out.retrieved[1].candidates.is_empty(), "a sub-intent without rows");
        assert_eq!(guids(&out.retrieved[2]), ["g2"], "the builtin's answer stands in");
        assert_eq!(out.failed, 1);
    }
}
