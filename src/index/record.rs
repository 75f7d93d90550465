//! The rows the indexer passes between stages and writes to disk.

use serde::{Deserialize, Serialize};

use super::row::AssetRow;

/// `index_depth`: how much each asset row holds; each tier adds to the one
/// before (`docs/contracts.md#index-depth`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    /// guid, path, name, type, labels, tags, summary (+ subtype, signals):
    /// `.meta` files only, the fastest.
    Minimal,
    /// Adds size, last_modified, package_id, dependencies, llm_use_cases
    /// and the content facts read from Unity YAML (components, child names,
    /// variant parent, shader, textures, animator states, script class,
    /// missing scripts).
    #[default]
    Normal,
    /// Adds shader_props (Material); search switches to map-reduce.
    Rich,
}

impl Depth {
    /// The depth as written in settings and rows (`minimal`, `normal`, `rich`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Normal => "normal",
            Self::Rich => "rich",
        }
    }
}

/// One asset as the scan saw it: its row before any tags, and the
/// `signature` the diff compares, which no row keeps. The row holds every
/// fact the scan read, at every depth (the taxonomy's use cases as
/// `llm_use_cases` until a tagger answers): finalize adds the tags and
/// cuts it to what the index's depth keeps ([`AssetRow::at_depth`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannedAsset {
    /// The asset's row, untagged.
    pub row: AssetRow,
    /// Asset and `.meta` mtime + size: a changed signature means re-tag.
    pub signature: String,
}

impl ScannedAsset {
    /// The package the asset belongs to: a scanned row names it at every
    /// depth, a stored one only from `normal` up.
    pub fn package_id(&self) -> &str {
        self.row.package_id.as_deref().unwrap_or_default()
    }
}

/// The tag stage's answer for one asset (`schemas/index-tags.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRow {
    /// The asset's guid.
    pub guid: String,
    /// Short tags for search.
    pub llm_tags: Vec<String>,
    /// One sentence on what the asset is.
    pub llm_summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llm_use_cases: Option<Vec<String>>,
}

/// One line of `packages.jsonl` (`schemas/package-record.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PackageRecord {
    /// The package's id, as asset rows name it.
    pub package_id: String,
    /// Its display name.
    pub name: String,
    /// The folder it is rooted at.
    pub root: String,
    pub(crate) asset_count: usize,
    /// Asset type → count, sorted by type name.
    pub(crate) type_histogram: std::collections::BTreeMap<String, usize>,
    pub(crate) summary: String,
}
