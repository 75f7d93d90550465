//! Reading the index files search needs: the manifest version, the
//! packages, and asset rows (all, or those of chosen packages).
//!
//! Rows are decoded straight into [`AssetRow`] line by line; a row that
//! does not decode is skipped (the indexer and `doctor` own validation).
//! Rows handed to the ranking stages stay the index's own JSONL lines
//! ([`IndexFiles::asset_lines`]): a string is cheap to pass between stages,
//! the ranker decodes only what it scores, and a model is shown the same line.
//!
//! Rows pass the query's filters here, where they are read
//! ([`IndexFiles::narrowed`]): every stage that loads rows, packages or
//! candidate paths through these files sees only matching assets.
//!
//! The index folder sits in the project, which may come from anyone: every
//! file is read within the run's size limits (`limits.data_mb` for a file,
//! `limits.line_kb` for one row), so a hostile index fails with a message
//! naming the key instead of eating memory, and one bad line (too long, not
//! UTF-8, not a row, a path outside the project) costs that row only.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use anyhow::Context as _;
use engine::io::{Limits, RowLines};
use rayon::prelude::*;

use super::filters::Filters;
use super::records::{AssetRow, PackageRow};
use super::term_index::{RowSet, TermIndex};
use super::text::{for_each_part, Scratch};
use crate::index::store::ROWS_DECODED_AT_ONCE;

pub const ASSETS_FILE: &str = "assets.jsonl";
pub const PACKAGES_FILE: &str = "packages.jsonl";
pub const MANIFEST_FILE: &str = "manifest.json";

/// The last `manifest.json` read (path, length, modification time) and its JSON.
type ReadManifest = ((PathBuf, u64, SystemTime), serde_json::Value);
static LAST_MANIFEST: Mutex<Option<ReadManifest>> = Mutex::new(None);

/// The index folder of a project, read within a run's limits.
pub struct IndexFiles {
    dir: PathBuf,
    limits: Limits,
    /// Only rows matching these are read (none: every row).
    filters: Filters,
}

impl IndexFiles {
    pub fn new(dir: impl Into<PathBuf>, limits: Limits) -> Self {
        Self {
            dir: dir.into(),
            limits,
            filters: Filters::default(),
        }
    }

    /// The same files, read as if they held only the rows `filters` keep.
    pub fn narrowed(self, filters: Filters) -> Self {
        Self { filters, ..self }
    }

    /// The lines of one JSONL index file (none when there is no file).
    fn lines(&self, name: &str) -> anyhow::Result<Option<RowLines>> {
        match engine::io::read_row_lines(&self.dir.join(name), &self.limits, &crate::PRODUCT) {
            Ok(lines) => Ok(Some(lines)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// One field of `manifest.json`, if the manifest exists and has it.
    fn manifest_field(&self, field: &str) -> Option<String> {
        self.manifest()?[field].as_str().map(str::to_owned)
    }

    /// `manifest.json`, read again only when its length or modification
    /// time changed: the stages of a search ask for it several times.
    fn manifest(&self) -> Option<serde_json::Value> {
        let path = self.dir.join(MANIFEST_FILE);
        let meta = std::fs::metadata(&path).ok()?;
        let stamp = (path, meta.len(), meta.modified().ok()?);
        let mut last = LAST_MANIFEST.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, manifest)) = last.as_ref().filter(|(read, _)| *read == stamp) {
            return Some(manifest.clone());
        }
        let text =
            engine::io::read_text_limited(&stamp.0, self.limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT)
                .ok()?;
        let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
        *last = Some((stamp, manifest.clone()));
        Some(manifest)
    }

    /// `manifest.json::version`, if the manifest exists and has one.
    pub fn manifest_version(&self) -> Option<String> {
        self.manifest_field("version")
    }

    /// The rows of a JSONL file that decode as `T`.
    fn rows<T: serde::de::DeserializeOwned>(&self, name: &str) -> anyhow::Result<Vec<T>> {
        Ok(row_lines(self.lines(name)?.as_ref())
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }

    pub fn packages(&self) -> anyhow::Result<Vec<PackageRow>> {
        self.rows(PACKAGES_FILE)
    }

    /// Asset rows as JSONL lines holding what search reads: all of them, or,
    /// when `packages` is given, the decodable rows of those packages. A
    /// minimal-depth row holds nothing else, so its line is passed on unread;
    /// a deeper row is written back as a model is shown it
    /// ([`AssetRow::shown`]), without the fields search never reads
    /// (dependencies, size, times) that would only cost a model tokens.
    pub fn asset_lines(&self, packages: Option<&HashSet<String>>) -> anyhow::Result<Vec<String>> {
        let verbatim = self.manifest_field("schema_tier").is_none_or(|tier| tier == "minimal");
        if verbatim && packages.is_none() && self.filters.is_empty() {
            let lines = self.lines(ASSETS_FILE)?;
            return Ok(row_lines(lines.as_ref()).map(str::to_owned).collect());
        }
        let package_of = PackageOf::new(&match packages {
            Some(_) => self.packages()?,
            None => vec![],
        });
        let mut out = Vec::new();
        self.for_each_passing(&mut |line, row| {
            if packages.is_some_and(|set| !package_of.get(&row).is_some_and(|p| set.contains(p))) {
                return Ok(());
            }
            out.push(if verbatim {
                line.to_owned()
            } else {
                serde_json::to_string(&row.shown())?
            });
            Ok(())
        })?;
        Ok(out)
    }

    /// Every decodable row that passes the filters, in the index's order.
    pub fn rows_matching(&self) -> anyhow::Result<Vec<AssetRow>> {
        let mut rows = Vec::new();
        self.for_each_passing(&mut |_, row| {
            rows.push(row);
            Ok(())
        })?;
        Ok(rows)
    }

    /// Each decodable row that passes the filters, with its line, in the
    /// index's order. With filters and a fresh search index, only the rows
    /// its facet postings keep are read; else every line is.
    fn for_each_passing(&self, each: &mut dyn FnMut(&str, AssetRow) -> anyhow::Result<()>) -> anyhow::Result<()> {
        if let Some(index) = (!self.filters.is_empty()).then(|| self.fresh_term_index()).flatten() {
            let ids = index.passing(&self.filters)?.ids();
            if let Some(rows) = index.fetch_lines(&ids)? {
                return rows.into_iter().try_for_each(|(line, row)| each(&line, row));
            }
        }
        let lines = self.lines(ASSETS_FILE)?;
        let lines: Vec<&str> = row_lines(lines.as_ref()).collect();
        // Decoded in parallel a block at a time, handed on in order.
        for block in lines.chunks(ROWS_DECODED_AT_ONCE) {
            let rows: Vec<Option<AssetRow>> = block
                .par_iter()
                .map(|line| {
                    serde_json::from_str::<AssetRow>(line)
                        .ok()
                        .filter(|row| self.filters.matches(row))
                })
                .collect();
            for (line, row) in block.iter().zip(rows) {
                if let Some(row) = row {
                    each(line, row)?;
                }
            }
        }
        Ok(())
    }

    /// Resolve the `ref:` paths of `filters` through the index's rows (see
    /// [`Filters::resolve`]): by the search index's path facets when it is
    /// fresh, else by a scan. Returns the values no row answers.
    pub fn resolve(&self, filters: &mut Filters) -> anyhow::Result<Vec<String>> {
        if let Some(index) = self.fresh_term_index() {
            // A file changed under the index answers by the scan below.
            let mut by_index = filters.clone();
            let rows_at = |path: &str| {
                index
                    .rows_at_path(path)?
                    .context(super::term_index::changed_while_searched())
            };
            if let Ok(unresolved) = by_index.resolve(rows_at) {
                *filters = by_index;
                return Ok(unresolved);
            }
        }
        let rows = IndexFiles::new(&self.dir, self.limits).rows_matching()?;
        Ok(filters.resolve_in(&rows))
    }

    /// The rows that pass the filters, numbered as the search index numbers
    /// them (`assets.jsonl` order), and how many rows it has; `None`
    /// without a fresh search index.
    pub fn rows_passing(&self) -> anyhow::Result<Option<(RowSet, usize)>> {
        let Some(index) = self.fresh_term_index() else {
            return Ok(None);
        };
        Ok(Some((index.passing(&self.filters)?, index.lines())))
    }

    /// The guids of the rows that pass the filters: from the search index's
    /// postings and guid table when it is fresh, else by a scan.
    pub fn guids_matching(&self) -> anyhow::Result<HashSet<String>> {
        if let Some(index) = self.fresh_term_index() {
            return index.guids_in(&index.passing(&self.filters)?);
        }
        Ok(self.rows_matching()?.into_iter().map(|row| row.guid).collect())
    }

    /// The first `limit` rows that pass the filters in the order of their
    /// paths. With a fresh search index, every passing line is read for its
    /// path alone and only the first `limit` are decoded.
    pub fn first_by_path(&self, limit: usize) -> anyhow::Result<Vec<AssetRow>> {
        if let Some(index) = self.fresh_term_index() {
            let ids = index.passing(&self.filters)?.ids();
            if let Some(paths) = index.paths(&ids)? {
                let mut by_path: Vec<(String, u32)> = paths.into_iter().zip(ids).collect();
                by_path.sort_unstable();
                by_path.truncate(limit);
                let mut first: Vec<u32> = by_path.iter().map(|(_, id)| *id).collect();
                first.sort_unstable();
                if let Some(mut rows) = index.fetch(&first)? {
                    rows.sort_by(|a, b| a.path.cmp(&b.path));
                    return Ok(rows);
                }
            }
        }
        let mut rows = self.rows_matching()?;
        rows.sort_by(|x, y| x.path.cmp(&y.path));
        rows.truncate(limit);
        Ok(rows)
    }

    /// How many rows pass the filters: from the search index's postings when
    /// it is fresh, else by a scan.
    pub fn count_matching(&self) -> anyhow::Result<usize> {
        if let Some(index) = self.fresh_term_index() {
            return Ok(index.passing(&self.filters)?.len());
        }
        Ok(self.rows_matching()?.len())
    }

    /// The search index when it is present and fresh; else (whatever the
    /// reason) callers read the rows, as before there was one.
    fn fresh_term_index(&self) -> Option<TermIndex> {
        TermIndex::open_fresh(&self.dir, self.manifest_version().as_deref(), &self.limits)
            .ok()?
            .ok()
    }

    /// The paths of those of `guids` the index holds (and the filters keep):
    /// from the search index when it is fresh, else by a scan in which a
    /// line is decoded only when its guid is wanted (or when it does not
    /// start the way the indexer writes rows).
    pub fn indexed_paths(&self, guids: &HashSet<&str>) -> anyhow::Result<HashMap<String, String>> {
        let passing = |row: &AssetRow| guids.contains(row.guid.as_str()) && self.filters.matches(row);
        if let Some(index) = self.fresh_term_index() {
            if let Some(rows) = index.rows_of(guids.iter().copied())? {
                return Ok(rows.into_iter().filter(passing).map(|r| (r.guid, r.path)).collect());
            }
        }
        const HEAD: &str = "{\"guid\":\"";
        let lines = self.lines(ASSETS_FILE)?;
        let mut found = HashMap::new();
        for line in row_lines(lines.as_ref()) {
            let wanted = match line.strip_prefix(HEAD).and_then(|rest| rest.split_once('"')) {
                Some((guid, _)) => guids.contains(guid),
                None => true,
            };
            if let Some(row) = wanted.then(|| serde_json::from_str::<AssetRow>(line).ok()).flatten() {
                if passing(&row) {
                    found.insert(row.guid, row.path);
                }
            }
        }
        Ok(found)
    }

    /// The packages, each with the `words_per_package` words most of its
    /// assets use in their name, type, folders, tags, labels and filename
    /// signals ([`PackageRow::asset_vocabulary`]; ties in alphabetical order).
    /// Summaries are left out: their sentence words would crowd the list.
    /// Narrowed by filters, a package holding no matching asset drops out
    /// and `asset_count` counts the matching ones.
    pub fn packages_with_vocabulary(&self, words_per_package: usize) -> anyhow::Result<Vec<PackageRow>> {
        let mut packages = self.packages()?;
        let package_of = PackageOf::new(&packages);
        let position: HashMap<&str, usize> = packages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.package_id.as_str(), i))
            .collect();
        // Per package: word → how many of its assets use it.
        let mut counts: Vec<HashMap<String, u32>> = vec![HashMap::new(); packages.len()];
        let mut matching = vec![0u64; packages.len()];
        let mut scratch = Scratch::default();
        let mut seen: HashSet<String> = HashSet::new();
        self.for_each_passing(&mut |_, row| {
            let Some(&at) = package_of.get(&row).and_then(|id| position.get(id)) else {
                return Ok(());
            };
            matching[at] += 1;
            seen.clear();
            let folders = row.path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
            let texts = [row.name.as_str(), row.asset_type.as_str(), folders]
                .into_iter()
                .chain(row.type_subtype.as_deref())
                .chain(row.llm_tags.iter().map(String::as_str))
                .chain(row.labels.iter().map(String::as_str))
                .chain(row.filename_signals.iter().map(String::as_str));
            for text in texts {
                for_each_part(text, &mut scratch, |word| {
                    if !seen.contains(word) {
                        seen.insert(word.to_owned());
                    }
                });
            }
            for word in seen.drain() {
                *counts[at].entry(word).or_default() += 1;
            }
            Ok(())
        })?;
        for (package, words) in packages.iter_mut().zip(counts) {
            let mut words: Vec<(String, u32)> = words.into_iter().collect();
            words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            package.asset_vocabulary = words.into_iter().take(words_per_package).map(|(w, _)| w).collect();
        }
        if !self.filters.is_empty() {
            let mut matching = matching.into_iter();
            packages.retain_mut(|package| {
                package.asset_count = matching.next().unwrap_or(0);
                package.asset_count > 0
            });
        }
        Ok(packages)
    }

    /// How many asset rows the index holds (non-blank lines): the search
    /// index knows when it is fresh, else the rows are counted.
    pub fn count_assets(&self) -> anyhow::Result<usize> {
        if let Some(index) = self.fresh_term_index() {
            return Ok(index.lines());
        }
        Ok(row_lines(self.lines(ASSETS_FILE)?.as_ref()).count())
    }
}

/// The non-blank lines of a JSONL file, without a byte-order mark. A line
/// over `limits.line_kb` or not UTF-8 is skipped as a row that does not
/// decode is (the indexer and `doctor` name them).
fn row_lines(lines: Option<&RowLines>) -> impl Iterator<Item = &str> {
    lines
        .into_iter()
        .flat_map(RowLines::iter)
        .filter_map(|(_, line)| line.ok())
        .map(|line| line.trim_start_matches('\u{feff}').trim_end_matches('\r'))
        .filter(|line| !line.trim().is_empty())
}

/// Which package an asset row belongs to. A row names its package from the
/// normal tier on; below it, a row belongs to the package whose root is the
/// longest prefix of its path (the indexer's own grouping).
struct PackageOf {
    /// `(root with a trailing slash, package_id)`.
    roots: Vec<(String, String)>,
}

impl PackageOf {
    fn new(packages: &[PackageRow]) -> Self {
        Self {
            roots: packages
                .iter()
                .map(|p| (format!("{}/", p.root.trim_end_matches('/')), p.package_id.clone()))
                .collect(),
        }
    }

    fn get<'a>(&'a self, row: &'a AssetRow) -> Option<&'a str> {
        row.package_id.as_deref().or_else(|| {
            self.roots
                .iter()
                .filter(|(root, _)| row.path.starts_with(root.as_str()))
                .max_by_key(|(root, _)| root.len())
                .map(|(_, id)| id.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn files(dir: &Path) -> IndexFiles {
        IndexFiles::new(dir, Limits::default())
    }

    /// One over-long, non-UTF-8 or outside-the-project row costs that row,
    /// never the search.
    #[test]
    fn a_row_over_the_line_limit_or_not_utf8_or_outside_the_project_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{{\"guid\":\"b\",\"path\":\"Assets/{}\"}}", "x".repeat(2048));
        let mut bytes = format!("{{\"guid\":\"a\",\"path\":\"Assets/A\"}}\n{long}\n").into_bytes();
        bytes.extend(b"{\"guid\":\"c\",\"path\":\"Assets/\xff\"}\n");
        bytes.extend(b"{\"guid\":\"d\",\"path\":\"/etc/D.prefab\"}\n");
        bytes.extend(b"{\"guid\":\"e\",\"path\":\"Assets/../../E.prefab\"}\n");
        std::fs::write(dir.path().join(ASSETS_FILE), bytes).unwrap();
        let limits = Limits::from_config(None, None, Some(1));
        let rows = IndexFiles::new(dir.path(), limits).rows_matching().unwrap();
        assert_eq!(rows.iter().map(|r| r.guid.as_str()).collect::<Vec<_>>(), ["a"]);
        let rows = files(dir.path()).rows_matching().unwrap();
        assert_eq!(rows.len(), 2, "within the default limit: {rows:?}");
        let paths = files(dir.path()).indexed_paths(&HashSet::from(["d", "e"])).unwrap();
        assert!(paths.is_empty(), "{paths:?}");
    }

    #[test]
    fn reads_rows_by_package_and_skips_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"Assets/A\",\"package_id\":\"p\"}\nnot json\n{\"guid\":\"b\",\"path\":\"Assets/B\",\"package_id\":\"q\"}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), "{\"version\":\"v1.2\"}").unwrap();
        assert_eq!(
            files(dir.path()).asset_lines(None).unwrap().len(),
            3,
            "every line, unread"
        );
        let only_p = HashSet::from(["p".to_owned()]);
        let lines = files(dir.path()).asset_lines(Some(&only_p)).unwrap();
        assert_eq!(lines, ["{\"guid\":\"a\",\"path\":\"Assets/A\",\"package_id\":\"p\"}"]);
        assert_eq!(files(dir.path()).count_assets().unwrap(), 3);
        let paths = files(dir.path()).indexed_paths(&HashSet::from(["b", "zzz"])).unwrap();
        assert_eq!(paths, HashMap::from([("b".to_owned(), "Assets/B".to_owned())]));

        // Deeper rows lose what search never reads.
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"Assets/A\",\"dependencies\":[\"b\"],\"size\":3,\"component_types\":[\"Canvas\"]}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            "{\"version\":\"v2.0\",\"schema_tier\":\"rich\"}",
        )
        .unwrap();
        let lines = files(dir.path()).asset_lines(None).unwrap();
        assert!(
            lines[0].contains("Canvas") && !lines[0].contains("dependencies") && !lines[0].contains("size"),
            "{lines:?}"
        );
        assert_eq!(files(dir.path()).manifest_version().as_deref(), Some("v2.0"));
        assert!(files(dir.path()).packages().unwrap().is_empty());
    }

    #[test]
    fn narrowed_files_hold_only_matching_rows_and_their_packages() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(PACKAGES_FILE),
            "{\"package_id\":\"audio\",\"root\":\"Assets/Audio\",\"asset_count\":2}\n\
             {\"package_id\":\"props\",\"root\":\"Assets/Props\",\"asset_count\":2}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"Assets/Audio/Theme.ogg\",\"type\":\"AudioClip\"}\n\
             {\"guid\":\"b\",\"path\":\"Assets/Audio/Hit.wav\",\"type\":\"AudioClip\"}\n\
             {\"guid\":\"c\",\"path\":\"Assets/Props/Crate.prefab\",\"type\":\"Prefab\"}\n\
             {\"guid\":\"d\",\"path\":\"Assets/Props/Crate.mat\",\"type\":\"Material\"}\n",
        )
        .unwrap();
        let narrowed = || files(dir.path()).narrowed(crate::search::filters::parse("t:Prefab").unwrap().filters);
        let packages = narrowed().packages_with_vocabulary(0).unwrap();
        assert_eq!(packages.len(), 1, "the audio package holds no prefab: {packages:?}");
        assert_eq!((packages[0].package_id.as_str(), packages[0].asset_count), ("props", 1));
        let lines = narrowed().asset_lines(None).unwrap();
        assert!(lines.len() == 1 && lines[0].contains("Crate.prefab"), "{lines:?}");
        let paths = narrowed().indexed_paths(&HashSet::from(["c", "d"])).unwrap();
        assert_eq!(paths.keys().collect::<Vec<_>>(), ["c"]);
        assert_eq!(narrowed().rows_matching().unwrap().len(), 1);
        assert_eq!(
            files(dir.path()).packages_with_vocabulary(0).unwrap().len(),
            2,
            "unnarrowed: both"
        );
    }

    #[test]
    fn package_vocabulary_comes_from_its_assets_most_used_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(PACKAGES_FILE),
            "{\"package_id\":\"audio\",\"root\":\"Assets/Audio\",\"summary\":\"sfx\"}\n\
             {\"package_id\":\"ui\",\"root\":\"Assets/UI\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"Assets/Audio/Music/Main_Theme.ogg\",\"name\":\"Main_Theme\",\"llm_tags\":[\"music\"],\"type_subtype\":\"AudioClip/music\"}\n\
             {\"guid\":\"b\",\"path\":\"Assets/Audio/Music/Battle.ogg\",\"name\":\"Battle\",\"llm_tags\":[\"music\",\"loop\"]}\n\
             {\"guid\":\"c\",\"path\":\"Assets/UI/Button.png\",\"name\":\"Button\",\"package_id\":\"ui\"}\n",
        )
        .unwrap();
        let packages = files(dir.path()).packages_with_vocabulary(3).unwrap();
        assert_eq!(packages[0].asset_vocabulary, ["assets", "audio", "music"]);
        assert_eq!(packages[1].asset_vocabulary, ["assets", "button", "ui"]);
    }
}
