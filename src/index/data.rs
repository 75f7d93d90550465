//! The indexer's tables, parsed from `data/asset-types.yml`,
//! `data/type-taxonomy.yml` and `data/filename-conventions.yml`.
//!
//! The files are embedded in the binary and overridable per project, so the
//! indexer never reads them itself: whoever loads resources hands their text
//! to [`IndexData::from_yaml`].

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context as _;
use serde::Deserialize;

/// Everything the scan and the builtin tagger look up.
#[derive(Debug, Clone)]
pub struct IndexData {
    pub(crate) types: AssetTypes,
    /// Subtype rules per type name.
    pub taxonomy: BTreeMap<String, TypeTaxonomy>,
    pub(crate) conventions: Conventions,
    /// Importer setting keys any rule mentions: the only settings a `.meta`
    /// parse keeps.
    pub(crate) setting_keys: BTreeSet<String>,
    /// SHA-256 of the three source texts: a scan's result depends on them.
    pub digest: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AssetTypes {
    pub(crate) fallback: String,
    pub(crate) rules: Vec<TypeRule>,
    pub(crate) class_ids: BTreeMap<u32, String>,
    /// Extensions of files holding Unity YAML (read at index_depth normal/rich).
    pub(crate) yaml_extensions: BTreeSet<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TypeRule {
    #[serde(rename = "type")]
    pub(crate) type_name: String,
    pub(crate) extensions: BTreeSet<String>,
    #[serde(default)]
    pub importer: Option<String>,
    #[serde(default)]
    pub settings: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(crate) classes: Vec<u32>,
}

/// How an asset type's subtype is chosen (`data/type-taxonomy.yml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeTaxonomy {
    /// The letters-only prefix of `type_subtype` when the type name has other
    /// characters (`Texture2D` → `Texture`); the type name otherwise.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub(crate) rules: Vec<SubtypeRule>,
    #[serde(default)]
    pub(crate) default: Option<String>,
    #[serde(default)]
    pub(crate) use_cases: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubtypeRule {
    pub subtype: String,
    #[serde(default)]
    pub settings: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(crate) signals: Vec<String>,
    #[serde(default)]
    pub folders: Vec<String>,
    #[serde(default)]
    pub words: Vec<String>,
    #[serde(default)]
    pub(crate) use_cases: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Conventions {
    pub(crate) signals: Vec<SignalRule>,
    pub(crate) project_folders: BTreeSet<String>,
    pub(crate) package_markers: BTreeSet<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignalRule {
    pub signal: String,
    #[serde(default)]
    pub prefix: Vec<String>,
    #[serde(default)]
    pub(crate) suffix: Vec<String>,
    #[serde(default)]
    pub contains: Vec<String>,
}

impl IndexData {
    /// Parse the three data files; errors name the file and the problem.
    pub fn from_yaml(taxonomy: &str, conventions: &str, types: &str) -> anyhow::Result<Self> {
        let digest = {
            use sha2::{Digest, Sha256};
            let mut hasher = Sha256::new();
            for text in [taxonomy, conventions, types] {
                hasher.update(text.len().to_le_bytes());
                hasher.update(text.as_bytes());
            }
            engine::digest::hex(&hasher.finalize())
        };
        let mut types: AssetTypes =
            serde_yaml::from_str(types).context("data/asset-types.yml is not a valid type table")?;
        let mut taxonomy: BTreeMap<String, TypeTaxonomy> =
            serde_yaml::from_str(taxonomy).context("data/type-taxonomy.yml is not a valid taxonomy")?;
        let mut conventions: Conventions = serde_yaml::from_str(conventions)
            .context("data/filename-conventions.yml is not a valid convention table")?;

        // Matching is case-insensitive: lower-case every key once here.
        for rule in &mut types.rules {
            rule.extensions = rule.extensions.iter().map(|e| e.to_lowercase()).collect();
        }
        types.yaml_extensions = types.yaml_extensions.iter().map(|e| e.to_lowercase()).collect();
        for rule in &mut conventions.signals {
            for list in [&mut rule.prefix, &mut rule.suffix, &mut rule.contains] {
                list.iter_mut().for_each(|p| *p = p.to_lowercase());
            }
        }
        conventions.project_folders = conventions.project_folders.iter().map(|f| f.to_lowercase()).collect();
        conventions.package_markers = conventions.package_markers.iter().map(|f| f.to_lowercase()).collect();
        for entry in taxonomy.values_mut() {
            for rule in &mut entry.rules {
                rule.folders.iter_mut().for_each(|f| *f = f.to_lowercase());
                rule.words.iter_mut().for_each(|w| *w = w.to_lowercase());
            }
        }

        check_subtypes(&taxonomy)?;
        let signal_names: BTreeSet<&str> = conventions.signals.iter().map(|s| s.signal.as_str()).collect();
        for (type_name, entry) in &taxonomy {
            for rule in &entry.rules {
                if let Some(unknown) = rule.signals.iter().find(|s| !signal_names.contains(s.as_str())) {
                    anyhow::bail!(
                        "data/type-taxonomy.yml: {type_name}/{} uses signal `{unknown}`, which \
                         data/filename-conventions.yml does not define",
                        rule.subtype
                    );
                }
            }
        }

        let setting_keys = types
            .rules
            .iter()
            .flat_map(|r| r.settings.keys())
            .chain(
                taxonomy
                    .values()
                    .flat_map(|t| t.rules.iter().flat_map(|r| r.settings.keys())),
            )
            .cloned()
            .collect();
        Ok(Self {
            types,
            taxonomy,
            conventions,
            setting_keys,
            digest,
        })
    }

    /// The name of a Unity class ID, if the table knows it.
    pub(crate) fn class_name(&self, class_id: u32) -> Option<&str> {
        self.types.class_ids.get(&class_id).map(String::as_str)
    }
}

/// `type_subtype` must match `^[A-Za-z]+/[a-z0-9-]+$`: reject data that could not.
fn check_subtypes(taxonomy: &BTreeMap<String, TypeTaxonomy>) -> anyhow::Result<()> {
    let kebab = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    for (type_name, entry) in taxonomy {
        let category = entry.category.as_deref().unwrap_or(type_name);
        anyhow::ensure!(
            !category.is_empty() && category.bytes().all(|b| b.is_ascii_alphabetic()),
            "data/type-taxonomy.yml: `{type_name}` needs a letters-only `category:` for its type_subtype prefix"
        );
        let subtypes = entry.rules.iter().map(|r| &r.subtype).chain(entry.default.as_ref());
        for subtype in subtypes {
            anyhow::ensure!(
                kebab(subtype),
                "data/type-taxonomy.yml: subtype `{type_name}/{subtype}` must be kebab-case (a-z, 0-9, -)"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) fn embedded() -> IndexData {
    IndexData::from_yaml(
        include_str!("../../data/type-taxonomy.yml"),
        include_str!("../../data/filename-conventions.yml"),
        include_str!("../../data/asset-types.yml"),
    )
    .expect("the embedded data files parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse_and_collect_setting_keys() {
        let data = embedded();
        assert!(data.setting_keys.contains("textureType"));
        assert!(data.setting_keys.contains("animationType"));
        assert_eq!(data.class_name(114), Some("MonoBehaviour"));
    }

    #[test]
    fn rejects_a_subtype_that_is_not_kebab_case() {
        let taxonomy = "Sprite:\n  rules:\n    - {subtype: Big_UI, folders: [ui]}\n";
        let err = IndexData::from_yaml(
            taxonomy,
            include_str!("../../data/filename-conventions.yml"),
            include_str!("../../data/asset-types.yml"),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("Sprite/Big_UI"), "{err:#}");
    }

    #[test]
    fn rejects_an_unknown_signal() {
        let taxonomy = "Sprite:\n  rules:\n    - {subtype: ui, signals: [sparkle]}\n";
        let err = IndexData::from_yaml(
            taxonomy,
            include_str!("../../data/filename-conventions.yml"),
            include_str!("../../data/asset-types.yml"),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("sparkle"), "{err:#}");
    }
}
