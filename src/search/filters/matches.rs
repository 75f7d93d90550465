//! The predicate: does one row pass one filter? Only the row's own fields
//! are read (`docs/contracts.md#index-files`), so the same test serves the
//! rows search loads, the packages it chooses and the vectors it searches.
//!
//! Unity's rule for the operator: `:` lets a part match (`t:Texture` finds
//! `Texture2D`, `path:Rocks` any path containing it), `=` wants the whole
//! (`t=Texture`), both ignoring case. `dir:` and `ext:` name a whole folder
//! or extension either way, as in Unity; `l:` a whole label with `=`.
//!
//! A filter reads a row through its *facets* ([`facets`]): the values the
//! row shows to a key (its type names to `t:`, its folders to `dir:`, ...).
//! A row passes when one of its facets is [`Filter::accepts`]ed. The search
//! index posts every row under its facets, so a filter is answered there
//! by the same test on the same values, without reading rows.

use super::{Filter, Key};
use crate::search::records::AssetRow;

impl Filter {
    /// Whether `row` passes this filter (its negation applied).
    pub fn matches(&self, row: &AssetRow) -> bool {
        facets(row, self.key).any(|facet| self.accepts(facet)) != self.negated
    }

    /// Whether a row showing the facet `facet` passes this filter before
    /// negation. Facets compare ignoring ASCII case (only `:`'s part test
    /// folds other letters), so a facet may be given ASCII-lowercased.
    pub fn accepts(&self, facet: &str) -> bool {
        let value = self.value.as_str();
        match self.key {
            Key::Type | Key::Label | Key::Path => self.names(facet),
            Key::Dir | Key::Ext | Key::Guid => facet.eq_ignore_ascii_case(value),
            Key::Ref => self
                .target
                .as_deref()
                .is_some_and(|guid| facet.eq_ignore_ascii_case(guid)),
            Key::Prefab => match value {
                "any" => facet == "prefab" || facet == "model",
                _ => facet == value,
            },
            Key::Missing => true,
        }
    }

    /// The facets this filter accepts when they can be named (ASCII
    /// lowercase): every key but a `:` part test of a type, label or path.
    pub fn accepted_facets(&self) -> Option<Vec<String>> {
        let value = self.value.to_ascii_lowercase();
        Some(match self.key {
            Key::Type | Key::Label | Key::Path if !self.exact => return None,
            Key::Ref => self.target.iter().map(|guid| guid.to_ascii_lowercase()).collect(),
            Key::Prefab if value == "any" => vec!["prefab".to_owned(), "model".to_owned()],
            Key::Missing => vec![MISSING_SCRIPTS.to_owned()],
            _ => vec![value],
        })
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

/// The one facet of `missing:`: the row lacks some script.
const MISSING_SCRIPTS: &str = super::MISSING_VALUES[0];

/// The values `row` shows to filters of `key`.
pub fn facets(row: &AssetRow, key: Key) -> Box<dyn Iterator<Item = &str> + '_> {
    match key {
        Key::Type => Box::new(type_names(row)),
        Key::Label => Box::new(row.labels.iter().map(String::as_str)),
        Key::Dir => Box::new(folders(&row.path)),
        Key::Path => Box::new(std::iter::once(row.path.as_str())),
        Key::Ext => Box::new(extension(&row.path).into_iter()),
        Key::Ref => Box::new(row.dependencies.iter().flatten().map(String::as_str)),
        Key::Guid => Box::new(std::iter::once(row.guid.as_str())),
        Key::Prefab => {
            let prefab = row.asset_type == "Prefab";
            let shown = [
                (prefab, "prefab"),
                (prefab && row.variant_of.is_none(), "regular"),
                (row.variant_of.is_some(), "variant"),
                (row.asset_type == "Model", "model"),
            ];
            Box::new(shown.into_iter().filter(|(shows, _)| *shows).map(|(_, facet)| facet))
        }
        Key::Missing => {
            let missing = row.missing_scripts.as_ref().is_some_and(|guids| !guids.is_empty());
            Box::new(missing.then_some(MISSING_SCRIPTS).into_iter())
        }
    }
}

/// What `t:` compares: the type, the subtype (alone and as `Type/subtype`),
/// the component types of a prefab or scene and a ScriptableObject's script class.
fn type_names(row: &AssetRow) -> impl Iterator<Item = &str> {
    let subtype = row.type_subtype.as_deref();
    [row.asset_type.as_str()]
        .into_iter()
        .chain(subtype)
        .chain(subtype.and_then(|s| s.split_once('/')).map(|(_, sub)| sub))
        .chain(row.component_types.iter().flatten().map(String::as_str))
        .chain(row.script_class.as_deref().filter(|c| !c.is_empty()))
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
        filters.resolve_in(std::slice::from_ref(row));
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
        assert_eq!(filters.resolve_in(&rows), ["Assets/Gone.mat"]);
        let Filters(list) = &filters;
        assert_eq!(list[0].target.as_deref(), Some("11111111111111111111111111111111"));
        assert!(!filters.matches(&prefab), "the unresolved ref matches nothing");
        let mut filters = parse("ref:Assets/Rock.mat").unwrap().filters;
        filters.resolve_in(&rows);
        assert!(filters.matches(&prefab) && !filters.matches(&material));
    }
}
