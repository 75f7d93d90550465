//! The asset row: one line of `assets.jsonl`
//! (`schemas/asset-record.schema.json`), from the scan that makes it to
//! the search that reads it back.

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use super::record::Depth;
use super::tolerant::{count, list, optional_list, optional_text, string, text};

/// One asset, the same from the scan through tagging to `assets.jsonl`
/// and every reader of the index: the scan fills in what it read, finalize
/// adds the tags and cuts it to the index's depth ([`AssetRow::at_depth`],
/// [`AssetRow::bounded`]), search reads it back.
///
/// Written, it is the exact bytes of a line: its fields in this order, the
/// ones it does not hold (`None`, no `filename_signals`) left out, so equal
/// inputs give equal bytes. Read, it takes any row a person or an older
/// index wrote: only `guid` and `path` are required, a list may come as a
/// string or a map and a text as a list (`super::tolerant`), a count or a
/// time of another kind reads as none; a path outside `Assets/` and
/// `Packages/` does not decode, so every reader skips that row like any
/// bad row. About as fast to read as search's own reader was (it is on
/// the search path).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetRow {
    /// The asset's guid, from its `.meta`.
    pub guid: String,
    /// The asset's project-relative path.
    #[serde(deserialize_with = "project_path")]
    pub path: String,
    /// The file's name without its extension.
    #[serde(default)]
    pub name: String,
    /// The asset's Unity type (`Prefab`, `Material`, ...).
    #[serde(default, rename = "type")]
    pub asset_type: String,
    /// The subtype the taxonomy gave it (`Texture/Sprite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_subtype: Option<String>,
    /// What the file's name says of the asset (`albedo` from `_diffuse`).
    #[serde(default, deserialize_with = "list", skip_serializing_if = "Vec::is_empty")]
    pub filename_signals: Vec<String>,
    /// Curated labels, then `.meta` labels (see `labels.rs`).
    #[serde(default, deserialize_with = "list")]
    pub labels: Vec<String>,
    /// The tagger's tags.
    #[serde(default, deserialize_with = "list")]
    pub llm_tags: Vec<String>,
    /// The tagger's one-sentence summary.
    #[serde(default, deserialize_with = "text")]
    pub llm_summary: String,
    /// The file's size in bytes.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The asset's mtime, RFC 3339 UTC to the second.
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// The package it belongs to (see `packages.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
    /// The guids the file references, sorted; a row keeps the first
    /// `ROW_DEPENDENCIES` (`graph.json` has them all).
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<String>>,
    /// How many guids the asset references, when `dependencies` lists only the first ones.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub dependency_count: Option<usize>,
    /// What the asset is for: the tagger's, else the taxonomy's.
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub llm_use_cases: Option<Vec<String>>,
    /// A prefab's or scene's component classes, sorted.
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub component_types: Option<Vec<String>>,
    /// A material's saved properties (depth rich).
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub shader_props: Option<Vec<String>>,
    /// An animator controller's states, sorted.
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub animator_states: Option<Vec<String>>,
    /// GameObject names of a prefab or scene, sorted, at most 128.
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub child_names: Option<Vec<String>>,
    /// A prefab variant's parent prefab (guid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<String>,
    /// A material's shader name.
    #[serde(default, deserialize_with = "optional_text", skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    /// Names of the textures a material uses.
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    /// A ScriptableObject asset's script class.
    #[serde(default, deserialize_with = "optional_text", skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    /// `m_Script` guids that resolve to no script (`docs/indexing.md#content-facts`).
    #[serde(default, deserialize_with = "optional_list", skip_serializing_if = "Option::is_none")]
    pub missing_scripts: Option<Vec<String>>,
}

/// Most guids a row lists in `dependencies`: a scene referencing 30,000
/// assets keeps its row far under `limits.line_kb` (its graph node keeps them all).
const ROW_DEPENDENCIES: usize = 4096;
/// Most items of any other list of a row (labels, tags, component types,
/// child names, …), as the Unity YAML reader already keeps its name sets.
const ROW_ITEMS: usize = super::unity_yaml::MAX_NAMES;
/// Most bytes one name, label, tag, shader or class takes in a row, as JSON
/// writes it (escapes counted).
const ROW_TEXT: usize = 256;
/// Most bytes `llm_summary` takes in a row, as JSON writes it.
const ROW_SUMMARY: usize = 1024;

impl AssetRow {
    /// The row `depth` keeps: a scanned row holds its size, time, package
    /// and use cases at every depth, a minimal one none of them. (The
    /// content facts are read only at the depths that keep them.)
    pub fn at_depth(mut self, depth: Depth) -> Self {
        if depth == Depth::Minimal {
            self.size = None;
            self.last_modified = None;
            self.package_id = None;
            self.llm_use_cases = None;
        }
        self
    }

    /// The row as `assets.jsonl` holds it: every list and free text cut to
    /// the caps above, so that whatever a project's files, a model or a
    /// previous index hold, a row stays under half a megabyte and within
    /// what the index's readers accept (`limits.line_kb`, 1024 by default).
    pub fn bounded(mut self) -> Self {
        if let Some(dependencies) = self.dependencies.as_mut().filter(|d| d.len() > ROW_DEPENDENCIES) {
            self.dependency_count = Some(dependencies.len());
            dependencies.truncate(ROW_DEPENDENCIES);
        }
        for list in [&mut self.filename_signals, &mut self.labels, &mut self.llm_tags] {
            bound(list);
        }
        let optional = [
            &mut self.llm_use_cases,
            &mut self.component_types,
            &mut self.shader_props,
            &mut self.animator_states,
            &mut self.child_names,
            &mut self.textures,
            &mut self.missing_scripts,
        ];
        for list in optional.into_iter().flatten() {
            bound(list);
        }
        for text in [&mut self.shader, &mut self.script_class].into_iter().flatten() {
            cut(text, ROW_TEXT);
        }
        cut(&mut self.llm_summary, ROW_SUMMARY);
        self
    }

    /// What a model is shown of the row, as search's stages pass rows on
    /// (`IndexFiles::asset_lines`): the words search reads, without the
    /// guid lists, size and time that tell a model nothing and cost it
    /// tokens, nor any field that is empty.
    pub fn shown(&self) -> Shown<'_> {
        Shown(self)
    }
}

/// A row as a model is shown it ([`AssetRow::shown`]).
pub struct Shown<'a>(&'a AssetRow);

impl Serialize for Shown<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let row = self.0;
        let mut out = serializer.serialize_struct("AssetRow", 18)?;
        out.serialize_field("guid", &row.guid)?;
        out.serialize_field("path", &row.path)?;
        out.serialize_field("name", &row.name)?;
        out.serialize_field("type", &row.asset_type)?;
        if let Some(subtype) = &row.type_subtype {
            out.serialize_field("type_subtype", subtype)?;
        }
        out.serialize_field("labels", &row.labels)?;
        out.serialize_field("llm_tags", &row.llm_tags)?;
        out.serialize_field("llm_summary", &row.llm_summary)?;
        shown_list(&mut out, "filename_signals", Some(&row.filename_signals))?;
        shown_list(&mut out, "llm_use_cases", row.llm_use_cases.as_ref())?;
        if let Some(package) = &row.package_id {
            out.serialize_field("package_id", package)?;
        }
        shown_list(&mut out, "component_types", row.component_types.as_ref())?;
        shown_list(&mut out, "child_names", row.child_names.as_ref())?;
        shown_text(&mut out, "shader", row.shader.as_ref())?;
        shown_list(&mut out, "textures", row.textures.as_ref())?;
        shown_list(&mut out, "animator_states", row.animator_states.as_ref())?;
        shown_text(&mut out, "script_class", row.script_class.as_ref())?;
        shown_list(&mut out, "shader_props", row.shader_props.as_ref())?;
        out.end()
    }
}

/// `key: list`, unless the row leaves the list out or holds it empty.
fn shown_list<S: SerializeStruct>(out: &mut S, key: &'static str, list: Option<&Vec<String>>) -> Result<(), S::Error> {
    match list {
        Some(list) if !list.is_empty() => out.serialize_field(key, list),
        _ => Ok(()),
    }
}

/// `key: text`, unless the row leaves the text out or holds it empty.
fn shown_text<S: SerializeStruct>(out: &mut S, key: &'static str, text: Option<&String>) -> Result<(), S::Error> {
    match text {
        Some(text) if !text.is_empty() => out.serialize_field(key, text),
        _ => Ok(()),
    }
}

/// A list cut to [`ROW_ITEMS`] items of at most [`ROW_TEXT`] bytes each.
fn bound(list: &mut Vec<String>) {
    list.truncate(ROW_ITEMS);
    for item in list {
        cut(item, ROW_TEXT);
    }
}

/// `text` cut on a character boundary to at most `max` bytes as JSON
/// writes it: a control character takes up to six.
fn cut(text: &mut String, max: usize) {
    let mut written = 0;
    for (at, c) in text.char_indices() {
        written += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if c < ' ' => 6,
            c => c.len_utf8(),
        };
        if written > max {
            text.truncate(at);
            return;
        }
    }
}

/// Why `path` cannot be an asset row's path, if it cannot: a row names a
/// file of the project under `Assets/` or `Packages/`, relative, never
/// climbing out with `..` (an edited or shipped index is data; a row
/// `/etc/…` must not steer pick or build outside the project).
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    let inside = path.strip_prefix("Assets/").or_else(|| path.strip_prefix("Packages/"));
    let why = match inside {
        _ if path.starts_with(['/', '\\']) || path.get(1..2) == Some(":") => "it is absolute",
        _ if path.contains('\0') => "it holds a NUL character",
        None => "it is not under Assets/ or Packages/",
        Some(rest) if rest.split(['/', '\\']).any(|part| part == "..") => "it climbs out with `..`",
        Some(rest) if rest.split(['/', '\\']).all(str::is_empty) => "it names no file",
        Some(_) => return Ok(()),
    };
    Err(format!("the path {path:?} is refused: {why}"))
}

/// Serde's reader of a row's path: [`check_path`], so every reader of
/// the index skips such a row as it skips any row it cannot read.
pub(crate) fn project_path<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let path = String::deserialize(deserializer)?;
    check_path(&path).map_err(serde::de::Error::custom)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_path_is_a_project_file_under_assets_or_packages() {
        for ok in [
            "Assets/a.prefab",
            "Packages/com.x/b.mat",
            "Assets/.../c.png",
            "Assets/a..b/c",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("/etc/passwd.prefab", "absolute"),
            ("\\\\host\\x.prefab", "absolute"),
            ("C:/x.prefab", "absolute"),
            ("Assets/../../etc/x.prefab", "`..`"),
            ("Assets/a\\..\\..\\x", "`..`"),
            ("ProjectSettings/x.asset", "not under"),
            ("Assets", "not under"),
            ("Assets/", "names no file"),
            ("Assets/a\0.prefab", "NUL"),
        ] {
            let err = check_path(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let row = r#"{"guid":"a","path":"/etc/x.prefab","name":"x","type":"Prefab","labels":[],"llm_tags":[],"llm_summary":""}"#;
        let err = serde_json::from_str::<AssetRow>(row).unwrap_err().to_string();
        assert!(err.contains("absolute"), "{err}");
    }

    /// A normal-depth line with every field, in the order the row writes them.
    const FULL_LINE: &str = concat!(
        r#"{"guid":"g","path":"Assets/Door.prefab","name":"Door","type":"Prefab","type_subtype":"Prefab/prop","#,
        r#""filename_signals":["lod"],"labels":["wood"],"llm_tags":["door"],"llm_summary":"A door.","size":12,"#,
        r#""last_modified":"2026-01-02T03:04:05Z","package_id":"project","dependencies":["a","b"],"#,
        r#""dependency_count":5000,"llm_use_cases":["prop"],"component_types":["Hinge"],"shader_props":[],"#,
        r#""animator_states":["Open"],"child_names":["Frame"],"variant_of":"p","shader":"Standard","#,
        r#""textures":["Oak"],"script_class":"DoorData","missing_scripts":["m"]}"#
    );

    #[test]
    fn a_row_is_written_as_it_was_read_and_left_out_fields_stay_out() {
        let row: AssetRow = serde_json::from_str(FULL_LINE).unwrap();
        assert_eq!(serde_json::to_string(&row).unwrap(), FULL_LINE);
        assert_eq!(row.shader_props, Some(vec![]), "an empty list is not a list left out");
        let minimal = r#"{"guid":"g","path":"Assets/A.png","name":"A","type":"Texture2D","labels":[],"llm_tags":[],"llm_summary":""}"#;
        let row: AssetRow = serde_json::from_str(minimal).unwrap();
        assert_eq!(serde_json::to_string(&row).unwrap(), minimal);
    }

    #[test]
    fn a_row_reads_what_a_person_or_an_older_index_wrote() {
        let row: AssetRow = serde_json::from_value(serde_json::json!({
            "guid": "g", "path": "Assets/A.png", "labels": null, "unknown": {"any": 1},
            "filename_signals": {"role": "albedo", "normal_map": true, "lod": 0},
            "llm_use_cases": "hero shot", "llm_summary": ["one", "two"], "shader": ["Unlit", "Color"],
            "size": "2 MB", "dependency_count": -1, "last_modified": 1_700_000_000
        }))
        .unwrap();
        assert_eq!(row.filename_signals, ["albedo", "normal_map"]);
        assert_eq!(row.llm_use_cases.as_deref(), Some(&["hero shot".to_owned()][..]));
        assert_eq!(
            (row.llm_summary.as_str(), row.shader.as_deref()),
            ("one two", Some("Unlit Color"))
        );
        assert!(row.labels.is_empty() && row.name.is_empty());
        assert_eq!(
            (row.size, row.dependency_count, row.last_modified),
            (None, None, None),
            "a count or a time of another kind is none"
        );
    }

    #[test]
    fn a_model_is_shown_no_guid_list_no_size_no_time_and_no_empty_field() {
        let row: AssetRow = serde_json::from_str(FULL_LINE).unwrap();
        assert_eq!(
            serde_json::to_string(&row.shown()).unwrap(),
            concat!(
                r#"{"guid":"g","path":"Assets/Door.prefab","name":"Door","type":"Prefab","type_subtype":"Prefab/prop","#,
                r#""labels":["wood"],"llm_tags":["door"],"llm_summary":"A door.","filename_signals":["lod"],"#,
                r#""llm_use_cases":["prop"],"package_id":"project","component_types":["Hinge"],"#,
                r#""child_names":["Frame"],"shader":"Standard","textures":["Oak"],"animator_states":["Open"],"#,
                r#""script_class":"DoorData"}"#
            )
        );
        let bare = AssetRow {
            guid: "g".into(),
            path: "Assets/A.png".into(),
            shader: Some(String::new()),
            ..AssetRow::default()
        };
        assert_eq!(
            serde_json::to_string(&bare.shown()).unwrap(),
            r#"{"guid":"g","path":"Assets/A.png","name":"","type":"","labels":[],"llm_tags":[],"llm_summary":""}"#
        );
    }

    #[test]
    fn a_minimal_row_keeps_no_size_time_package_or_use_cases() {
        let row: AssetRow = serde_json::from_str(FULL_LINE).unwrap();
        let minimal = row.clone().at_depth(Depth::Minimal);
        assert_eq!(
            (
                minimal.size,
                minimal.last_modified,
                minimal.package_id,
                minimal.llm_use_cases
            ),
            (None, None, None, None)
        );
        assert_eq!(row.clone().at_depth(Depth::Normal), row);
    }

    #[test]
    fn a_bounded_row_keeps_a_count_of_its_references_and_fits_its_caps() {
        let guids: Vec<String> = (0..30_000).map(|i| format!("{i:032x}")).collect();
        let long = "\u{1}".repeat(10_000);
        let row = AssetRow {
            guid: "f".repeat(32),
            path: "Assets/Big.prefab".into(),
            name: "Big".into(),
            asset_type: "Prefab".into(),
            labels: vec![long.clone(); 1000],
            llm_tags: vec!["tag".into(); 1000],
            llm_summary: long.clone(),
            size: Some(1),
            dependencies: Some(guids),
            component_types: Some(vec![long.clone(); 1000]),
            shader_props: Some(vec![long.clone(); 1000]),
            animator_states: Some(vec![long.clone(); 1000]),
            child_names: Some(vec![long.clone(); 1000]),
            shader: Some(long.clone()),
            textures: Some(vec![long.clone(); 1000]),
            script_class: Some(long),
            missing_scripts: Some(vec!["0".repeat(32); 1000]),
            ..AssetRow::default()
        }
        .bounded();
        assert_eq!(row.dependencies.as_ref().map(Vec::len), Some(ROW_DEPENDENCIES));
        assert_eq!(row.dependency_count, Some(30_000));
        assert_eq!(row.labels.len(), ROW_ITEMS);
        assert_eq!(
            row.labels[0].len(),
            ROW_TEXT / 6,
            "control characters count as JSON writes them"
        );
        let line = serde_json::to_string(&row).unwrap();
        assert!(line.len() < 512 * 1024, "{} bytes", line.len());
        let mut text = "ab\"cd".to_owned();
        cut(&mut text, 4);
        assert_eq!(text, "ab\"", "the quote takes two bytes");
    }
}
