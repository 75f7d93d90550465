//! The search index (`search-index.bin`, beside `assets.jsonl`): the terms
//! of every row, field by field as the ranker reads them
//! ([`super::rank::Document::visit`]), in an `fst` term dictionary with
//! postings of row ids, plus the corpus statistics BM25F needs (row count,
//! summed field lengths), the loanword words, a guid dictionary and each
//! row's offset in `assets.jsonl`.
//!
//! A search then reads only the rows that hold one of its terms and scores
//! them with the whole corpus's statistics ([`super::rank::Corpus`]): every
//! candidate gets the score a scan of every row would give it, and a row
//! without any query term scores nothing either way, so the ranking is the
//! exhaustive one (`tests/search_index.rs` holds that on every dev query).
//!
//! Freshness: the index records the length of `assets.jsonl` and the
//! manifest version it was built from; every row read back is checked
//! against its line's fingerprint. An index that is missing, of another
//! format or stale is rebuilt from `assets.jsonl` with a line saying so —
//! a stale index never answers.

mod build;
mod ranking;
mod reuse;

use std::collections::{HashMap, HashSet};
use std::io::{Read as _, Seek as _, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::Context as _;
use engine::io::Limits;

use super::filters::Filters;
use super::query::Query;
use super::rank::{Candidate, RankOptions};
use super::records::AssetRow;
use build::{fingerprint, read_varint, Header, MAGIC, ROW_BYTES};

pub const SEARCH_INDEX_FILE: &str = "search-index.bin";
const ASSETS_FILE: &str = super::load::ASSETS_FILE;

/// Part of the index file's bytes: an `fst` map reads its section in place.
#[derive(Clone)]
struct Section {
    bytes: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl AsRef<[u8]> for Section {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[self.range.clone()]
    }
}

/// A loaded search index, fresh against the `assets.jsonl` beside it.
pub struct TermIndex {
    header: Header,
    /// The file's bytes; the header's ranges count from `body_at`.
    bytes: Arc<Vec<u8>>,
    body_at: usize,
    terms: fst::Map<Section>,
    guids: fst::Map<Section>,
    assets: PathBuf,
    limits: Limits,
}

/// A parsed index file: its header and the sections after it.
type Parsed = (Header, Arc<Vec<u8>>, usize);

/// The last index file read — path, length, modification time — and what
/// it held: the stages of one search (and every search of a long-running
/// MCP server) read the file once.
static LAST_READ: Mutex<Option<(PathBuf, u64, SystemTime, Parsed)>> = Mutex::new(None);

/// The index on disk in `dir`, or why it cannot answer.
fn open(dir: &Path, manifest_version: Option<&str>, limits: &Limits) -> anyhow::Result<Result<TermIndex, String>> {
    let path = dir.join(SEARCH_INDEX_FILE);
    let stamp = std::fs::metadata(&path).and_then(|m| Ok((m.len(), m.modified()?)));
    let cached = |(len, modified): &(u64, SystemTime)| {
        let last = LAST_READ.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref()
            .filter(|(p, l, m, _)| *p == path && l == len && m == modified)
            .map(|(_, _, _, parsed)| parsed.clone())
    };
    if let Some(parsed) = stamp.as_ref().ok().and_then(cached) {
        return Ok(load(parsed, dir, manifest_version, limits));
    }
    let bytes = match engine::io::read_limited(&path, limits.data_bytes, engine::io::DATA_KEY) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Ok(Err("missing".into())),
        Err(e) => return Err(e.into()),
    };
    let parsed = match parse(bytes) {
        Ok(parsed) => parsed,
        Err(why) => return Ok(Err(why)),
    };
    if let Ok((len, modified)) = stamp {
        *LAST_READ.lock().unwrap_or_else(|e| e.into_inner()) = Some((path, len, modified, parsed.clone()));
    }
    Ok(load(parsed, dir, manifest_version, limits))
}

/// The header and sections of an index file's bytes, or why they are not one.
/// What a build may reuse of an index file's bytes (`None`: build anew).
fn reusable(bytes: Vec<u8>) -> Option<reuse::Previous> {
    let (header, bytes, body_at) = parse(bytes).ok()?;
    reuse::Previous::decode(&header, &bytes[body_at..])
}

fn parse(bytes: Vec<u8>) -> Result<Parsed, String> {
    let Some(header_len) = bytes
        .strip_prefix(MAGIC)
        .and_then(|rest| rest.get(..4))
        .map(|len| u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize)
    else {
        return Err("of another format".into());
    };
    let body_at = MAGIC.len() + 4 + header_len;
    let Some(header) = bytes
        .get(MAGIC.len() + 4..body_at)
        .and_then(|h| serde_json::from_slice::<Header>(h).ok())
    else {
        return Err("damaged".into());
    };
    Ok((header, Arc::new(bytes), body_at))
}

/// The parsed index, or why it cannot answer for `dir`'s `assets.jsonl`.
fn load(
    (header, bytes, body_at): Parsed,
    dir: &Path,
    manifest_version: Option<&str>,
    limits: &Limits,
) -> Result<TermIndex, String> {
    if is_stale(&header, dir, manifest_version) {
        return Err("stale".into());
    }
    let assets = dir.join(ASSETS_FILE);
    let section = |(start, end): (usize, usize)| {
        (start <= end && body_at + end <= bytes.len()).then(|| Section {
            bytes: bytes.clone(),
            range: body_at + start..body_at + end,
        })
    };
    let maps = section(header.terms)
        .zip(section(header.guids))
        .zip(section(header.row_table).filter(|s| s.range.len() == header.rows * ROW_BYTES))
        .zip(section(header.postings));
    let Some((((terms, guids), _), _)) = maps else {
        return Err("damaged".into());
    };
    let (Ok(terms), Ok(guids)) = (fst::Map::new(terms), fst::Map::new(guids)) else {
        return Err("damaged".into());
    };
    Ok(TermIndex {
        header,
        bytes,
        body_at,
        terms,
        guids,
        assets,
        limits: *limits,
    })
}

/// Whether `header` was built from another `assets.jsonl` than `dir`'s or
/// another manifest version.
fn is_stale(header: &Header, dir: &Path, manifest_version: Option<&str>) -> bool {
    let assets_bytes = std::fs::metadata(dir.join(ASSETS_FILE)).map(|m| m.len()).unwrap_or(0);
    header.assets_bytes != assets_bytes || header.manifest_version.as_deref() != manifest_version
}

/// The header of the index file at `path` without reading its sections;
/// `None` when it is missing, of another format or damaged.
fn read_header(path: &Path, limits: &Limits) -> Option<Header> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut prefix = [0u8; MAGIC.len() + 4];
    file.read_exact(&mut prefix).ok()?;
    let len = prefix.strip_prefix(MAGIC)?;
    let len = u64::from(u32::from_le_bytes(len.try_into().ok()?));
    if len > limits.file_bytes {
        return None;
    }
    let mut header = Vec::new();
    file.take(len).read_to_end(&mut header).ok()?;
    serde_json::from_slice(&header).ok()
}

/// Build the index of `dir`'s `assets.jsonl` and write it atomically,
/// reusing the rows of the index there whose lines are unchanged; a folder
/// that cannot be written keeps the index in memory only. Also says how
/// many rows were decoded and visited.
fn rebuild(
    dir: &Path,
    manifest_version: Option<&str>,
    limits: &Limits,
) -> anyhow::Result<(TermIndex, Option<String>, usize)> {
    let assets = dir.join(ASSETS_FILE);
    let text = match engine::io::read_lines_limited(&assets, limits) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => String::new(),
        Err(e) => return Err(e.into()),
    };
    let path = dir.join(SEARCH_INDEX_FILE);
    let previous = engine::io::read_limited(&path, limits.data_bytes, engine::io::DATA_KEY)
        .ok()
        .and_then(reusable);
    let built = build::build(text.as_bytes(), manifest_version.map(str::to_owned), previous)?;
    let not_written = engine::io::write_atomic(&path, &built.bytes)
        .err()
        .map(|e| format!("cannot write {}: {e}", path.display()));
    let index = parse(built.bytes)
        .and_then(|parsed| load(parsed, dir, manifest_version, limits))
        .map_err(|why| anyhow::anyhow!("the search index just built is {why}"))?;
    Ok((index, not_written, built.visited))
}

impl TermIndex {
    /// The index of `dir` when it is present and fresh; else why not.
    pub fn open_fresh(
        dir: &Path,
        manifest_version: Option<&str>,
        limits: &Limits,
    ) -> anyhow::Result<Result<Self, String>> {
        open(dir, manifest_version, limits)
    }

    /// The index of `dir`, rebuilt from `assets.jsonl` first when it is
    /// missing or stale (`announce` gets the line saying so).
    pub fn open_or_build(
        dir: &Path,
        manifest_version: Option<&str>,
        limits: &Limits,
        announce: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Self> {
        match open(dir, manifest_version, limits)? {
            Ok(index) => Ok(index),
            Err(why) => Self::rebuilt(dir, manifest_version, limits, &why, announce),
        }
    }

    fn rebuilt(
        dir: &Path,
        manifest_version: Option<&str>,
        limits: &Limits,
        why: &str,
        announce: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Self> {
        let (index, not_written, _) = rebuild(dir, manifest_version, limits)?;
        announce(&format!(
            "[unity-assets:search] the search index was {why}: rebuilt from {ASSETS_FILE} ({} rows){}",
            index.header.rows,
            not_written
                .map(|e| format!(", kept in memory only ({e})"))
                .unwrap_or_default()
        ));
        Ok(index)
    }

    /// Write the index of `dir` when it is missing or stale (the `index`
    /// pipeline's last step), from the rows that changed; the line says
    /// what was done, `None` when the index was fresh. Only the header is
    /// read to tell (a damaged body is rebuilt by the search that finds it).
    pub fn refresh(dir: &Path, manifest_version: Option<&str>, limits: &Limits) -> anyhow::Result<Option<String>> {
        let header = read_header(&dir.join(SEARCH_INDEX_FILE), limits);
        if header.is_some_and(|h| !is_stale(&h, dir, manifest_version)) {
            return Ok(None);
        }
        let (index, not_written, visited) = rebuild(dir, manifest_version, limits)?;
        Ok(Some(match not_written {
            None => format!("search index: {} rows ({visited} read anew)", index.header.rows),
            Some(e) => format!("search index not written: {e}"),
        }))
    }

    /// Non-blank lines of `assets.jsonl` (the asset count search reports).
    pub fn lines(&self) -> usize {
        self.header.lines
    }

    /// The bytes of a section the header names (checked when loaded).
    fn section(&self, (start, end): (usize, usize)) -> &[u8] {
        &self.bytes[self.body_at + start..self.body_at + end]
    }

    /// The row ids holding `term`, ascending.
    fn postings(&self, term: &str) -> anyhow::Result<Vec<u32>> {
        let Some(at) = self.terms.get(term) else {
            return Ok(vec![]);
        };
        let bytes = self.section(self.header.postings);
        let damaged =
            || anyhow::anyhow!("the search index is damaged (postings of {term:?}); delete {SEARCH_INDEX_FILE}");
        let mut at = usize::try_from(at)?;
        let count = read_varint(bytes, &mut at).ok_or_else(damaged)?;
        let mut ids = Vec::with_capacity(usize::try_from(count)?.min(self.header.rows));
        let mut id = 0u64;
        for _ in 0..count {
            id += read_varint(bytes, &mut at).ok_or_else(damaged)?;
            ids.push(u32::try_from(id)?);
        }
        Ok(ids)
    }

    /// The rows `ids` (ascending) read from `assets.jsonl` by offset; `None`
    /// when one no longer is what was indexed (the file changed).
    fn fetch(&self, ids: &[u32]) -> anyhow::Result<Option<Vec<AssetRow>>> {
        self.fetch_from(&mut self.open_assets()?, ids)
    }

    /// `assets.jsonl`, opened to read rows by offset.
    fn open_assets(&self) -> anyhow::Result<std::fs::File> {
        let meta = std::fs::symlink_metadata(&self.assets)
            .with_context(|| format!("cannot read {}", self.assets.display()))?;
        if !meta.is_file() {
            anyhow::bail!("{} is not a regular file", self.assets.display());
        }
        std::fs::File::open(&self.assets).with_context(|| format!("cannot read {}", self.assets.display()))
    }

    /// [`Self::fetch`] from `file`, the opened `assets.jsonl`.
    fn fetch_from(&self, file: &mut std::fs::File, ids: &[u32]) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let table = self.section(self.header.row_table);
        let mut rows = Vec::with_capacity(ids.len());
        let mut line = Vec::new();
        for &id in ids {
            let Some(entry) = table.get(id as usize * ROW_BYTES..(id as usize + 1) * ROW_BYTES) else {
                return Ok(None);
            };
            let offset = u64::from_le_bytes(entry[0..8].try_into()?);
            let len = u32::from_le_bytes(entry[8..12].try_into()?);
            let print = u64::from_le_bytes(entry[12..20].try_into()?);
            if u64::from(len) > self.limits.line_bytes {
                return Ok(None);
            }
            line.resize(len as usize, 0);
            file.seek(SeekFrom::Start(offset))?;
            if file.read_exact(&mut line).is_err() || fingerprint(&line) != print {
                return Ok(None);
            }
            match serde_json::from_slice::<AssetRow>(&line) {
                Ok(row) => rows.push(row),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(rows))
    }

    /// Rows that decode (what a ranking counts).
    pub fn rows(&self) -> usize {
        self.header.rows
    }

    /// The rows of those of `guids` the index holds; `None` when
    /// `assets.jsonl` changed since the index was built.
    pub fn rows_of<'g>(&self, guids: impl IntoIterator<Item = &'g str>) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let mut ids: Vec<u32> = guids
            .into_iter()
            .filter_map(|g| self.guids.get(g))
            .filter_map(|id| u32::try_from(id).ok())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        self.fetch(&ids)
    }

    /// The paths of those of `guids` the index holds (the candidate check);
    /// `None` when `assets.jsonl` changed since the index was built.
    pub fn indexed_paths(&self, guids: &HashSet<&str>) -> anyhow::Result<Option<HashMap<String, String>>> {
        Ok(self
            .rows_of(guids.iter().copied())?
            .map(|rows| rows.into_iter().map(|r| (r.guid, r.path)).collect()))
    }
}

/// Rank with the index of `dir`, rebuilding it once when it (or a row it
/// points at) turns out stale; the index it ranked with comes back too.
pub fn rank(
    dir: &Path,
    manifest_version: Option<&str>,
    limits: &Limits,
    requests: &[(Query, RankOptions)],
    filters: &Filters,
    announce: &mut dyn FnMut(&str),
) -> anyhow::Result<(TermIndex, Vec<Vec<Candidate>>)> {
    let index = TermIndex::open_or_build(dir, manifest_version, limits, announce)?;
    if let Some(ranked) = index.rank(requests, filters)? {
        return Ok((index, ranked));
    }
    let index = TermIndex::rebuilt(dir, manifest_version, limits, "stale", announce)?;
    let ranked = index.rank(requests, filters)?.with_context(changed_while_searched)?;
    Ok((index, ranked))
}

/// The error of a search whose `assets.jsonl` was rewritten under it.
pub fn changed_while_searched() -> String {
    format!("{ASSETS_FILE} changed while it was searched; search again")
}
