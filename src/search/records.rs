//! What search reads from the index: asset and package rows (fields per
//! `index_depth`: `docs/contracts.md#index-depth`). Search reads the asset
//! row the indexer writes, [`AssetRow`], which takes any row a person or
//! an older index wrote.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::index::row::AssetRow;
use crate::index::tolerant::{list, text};

/// A row given as its JSONL line or as an object; `None` when it does not
/// decode (skipped, like a bad line of the index).
pub(crate) fn decode_row(row: serde_json::Value) -> Option<AssetRow> {
    match row {
        serde_json::Value::String(line) => serde_json::from_str(&line).ok(),
        other => serde_json::from_value(other).ok(),
    }
}

/// One row of `packages.jsonl`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct PackageRow {
    /// The package's id, as asset rows name it.
    pub package_id: String,
    /// Its display name.
    #[serde(default)]
    pub name: String,
    /// The folder it is rooted at.
    #[serde(default, alias = "root_path")]
    pub root: String,
    #[serde(default)]
    pub(crate) asset_count: u64,
    #[serde(default, alias = "types", alias = "type_histogram")]
    pub(crate) type_counts: BTreeMap<String, u64>,
    #[serde(default, alias = "llm_summary", deserialize_with = "text")]
    pub(crate) summary: String,
    /// The words its assets use most (names, types, folders, tags, labels,
    /// filename signals), most frequent first. A summary names only a
    /// package's top themes, so search builds this from the asset rows
    /// (`super::load::IndexFiles::packages_with_vocabulary`) to choose a package
    /// by what it holds.
    #[serde(default, deserialize_with = "list", skip_serializing_if = "Vec::is_empty")]
    pub(crate) asset_vocabulary: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_decode_from_their_line_or_an_object() {
        let line = serde_json::json!(r#"{"guid":"g","path":"Assets/A.png","llm_tags":"rock"}"#);
        assert_eq!(decode_row(line).unwrap().llm_tags, ["rock"]);
        let object = serde_json::json!({"guid": "g", "path": "Assets/A.png"});
        assert_eq!(decode_row(object).unwrap().path, "Assets/A.png");
        assert!(decode_row(serde_json::json!("not json")).is_none());
        assert!(decode_row(serde_json::json!({"path": "no guid"})).is_none());
        assert!(decode_row(serde_json::json!({"guid": "g", "path": "/etc/A.png"})).is_none());
    }

    #[test]
    fn package_row_aliases() {
        let row: PackageRow = serde_json::from_value(serde_json::json!({
            "package_id": "p", "root_path": "Assets/P", "types": {"Prefab": 3}
        }))
        .unwrap();
        assert_eq!(row.root, "Assets/P");
        assert_eq!(row.type_counts["Prefab"], 3);
    }
}
