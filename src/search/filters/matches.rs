//! The predicate: does one row pass one filter? Only the row's own fields
//! are read (`docs/contracts.md#index-files`), so the same test serves the
//! rows search loads, the packages it chooses and the vectors it searches.
//!
//! Unity's rule for the operator: `:` lets a part match (`t:Texture` finds
//! `Texture2D`, `path:Rocks` any path containing it), `=` wants the whole
//! (`t=Texture`), both ignoring case. `dir:` and `ext:` name a whole folder
//! or extension either way, as in Unity; `l:` a whole label with `=`.

use super::{Filter, Key};
use crate::search::records::AssetRow;

impl Filter {
    /// Whether `row` passes this filter (its negation applied).
    pub fn matches(&self, row: &AssetRow) -> bool {
        self.holds(row) != self.negated
    }

    fn holds(&self, row: &AssetRow) -> bool {
        let value = self.value.as_str();
        match self.key {
            Key::Type => type_names(row).any(|name| self.names(name)),
            Key::Label => row.labels.iter().any(|label| self.names(label)),
            Key::Dir => folders(&row.path).any(|folder| folder.eq_ignore_ascii_case(value)),
            Key::Path => self.names(&row.path),
            Key::Ext => extension(&row.path).is_some_and(|ext| ext.eq_ignore_ascii_case(value)),
            Key::Ref => self
                .target
                .as_deref()
                .is_some_and(|guid| row.dependencies.iter().any(|d| d.eq_ignore_ascii_case(guid))),
            Key::Guid => row.guid.eq_ignore_ascii_case(value),
            Key::Prefab => {
                let prefab = row.kind == "Prefab";
                match value {
                    "variant" => row.variant_of.is_some(),
                    "regular" => prefab && row.variant_of.is_none(),
                    "model" => row.kind == "Model",
                    _ => prefab || row.kind == "Model",
                }
            }
            Key::Missing => !row.missing_scripts.is_empty(),
        }
    }

    /// `name` matches the value: whole with `=`, any part with `:`, ignoring case.
    fn names(&self, name: &str) -> bool {
        if self.exact {
            name.eq_ignore_ascii_case(&self.value)
        } else {
            name.to_lowercase().contains(&self.value.to_lowercase())
        }
    }
}

/// What `t:` compares: the type, the subtype (alone and as `Type/subtype`),
/// the component types of a prefab or scene and a ScriptableObject's script class.
fn type_names(row: &AssetRow) -> impl Iterator<Item = &str> {
    let subtype = row.type_subtype.as_deref();
    [row.kind.as_str()]
        .into_iter()
        .chain(subtype)
        .chain(subtype.and_then(|s| s.split_once('/')).map(|(_, sub)| sub))
        .chain(row.component_types.iter().map(String::as_str))
        .chain(Some(row.script_class.as_str()).filter(|c| !c.is_empty()))
}

/// The folders of a project-relative path, outermost first (`Assets` included).
fn folders(path: &str) -> impl Iterator<Item = &str> {
    let dirs = path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
    dirs.split('/').filter(|d| !d.is_empty())
}

/// The extension of the file a path names, without its dot.
fn extension(path: &str) -> Option<&str> {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.rsplit_once('.').map(|(_, ext)| ext).filter(|ext| !ext.is_empty())
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Filters};
    use super::*;

    fn row(json: serde_json::Value) -> AssetRow {
        serde_json::from_value(json).unwrap()
    }

    fn passes(query: &str, row: &AssetRow) -> bool {
        let mut filters = parse(query).unwrap().filters;
        filters.resolve(std::slice::from_ref(row));
        filters.matches(row)
    }

    #[test]
    fn each_key_reads_its_field() {
        let hero = row(serde_json::json!({
            "guid": "0123456789abcdef0123456789abcdef",
            "path": "Assets/Environment/Props/Hero Lamp.prefab",
            "type": "Prefab", "type_subtype": "Prefab/character",
            "labels": ["Hero", "lit"],
            "component_types": ["Light", "PlayerController"],
            "dependencies": ["fedcba9876543210fedcba9876543210"],
            "variant_of": "ffffffffffffffffffffffffffffffff",
            "missing_scripts": ["eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"]
        }));
        for (query, expected) in [
            ("t:Prefab", true),
            ("t:prefab", true),
            ("t:character", true),
            ("t:Prefab/character", true),
            ("t:Light", true),
            ("t=Light", true),
            ("t=Lig", false),
            ("t:Lig", true),
            ("t:Material", false),
            ("l:hero", true),
            ("l=her", false),
            ("dir:environment", true),
            ("dir:Environ", false),
            ("dir:Hero", false),
            ("path:Props/Hero", true),
            ("path=Assets/Environment/Props/Hero Lamp.prefab", false),
            ("path=\"Assets/Environment/Props/Hero Lamp.prefab\"", true),
            ("ext:prefab", true),
            ("ext:.PREFAB", true),
            ("ext:pre", false),
            ("ref:fedcba9876543210fedcba9876543210", true),
            ("ref:00000000000000000000000000000000", false),
            ("0123456789ABCDEF0123456789ABCDEF", true),
            ("guid:00000000000000000000000000000000", false),
            ("prefab:variant", true),
            ("prefab:regular", false),
            ("prefab:any", true),
            ("prefab:model", false),
            ("missing:scripts", true),
            ("-missing:scripts", false),
            ("-t:Material", true),
            ("t:Prefab l:lit -dir:Rocks", true),
            ("t:Prefab t:Material", false),
        ] {
            assert_eq!(passes(query, &hero), expected, "{query}");
        }
    }

    #[test]
    fn rows_without_content_fields_fail_what_needs_them() {
        let bare = row(serde_json::json!({"guid": "a", "path": "Assets/Rock.mat", "type": "Material"}));
        assert!(!passes("missing:scripts", &bare));
        assert!(!passes("prefab:variant", &bare));
        assert!(!passes("ref:fedcba9876543210fedcba9876543210", &bare));
        assert!(passes("-ref:fedcba9876543210fedcba9876543210", &bare));
        let so = row(
            serde_json::json!({"guid": "b", "path": "Assets/W.asset", "type": "ScriptableObject", "script_class": "WaveConfig"}),
        );
        assert!(passes("t:WaveConfig", &so));
        let model = row(serde_json::json!({"guid": "c", "path": "Assets/Well.fbx", "type": "Model"}));
        assert!(passes("prefab:model", &model) && passes("prefab:any", &model) && !passes("prefab:regular", &model));
        let no_ext = row(serde_json::json!({"guid": "d", "path": "Assets/LICENSE"}));
        assert!(!passes("ext:LICENSE", &no_ext));
    }

    #[test]
    fn a_ref_path_resolves_to_its_guid_through_the_index() {
        let material = row(serde_json::json!({"guid": "11111111111111111111111111111111", "path": "Assets/Rock.mat"}));
        let prefab = row(serde_json::json!({
            "guid": "22222222222222222222222222222222", "path": "Assets/Rock.prefab",
            "dependencies": ["11111111111111111111111111111111"]
        }));
        let rows = [material.clone(), prefab.clone()];
        let mut filters = parse("ref:assets/rock.mat ref:Assets/Gone.mat").unwrap().filters;
        assert_eq!(filters.resolve(&rows), ["Assets/Gone.mat"]);
        let Filters(list) = &filters;
        assert_eq!(list[0].target.as_deref(), Some("11111111111111111111111111111111"));
        assert!(!filters.matches(&prefab), "the unresolved ref matches nothing");
        let mut filters = parse("ref:Assets/Rock.mat").unwrap().filters;
        filters.resolve(&rows);
        assert!(filters.matches(&prefab) && !filters.matches(&material));
    }
}
