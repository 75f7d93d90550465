//! `eval GOLDEN.yml`: run the search pipeline on every golden query of the
//! project and score it (Recall@3, Precision@3, MRR, routing accuracy);
//! with `--retrievers`, once per retriever (lexical, semantic, hybrid) side
//! by side, so a team sees what meaning adds on its own project.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use engine::Ending;
use engine::Output;
use serde_json::{json, Value};

use crate::eval::{evaluate, load_golden, GoldenSet, Hit, Report, Searched};
use crate::exit::Outcome;
use crate::project::Project;
use crate::search::rank::Thresholds;

/// The retrievers `--retrievers` compares (`search.semantic.retrievers`).
const RETRIEVERS: [&str; 3] = ["lexical", "semantic", "hybrid"];

/// `unity-assets eval`: score search on the golden set at `golden` (with `--retrievers`, each retriever side by side; with `--features`, write the learned scorer's training rows there).
pub async fn command(
    project: &Project,
    golden: &Path,
    as_json: bool,
    retrievers: bool,
    features: Option<&Path>,
) -> Outcome {
    let set = match load_golden(golden, &project.config.limits) {
        Ok(s) => s,
        // The loader's messages name the file already.
        Err(e) => return Outcome::invalid(format!("{e:#}")),
    };
    if !retrievers {
        return match score(project, &set, &[]).await {
            Ok((report, pools)) => {
                if let Some(out) = features {
                    if let Err(e) = write_features(out, golden, &set, &pools) {
                        return Outcome::failed(format!("{}: {e}", out.display()));
                    }
                }
                if as_json {
                    crate::outln!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
                } else {
                    crate::outln!("{}", report.render().trim_end());
                }
                Outcome::ok()
            }
            Err(outcome) => outcome,
        };
    }
    let mut reports = vec![];
    for retriever in RETRIEVERS {
        match score(project, &set, &[format!("search.semantic.retrievers={retriever}")]).await {
            Ok((report, _)) => reports.push((retriever, report)),
            Err(outcome) => return outcome,
        }
    }
    if as_json {
        let by_retriever: serde_json::Map<String, Value> = reports
            .iter()
            .map(|(name, report)| ((*name).to_owned(), serde_json::to_value(report).unwrap_or_default()))
            .collect();
        crate::outln!("{}", serde_json::to_string_pretty(&by_retriever).unwrap_or_default());
    } else {
        crate::outln!("{}", side_by_side(&reports));
    }
    Outcome::ok()
}

/// One line per retriever, then the misses of each.
fn side_by_side(reports: &[(&str, Report)]) -> String {
    let mut out = String::from("retrievers  n    Recall@3  Precision@3  MRR    controls");
    for (name, r) in reports {
        let controls = r
            .controls
            .as_ref()
            .map_or_else(|| "-".to_owned(), |c| format!("{}/{}", c.passed, c.total));
        let _ = write!(
            out,
            "\n{name:<11} {:<4} {:<9.3} {:<12.3} {:<6.3} {controls}",
            r.overall.queries, r.overall.recall_at_3, r.overall.precision_at_3, r.overall.mrr
        );
    }
    for (name, r) in reports {
        let misses: Vec<&str> = r.outcomes.iter().filter(|o| !o.hit).map(|o| o.query.as_str()).collect();
        if !misses.is_empty() {
            let _ = write!(out, "\n{name} misses: {}", misses.join(" · "));
        }
    }
    out
}

/// Each query's fusion pools (`semantic.fuse`'s `pool`: per sub-intent,
/// every candidate with its features).
type Pools = HashMap<String, Value>;

/// Run every query of `set` through the search pipeline (with `sets`) and
/// score it; with the fusion pool of each query.
async fn score(project: &Project, set: &GoldenSet, sets: &[String]) -> Result<(Report, Pools), Outcome> {
    let pipeline = project.compile("search", sets).map_err(Outcome::invalid)?;
    // Controls pass under the confirm threshold the search runs with.
    let thresholds: Thresholds =
        serde_json::from_value(pipeline.params()["confidence_threshold"].clone()).map_err(|e| {
            Outcome::invalid(format!(
                "confidence_threshold: {e} (expected {{auto: 0.70, confirm: 0.40}})"
            ))
        })?;
    // Search lines are not part of eval's output: capture them.
    // Kept: what the route stage found is read from each run's outputs.
    let rt = project
        .runtime(Output::buffer())
        .map_err(Outcome::failed)?
        .releasing_outputs(false);
    let queries: Vec<&str> = set
        .queries
        .iter()
        .map(|q| q.query.as_str())
        .chain(set.routing.iter().map(|r| r.query.as_str()))
        .collect();
    // Per query: the candidate lists of its groups, and how many sub-intents
    // the route stage found (counted there, so a no_match still counts).
    let mut results: HashMap<String, Ran> = HashMap::new();
    let mut pools = Pools::new();
    for q in queries {
        if results.contains_key(q) {
            continue;
        }
        let inputs = pipeline
            .bind_inputs(json!({"query": q}).as_object().cloned().unwrap_or_default())
            .map_err(Outcome::invalid)?;
        let outcome = engine::run(&pipeline, inputs, &rt).await;
        let routed = outcome
            .outputs
            .get("route")
            .and_then(|r| r["sub_intents"].as_array().map(Vec::len))
            .unwrap_or(0);
        // The search pipeline's output is the search-result document; an
        // early exit (no_query, no index) has no groups.
        let (groups, closest) = match outcome.result {
            Ok(Ending::Finished(doc)) => (groups_of(&doc, "groups"), groups_of(&doc, "closest")),
            Ok(Ending::Exited { .. }) => (vec![], vec![]),
            Err(e) => return Err(Outcome::failed(format!("search failed for {q:?}: {e}"))),
        };
        results.insert(q.to_owned(), (groups, closest, routed));
        if let Some(pool) = outcome.outputs.get("fuse").map(|fuse| fuse["pool"].clone()) {
            pools.insert(q.to_owned(), pool);
        }
    }
    let search = |q: &str| -> anyhow::Result<Searched> {
        let (groups, closest, _) = results.get(q).cloned().unwrap_or_default();
        Ok(Searched {
            hits: interleaved(&groups),
            closest: interleaved(&closest),
        })
    };
    let route = |q: &str| -> anyhow::Result<usize> { Ok(results.get(q).map_or(0, |(_, _, routed)| *routed)) };
    let report = evaluate(set, thresholds.confirm, search, route).map_err(|e| Outcome::failed(format!("{e:#}")))?;
    Ok((report, pools))
}

/// `eval --features FILE`: one JSON line per pooled candidate of every
/// query — `{set, query, kind, control, group, guid, path, answer, features}`
/// — what `benchmarks/judged/train.py` fits the scorer's weights on.
fn write_features(out: &Path, golden: &Path, set: &GoldenSet, pools: &Pools) -> std::io::Result<()> {
    let name = golden
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = String::new();
    for q in &set.queries {
        let Some(groups) = pools.get(&q.query).and_then(Value::as_array) else {
            continue;
        };
        for (group, pool) in groups.iter().enumerate() {
            for pooled in pool.as_array().into_iter().flatten() {
                let hit = Hit {
                    guid: pooled["guid"].as_str().unwrap_or_default().to_owned(),
                    path: pooled["path"].as_str().unwrap_or_default().to_owned(),
                    confidence: 0.0,
                };
                let line = json!({
                    "set": name, "query": q.query, "kind": q.kind, "control": q.is_control(), "group": group,
                    "guid": hit.guid, "path": hit.path, "answer": q.accepts(&hit), "features": pooled["features"],
                });
                let _ = writeln!(text, "{line}");
            }
        }
    }
    engine::io::write_atomic(out, text.as_bytes())
}

/// One query's run: its groups' candidates, a no_match's closest ones, and
/// how many sub-intents the route stage found.
type Ran = (Vec<Vec<Hit>>, Vec<Vec<Hit>>, usize);

/// Groups interleaved by rank, as a reader of the summary scans them.
fn interleaved(groups: &[Vec<Hit>]) -> Vec<Hit> {
    let mut hits: Vec<Hit> = vec![];
    let depth = groups.iter().map(Vec::len).max().unwrap_or(0);
    for rank in 0..depth {
        for g in groups {
            if let Some(h) = g.get(rank).filter(|h| !hits.contains(h)) {
                hits.push(h.clone());
            }
        }
    }
    hits
}

/// The candidate lists of a search-result document's `field` (`groups`,
/// or a no_match's `closest`), per group.
fn groups_of(result: &Value, field: &str) -> Vec<Vec<Hit>> {
    result
        .get(field)
        .and_then(Value::as_array)
        .map(|groups| {
            groups
                .iter()
                .map(|g| {
                    g.get("candidates")
                        .and_then(Value::as_array)
                        .map(|cs| {
                            cs.iter()
                                .map(|c| Hit {
                                    guid: c.get("guid").and_then(Value::as_str).unwrap_or_default().to_owned(),
                                    path: c.get("path").and_then(Value::as_str).unwrap_or_default().to_owned(),
                                    confidence: c.get("confidence").and_then(Value::as_f64).unwrap_or_default() as f32,
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `eval --name-lookup N`: `n` assets of the index, evenly spread over its
/// paths, each searched by its file name with its extension and without;
/// how often that asset, or a twin of the same name, comes first.
pub async fn name_lookup(project: &Project, n: usize, as_json: bool) -> Outcome {
    use crate::search::names::{normalized, stem_and_extension};
    let files =
        crate::search::load::IndexFiles::new(crate::index::store::index_dir(&project.root), project.config.limits);
    let mut rows = match files.rows_matching() {
        Ok(rows) if !rows.is_empty() => rows,
        Ok(_) => return Outcome::invalid("the index holds no asset: run `unity-assets index` first"),
        Err(e) => return Outcome::failed(format!("{e:#}")),
    };
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let step = (rows.len() as f64 / n.clamp(1, rows.len()) as f64).max(1.0);
    let drawn: Vec<_> = (0..n.min(rows.len()))
        .map(|i| &rows[(i as f64 * step) as usize])
        .collect();
    // A name also names its twins: files of the same name in other folders
    // (two `cry.png`), and without the extension other types (Rock.mat, Rock.prefab).
    let key = |path: &str| {
        let (stem, ext) = stem_and_extension(path);
        (normalized(stem), ext.map(str::to_ascii_lowercase))
    };
    let mut named: HashMap<(String, Option<String>), Vec<String>> = HashMap::new();
    let mut any_type: HashMap<String, Vec<String>> = HashMap::new();
    for row in &rows {
        let (name, ext) = key(&row.path);
        any_type.entry(name.clone()).or_default().push(row.path.clone());
        named.entry((name, ext)).or_default().push(row.path.clone());
    }
    let mut with_ext = Vec::new();
    let mut without = Vec::new();
    for row in drawn {
        let file = row.path.rsplit('/').next().unwrap_or(&row.path).to_owned();
        let (name, ext) = key(&row.path);
        without.push(golden_query(stem_and_extension(&row.path).0, any_type[&name].clone()));
        with_ext.push(golden_query(&file, named[&(name, ext)].clone()));
    }
    let mut lines = Vec::new();
    let mut doc = serde_json::Map::new();
    for (label, queries) in [("with extension", with_ext), ("without extension", without)] {
        let set = GoldenSet {
            queries,
            routing: vec![],
        };
        let report = match score(project, &set, &[]).await {
            Ok((report, _)) => report,
            Err(outcome) => return outcome,
        };
        let first = report.outcomes.iter().filter(|o| o.first_rank == Some(1)).count();
        let total = report.outcomes.len().max(1);
        let misses: Vec<String> = report
            .outcomes
            .iter()
            .filter(|o| o.first_rank != Some(1))
            .map(|o| format!("{:?} → {}", o.query, o.top.first().map_or("nothing", String::as_str)))
            .collect();
        lines.push(format!(
            "name lookup, {label}: {first}/{total} first ({:.3})",
            first as f64 / total as f64
        ));
        lines.extend(misses.iter().map(|m| format!("  miss {m}")));
        doc.insert(
            label.replace(' ', "_"),
            json!({"first": first, "total": total, "rate": first as f64 / total as f64, "misses": misses}),
        );
    }
    if as_json {
        crate::outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        crate::outln!("{}", lines.join("\n"));
    }
    Outcome::ok()
}

/// A query whose answers are `accepted` paths.
fn golden_query(query: &str, accepted: Vec<String>) -> crate::eval::GoldenQuery {
    crate::eval::GoldenQuery {
        id: query.to_owned(),
        query: query.to_owned(),
        category: None,
        kind: Some("name".into()),
        expected: None,
        accepted: accepted.into_iter().map(crate::eval::Answer::path).collect(),
    }
}
