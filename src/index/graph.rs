//! `graph.json`: the reference graph of the index — which asset uses which —
//! built from the rows' `dependencies` and written beside them.
//!
//! The file keeps one direction (each asset's `uses`, as indices into the
//! node list, sorted by guid like `assets.jsonl`); the reverse direction is
//! built on load in one pass over the edges, which costs less than reading
//! a second list. A reference to a guid no row has (a deleted asset, a
//! package that is not indexed) is kept by guid under `missing`; Unity's
//! built-in resources (`0000000000000000e000000000000000`, …) are dropped.
//!
//! The file names the manifest version and the byte length of the
//! `assets.jsonl` it was built from: a graph that does not match them, of
//! another format, or absent, is rebuilt from `assets.jsonl` by whoever
//! loads it ([`load`]), which says so.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};

use super::row::AssetRow;
use super::store;

pub(crate) const GRAPH_FILE: &str = "graph.json";
/// Moves when the file's layout changes: an older file is then rebuilt.
pub(crate) const GRAPH_FORMAT: u32 = 1;

/// One asset of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The asset's guid.
    pub guid: String,
    /// A graph that names a path outside the project does not load (it is rebuilt).
    #[serde(deserialize_with = "super::row::project_path")]
    pub path: String,
    /// The asset's Unity type.
    #[serde(rename = "type")]
    pub asset_type: String,
    /// The assets it references, as node indices, ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<u32>,
    /// Referenced guids that are no row of the index, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// `graph.json` as stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct GraphFile {
    format: u32,
    manifest_version: String,
    assets_bytes: u64,
    nodes: Vec<Node>,
}

/// [`GraphFile`] as written, borrowing its nodes (same fields, same order).
#[derive(Serialize)]
struct GraphFileOut<'a> {
    format: u32,
    manifest_version: &'a str,
    assets_bytes: u64,
    nodes: &'a [Node],
}

/// What the manifest says of the graph (`manifest.json` `graph`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphEntry {
    pub(crate) file: String,
    pub(crate) format: u32,
    /// How many assets the graph holds.
    pub nodes: usize,
    /// How many references between them.
    pub edges: usize,
}

/// The loaded graph: both directions, and lookups by guid and by path.
#[derive(Debug, Clone, Default)]
pub struct ReferenceGraph {
    /// The assets, in the order their indices name.
    pub nodes: Vec<Node>,
    /// For each node, the nodes that use it, ascending.
    pub used_by: Vec<Vec<u32>>,
    by_guid: HashMap<String, u32>,
    by_path: HashMap<String, u32>,
}

impl ReferenceGraph {
    /// The graph of `rows` (in any order; nodes come out sorted by guid).
    pub(crate) fn from_records(rows: &[AssetRow]) -> Self {
        Self::from_nodes(nodes_of(rows))
    }

    fn from_nodes(nodes: Vec<Node>) -> Self {
        let mut used_by = vec![Vec::new(); nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            for &target in &node.uses {
                if let Some(list) = used_by.get_mut(target as usize) {
                    list.push(i as u32);
                }
            }
        }
        let by_guid = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.guid.clone(), i as u32))
            .collect();
        let by_path = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.path.clone(), i as u32))
            .collect();
        Self {
            nodes,
            used_by,
            by_guid,
            by_path,
        }
    }

    pub(crate) fn by_guid(&self, guid: &str) -> Option<u32> {
        self.by_guid.get(guid).copied()
    }

    pub(crate) fn by_path(&self, path: &str) -> Option<u32> {
        self.by_path.get(path).copied()
    }

    /// The node at `index`.
    pub fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }

    /// How many references the graph holds.
    pub fn edges(&self) -> usize {
        self.nodes.iter().map(|n| n.uses.len()).sum()
    }

    /// The manifest's entry for this graph.
    pub fn entry(&self) -> GraphEntry {
        entry_of(&self.nodes)
    }
}

/// The nodes of `rows` (in any order), sorted by guid: what `graph.json`
/// holds, without the lookups a loaded graph builds.
pub(crate) fn nodes_of(rows: &[AssetRow]) -> Vec<Node> {
    let mut sorted: Vec<&AssetRow> = rows.iter().collect();
    sorted.sort_unstable_by(|a, b| a.guid.cmp(&b.guid));
    sorted.dedup_by(|a, b| a.guid == b.guid);
    let nodes = NodeMaker::new(sorted.iter().map(|r| r.guid.as_str()));
    sorted.iter().map(|row| nodes.node(row)).collect()
}

/// Makes the nodes of rows whose guids, sorted and without duplicates,
/// were given up front (a node names the rows it uses by their index).
pub(crate) struct NodeMaker<'a> {
    index_of: HashMap<&'a str, u32>,
}

impl<'a> NodeMaker<'a> {
    /// `guids`: every row's, sorted by guid, without duplicates.
    pub fn new(guids: impl Iterator<Item = &'a str>) -> Self {
        Self {
            index_of: guids.enumerate().map(|(i, g)| (g, i as u32)).collect(),
        }
    }

    /// The node of `row`; its references to rows not given are `missing`.
    pub fn node(&self, row: &AssetRow) -> Node {
        let mut uses = vec![];
        let mut missing = vec![];
        for guid in row.dependencies.iter().flatten() {
            match self.index_of.get(guid.as_str()) {
                Some(&i) if guid != &row.guid => uses.push(i),
                Some(_) => {}
                None if is_builtin(guid) => {}
                None => missing.push(guid.clone()),
            }
        }
        uses.sort_unstable();
        uses.dedup();
        missing.sort_unstable();
        missing.dedup();
        Node {
            guid: row.guid.clone(),
            path: row.path.clone(),
            asset_type: row.asset_type.clone(),
            uses,
            missing,
        }
    }
}

/// The manifest's entry for a graph of `nodes`.
pub(crate) fn entry_of(nodes: &[Node]) -> GraphEntry {
    GraphEntry {
        file: GRAPH_FILE.to_owned(),
        format: GRAPH_FORMAT,
        nodes: nodes.len(),
        edges: nodes.iter().map(|n| n.uses.len()).sum(),
    }
}

/// Unity's built-in resources (`Library/unity default resources` and
/// friends): referenced everywhere, never a file of the project.
fn is_builtin(guid: &str) -> bool {
    guid.len() == 32 && guid[..16].bytes().all(|b| b == b'0') && guid[17..].bytes().all(|b| b == b'0')
}

/// Write the graph `nodes` for the index whose manifest version is
/// `manifest_version` and whose `assets.jsonl` is `assets_bytes` long
/// (atomically; left alone when it already holds the same bytes).
pub fn write(project: &Path, nodes: &[Node], manifest_version: &str, assets_bytes: u64) -> anyhow::Result<()> {
    let file = GraphFileOut {
        format: GRAPH_FORMAT,
        manifest_version,
        assets_bytes,
        nodes,
    };
    let mut bytes = serde_json::to_vec(&file)?;
    bytes.push(b'\n');
    let path = store::index_dir(project).join(GRAPH_FILE);
    if std::fs::read(&path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    engine::io::write_atomic(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// A loaded graph and, when the stored one could not be used, why it was
/// rebuilt from `assets.jsonl`.
pub struct Loaded {
    /// The graph, loaded or rebuilt.
    pub graph: ReferenceGraph,
    /// Why the stored graph was rebuilt, if it was.
    pub rebuilt: Option<String>,
}

/// The project's graph: `graph.json` when it matches the index, else
/// rebuilt from `assets.jsonl` (and written back, best effort: a read-only
/// index still answers). `None` when there is no index to build it from.
pub fn load(project: &Path, limits: &Limits) -> anyhow::Result<Option<Loaded>> {
    let dir = store::index_dir(project);
    let Some(manifest) = store::read_manifest(project, limits)? else {
        return Ok(None);
    };
    let assets_bytes = match std::fs::metadata(dir.join(store::ASSETS_FILE)) {
        Ok(meta) => meta.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context(format!("cannot read {}/{}", store::INDEX_DIR, store::ASSETS_FILE)),
    };
    let stored = read_stored(&dir.join(GRAPH_FILE), limits);
    let why = match &stored {
        Ok(file) if file.format != GRAPH_FORMAT => format!("it has format {}, not {GRAPH_FORMAT}", file.format),
        Ok(file) if file.manifest_version != manifest.version || file.assets_bytes != assets_bytes => format!(
            "it was built for index {}, the index is {}",
            file.manifest_version, manifest.version
        ),
        Ok(_) => String::new(),
        Err(why) => why.clone(),
    };
    if let (Ok(file), true) = (stored, why.is_empty()) {
        return Ok(Some(Loaded {
            graph: ReferenceGraph::from_nodes(file.nodes),
            rebuilt: None,
        }));
    }
    let rows = store::read_assets(project, limits);
    let graph = ReferenceGraph::from_records(&rows);
    if let Err(e) = write(project, &graph.nodes, &manifest.version, assets_bytes) {
        tracing::warn!("{e:#}; the graph is rebuilt again next time");
    }
    // A row lists only the first of many references; the scan saw them all.
    let cut = rows.iter().filter(|row| row.dependency_count.is_some()).count();
    let partial = match cut {
        0 => String::new(),
        n => format!("; {n} assets reference more than their rows list: `unity-assets reindex` writes the whole graph"),
    };
    Ok(Some(Loaded {
        graph,
        rebuilt: Some(format!(
            "{}/{GRAPH_FILE} was not used ({why}); rebuilt it from {}{partial}",
            store::INDEX_DIR,
            store::ASSETS_FILE
        )),
    }))
}

fn read_stored(path: &Path, limits: &Limits) -> Result<GraphFile, String> {
    let bytes = match engine::io::read_limited(path, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Err("it does not exist".to_owned()),
        Err(e) => return Err(e.to_string()),
    };
    serde_json::from_slice(&bytes).map_err(|e| format!("it cannot be read: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row as `assets.jsonl` holds it (through serde, so fields added
    /// to the row later need no change here).
    fn row(guid: &str, deps: &[&str]) -> AssetRow {
        serde_json::from_value(serde_json::json!({
            "guid": guid, "path": format!("Assets/{guid}.asset"), "name": guid, "type": "Prefab",
            "labels": [], "llm_tags": [], "llm_summary": "", "dependencies": deps,
        }))
        .unwrap()
    }

    #[test]
    fn both_directions_from_the_rows_with_missing_and_builtin_guids_apart() {
        let builtin = "0000000000000000f000000000000000";
        let graph = ReferenceGraph::from_records(&[
            row("b", &["a", "gone", builtin, "b"]),
            row("a", &[]),
            row("c", &["a", "b"]),
        ]);
        let (a, b, c) = (
            graph.by_guid("a").unwrap(),
            graph.by_guid("b").unwrap(),
            graph.by_guid("c").unwrap(),
        );
        assert_eq!(graph.node(b).uses, [a], "no self edge");
        assert_eq!(graph.node(b).missing, ["gone"], "built-ins are dropped");
        assert_eq!(graph.used_by[a as usize], [b, c]);
        assert_eq!(graph.used_by[b as usize], [c]);
        assert_eq!(graph.by_path("Assets/c.asset"), Some(c));
        assert_eq!(graph.edges(), 3);
    }
}
