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
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Normal => "normal",
            Self::Rich => "rich",
        }
    }
}

/// One asset as the scan saw it: everything but the generated tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannedAsset {
    pub guid: String,
    pub path: String,
    pub name: String,
    #[serde(rename = "type")]
    pub asset_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filename_signals: Vec<String>,
    /// Curated labels, then `.meta` labels (see `labels.rs`).
    pub labels: Vec<String>,
    pub package_id: String,
    /// What the taxonomy says the asset is for (`llm_use_cases` of the builtin tagger).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub use_cases: Vec<String>,
    /// Asset and `.meta` mtime + size: a changed signature means re-tag.
    pub signature: String,
    pub size: u64,
    /// The asset's mtime, RFC 3339 UTC to the second.
    pub last_modified: String,
    /// Read from the asset's Unity YAML (index_depth normal/rich).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Details>,
}

/// What normal and rich rows add from the asset's content
/// (`docs/contracts.md#index-depth`); `None` fields are left out of the row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    pub dependencies: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader_props: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animator_states: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_scripts: Option<Vec<String>>,
}

/// The tag stage's answer for one asset (`schemas/index-tags.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRow {
    pub guid: String,
    pub llm_tags: Vec<String>,
    pub llm_summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_use_cases: Option<Vec<String>>,
}

/// One line of `assets.jsonl` (`schemas/asset-record.schema.json`). Field
/// order is the serialisation order, so equal inputs give equal bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetRecord {
    pub guid: String,
    pub path: String,
    pub name: String,
    #[serde(rename = "type")]
    pub asset_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filename_signals: Vec<String>,
    pub labels: Vec<String>,
    pub llm_tags: Vec<String>,
    pub llm_summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_use_cases: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader_props: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animator_states: Option<Vec<String>>,
    /// GameObject names of a prefab or scene, sorted, at most 128.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_names: Option<Vec<String>>,
    /// A prefab variant's parent prefab (guid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<String>,
    /// A material's shader name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    /// Names of the textures a material uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    /// A ScriptableObject asset's script class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    /// `m_Script` guids that resolve to no script (`docs/indexing.md#content-facts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_scripts: Option<Vec<String>>,
}

/// One line of `packages.jsonl` (`schemas/package-record.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageRecord {
    pub package_id: String,
    pub name: String,
    pub root: String,
    pub asset_count: usize,
    /// Asset type → count, sorted by type name.
    pub type_histogram: std::collections::BTreeMap<String, usize>,
    pub summary: String,
}
