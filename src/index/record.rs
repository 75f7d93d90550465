//! The rows the indexer passes between stages and writes to disk.

use serde::{Deserialize, Serialize};

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

/// One asset as the scan saw it: everything but the generated tags. Not
/// the row of `assets.jsonl` ([`AssetRow`](super::row::AssetRow)) because it holds what no row
/// keeps: the `signature` the diff compares, the taxonomy's `use_cases` a
/// tagger is given, and the package, size and mtime at every depth; the
/// row keeps what its `index_depth` holds, and the tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannedAsset {
    /// The asset's guid, from its `.meta`.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    /// The file's name without its extension.
    pub name: String,
    /// The asset's Unity type (`Prefab`, `Material`, ...).
    #[serde(rename = "type")]
    pub asset_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) type_subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) filename_signals: Vec<String>,
    /// Curated labels, then `.meta` labels (see `labels.rs`).
    pub labels: Vec<String>,
    /// The package it belongs to (see `packages.rs`).
    pub package_id: String,
    /// What the taxonomy says the asset is for (`llm_use_cases` of the builtin tagger).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) use_cases: Vec<String>,
    /// Asset and `.meta` mtime + size: a changed signature means re-tag.
    pub signature: String,
    pub(crate) size: u64,
    /// The asset's mtime, RFC 3339 UTC to the second.
    pub(crate) last_modified: String,
    /// Read from the asset's Unity YAML (index_depth normal/rich).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Details>,
}

/// What normal and rich rows add from the asset's content
/// (`docs/contracts.md#index-depth`); `None` fields are left out of the row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    pub(crate) dependencies: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shader_props: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) animator_states: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) child_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) variant_of: Option<String>,
    /// A material's shader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    /// The textures a material uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    /// The class a script defines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) missing_scripts: Option<Vec<String>>,
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
