//! The index folder `.claude/unity-asset-index/`: its files, the indexer's
//! state, the manifest, the crash-safety partial, and the freshness rule
//! search, build and doctor share.
//!
//! **Freshness.** `state.json`'s `last_run` is the modification time of
//! `assets.jsonl` as read back from the file system right after the indexer
//! wrote (or, for an empty change set, touched) it, in RFC 3339 UTC with
//! nanoseconds. The index is fresh when the two are equal: any later write to
//! `assets.jsonl` by something else, or a crash between writing it and
//! `state.json`, shows as stale. Reading the time back (rather than using
//! the clock) makes the comparison exact on file systems with coarse mtimes.
//!
//! **Manifest version** `v<major>.<minor>`: `v1.0` for a first index; the
//! major number moves (minor back to 0) when `schema_tier` (`index_depth`)
//! changes; the minor number moves when `assets.jsonl` or `packages.jsonl`
//! change content; a run that changes neither keeps the version (and only
//! `last_run` moves).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::record::{Depth, PackageRecord};
use super::row::AssetRow;

/// The project's index folder, relative to its root.
pub const INDEX_DIR: &str = ".claude/unity-asset-index";
/// Rows of `assets.jsonl` decoded at once, in parallel, wherever rows are
/// read in order: enough to keep every core busy, few enough that a million
/// rows are never all held twice.
pub(crate) const ROWS_DECODED_AT_ONCE: usize = 8192;
pub(crate) const ASSETS_FILE: &str = "assets.jsonl";
pub(crate) const PACKAGES_FILE: &str = "packages.jsonl";
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
pub(crate) const STATE_FILE: &str = "state.json";
pub(crate) const PARTIAL_FILE: &str = "assets.jsonl.partial";
pub(crate) const SIGNATURES_FILE: &str = "signatures.tsv";

pub(crate) fn index_dir(project: &Path) -> PathBuf {
    project.join(INDEX_DIR)
}

/// guid → signature (asset and meta mtime + size).
pub(crate) type Signatures = HashMap<String, String>;

/// `state.json`: small, so a run that changes nothing reads and writes it
/// in a blink; the guid signatures live in `SIGNATURES_FILE`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The mtime of `assets.jsonl` after the last finished run.
    #[serde(default)]
    pub last_run: Option<String>,
    /// Set from planning until finalize: a run that has not finished.
    #[serde(default)]
    pub(crate) in_progress_run: Option<String>,
    #[serde(default)]
    pub(crate) completed_batches: Vec<String>,
    #[serde(default)]
    pub(crate) pending_batches: Vec<String>,
    /// The signatures of a `state.json` written before `SIGNATURES_FILE`
    /// existed; [`write_state`] moves them there.
    #[serde(default, rename = "guid_signatures", skip_serializing)]
    pub(crate) legacy_signatures: Option<Signatures>,
    #[serde(default)]
    pub(crate) last_error: Option<String>,
    /// What the last finished run scanned, so a run that finds nothing
    /// changed can stop after a `stat`-only walk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_scan: Option<LastScan>,
}

/// The scan of the last finished run: its tree fingerprint and counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LastScan {
    pub(crate) fingerprint: String,
    /// The tree the fingerprint was made from (absent in a `state.json` of
    /// an older version: the next run walks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<super::scan::Tree>,
    /// How many assets the scan found.
    pub assets: usize,
    pub(crate) packages: usize,
    pub(crate) warnings_by_kind: BTreeMap<String, usize>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) version: String,
    pub(crate) last_run: String,
    pub(crate) schema_tier: Depth,
    /// The vectors of search by meaning beside the rows, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Embedding>,
    /// `graph.json`, the reference graph of the rows (index_depth normal and rich).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<super::graph::GraphEntry>,
}

/// What `assets.vectors` holds: which embedder made it, from which text, how many rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Embedding {
    /// The embedder's name and version.
    pub model: String,
    pub(crate) text: String,
    /// The length of each vector.
    pub dim: usize,
    pub(crate) count: usize,
    /// The file as the run that wrote or checked it left it: a no-op run
    /// that finds it so does not read it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) checked: Option<FileStamp>,
}

/// Which version of a file this is: index files are replaced by rename,
/// so a new version is a new inode (and, as a rule, a new size or time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileStamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl FileStamp {
    pub(crate) fn of(file: &fs::File) -> std::io::Result<Self> {
        Ok(Self::from_metadata(&file.metadata()?))
    }

    /// The stamp of the file at `path`, none when it cannot be read.
    pub(crate) fn at(path: &Path) -> Option<Self> {
        fs::metadata(path).ok().map(|meta| Self::from_metadata(&meta))
    }

    fn from_metadata(meta: &fs::Metadata) -> Self {
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Self {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// One finished row in `assets.jsonl.partial`: a tagged asset of the run in
/// progress, with the signature it was tagged at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PartialRow {
    pub(crate) batch: String,
    pub(crate) signature: String,
    pub(crate) tagged_by: TaggedBy,
    #[serde(flatten)]
    pub(crate) tags: super::record::TagRow,
}

/// Who tagged a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaggedBy {
    /// A model.
    Llm,
    /// The builtin tagger (rules over the taxonomy, no model).
    Builtin,
}

/// Read `state.json`; a missing file is the empty state, a corrupt one an error
/// saying how to recover.
pub(crate) fn read_state(project: &Path, limits: &Limits) -> anyhow::Result<State> {
    read_json(&index_dir(project).join(STATE_FILE), limits).map(Option::unwrap_or_default)
}

/// Write `state.json`. A state read from an older index still
/// holds the last run's signatures: they move to `SIGNATURES_FILE` first,
/// so no run loses them.
pub(crate) fn write_state(project: &Path, state: &State) -> anyhow::Result<()> {
    if let Some(signatures) = &state.legacy_signatures {
        write_signatures(project, signatures.iter())?;
    }
    write_json(&index_dir(project).join(STATE_FILE), state)
}

/// The first line of [`SIGNATURES_FILE`]: a file without it is of another
/// format, and every asset is tagged again.
const SIGNATURES_HEADER: &str = "# unity-assets signatures 1";

/// The signatures of the last finished run: `state`'s own when it was
/// written before `SIGNATURES_FILE`, else that file's (none when it is
/// missing or of another format: every asset is then tagged again). A
/// line that is not `guid<TAB>signature` is absent, so its asset is
/// tagged again too.
pub(crate) fn read_signatures(project: &Path, limits: &Limits, state: &State) -> anyhow::Result<Signatures> {
    if let Some(signatures) = &state.legacy_signatures {
        return Ok(signatures.clone());
    }
    let path = index_dir(project).join(SIGNATURES_FILE);
    let Some(text) = engine::io::read_text_if_present(&path, limits.file_bytes, engine::io::FILE_KEY, &crate::PRODUCT)?
    else {
        return Ok(Signatures::new());
    };
    let mut lines = text.lines();
    if lines.next() != Some(SIGNATURES_HEADER) {
        tracing::warn!("{} is of another format; every asset is indexed again", path.display());
        return Ok(Signatures::new());
    }
    Ok(lines
        .filter_map(|line| line.split_once('\t'))
        .filter(|(guid, signature)| !guid.is_empty() && !signature.is_empty() && !signature.contains('\t'))
        .map(|(guid, signature)| (guid.to_owned(), signature.to_owned()))
        .collect())
}

/// Write `SIGNATURES_FILE` atomically, sorted by guid (so an unchanged
/// set writes the same bytes). Written after `assets.jsonl` and before
/// `state.json`: a crash in between leaves signatures no newer than the
/// rows, so a changed asset is at worst tagged again, never missed.
pub(crate) fn write_signatures<'a>(
    project: &Path,
    signatures: impl Iterator<Item = (&'a String, &'a String)>,
) -> anyhow::Result<()> {
    let mut sorted: Vec<(&String, &String)> = signatures.collect();
    sorted.sort_unstable();
    let mut text = String::with_capacity(SIGNATURES_HEADER.len() + 1 + sorted.len() * 96);
    text.push_str(SIGNATURES_HEADER);
    text.push('\n');
    for (guid, signature) in sorted {
        // Guids are 32 hex digits and signatures numbers: a tab or line
        // break would be a bug, and a row read back wrong would miss a change.
        anyhow::ensure!(
            !(guid.contains(['\t', '\n']) || signature.contains(['\t', '\n'])),
            "cannot record the signature of guid {guid:?}"
        );
        text.push_str(guid);
        text.push('\t');
        text.push_str(signature);
        text.push('\n');
    }
    let path = index_dir(project).join(SIGNATURES_FILE);
    engine::io::write_atomic(&path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn read_manifest(project: &Path, limits: &Limits) -> anyhow::Result<Option<Manifest>> {
    read_json(&index_dir(project).join(MANIFEST_FILE), limits)
}

pub(crate) fn write_manifest(project: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    write_json(&index_dir(project).join(MANIFEST_FILE), manifest)
}

/// The next manifest version (see the module docs).
pub(crate) fn next_version(previous: Option<&Manifest>, tier: Depth, content_changed: bool) -> String {
    let Some(previous) = previous else {
        return "v1.0".to_owned();
    };
    let (major, minor) = parse_version(&previous.version).unwrap_or((1, 0));
    if previous.schema_tier != tier {
        format!("v{}.0", major + 1)
    } else if content_changed {
        format!("v{major}.{}", minor + 1)
    } else {
        format!("v{major}.{minor}")
    }
}

fn parse_version(version: &str) -> Option<(u64, u64)> {
    let (major, minor) = version.strip_prefix('v')?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The rows of the previous `assets.jsonl`. Rows that cannot be read are
/// absent, and so is the whole file when it cannot be read: their assets are
/// tagged again, so a corrupt index never stops the run that replaces it.
pub(crate) fn read_assets(project: &Path, limits: &Limits) -> Vec<AssetRow> {
    read_jsonl(&index_dir(project).join(ASSETS_FILE), limits, Unreadable::Warn)
}

/// The lines of `packages.jsonl` that are no package row (too long, not
/// UTF-8, not JSON, not a [`PackageRecord`]); an error when the file
/// cannot be read at all, or is missing.
pub(crate) fn bad_package_rows(
    project: &Path,
    limits: &Limits,
) -> Result<Vec<engine::io::BadRow>, engine::io::ConfineError> {
    let check = |row: &serde_json::Value| PackageRecord::deserialize(row).map(drop).map_err(|e| e.to_string());
    let lines = engine::io::read_row_lines(&index_dir(project).join(PACKAGES_FILE), limits, &crate::PRODUCT)?;
    Ok(engine::io::jsonl_records(lines.iter(), &check).bad_rows)
}

/// The guids of the rows of `assets.jsonl` that can be read (see
/// [`read_assets`], which says which rows cannot: a run reads both).
pub(crate) fn indexed_guids(project: &Path, limits: &Limits) -> std::collections::HashSet<String> {
    #[derive(Deserialize)]
    struct GuidOnly {
        guid: String,
    }
    read_jsonl::<GuidOnly>(&index_dir(project).join(ASSETS_FILE), limits, Unreadable::Skip)
        .into_iter()
        .map(|row| row.guid)
        .collect()
}

/// The rows of `assets.jsonl.partial` (a torn last line from a crash, or any
/// row that cannot be read, is absent: its asset is tagged again).
pub(crate) fn read_partial(project: &Path, limits: &Limits) -> Vec<PartialRow> {
    read_jsonl(&index_dir(project).join(PARTIAL_FILE), limits, Unreadable::Warn)
}

/// Whether a read of an index file says which rows it skipped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unreadable {
    Warn,
    Skip,
}

/// The rows of a JSONL file of the indexer's own, within `limits` (a
/// missing file has none). Rows that are not JSON or not this row type
/// (a path outside the project included), over `limits.line_kb` or not
/// UTF-8 are skipped, with a warning naming the line: the indexer re-tags
/// their assets rather than failing the run.
/// Each line is decoded straight into `T` (not through
/// `engine::io::read_records`' array of JSON values), which keeps a
/// 100,000-row index at a fraction of the memory.
fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path, limits: &Limits, unreadable: Unreadable) -> Vec<T> {
    let mut rows = Vec::new();
    for_each_line(path, limits, unreadable, |text| {
        rows.push(serde_json::from_str(text).map_err(|e| e.to_string())?);
        Ok(())
    });
    rows
}

/// Each non-blank readable line of a JSONL file of the indexer's own, as
/// [`read_jsonl`] reads them; a line `each` refuses is skipped like an
/// unreadable one.
fn for_each_line(
    path: &Path,
    limits: &Limits,
    unreadable: Unreadable,
    mut each: impl FnMut(&str) -> Result<(), String>,
) {
    let warn = unreadable == Unreadable::Warn;
    let lines = match engine::io::read_row_lines(path, limits, &crate::PRODUCT) {
        Ok(lines) => lines,
        Err(e) if e.is_not_found() => return,
        Err(e) => {
            if warn {
                tracing::warn!("{e}; its assets are indexed again");
            }
            return;
        }
    };
    for (number, line) in lines.iter() {
        let read = line.and_then(|line| match line.trim_start_matches('\u{feff}').trim() {
            "" => Ok(()),
            text => each(text),
        });
        match read {
            Ok(()) => {}
            Err(why) if warn => tracing::warn!(
                "{}:{number}: {why}; skipped, its asset is indexed again",
                path.display()
            ),
            Err(_) => {}
        }
    }
}

/// The partial file's rows kept as their lines, each decoded when it is
/// looked up: finalize reads every row once, and a million decoded rows were
/// a gigabyte of small strings (their lines, half that).
pub(crate) struct PartialRows {
    text: String,
    /// Each guid's line in `text`.
    lines: HashMap<String, std::ops::Range<usize>>,
}

impl PartialRows {
    pub(crate) fn read(project: &Path, limits: &Limits) -> Self {
        #[derive(Deserialize)]
        struct Guid {
            guid: String,
        }
        let mut rows = PartialRows {
            text: String::new(),
            lines: HashMap::new(),
        };
        for_each_line(
            &index_dir(project).join(PARTIAL_FILE),
            limits,
            Unreadable::Warn,
            |line| {
                let Guid { guid } = serde_json::from_str(line).map_err(|e| e.to_string())?;
                let at = rows.text.len();
                rows.text.push_str(line);
                rows.lines.insert(guid, at..rows.text.len());
                Ok(())
            },
        );
        rows
    }

    /// The row of `guid` tagged for the asset as it now is (`signature`).
    pub fn get(&self, guid: &str, signature: &str) -> Option<PartialRow> {
        let line = &self.text[self.lines.get(guid)?.clone()];
        serde_json::from_str::<PartialRow>(line)
            .ok()
            .filter(|row| row.signature == signature && row.tags.guid == guid)
    }
}

/// Remove a file if present.
pub(crate) fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The line an index run prints when another run holds the project's index.
pub(crate) const WAITING_LINE: &str =
    "[unity-assets:index] another index run holds this project's index; waiting for it to finish";

/// Held for a whole index run (`index.lock`, the index pipeline's first
/// stage, keeps it until the run ends): a second run on the same project,
/// in this process or another, waits for the first (with a line saying so)
/// instead of interleaving its writes. An advisory lock on the index folder
/// itself, so it creates no file and dies with its process (never stale).
pub(crate) struct IndexLock {
    _held: fs::File,
}

/// Take the index lock of `project`, calling `waiting` first when another
/// run holds it.
pub(crate) fn lock_index(project: &Path, waiting: impl FnOnce()) -> anyhow::Result<IndexLock> {
    super::scan::require_unity_project(project)?;
    let dir = index_dir(project);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let file = fs::File::open(&dir).with_context(|| format!("cannot open {}", dir.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            waiting();
            file.lock().with_context(|| format!("cannot lock {}", dir.display()))?;
        }
        // Where folders cannot be locked, runs are not serialised.
        Err(fs::TryLockError::Error(e)) => tracing::debug!("no index lock on {}: {e}", dir.display()),
    }
    Ok(IndexLock { _held: file })
}

/// `reindex` starts over: a corrupt `manifest.json` or `state.json` is
/// removed (with a line saying so) instead of stopping the run that rebuilds it.
pub(crate) fn discard_corrupt(project: &Path, limits: &Limits) -> anyhow::Result<()> {
    for name in [MANIFEST_FILE, STATE_FILE] {
        let path = index_dir(project).join(name);
        if read_json::<serde_json::Value>(&path, limits).is_err() {
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
            tracing::warn!("{} was corrupt; removed it, reindex rebuilds it", path.display());
        }
    }
    Ok(())
}

/// A JSON file of the index folder, within `limits.data_mb` (a missing file
/// is `None`; a corrupt one an error saying how to recover).
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, limits: &Limits) -> anyhow::Result<Option<T>> {
    let Some(text) = engine::io::read_text_if_present(path, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT)?
    else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{} is corrupt; delete it and run `unity-assets reindex`",
            path.display()
        )
    })
}

/// Compact: `state.json` is rewritten by every run, the no-op one included.
fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec(value)?;
    bytes.push(b'\n');
    engine::io::write_atomic(path, &bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Record a failed run's error in `state.json` (best effort: the error is
/// reported to the user either way).
pub(crate) fn record_error(project: &Path, limits: &Limits, error: &anyhow::Error) {
    if let Ok(mut state) = read_state(project, limits) {
        state.last_error = Some(format!("{error:#}"));
        let _ = write_state(project, &state);
    }
}

/// Set a file's mtime to now without changing its bytes, and return the
/// mtime as the file system stores it.
pub fn touch(path: &Path) -> anyhow::Result<String> {
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.set_modified(SystemTime::now())
        .with_context(|| format!("cannot set the time of {}", path.display()))?;
    drop(file);
    mtime_rfc3339(path)
}

/// A file's mtime in RFC 3339 UTC with nanoseconds.
pub(crate) fn mtime_rfc3339(path: &Path) -> anyhow::Result<String> {
    let modified = fs::metadata(path)
        .and_then(|m| m.modified())
        .with_context(|| format!("cannot read the modification time of {}", path.display()))?;
    Ok(OffsetDateTime::from(modified).format(&Rfc3339)?)
}

/// Whether the index can be trusted (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Freshness {
    /// No `assets.jsonl`, `manifest.json` or `state.json`.
    Missing {
        /// What is missing.
        reason: String,
    },
    /// `assets.jsonl` changed after the last run, or the last run did not finish.
    Stale {
        /// What changed, or why the run did not finish.
        reason: String,
    },
    /// The last run finished and nothing changed since.
    Fresh {
        /// `state.json`'s `last_run` (see the module docs).
        last_run: String,
    },
}

impl Freshness {
    pub(crate) fn is_fresh(&self) -> bool {
        matches!(self, Self::Fresh { .. })
    }
}

/// `state.json` without its guid signatures, which a large project's
/// state is mostly made of: what freshness and the no-op check read.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct StateHead {
    #[serde(default)]
    pub(crate) last_run: Option<String>,
    #[serde(default)]
    pub(crate) in_progress_run: Option<String>,
    #[serde(default)]
    pub(crate) last_scan: Option<LastScan>,
}

/// Read [`StateHead`]; a missing file is the empty state.
pub(crate) fn read_state_head(project: &Path, limits: &Limits) -> anyhow::Result<StateHead> {
    read_json(&index_dir(project).join(STATE_FILE), limits).map(Option::unwrap_or_default)
}

/// Shared by search, build and doctor: is the project's index fresh?
pub fn index_freshness(project: &Path, limits: &Limits) -> Freshness {
    freshness_of(project, read_state_head(project, limits))
}

/// [`index_freshness`] with the state head its caller has already read.
pub(crate) fn freshness_of(project: &Path, state: anyhow::Result<StateHead>) -> Freshness {
    let dir = index_dir(project);
    for file in [ASSETS_FILE, MANIFEST_FILE, STATE_FILE] {
        if !dir.join(file).is_file() {
            return Freshness::Missing {
                reason: format!("{INDEX_DIR}/{file} does not exist"),
            };
        }
    }
    let state = match state {
        Ok(state) => state,
        Err(e) => {
            return Freshness::Stale {
                reason: format!("{e:#}"),
            }
        }
    };
    let Some(last_run) = state.last_run else {
        return Freshness::Stale {
            reason: "state.json has no last_run: no index run has finished".to_owned(),
        };
    };
    let mtime = match mtime_rfc3339(&dir.join(ASSETS_FILE)) {
        Ok(mtime) => mtime,
        Err(e) => {
            return Freshness::Stale {
                reason: format!("{e:#}"),
            }
        }
    };
    let same = match (
        OffsetDateTime::parse(&last_run, &Rfc3339),
        OffsetDateTime::parse(&mtime, &Rfc3339),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        Freshness::Fresh { last_run }
    } else {
        Freshness::Stale {
            reason: format!("assets.jsonl modified at {mtime}, but the last index run is {last_run}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_version_moves_as_documented() {
        let m = |version: &str, tier| Manifest {
            version: version.into(),
            last_run: String::new(),
            schema_tier: tier,
            embedding: None,
            graph: None,
        };
        assert_eq!(next_version(None, Depth::Minimal, true), "v1.0");
        assert_eq!(
            next_version(Some(&m("v1.3", Depth::Minimal)), Depth::Minimal, false),
            "v1.3"
        );
        assert_eq!(
            next_version(Some(&m("v1.3", Depth::Minimal)), Depth::Minimal, true),
            "v1.4"
        );
        assert_eq!(
            next_version(Some(&m("v1.3", Depth::Minimal)), Depth::Rich, true),
            "v2.0"
        );
        assert_eq!(
            next_version(Some(&m("garbage", Depth::Minimal)), Depth::Minimal, true),
            "v1.1"
        );
    }

    #[test]
    fn index_files_are_read_within_the_limits_and_the_error_names_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        fs::create_dir_all(index_dir(project)).unwrap();
        let small = Limits {
            data_bytes: 64,
            line_bytes: 32,
            ..Limits::default()
        };
        fs::write(
            index_dir(project).join(STATE_FILE),
            format!("{{\"last_error\": \"{}\"}}", "x".repeat(100)),
        )
        .unwrap();
        let error = format!("{:#}", read_state(project, &small).unwrap_err());
        assert!(error.contains("limits.data_mb"), "{error}");
        assert!(read_state(project, &Limits::default()).is_ok());
    }

    /// One over-long or non-UTF-8 row is absent (its asset is tagged again),
    /// never an error that stops every later run; so is a whole file that
    /// cannot be read.
    #[test]
    fn unreadable_index_rows_are_absent_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        fs::create_dir_all(index_dir(project)).unwrap();
        let small = Limits {
            line_bytes: 200,
            ..Limits::default()
        };
        let record = |guid: &str| {
            format!("{{\"guid\":\"{guid}\",\"path\":\"Assets/{guid}\",\"name\":\"{guid}\",\"type\":\"Prefab\",\"labels\":[],\"llm_tags\":[],\"llm_summary\":\"\"}}\n")
        };
        let mut bytes = record("a").into_bytes();
        bytes.extend(format!("{{\"guid\": \"{}\"}}\n", "b".repeat(400)).bytes());
        bytes.extend(b"{\"guid\": \"\xff\"}\n");
        bytes.extend(record("c").bytes());
        fs::write(index_dir(project).join(ASSETS_FILE), &bytes).unwrap();
        let guids: Vec<String> = read_assets(project, &small).into_iter().map(|r| r.guid).collect();
        assert_eq!(guids, ["a", "c"]);
        assert_eq!(indexed_guids(project, &small).len(), 2);
        let tiny = Limits {
            data_bytes: 10,
            ..Limits::default()
        };
        assert!(read_assets(project, &tiny).is_empty());
    }

    #[test]
    fn freshness_follows_the_assets_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        assert!(matches!(
            index_freshness(project, &Limits::default()),
            Freshness::Missing { .. }
        ));
        let index = index_dir(project);
        fs::create_dir_all(&index).unwrap();
        fs::write(index.join(ASSETS_FILE), "").unwrap();
        let manifest = Manifest {
            version: "v1.0".into(),
            last_run: String::new(),
            schema_tier: Depth::Minimal,
            embedding: None,
            graph: None,
        };
        write_manifest(project, &manifest).unwrap();
        let last_run = touch(&index.join(ASSETS_FILE)).unwrap();
        write_state(
            project,
            &State {
                last_run: Some(last_run),
                ..State::default()
            },
        )
        .unwrap();
        assert!(index_freshness(project, &Limits::default()).is_fresh());

        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        fs::OpenOptions::new()
            .write(true)
            .open(index.join(ASSETS_FILE))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(matches!(
            index_freshness(project, &Limits::default()),
            Freshness::Stale { .. }
        ));
    }
}
