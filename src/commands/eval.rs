//! `eval GOLDEN.yml`: run the search pipeline on every golden query of the
//! project and score it (Recall@3, Precision@3, MRR, routing accuracy).

use std::collections::HashMap;
use std::path::Path;

use engine::Ending;
use engine::Output;
use serde_json::{json, Value};

use crate::commands::Outcome;
use crate::eval::{evaluate, load_golden, Hit};
use crate::project::Project;
use crate::search::rank::Thresholds;

pub async fn command(project: &Project, golden: &Path, as_json: bool) -> Outcome {
    let set = match load_golden(golden, &project.config.limits) {
        Ok(s) => s,
        // The loader's messages name the file already.
        Err(e) => return Outcome::invalid(format!("{e:#}")),
    };
    let pipeline = match project.compile("search", &[]) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    // Controls pass under the confirm threshold the search runs with.
    let thresholds: Thresholds = match serde_json::from_value(pipeline.params()["confidence_threshold"].clone()) {
        Ok(t) => t,
        Err(e) => {
            return Outcome::invalid(format!(
                "confidence_threshold: {e} (expected {{auto: 0.70, confirm: 0.40}})"
            ))
        }
    };
    // Search lines are not part of eval's output: capture them.
    let rt = match project.runtime(Output::buffer()) {
        Ok(rt) => rt,
        Err(e) => return Outcome::failed(e),
    };
    let queries: Vec<&str> = set
        .queries
        .iter()
        .map(|q| q.query.as_str())
        .chain(set.routing.iter().map(|r| r.query.as_str()))
        .collect();
    // Per query: the candidate lists of its groups, and how many sub-intents
    // the route stage found (counted there, so a no_match still counts).
    let mut results: HashMap<String, (Vec<Vec<Hit>>, usize)> = HashMap::new();
    for q in queries {
        if results.contains_key(q) {
            continue;
        }
        let inputs = match pipeline.bind_inputs(json!({"query": q}).as_object().cloned().unwrap_or_default()) {
            Ok(i) => i,
            Err(e) => return Outcome::invalid(e),
        };
        let outcome = engine::run(&pipeline, inputs, &rt).await;
        let routed = outcome
            .outputs
            .get("route")
            .and_then(|r| r["sub_intents"].as_array().map(Vec::len))
            .unwrap_or(0);
        // The search pipeline's output is the search-result document; an
        // early exit (no_query, no index) has no groups.
        let groups = match outcome.result {
            Ok(Ending::Finished(doc)) => groups_of(&doc),
            Ok(Ending::Exited { .. }) => vec![],
            Err(e) => return Outcome::failed(format!("search failed for {q:?}: {e}")),
        };
        results.insert(q.to_owned(), (groups, routed));
    }
    let search = |q: &str| -> anyhow::Result<Vec<Hit>> {
        // Interleave groups by rank, as a reader of the summary would scan them.
        let groups = results.get(q).map(|(g, _)| g.clone()).unwrap_or_default();
        let mut hits = vec![];
        let depth = groups.iter().map(Vec::len).max().unwrap_or(0);
        for rank in 0..depth {
            for g in &groups {
                if let Some(h) = g.get(rank) {
                    if !hits.contains(h) {
                        hits.push(h.clone());
                    }
                }
            }
        }
        Ok(hits)
    };
    let route = |q: &str| -> anyhow::Result<usize> { Ok(results.get(q).map_or(0, |(_, routed)| *routed)) };
    match evaluate(&set, thresholds.confirm, search, route) {
        Ok(report) => {
            if as_json {
                println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
            } else {
                println!("{}", report.render().trim_end());
            }
            Outcome::ok()
        }
        Err(e) => Outcome::failed(format!("{e:#}")),
    }
}

/// The candidate lists of a search-result document, per group.
fn groups_of(result: &Value) -> Vec<Vec<Hit>> {
    result
        .get("groups")
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
