//! What search reads from the index: asset and package rows (DESIGN §5).
//!
//! Defined here rather than shared with the indexer so search stays tolerant:
//! every field but `guid` and `path` is optional, and free-form fields
//! (`filename_signals`, `llm_use_cases`) accept a string, a list or a map.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One row of `assets.jsonl`, with the fields the ranker reads.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct AssetRow {
    pub guid: String,
    pub path: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_subtype: Option<String>,
    #[serde(default, deserialize_with = "strings")]
    pub labels: Vec<String>,
    #[serde(default, deserialize_with = "strings")]
    pub llm_tags: Vec<String>,
    #[serde(default, deserialize_with = "text")]
    pub llm_summary: String,
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub filename_signals: Vec<String>,
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub llm_use_cases: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
}

/// One row of `packages.jsonl`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct PackageRow {
    pub package_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, alias = "root_path")]
    pub root: String,
    #[serde(default)]
    pub asset_count: u64,
    #[serde(default, alias = "types", alias = "type_histogram")]
    pub type_counts: BTreeMap<String, u64>,
    #[serde(default, alias = "llm_summary", deserialize_with = "text")]
    pub summary: String,
    /// The words its assets use most (names, types, folders, tags, labels,
    /// filename signals), most frequent first. A summary names only a
    /// package's top themes, so search builds this from the asset rows
    /// ([`super::load::read_packages_with_vocabulary`]) to choose a package
    /// by what it holds.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub asset_vocabulary: Vec<String>,
}

/// Every string in a JSON value: a string, the strings of a list, the values
/// of a map (and the keys whose value is `true`, as in `{"normal_map": true}`).
fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                match v {
                    Value::Bool(true) => out.push(key.clone()),
                    other => collect_strings(other, out),
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let mut out = Vec::new();
    collect_strings(&Value::deserialize(d)?, &mut out);
    Ok(out)
}

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(strings(d)?.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_asset_row() {
        let row: AssetRow = serde_json::from_value(serde_json::json!({
            "guid": "g", "path": "Assets/A.png", "labels": null,
            "filename_signals": {"role": "albedo", "normal_map": true, "lod": 0},
            "llm_use_cases": "hero shot"
        }))
        .unwrap();
        assert_eq!(row.filename_signals, ["albedo", "normal_map"]);
        assert_eq!(row.llm_use_cases, ["hero shot"]);
        assert!(row.labels.is_empty());
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
