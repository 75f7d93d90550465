//! The filter channel ([`crate::search::filters`]): the dictionary posts
//! every row under each of its facets ([`facets`]), a key per filter key and
//! value, so the rows a query's filters keep are unions and intersections
//! of postings — no row is read, whatever the project's size.
//!
//! A facet's key holds its value ASCII-lowercased; [`Filter::accepts`]
//! ignores ASCII case, so the keys a filter accepts are exactly the facets
//! of the rows it would pass in a scan (the module's proptest holds that).

use fst::{IntoStreamer as _, Streamer as _};

use std::collections::HashSet;

use super::format::{guid_text, GUID_BYTES};
use super::{damaged, TermIndex};
use crate::search::filters::{facets, Filter, Filters, Key};
use crate::search::records::AssetRow;

/// Before every facet key: below the name keys' prefix and every
/// character a term holds, so the facets are one range of the dictionary.
const FACET_PREFIX: char = '\u{2}';

/// The dictionary key of `row`'s facet `value` for filters of `key`.
fn facet_key(key: Key, value: &str) -> String {
    format!("{}{}", key_prefix(key), value.to_ascii_lowercase())
}

/// What every facet key of `key` starts with (`\u{2}dir:`).
fn key_prefix(key: Key) -> String {
    format!("{FACET_PREFIX}{}:", key.spelling())
}

/// Every dictionary key `row` is posted under as a facet, each once.
pub(super) fn facet_keys(row: &AssetRow, each: &mut dyn FnMut(&str)) {
    let mut seen: Vec<String> = Vec::new();
    for key in Key::ALL {
        seen.clear();
        for value in facets(row, key) {
            let facet = facet_key(key, value);
            if !seen.contains(&facet) {
                each(&facet);
                seen.push(facet);
            }
        }
    }
}

/// A set of row ids, one bit each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSet {
    bits: Vec<u64>,
    rows: usize,
}

impl RowSet {
    fn empty(rows: usize) -> Self {
        Self {
            bits: vec![0; rows.div_ceil(64)],
            rows,
        }
    }

    fn full(rows: usize) -> Self {
        let mut set = Self::empty(rows);
        set.invert();
        set
    }

    fn insert(&mut self, id: u32) {
        let id = id as usize;
        if id < self.rows {
            self.bits[id / 64] |= 1 << (id % 64);
        }
    }

    fn invert(&mut self) {
        for word in &mut self.bits {
            *word = !*word;
        }
        if !self.rows.is_multiple_of(64) {
            if let Some(last) = self.bits.last_mut() {
                *last &= (1 << (self.rows % 64)) - 1;
            }
        }
    }

    fn intersect(&mut self, other: &RowSet) {
        for (word, theirs) in self.bits.iter_mut().zip(&other.bits) {
            *word &= theirs;
        }
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        let id = id as usize;
        id < self.rows && self.bits[id / 64] >> (id % 64) & 1 == 1
    }

    /// How many rows the set holds.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|word| word.count_ones() as usize).sum()
    }

    /// Whether the set holds no row.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&word| word == 0)
    }

    /// The row ids, ascending.
    pub fn ids(&self) -> Vec<u32> {
        let mut ids = Vec::with_capacity(self.len());
        for (at, &word) in self.bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                ids.push((at * 64) as u32 + word.trailing_zeros());
                word &= word - 1;
            }
        }
        ids
    }
}

impl TermIndex {
    /// The rows `filters` keep (every row without filters), read from the
    /// facet postings alone.
    pub fn passing(&self, filters: &Filters) -> anyhow::Result<RowSet> {
        let mut kept = RowSet::full(self.header.rows);
        for filter in &filters.0 {
            let mut shown = self.showing(filter)?;
            if filter.negated {
                shown.invert();
            }
            kept.intersect(&shown);
        }
        Ok(kept)
    }

    /// The rows with a facet `filter` accepts (its negation aside): the
    /// keys it names, or a walk over its key's facets when it tests a part.
    fn showing(&self, filter: &Filter) -> anyhow::Result<RowSet> {
        let mut shown = RowSet::empty(self.header.rows);
        let mut add = |at: u64, facet: &str| -> anyhow::Result<()> {
            for id in self.postings_at(at, facet)? {
                shown.insert(id);
            }
            Ok(())
        };
        match filter.accepted_facets() {
            Some(values) => {
                for value in values {
                    let key = facet_key(filter.key, &value);
                    if let Some(at) = self.terms.get(&key) {
                        add(at, &key)?;
                    }
                }
            }
            None => {
                let prefix = key_prefix(filter.key);
                let mut stream = self.terms.range().gt(&prefix).into_stream();
                while let Some((key, at)) = stream.next() {
                    let Some(value) = key.strip_prefix(prefix.as_bytes()) else {
                        break;
                    };
                    let value = String::from_utf8_lossy(value);
                    if filter.accepts(&value) {
                        add(at, value.as_ref())?;
                    }
                }
            }
        }
        Ok(shown)
    }

    /// The guids of the rows in `set`, read from the guid table (a guid
    /// twice, in a broken index, is its last row's, as every lookup by guid
    /// answers).
    pub(crate) fn guids_in(&self, set: &RowSet) -> anyhow::Result<HashSet<String>> {
        let (start, end) = self.header.guids;
        let table = self.body.read(start, end).ok_or_else(|| damaged("its guids"))?;
        let mut guids: HashSet<String> = table
            .chunks_exact(GUID_BYTES)
            .filter(|entry| set.contains(u32::from_le_bytes([entry[16], entry[17], entry[18], entry[19]])))
            .map(|entry| guid_text(&entry[..16]))
            .collect();
        guids.extend(
            self.header
                .other_guids
                .iter()
                .filter(|(_, id)| set.contains(*id))
                .map(|(guid, _)| guid.clone()),
        );
        Ok(guids)
    }

    /// The rows whose path is `path` ignoring ASCII case, in file order;
    /// `None` when `assets.jsonl` changed since the index was built.
    pub(crate) fn rows_at_path(&self, path: &str) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let key = facet_key(Key::Path, path);
        let Some(at) = self.terms.get(&key) else {
            return Ok(Some(Vec::new()));
        };
        let ids = self.postings_at(at, &key)?;
        self.fetch(&ids)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::TermIndex;
    use crate::search::filters::{parse, Filters};
    use crate::search::load::{IndexFiles, ASSETS_FILE};
    use crate::search::records::AssetRow;
    use engine::io::Limits;

    const FOLDERS: &[&str] = &[
        "Environment/Rocks",
        "Characters",
        "UI/Icons",
        "environment/Props",
        "Audio",
    ];
    const NAMES: &[&str] = &["Rock", "Hero Lamp", "rock_big", "Crate", "Zombie"];
    const EXTS: &[&str] = &["prefab", "mat", "PNG", "fbx", "asset"];
    const KINDS: &[(&str, &str)] = &[
        ("Prefab", "Prefab/character"),
        ("Prefab", "Prefab/prop"),
        ("Model", "Model/mesh"),
        ("Material", "Material/stone"),
        ("Texture2D", "Texture2D/sprite"),
        ("ScriptableObject", "ScriptableObject/WaveConfig"),
    ];
    const LABELS: &[&str] = &["Hero", "lit", "Environment", "ui"];
    const COMPONENTS: &[&str] = &["Light", "PlayerController", "MeshRenderer"];

    fn guid(i: usize) -> String {
        format!("{:032x}", (i as u128 + 1) * 0x9e37_79b9_7f4a_7c15)
    }

    /// One row from drawn indices: folder, name, extension, kind, guid,
    /// label/component/dependency masks, variant, missing script, guid case.
    type Drawn = (usize, usize, usize, usize, usize, u8, u8, bool, bool, bool);

    fn row((folder, name, ext, kind, id, marks, deps, variant, missing, upper): Drawn) -> String {
        let pick = |list: &[&str], mask: u8| -> Vec<String> {
            (0..list.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| list[i].to_owned())
                .collect()
        };
        let (kind, subtype) = KINDS[kind % KINDS.len()];
        let mut guid = guid(id % 12);
        if upper {
            guid = guid.to_ascii_uppercase();
        }
        let dependencies: Vec<String> = (0..8)
            .filter(|i| deps >> i & 1 == 1)
            .map(|i| guid_written(i, upper))
            .collect();
        serde_json::json!({
            "guid": guid,
            "path": format!("Assets/{}/{}.{}", FOLDERS[folder % FOLDERS.len()], NAMES[name % NAMES.len()], EXTS[ext % EXTS.len()]),
            "name": NAMES[name % NAMES.len()],
            "type": kind,
            "type_subtype": subtype,
            "labels": pick(LABELS, marks),
            "component_types": pick(COMPONENTS, marks >> 4),
            "script_class": if kind == "ScriptableObject" { "WaveConfig" } else { "" },
            "dependencies": dependencies,
            "variant_of": variant.then(|| guid_written(3, false)),
            "missing_scripts": if missing { vec![guid_written(4, false)] } else { vec![] },
        })
        .to_string()
    }

    fn guid_written(i: usize, upper: bool) -> String {
        let g = guid(i);
        if upper {
            g.to_ascii_uppercase()
        } else {
            g
        }
    }

    /// Filters of every key and operator, negated or not.
    fn filter_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "t:Prefab",
            "t:pre",
            "t=prefab",
            "t:character",
            "t=Prefab/prop",
            "t:Light",
            "t=lig",
            "t:WaveConfig",
            "t:MODEL",
            "l:hero",
            "l=HER",
            "l:env",
            "dir:rocks",
            "dir:Environment",
            "dir:Environ",
            "path:rock",
            "path:\"Hero Lamp\"",
            "path=Assets/Characters/Crate.prefab",
            "ext:png",
            "ext:.MAT",
            "prefab:variant",
            "prefab:regular",
            "prefab:model",
            "prefab:any",
            "missing:scripts",
            "ref:Assets/Characters/Crate.prefab",
            "ref:assets/audio/zombie.asset",
            "ref:Assets/Gone.mat",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.extend((0..4).map(|i| format!("ref:{}", guid_written(i, i == 2))));
        texts.extend((0..3).map(|i| format!("guid:{}", guid_written(i, i == 1))));
        texts
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The postings keep exactly the rows a scan keeps, and `ref:`
        /// paths resolve to the same guids.
        #[test]
        fn filters_from_postings_are_the_scan(
            drawn in prop::collection::vec(
                (0..5usize, 0..5usize, 0..5usize, 0..6usize, 0..12usize, any::<u8>(), any::<u8>(), any::<bool>(), any::<bool>(), prop::bool::weighted(0.1)),
                1..40,
            ),
            chosen in prop::collection::vec((0..35usize, any::<bool>()), 1..4),
        ) {
            let lines: Vec<String> = drawn.into_iter().map(row).collect();
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(ASSETS_FILE), lines.join("\n")).unwrap();
            let limits = Limits::default();
            TermIndex::refresh(dir.path(), None, &limits).unwrap();
            let index = TermIndex::open_fresh(dir.path(), None, &limits).unwrap().unwrap();
            let rows: Vec<AssetRow> = lines.iter().filter_map(|l| serde_json::from_str(l).ok()).collect();

            let texts = filter_texts();
            let query: Vec<String> = chosen
                .iter()
                .map(|&(i, negated)| format!("{}{}", if negated { "-" } else { "" }, texts[i % texts.len()]))
                .collect();
            let parsed = parse(&query.join(" ")).unwrap().filters;

            let mut scanned = parsed.clone();
            let unresolved_scan = scanned.resolve_in(&rows);
            let mut indexed: Filters = parsed;
            let unresolved_index = IndexFiles::new(dir.path(), limits).resolve(&mut indexed).unwrap();
            prop_assert_eq!(&unresolved_index, &unresolved_scan);
            prop_assert_eq!(&indexed, &scanned);

            let by_scan: Vec<(String, String)> = rows
                .iter()
                .filter(|row| scanned.matches(row))
                .map(|row| (row.guid.clone(), row.path.clone()))
                .collect();
            let by_index: Vec<(String, String)> = index
                .fetch(&index.passing(&indexed).unwrap().ids())
                .unwrap()
                .unwrap()
                .into_iter()
                .map(|row| (row.guid, row.path))
                .collect();
            prop_assert_eq!(index.passing(&indexed).unwrap().len(), by_scan.len());
            prop_assert_eq!(by_index, by_scan, "{}", query.join(" "));
            // Guids by the table: each guid's last row decides.
            let last_passing: std::collections::HashSet<String> = rows
                .iter()
                .enumerate()
                .filter(|(i, row)| scanned.matches(row) && !rows[i + 1..].iter().any(|later| later.guid == row.guid))
                .map(|(_, row)| row.guid.clone())
                .collect();
            prop_assert_eq!(index.guids_in(&index.passing(&indexed).unwrap()).unwrap(), last_passing);
        }
    }
}
