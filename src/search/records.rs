//! What search reads from the index: asset and package rows (fields per
//! `index_depth`: `docs/contracts.md#index-depth`).
//!
//! Defined here rather than shared with the indexer so search stays tolerant:
//! every field but `guid` and `path` is optional, and free-form fields
//! (`filename_signals`, `llm_use_cases`) accept a string, a list or a map.

use std::collections::BTreeMap;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One row of `assets.jsonl`, with the fields the ranker reads. Not the
/// indexer's `index::record::AssetRecord`, which writes the exact bytes of
/// a row: this one reads any row a person or an older index wrote (see
/// above), takes a list left out as empty, and writes back what a model is
/// shown of a row, without its guids.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct AssetRow {
    /// The asset's guid.
    pub guid: String,
    /// A row naming a path outside `Assets/` and `Packages/` does not
    /// decode: every reader skips it like any bad row.
    #[serde(deserialize_with = "crate::index::record::project_path")]
    pub path: String,
    /// The file's name without its extension.
    #[serde(default)]
    pub name: String,
    /// The asset's Unity type.
    #[serde(default, rename = "type")]
    pub asset_type: String,
    /// The subtype the taxonomy gave it (`Texture/Sprite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_subtype: Option<String>,
    /// Curated labels, then `.meta` labels.
    #[serde(default, deserialize_with = "strings")]
    pub labels: Vec<String>,
    /// The tagger's tags.
    #[serde(default, deserialize_with = "strings")]
    pub llm_tags: Vec<String>,
    /// The tagger's one-sentence summary.
    #[serde(default, deserialize_with = "text")]
    pub llm_summary: String,
    /// What the file's name says of the asset (`albedo` from `_diffuse`).
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub filename_signals: Vec<String>,
    /// What the taxonomy says the asset is for.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub llm_use_cases: Vec<String>,
    /// The package it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
    /// Content facts (normal depth and up): a prefab's or scene's
    /// component classes and GameObject names, a material's shader and
    /// textures, a controller's states, a ScriptableObject's class; and, at
    /// rich depth, a material's saved properties.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub component_types: Vec<String>,
    /// The names of a prefab's or scene's child objects.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub child_names: Vec<String>,
    /// A material's shader.
    #[serde(default, deserialize_with = "text", skip_serializing_if = "String::is_empty")]
    pub shader: String,
    /// The textures a material uses.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub textures: Vec<String>,
    /// An animator controller's states.
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub animator_states: Vec<String>,
    /// The class a script defines.
    #[serde(default, deserialize_with = "text", skip_serializing_if = "String::is_empty")]
    pub script_class: String,
    /// A material's shader properties (depth rich).
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub shader_props: Vec<String>,
    /// The guids the file references (normal depth). Read by the `ref:`
    /// filter where rows are loaded, never written back: guids tell a
    /// model nothing and cost it tokens.
    #[serde(default, deserialize_with = "strings", skip_serializing)]
    pub dependencies: Vec<String>,
    /// A prefab variant's parent prefab guid (`prefab:variant`; not written back).
    #[serde(default, skip_serializing)]
    pub variant_of: Option<String>,
    /// `m_Script` guids of MonoBehaviours that resolve to no script of the
    /// project (`missing:scripts`; not written back).
    #[serde(default, deserialize_with = "strings", skip_serializing)]
    pub missing_scripts: Vec<String>,
}

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
    #[serde(default, deserialize_with = "strings", skip_serializing_if = "Vec::is_empty")]
    pub(crate) asset_vocabulary: Vec<String>,
}

/// Collects every string of a value as it is decoded, with no intermediate
/// JSON tree: a string, the strings of a list, the values of a map (and the
/// keys whose value is `true`, as in `{"normal_map": true}`); numbers,
/// `false` and null add nothing.
struct Collect<'a> {
    out: &'a mut Vec<String>,
    /// The map key this value belongs to: pushed when the value is `true`.
    key: Option<String>,
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, a list or a map of strings")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.out.push(v.to_owned());
        Ok(())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.out.push(v);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        if let (true, Some(key)) = (v, self.key) {
            self.out.push(key);
        }
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Collect {
                out: &mut *self.out,
                key: None,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Collect {
                out: &mut *self.out,
                key: Some(key),
            })?;
        }
        Ok(())
    }
}

fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let mut out = Vec::new();
    Collect {
        out: &mut out,
        key: None,
    }
    .deserialize(d)?;
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

        let text = r#"{"guid":"g","path":"Assets/P","llm_tags":["a",["b"],{"c":true,"d":"e","f":false,"g":[true]},3,null],
                       "llm_summary":["one","two"]}"#;
        let row: AssetRow = serde_json::from_str(text).unwrap();
        assert_eq!(row.llm_tags, ["a", "b", "c", "e"], "a true inside a list names nothing");
        assert_eq!(row.llm_summary, "one two");
    }

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
