//! Following references from one asset: what uses it (`refs`) or what it
//! uses (`deps`), level by level to a depth, each asset once at the level
//! it is first met, with the asset one step closer it was met through.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::AssetRef;
use crate::index::graph::ReferenceGraph;

/// Readable lines list at most this many assets; `--json` has them all.
const SHOWN: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The assets that reference it (`refs`).
    UsedBy,
    /// The assets it references (`deps`).
    Uses,
}

/// One asset reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reached {
    #[serde(flatten)]
    pub asset: AssetRef,
    /// Steps from the start (1: a direct reference).
    pub depth: u32,
    /// The path of the asset one step closer to the start (depth over 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// The walk's answer: the document and its readable lines.
#[derive(Debug, Clone, Serialize)]
pub struct Walked {
    pub document: serde_json::Value,
    pub summary: String,
}

/// Every node reachable from `start` in `direction` within `depth` steps
/// (0: no limit), breadth first: (node, depth, the node it came from).
pub fn reach(graph: &ReferenceGraph, start: u32, direction: Direction, depth: u32) -> Vec<(u32, u32, u32)> {
    let limit = if depth == 0 { u32::MAX } else { depth };
    let mut seen = vec![false; graph.nodes.len()];
    seen[start as usize] = true;
    let mut queue = VecDeque::from([(start, 0u32)]);
    let mut reached = vec![];
    while let Some((node, level)) = queue.pop_front() {
        if level >= limit {
            continue;
        }
        let next = match direction {
            Direction::UsedBy => &graph.used_by[node as usize],
            Direction::Uses => &graph.node(node).uses,
        };
        for &n in next {
            if !std::mem::replace(&mut seen[n as usize], true) {
                reached.push((n, level + 1, node));
                queue.push_back((n, level + 1));
            }
        }
    }
    reached
}

/// Which nodes `starts` reach forward at any depth, themselves included:
/// one pass however many starts there are.
pub fn reached_from(graph: &ReferenceGraph, starts: impl Iterator<Item = u32>) -> Vec<bool> {
    let mut reached = vec![false; graph.nodes.len()];
    let mut todo: Vec<u32> = starts
        .filter(|&s| !std::mem::replace(&mut reached[s as usize], true))
        .collect();
    while let Some(node) = todo.pop() {
        for &n in &graph.node(node).uses {
            if !std::mem::replace(&mut reached[n as usize], true) {
                todo.push(n);
            }
        }
    }
    reached
}

/// The `refs`/`deps` answer for `start`.
pub fn report(graph: &ReferenceGraph, start: u32, direction: Direction, depth: u32) -> Walked {
    let (command, verb) = match direction {
        Direction::UsedBy => ("refs", "used by"),
        Direction::Uses => ("deps", "uses"),
    };
    let mut reached: Vec<Reached> = reach(graph, start, direction, depth)
        .into_iter()
        .map(|(node, level, from)| Reached {
            asset: AssetRef::of(graph, node),
            depth: level,
            via: (level > 1).then(|| graph.node(from).path.clone()),
        })
        .collect();
    reached.sort_by(|a, b| (a.depth, &a.asset.path).cmp(&(b.depth, &b.asset.path)));
    let asset = AssetRef::of(graph, start);
    let missing = match direction {
        Direction::Uses => graph.node(start).missing.clone(),
        Direction::UsedBy => vec![],
    };
    let depth_words = match depth {
        0 => " at any depth".to_owned(),
        1 => String::new(),
        n => format!(" within {n} steps"),
    };
    let mut summary = if reached.is_empty() {
        let nothing = match direction {
            Direction::UsedBy => "nothing in the index uses it",
            Direction::Uses => "it uses no asset of the index",
        };
        format!(
            "[unity-assets:{command}] {} ({}): {nothing}",
            asset.path, asset.asset_type
        )
    } else {
        format!(
            "[unity-assets:{command}] {} ({}): {verb} {}{depth_words} ({})",
            asset.path,
            asset.asset_type,
            count(reached.len(), "asset"),
            by_type(reached.iter().map(|r| r.asset.asset_type.as_str()))
        )
    };
    for r in reached.iter().take(SHOWN) {
        summary.push_str(&format!("\n  {}  {}", r.asset.path, r.asset.asset_type));
        if let Some(via) = &r.via {
            summary.push_str(&format!("  (depth {}, via {via})", r.depth));
        }
    }
    if reached.len() > SHOWN {
        summary.push_str(&format!(
            "\n  … and {} more (--json lists them all)",
            reached.len() - SHOWN
        ));
    }
    if !missing.is_empty() {
        summary.push_str(&format!(
            "\n  {} to guids no asset of the index has (deleted, or in a package not indexed): {}",
            count(missing.len(), "reference"),
            missing.join(", ")
        ));
    }
    Walked {
        document: json!({
            "status": "ok",
            "direction": direction,
            "asset": asset,
            "depth": depth,
            "count": reached.len(),
            "assets": reached,
            "missing": missing,
        }),
        summary,
    }
}

/// `Prefab 2, Material 1`: counts by type, most first.
pub fn by_type<'a>(types: impl Iterator<Item = &'a str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in types {
        *counts.entry(t).or_default() += 1;
    }
    let mut sorted: Vec<(&str, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    sorted
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// What an asset pulls in, at any depth, in one line:
/// `pulls in 14 assets (Material 5, Texture2D 6, Mesh 3): Rock.mat, Moss.png, …`.
pub fn pulls_in(graph: &ReferenceGraph, start: u32) -> String {
    const NAMED: usize = 4;
    let reached = reach(graph, start, Direction::Uses, 0);
    if reached.is_empty() {
        return "pulls in no other asset".to_owned();
    }
    // The direct references first: they are what the prefab itself names.
    let names: Vec<&str> = reached
        .iter()
        .take(NAMED)
        .map(|&(n, _, _)| super::resolve::file_name(&graph.node(n).path))
        .collect();
    let more = if reached.len() > NAMED { ", …" } else { "" };
    format!(
        "pulls in {} ({}): {}{more}",
        count(reached.len(), "asset"),
        by_type(reached.iter().map(|&(n, _, _)| graph.node(n).asset_type.as_str())),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::row::AssetRow;

    fn row(guid: &str, path: &str, kind: &str, deps: &[&str]) -> AssetRow {
        serde_json::from_value(json!({
            "guid": guid, "path": path, "name": guid, "type": kind,
            "labels": [], "llm_tags": [], "llm_summary": "", "dependencies": deps,
        }))
        .unwrap()
    }

    /// A prefab → two materials → one shared texture, and a cycle back.
    fn graph() -> ReferenceGraph {
        ReferenceGraph::from_records(&[
            row("p", "Assets/Hero.prefab", "Prefab", &["m1", "m2"]),
            row("m1", "Assets/Skin.mat", "Material", &["t"]),
            row("m2", "Assets/Eyes.mat", "Material", &["t"]),
            row("t", "Assets/Skin.png", "Texture2D", &["p"]),
        ])
    }

    #[test]
    fn each_asset_once_at_its_nearest_depth_and_cycles_end() {
        let g = graph();
        let p = g.by_guid("p").unwrap();
        let one: Vec<u32> = reach(&g, p, Direction::Uses, 1).iter().map(|r| r.0).collect();
        assert_eq!(one.len(), 2);
        let all = reach(&g, p, Direction::Uses, 0);
        assert_eq!(
            all.len(),
            3,
            "the texture once; the cycle back to the prefab ends: {all:?}"
        );
        assert_eq!(
            all[2],
            (
                g.by_guid("t").unwrap(),
                2,
                g.by_guid("m2").unwrap().min(g.by_guid("m1").unwrap())
            )
        );
        let users = reach(&g, g.by_guid("t").unwrap(), Direction::UsedBy, 0);
        assert_eq!(users.len(), 3);
    }

    #[test]
    fn pulls_in_counts_by_type_and_names_the_nearest_first() {
        let g = graph();
        assert_eq!(
            pulls_in(&g, g.by_guid("p").unwrap()),
            "pulls in 3 assets (Material 2, Texture2D 1): Skin.mat, Eyes.mat, Skin.png"
        );
        let lonely = ReferenceGraph::from_records(&[row("x", "Assets/X.prefab", "Prefab", &[])]);
        assert_eq!(pulls_in(&lonely, 0), "pulls in no other asset");
    }
}
