//! Walk a Unity project and turn every `.meta`/asset pair into a [`ScannedAsset`].
//!
//! The walk covers `Assets/` and every embedded package folder under
//! `Packages/`, in parallel, skipping what Unity skips (dot-folders, dot-files,
//! folders ending in `~`) and the configured `ignore_paths`. No gitignore
//! semantics: a Unity project's `.gitignore` says nothing about assets.
//! Problems with single files become [`Warning`]s; only a missing `Assets/`
//! folder or an unreadable labels file fails the scan.

use std::collections::hash_map::Entry as Slot;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::Path;

use engine::io::Limits;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::classify::{self, Subject};
use super::content::{self, Lookup};
use super::data::IndexData;
use super::labels::{merge_labels, CuratedLabels};
use super::meta::{meta_text, parse_meta, Meta};
use super::open::{open_in_project, read_meta, read_to_limit, Listed, ASSET_TEXT_LIMIT};
use super::packages::{self, PackageRoot};
use super::record::{Depth, ScannedAsset};
use super::row::AssetRow;
use super::unity_yaml::{self, YamlFacts};
use super::walk::{mtime_nanos, on_io_threads, tree_digest, walk, Entry, Walked};
use super::watch::Epoch;

/// What `index.scan` reads and leaves out.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ScanOptions {
    /// How much of each asset to read.
    #[serde(default)]
    pub index_depth: Depth,
    /// Project-relative folders or files to leave out (`Assets/Plugins/Editor`).
    #[serde(default)]
    pub ignore_paths: Vec<String>,
}

/// What is wrong with a file the scan met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A `.meta` whose asset is missing: Unity deletes it on import.
    OrphanMeta,
    /// An asset without `.meta`: Unity has not imported it yet.
    MissingMeta,
    /// A GUID already used by an earlier path; the first path keeps it.
    DuplicateGuid,
    /// A `.meta` without a valid guid.
    BadMeta,
    /// A file that could not be read.
    Unreadable,
    /// An asset whose row is over `limits.line_kb`: left out of the index.
    RowTooLong,
}

/// A file the scan met that Unity would not import as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What is wrong with it.
    pub kind: WarningKind,
    /// The file's project-relative path.
    pub path: String,
    pub(crate) detail: String,
}

/// A package that holds at least one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// The package's id, as asset rows name it.
    pub package_id: String,
    /// Its display name.
    pub name: String,
    /// The folder it is rooted at.
    pub root: String,
}

/// The output of `index.scan`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanResult {
    /// The depth the scan read at.
    pub index_depth: Depth,
    /// When the scan began (RFC 3339), for the run's elapsed time.
    pub started_at: String,
    /// Sorted by path; one JSONL string between stages (see `packed.rs`).
    #[serde(with = "super::packed")]
    pub assets: Vec<ScannedAsset>,
    /// Sorted by root.
    pub packages: Vec<PackageInfo>,
    /// Sorted by kind, then path.
    pub warnings: Vec<Warning>,
    /// Files walked (assets and metas).
    pub files: usize,
    /// [`fingerprint`] of what this scan read.
    pub fingerprint: String,
    /// The tree it walked.
    pub tree: Tree,
}

impl ScanResult {
    /// The stage output: serialising the result would copy its assets'
    /// JSONL string once more (600 MB at 10^6 assets), so it is moved in.
    pub fn into_value(mut self) -> serde_json::Result<serde_json::Value> {
        let assets = std::mem::take(&mut self.assets);
        let mut value = serde_json::to_value(&self)?;
        value["assets"] = serde_json::Value::String(super::packed::jsonl(assets.into_iter())?);
        Ok(value)
    }
}

/// An asset file and its `.meta`, as the walk listed them.
struct Pair<'a> {
    asset: &'a Entry,
    meta: &'a Entry,
}

/// One asset with its parsed meta, before cross-asset steps (duplicates, script names).
struct Parsed {
    asset: ScannedAsset,
    yaml: Option<YamlFacts>,
}

/// A folder without `Assets/` is no Unity project: said before anything
/// (an index folder, a reindex suggestion) treats it as one.
pub(crate) fn require_unity_project(project: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        project.join("Assets").is_dir(),
        "{} has no Assets/ folder: run in a Unity project's root folder or pass --project DIR",
        project.display()
    );
    Ok(())
}

/// `index.scan`: walk the project and read every asset's `.meta` and, at depth normal or rich, its content.
pub fn scan(project: &Path, limits: &Limits, data: &IndexData, options: &ScanOptions) -> anyhow::Result<ScanResult> {
    require_unity_project(project)?;
    let started_at = time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339)?;
    let labels = super::labels::read(project, limits)?;
    let curated = CuratedLabels::from_file(project, labels.as_deref())?;
    // Read before the walk: a change during it ends the epoch.
    let epoch = super::watch::live_epoch(project, limits);
    let walked = walk(project, &options.ignore_paths);
    let tree = Tree::of(&walked, epoch);
    let fingerprint = fingerprint_with(project, labels.as_deref(), &tree, data, options);
    let Walked {
        entries,
        problems: mut warnings,
        ..
    } = walked;
    let files = entries.iter().filter(|e| !e.is_dir).count();

    let dirs: HashSet<&str> = entries.iter().filter(|e| e.is_dir).map(|e| e.path.as_str()).collect();
    // Asset files as the walk listed them (their stat is reused for their signatures).
    let plain_files: HashMap<&str, &Entry> = entries
        .iter()
        .filter(|e| !e.is_dir && !e.path.ends_with(".meta"))
        .map(|e| (e.path.as_str(), e))
        .collect();
    let markers = packages::marker_folders(plain_files.keys().copied(), &data.conventions);

    // Pair metas with their assets; folder metas are not assets.
    let mut pairs = Vec::new();
    let mut has_meta = HashSet::new();
    for entry in entries.iter().filter(|e| !e.is_dir) {
        let Some(target) = entry.path.strip_suffix(".meta") else {
            continue;
        };
        has_meta.insert(target);
        if let Some(&asset) = plain_files.get(target) {
            pairs.push(Pair { asset, meta: entry });
        } else if !dirs.contains(target) {
            warnings.push(warning(
                WarningKind::OrphanMeta,
                &entry.path,
                "no asset next to this .meta; not indexed",
            ));
        }
    }
    for path in plain_files.keys() {
        if !has_meta.contains(path) {
            warnings.push(warning(
                WarningKind::MissingMeta,
                path,
                "no .meta file; open the project in Unity to import it",
            ));
        }
    }

    let context = ParseContext {
        project,
        data,
        options,
        curated: &curated,
        markers: &markers,
    };
    let results: Vec<Result<Parsed, Warning>> =
        on_io_threads(|| pairs.par_iter().map(|pair| context.parse(pair)).collect());

    // The first asset of a guid is kept. Found in a read-only pass, so the
    // kept ones are then collected in place: a second array of parsed
    // assets (800 MB at 10^6) would be the scan's peak.
    let mut first_of: HashMap<&str, &str> = HashMap::new();
    let mut duplicate = vec![false; results.len()];
    for (result, duplicate) in results.iter().zip(&mut duplicate) {
        let Ok(p) = result else { continue };
        match first_of.entry(&p.asset.row.guid) {
            Slot::Occupied(first) => {
                *duplicate = true;
                warnings.push(warning(
                    WarningKind::DuplicateGuid,
                    &p.asset.row.path,
                    &format!(
                        "guid {} is already used by {}; kept that one",
                        p.asset.row.guid,
                        first.get()
                    ),
                ));
            }
            Slot::Vacant(slot) => {
                slot.insert(&p.asset.row.path);
            }
        }
    }
    drop(first_of);
    let mut parsed: Vec<Parsed> = results
        .into_iter()
        .zip(duplicate)
        .filter_map(|(result, duplicate)| match result {
            Ok(p) => (!duplicate).then_some(p),
            Err(w) => {
                warnings.push(w);
                None
            }
        })
        .collect();

    let lookup = {
        let with_yaml: Vec<(&AssetRow, Option<&YamlFacts>)> =
            parsed.iter().map(|p| (&p.asset.row, p.yaml.as_ref())).collect();
        Lookup::new(project, data, options.index_depth, &with_yaml)
    };
    for p in &mut parsed {
        content::add_facts(data, options.index_depth, &mut p.asset.row, p.yaml.as_ref(), &lookup);
    }
    drop(lookup);

    let roots: BTreeSet<PackageRoot> = parsed
        .iter()
        .map(|p| packages::package_of(&p.asset.row.path, &markers, &data.conventions))
        .collect();
    let ids = packages::package_ids(&roots);
    let assets: Vec<ScannedAsset> = parsed
        .into_iter()
        .map(|p| p.asset)
        .map(|mut a| {
            a.row.package_id = Some(ids[a.package_id()].clone());
            a
        })
        .collect();
    let packages = roots
        .into_iter()
        .map(|r| PackageInfo {
            package_id: ids[&r.root].clone(),
            name: r.name,
            root: r.root,
        })
        .collect();

    warnings.sort_by(|a, b| (a.kind, &a.path).cmp(&(b.kind, &b.path)));
    Ok(ScanResult {
        index_depth: options.index_depth,
        started_at,
        assets,
        packages,
        warnings,
        files,
        fingerprint,
        tree,
    })
}

/// The walked part of a scan's fingerprint: a hash of every walked path
/// with its mtime and size, and the walk's warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    pub(crate) hash: String,
    /// The live watcher's quiet epoch read before the walk: while it lasts,
    /// the tree still has this hash (`super::watch`). `None` without a
    /// watcher, or when the tree holds a link (symbolic or hard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Epoch>,
}

impl Tree {
    /// The tree `walked`, seen in `epoch` (read before the walk).
    fn of(walked: &Walked, epoch: Option<Epoch>) -> Tree {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(walked.digest);
        for problem in &walked.problems {
            hasher.update(format!("! {}\t{}\n", problem.path, problem.detail));
        }
        Tree {
            hash: engine::digest::hex(&hasher.finalize()),
            watch: epoch.filter(|_| !walked.linked),
        }
    }
}

/// The project's tree as it is now: `last` again, without a walk, when a
/// live watcher's quiet epoch vouches that nothing changed since `last`
/// was walked; else a `stat`-only walk.
pub(crate) fn current_tree(project: &Path, limits: &Limits, options: &ScanOptions, last: Option<&Tree>) -> Tree {
    let epoch = super::watch::live_epoch(project, limits);
    if let Some(last) = last.filter(|last| last.watch.is_some() && last.watch == epoch) {
        tracing::debug!("index: the watcher saw no change since the last walk; not walking");
        return last.clone();
    }
    Tree::of(&tree_digest(project, &options.ignore_paths), epoch)
}

/// A digest of everything a scan's result depends on, read with `stat`
/// only: the `tree`, the curated labels file, the scan options, the
/// indexer's tables and the program version. An equal fingerprint means a
/// scan would find what the last one found, so an incremental run can stop
/// before reading any `.meta`.
pub fn fingerprint(
    project: &Path,
    limits: &Limits,
    data: &IndexData,
    options: &ScanOptions,
    tree: &Tree,
) -> anyhow::Result<String> {
    let labels = super::labels::read(project, limits)?;
    Ok(fingerprint_with(project, labels.as_deref(), tree, data, options))
}

/// `labels`: the labels file's text, which changes what a scan finds.
fn fingerprint_with(
    project: &Path,
    labels: Option<&str>,
    tree: &Tree,
    data: &IndexData,
    options: &ScanOptions,
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let line = format!(
        "{}\n{}\n{:?}\n{}\n{:?}\n",
        env!("CARGO_PKG_VERSION"),
        options.index_depth.as_str(),
        options.ignore_paths,
        data.digest,
        content::package_cache_state(project, options.index_depth)
    );
    hasher.update(&line);
    hasher.update(&tree.hash);
    hasher.update(labels.unwrap_or_default());
    engine::digest::hex(&hasher.finalize())
}

struct ParseContext<'a> {
    project: &'a Path,
    data: &'a IndexData,
    options: &'a ScanOptions,
    curated: &'a CuratedLabels,
    markers: &'a BTreeSet<String>,
}

impl ParseContext<'_> {
    /// Read and classify one asset and its `.meta`. The package is carried as
    /// its root path in `package_id` until ids are assigned.
    fn parse(&self, pair: &Pair) -> Result<Parsed, Warning> {
        let path = pair.asset.path.as_str();
        let meta_path = pair.meta.path.as_str();
        let unreadable = |p: &str, e: std::io::Error| warning(WarningKind::Unreadable, p, &e.to_string());
        let (meta_bytes, meta_stat) = read_meta(&self.project.join(meta_path), Listed::of(pair.meta.regular))
            .map_err(|e| unreadable(meta_path, e))?;
        let meta = parse_meta(&meta_text(&meta_bytes), &self.data.setting_keys)
            .map_err(|e| warning(WarningKind::BadMeta, meta_path, &e.to_string()))?;
        let (asset_mtime, asset_len) = match pair.asset.stat {
            Some(stat) => stat,
            None => {
                let m = fs::metadata(self.project.join(path)).map_err(|e| unreadable(path, e))?;
                (mtime_nanos(&m), m.len())
            }
        };

        let extension = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        let listed = Listed::of(pair.asset.regular);
        let yaml = self.read_yaml(path, listed, &extension);
        let main_class = main_class(&meta, yaml.as_ref(), || self.peek_main_class(path, listed, &extension));
        let subject = Subject {
            path,
            extension: &extension,
            importer: meta.importer.as_deref(),
            settings: &meta.settings,
            main_class,
        };
        let asset_type = classify::asset_type(self.data, &subject);
        let name = classify::file_stem(path).to_owned();
        let filename_signals = classify::filename_signals(self.data, &name);
        let (type_subtype, mut use_cases) = match classify::subtype(self.data, &asset_type, &subject, &filename_signals)
        {
            Some((type_subtype, uses)) => (Some(type_subtype), uses),
            None => (None, classify::type_use_cases(self.data, &asset_type).to_vec()),
        };
        if use_cases.is_empty() {
            // Types the taxonomy does not cover are "for" what they are.
            use_cases.push(super::tagger::type_tag(&asset_type));
        }
        let package = packages::package_of(path, self.markers, &self.data.conventions);

        let asset = ScannedAsset {
            row: AssetRow {
                guid: meta.guid.clone(),
                path: path.to_owned(),
                name,
                asset_type,
                type_subtype,
                filename_signals,
                labels: merge_labels(self.curated.for_path(path), &meta.labels),
                size: Some(asset_len),
                last_modified: Some(rfc3339_seconds(asset_mtime)),
                package_id: Some(package.root),
                llm_use_cases: Some(use_cases),
                ..AssetRow::default()
            },
            signature: format!(
                "{}:{}:{}:{}",
                asset_mtime,
                asset_len,
                mtime_nanos(&meta_stat),
                meta_stat.len()
            ),
        };
        Ok(Parsed { asset, yaml })
    }

    /// The asset's Unity YAML facts, read only at depth normal/rich.
    fn read_yaml(&self, path: &str, listed: Listed, extension: &str) -> Option<YamlFacts> {
        if self.options.index_depth == Depth::Minimal || !self.data.types.yaml_extensions.contains(extension) {
            return None;
        }
        let (file, len) = open_in_project(self.project, path, listed)?;
        let bytes = read_to_limit(file, len, ASSET_TEXT_LIMIT)?;
        let text = String::from_utf8(bytes).ok()?;
        unity_yaml::is_unity_yaml(&text).then(|| unity_yaml::scan(&text))
    }

    /// The first object's class of a `.asset` whose meta does not name it:
    /// reads only the file's head.
    fn peek_main_class(&self, path: &str, listed: Listed, extension: &str) -> Option<u32> {
        use std::io::Read as _;
        if extension != "asset" {
            return None;
        }
        let mut head = [0u8; 1024];
        let (mut file, _) = open_in_project(self.project, path, listed)?;
        let n = file.read(&mut head).ok()?;
        let text = String::from_utf8_lossy(&head[..n]);
        unity_yaml::is_unity_yaml(&text)
            .then(|| unity_yaml::scan(&text).classes.first().copied())
            .flatten()
    }
}

fn main_class(meta: &Meta, yaml: Option<&YamlFacts>, peek: impl FnOnce() -> Option<u32>) -> Option<u32> {
    meta.main_class_id()
        .or_else(|| yaml.and_then(|y| y.classes.first().copied()))
        .or_else(peek)
}

fn warning(kind: WarningKind, path: &str, detail: &str) -> Warning {
    Warning {
        kind,
        path: path.to_owned(),
        detail: detail.to_owned(),
    }
}

/// A modification time in nanoseconds since the epoch as RFC 3339, in seconds.
fn rfc3339_seconds(nanos: u128) -> String {
    let secs = i64::try_from(nanos / 1_000_000_000).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

/// Group counts of warnings by kind, for summaries.
pub(crate) fn warning_counts(warnings: &[Warning]) -> BTreeMap<WarningKind, usize> {
    let mut counts = BTreeMap::new();
    for w in warnings {
        *counts.entry(w.kind).or_default() += 1;
    }
    counts
}
