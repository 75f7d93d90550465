//! The search index (`search-index.bin`, beside `assets.jsonl`): the terms
//! of every row, field by field as the ranker reads them
//! ([`super::rank::Document::visit`]), in an `fst` dictionary with postings
//! of row ids per term, field and count, plus the corpus statistics BM25F
//! needs (row count, summed field lengths), each row's length per field,
//! the loanword words, a guid table and each row's offset in
//! `assets.jsonl`.
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

mod body;
mod build;
mod facets;
mod format;
mod names;
mod ranking;
mod reuse;

use std::collections::HashMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::Context as _;
use engine::io::Limits;
use serde::de::DeserializeOwned;

use super::filters::Filters;
use super::query::Query;
use super::rank::FIELDS;
use super::rank::{Candidate, RankOptions};
use super::records::AssetRow;
use body::{Body, Section};
use format::{
    fingerprint, guid_key, parse_field_key, read_varint, Header, RowEntry, GUID_BYTES, KEY_SEPARATOR, MAGIC, ROW_BYTES,
};

pub use facets::RowSet;

/// The term index's file in the index folder.
pub const SEARCH_INDEX_FILE: &str = "search-index.bin";
const ASSETS_FILE: &str = super::load::ASSETS_FILE;

/// A loaded search index, fresh against the `assets.jsonl` beside it.
pub struct TermIndex {
    header: Header,
    body: Body,
    terms: Arc<fst::Map<Section>>,
    assets: PathBuf,
    limits: Limits,
}

/// The rows holding a term `count` times in field `field` (its number in
/// [`super::rank::Field::ALL`]), ascending.
struct FieldPostings {
    field: usize,
    count: u32,
    rows: Vec<u32>,
}

/// The error of an index whose `what` does not decode.
fn damaged(what: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("the search index is damaged ({what}); delete {SEARCH_INDEX_FILE}")
}

/// The tables of the index with an entry per row.
#[derive(Clone, Copy)]
enum Table {
    /// Where each row's line is ([`RowEntry`]).
    Rows,
    /// Each row's field lengths, a byte per field.
    Norms,
}

/// An index file opened: its header, the body after it and the term
/// dictionary every search reads.
type Opened = (Header, Body, Arc<fst::Map<Section>>);

/// The last index file opened — path, length, modification time — and
/// what was read of it: the stages of one search (and every search of a
/// long-running MCP server) open the file once.
static LAST_OPENED: Mutex<Option<(PathBuf, u64, SystemTime, Opened)>> = Mutex::new(None);

/// The index on disk in `dir`, or why it cannot answer.
fn open(dir: &Path, manifest_version: Option<&str>, limits: &Limits) -> anyhow::Result<Result<TermIndex, String>> {
    let path = dir.join(SEARCH_INDEX_FILE);
    let stamp = std::fs::metadata(&path).and_then(|m| Ok((m.len(), m.modified()?)));
    let cached = |(len, modified): &(u64, SystemTime)| {
        let last = LAST_OPENED.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref()
            .filter(|(p, l, m, _)| *p == path && l == len && m == modified)
            .map(|(_, _, _, opened)| opened.clone())
    };
    if let Some(opened) = stamp.as_ref().ok().and_then(cached) {
        return Ok(load(opened, dir, manifest_version, limits));
    }
    let (file, len) = match engine::io::open_limited(&path, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT) {
        Ok(opened) => opened,
        Err(e) if e.is_not_found() => return Ok(Err("missing".into())),
        Err(e) => return Err(e.into()),
    };
    let opened = match open_file(file, len, limits) {
        Ok(opened) => opened,
        Err(why) => return Ok(Err(why)),
    };
    if let Ok((len, modified)) = stamp {
        *LAST_OPENED.lock().unwrap_or_else(|e| e.into_inner()) = Some((path, len, modified, opened.clone()));
    }
    Ok(load(opened, dir, manifest_version, limits))
}

/// What a build may reuse of an index file's bytes (`None`: build anew).
fn reusable(bytes: Vec<u8>) -> Option<reuse::Previous> {
    let (header, body_at) = parse_header(&bytes).ok()?;
    reuse::Previous::decode(&header, &bytes[body_at..])
}

/// The header of an index file starting with `prefix`, and where its body
/// starts; or why it is not one. `prefix` holds at least the header.
fn parse_header(prefix: &[u8]) -> Result<(Header, usize), String> {
    let Some(header_len) = header_len(prefix) else {
        return Err("of another format".into());
    };
    let body_at = MAGIC.len() + 4 + header_len;
    match prefix
        .get(MAGIC.len() + 4..body_at)
        .and_then(|h| serde_json::from_slice::<Header>(h).ok())
        .filter(row_count_fits)
    {
        Some(header) => Ok((header, body_at)),
        None => Err("damaged".into()),
    }
}

/// Whether the row count is the row table's: a project's index is
/// untrusted, and every reader sizes its tables by that count.
fn row_count_fits(header: &Header) -> bool {
    let fits = |(start, end): (usize, usize), width: usize| {
        end.checked_sub(start).is_some() && header.rows.checked_mul(width) == Some(end - start)
    };
    fits(header.row_table, ROW_BYTES) && fits(header.norms, FIELDS)
}

/// The header's length, from the magic and the length after it.
fn header_len(prefix: &[u8]) -> Option<usize> {
    let len = prefix.strip_prefix(MAGIC)?.get(..4)?;
    Some(u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize)
}

/// An index file of `len` bytes opened: its header read and the rest
/// mapped, read where a search needs it.
fn open_file(mut file: std::fs::File, len: u64, limits: &Limits) -> Result<Opened, String> {
    let (header, body_at) = read_head(&mut file, len, limits)?;
    let body = Body::mapped(&file, body_at).map_err(|_| "unreadable")?;
    if body.len() + body_at as u64 != len {
        return Err("damaged".into());
    }
    let terms = read_map(&body, header.terms).ok_or("damaged")?;
    Ok((header, body, Arc::new(terms)))
}

/// The header of the index file `file` (`len` bytes) and where its body starts.
fn read_head(file: &mut std::fs::File, len: u64, limits: &Limits) -> Result<(Header, usize), String> {
    let mut prefix = [0u8; MAGIC.len() + 4];
    let header_len = file
        .read_exact(&mut prefix)
        .ok()
        .and_then(|()| header_len(&prefix))
        .ok_or("of another format")?;
    if header_len as u64 > limits.file_bytes.min(len) {
        return Err("damaged".into());
    }
    let mut head = prefix.to_vec();
    head.resize(prefix.len() + header_len, 0);
    file.read_exact(&mut head[prefix.len()..]).map_err(|_| "damaged")?;
    parse_header(&head)
}

/// The `fst` map in `section` of `body`; `None` when it is not one.
fn read_map(body: &Body, (start, end): (usize, usize)) -> Option<fst::Map<Section>> {
    fst::Map::new(body.section(start, end)?).ok()
}

/// The index in `bytes` (a build's), all of it in memory.
fn in_memory(bytes: Vec<u8>) -> Result<Opened, String> {
    let (header, body_at) = parse_header(&bytes)?;
    let body = Body::built(bytes, body_at);
    let terms = read_map(&body, header.terms).ok_or("damaged")?;
    Ok((header, body, Arc::new(terms)))
}

/// The opened index, or why it cannot answer for `dir`'s `assets.jsonl`.
fn load(
    (header, body, terms): Opened,
    dir: &Path,
    manifest_version: Option<&str>,
    limits: &Limits,
) -> Result<TermIndex, String> {
    if is_stale(&header, dir, manifest_version) {
        return Err("stale".into());
    }
    let fits = |(start, end): (usize, usize)| start <= end && end as u64 <= body.len();
    let sections_fit = fits(header.guids)
        && (header.guids.1 - header.guids.0) % GUID_BYTES == 0
        && fits(header.postings)
        && fits(header.row_table)
        && fits(header.norms)
        && fits(header.loan_words)
        && fits(header.loan_keys);
    if !sections_fit {
        return Err("damaged".into());
    }
    Ok(TermIndex {
        header,
        body,
        terms,
        assets: dir.join(ASSETS_FILE),
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
    let len = file.metadata().ok()?.len();
    read_head(&mut file, len, limits).ok().map(|(header, _)| header)
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
    // Bytes, not text: a line that is not UTF-8 or too long is no row.
    let bytes = match engine::io::read_limited(&assets, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let path = dir.join(SEARCH_INDEX_FILE);
    let previous = engine::io::read_limited(&path, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT)
        .ok()
        .and_then(reusable);
    let built = build::build(&bytes, manifest_version.map(str::to_owned), previous, limits.line_bytes)?;
    let not_written = engine::io::write_atomic(&path, &built.bytes)
        .err()
        .map(|e| format!("cannot write {}: {e}", path.display()));
    let index = in_memory(built.bytes)
        .and_then(|opened| load(opened, dir, manifest_version, limits))
        .map_err(|why| anyhow::anyhow!("the search index just built is {why}"))?;
    Ok((index, not_written, built.visited))
}

impl TermIndex {
    /// The index of `dir` when it is present and fresh; else why not.
    pub(crate) fn open_fresh(
        dir: &Path,
        manifest_version: Option<&str>,
        limits: &Limits,
    ) -> anyhow::Result<Result<Self, String>> {
        open(dir, manifest_version, limits)
    }

    /// The index of `dir`, rebuilt from `assets.jsonl` first when it is
    /// missing or stale (`announce` gets the line saying so).
    pub(crate) fn open_or_build(
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

    /// Lines of `assets.jsonl` that are no row (too long, not UTF-8, not a
    /// row, a path outside the project) as the index of `dir` counted them;
    /// `None` when it is missing, damaged or built from another
    /// `assets.jsonl`. Reads only its header.
    pub fn lines_not_rows(dir: &Path, manifest_version: Option<&str>, limits: &Limits) -> Option<usize> {
        let header = read_header(&dir.join(SEARCH_INDEX_FILE), limits)?;
        (!is_stale(&header, dir, manifest_version)).then(|| header.lines.saturating_sub(header.rows))
    }

    /// Non-blank lines of `assets.jsonl` (the asset count search reports).
    pub fn lines(&self) -> usize {
        self.header.lines
    }

    /// Whether some row holds `term` in its file name (one dictionary
    /// range: the name field, the first of every field, is keyed `a`).
    pub fn names(&self, term: &str) -> bool {
        use fst::{IntoStreamer as _, Streamer as _};
        let start = format!("{term}{KEY_SEPARATOR}a");
        let end = format!("{term}{KEY_SEPARATOR}b");
        self.terms.range().ge(&start).lt(&end).into_stream().next().is_some()
    }

    /// Where `term` is, field by field: every key of it in the dictionary
    /// ([`format::field_key`]), one range of it.
    fn postings(&self, term: &str) -> anyhow::Result<Vec<FieldPostings>> {
        use fst::{IntoStreamer as _, Streamer as _};
        let start = format!("{term}{KEY_SEPARATOR}");
        let end = format!("{term}{}", char::from(KEY_SEPARATOR as u8 + 1));
        let mut keys = Vec::new();
        let mut stream = self.terms.range().ge(&start).lt(&end).into_stream();
        while let Some((key, at)) = stream.next() {
            let (field, count) =
                parse_field_key(&key[start.len()..]).ok_or_else(|| damaged(format!("postings of {term:?}")))?;
            keys.push((field, count, at));
        }
        keys.into_iter()
            .map(|(field, count, at)| {
                Ok(FieldPostings {
                    field,
                    count,
                    rows: self.postings_at(at, term)?,
                })
            })
            .collect()
    }

    /// The row ids of the postings at `at`, ascending.
    fn postings_at(&self, at: u64, term: &str) -> anyhow::Result<Vec<u32>> {
        let broken = || damaged(format!("postings of {term:?}"));
        let (start, end) = self.header.postings;
        let start = start.checked_add(usize::try_from(at)?).ok_or_else(broken)?;
        let bytes = self.body.read(start, end).ok_or_else(broken)?;
        let mut at = 0;
        let count = usize::try_from(read_varint(bytes, &mut at).ok_or_else(broken)?)?;
        // A gap per row, each a varint of at least one byte.
        if count > self.header.rows || count > bytes.len() {
            return Err(broken());
        }
        let mut ids = Vec::with_capacity(count);
        let mut id = 0u64;
        for _ in 0..count {
            id += read_varint(bytes, &mut at).ok_or_else(broken)?;
            ids.push(u32::try_from(id)?);
        }
        Ok(ids)
    }

    /// Each of the rows `ids` (ascending) with its field lengths, at most
    /// 255 each (a lower bound: enough to bound a BM25F score).
    fn row_norms(&self, ids: &[u32]) -> anyhow::Result<HashMap<u32, [u8; FIELDS]>> {
        let mut norms = HashMap::with_capacity(ids.len());
        for &id in ids {
            let lens = self
                .table_entry(Table::Norms, id as usize)
                .ok_or_else(|| damaged("its row lengths"))?;
            norms.insert(id, lens.try_into()?);
        }
        Ok(norms)
    }

    /// The rows `ids` (ascending) read from `assets.jsonl` by offset; `None`
    /// when one no longer is what was indexed (the file changed).
    pub fn fetch(&self, ids: &[u32]) -> anyhow::Result<Option<Vec<AssetRow>>> {
        self.fetch_as(ids, |_, row: AssetRow| row)
    }

    /// The paths of the rows `ids` (ascending), each line read for its
    /// path alone (the line decoded as a row when the index was built, and
    /// its fingerprint says it is that line).
    pub fn paths(&self, ids: &[u32]) -> anyhow::Result<Option<Vec<String>>> {
        #[derive(serde::Deserialize)]
        struct PathOnly {
            path: String,
        }
        self.fetch_as(ids, |_, row: PathOnly| row.path)
    }

    /// The rows `ids` (ascending) with their lines, as [`Self::fetch`] reads them.
    pub(crate) fn fetch_lines(&self, ids: &[u32]) -> anyhow::Result<Option<Vec<(String, AssetRow)>>> {
        self.fetch_as(ids, |line, row: AssetRow| {
            (String::from_utf8_lossy(line).into_owned(), row)
        })
    }

    /// The rows `ids` (ascending), each made into a `T` from its line and row.
    fn fetch_as<R: DeserializeOwned, T: Send>(
        &self,
        ids: &[u32],
        make: impl Fn(&[u8], R) -> T + Sync,
    ) -> anyhow::Result<Option<Vec<T>>> {
        let mut entries = Vec::with_capacity(ids.len());
        for &id in ids {
            // A line over the line limit is not what was indexed.
            let Some(entry) = self
                .table_entry(Table::Rows, id as usize)
                .and_then(RowEntry::decode)
                .filter(|entry| u64::from(entry.len) <= self.limits.line_bytes)
            else {
                return Ok(None);
            };
            entries.push(entry);
        }
        // Reading and decoding is most of a search that reads thousands of
        // rows: parts of the list are read in parallel, each through its
        // own handle (a handle's position is its own).
        use rayon::prelude::*;
        let part = entries.len().div_ceil(rayon::current_num_threads()).max(256);
        let parts: Vec<Option<Vec<T>>> = entries
            .par_chunks(part)
            .map(|part| self.read_rows(part, &make))
            .collect::<anyhow::Result<_>>()?;
        Ok(parts
            .into_iter()
            .collect::<Option<Vec<Vec<T>>>>()
            .map(|parts| parts.into_iter().flatten().collect()))
    }

    /// The rows at `entries` (in file order), decoded; `None` when one no
    /// longer is what was indexed.
    fn read_rows<R: DeserializeOwned, T>(
        &self,
        entries: &[RowEntry],
        make: impl Fn(&[u8], R) -> T,
    ) -> anyhow::Result<Option<Vec<T>>> {
        let mut file = self.open_assets()?;
        let mut rows = Vec::with_capacity(entries.len());
        let mut line = Vec::new();
        for entry in entries {
            line.resize(entry.len as usize, 0);
            file.seek(SeekFrom::Start(entry.offset))?;
            if file.read_exact(&mut line).is_err() || fingerprint(&line) != entry.print {
                return Ok(None);
            }
            match serde_json::from_slice::<R>(&line) {
                Ok(row) => rows.push(make(&line, row)),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(rows))
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

    /// Row `id`'s entry in `table`; `None` past the table (the index does
    /// not match the file).
    fn table_entry(&self, table: Table, id: usize) -> Option<&[u8]> {
        if id >= self.header.rows {
            return None;
        }
        let ((table_at, table_end), width) = match table {
            Table::Rows => (self.header.row_table, ROW_BYTES),
            Table::Norms => (self.header.norms, FIELDS),
        };
        let (start, end) = (table_at + id * width, table_at + (id + 1) * width);
        self.body.read(start, end).filter(|_| end <= table_end)
    }

    /// Rows that decode (what a ranking counts).
    pub fn rows(&self) -> usize {
        self.header.rows
    }

    /// The rows of those of `guids` the index holds; `None` when
    /// `assets.jsonl` changed since the index was built.
    pub(crate) fn rows_of<'g>(
        &self,
        guids: impl IntoIterator<Item = &'g str>,
    ) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let mut ids = Vec::new();
        for guid in guids {
            ids.extend(self.row_of(guid)?);
        }
        ids.sort_unstable();
        ids.dedup();
        self.fetch(&ids)
    }

    /// The row of `guid`: a binary search of the guid table, an entry read
    /// per step (a few hundred bytes of the file for a guid at 10^6 rows).
    fn row_of(&self, guid: &str) -> anyhow::Result<Option<u32>> {
        let Some(key) = guid_key(guid) else {
            let others = &self.header.other_guids;
            return Ok(others
                .binary_search_by(|(other, _)| other.as_str().cmp(guid))
                .ok()
                .map(|at| others[at].1));
        };
        let (start, end) = self.header.guids;
        let (mut low, mut high) = (0, (end - start) / GUID_BYTES);
        while low < high {
            let middle = (low + high) / 2;
            let at = start + middle * GUID_BYTES;
            let entry = self
                .body
                .read(at, at + GUID_BYTES)
                .ok_or_else(|| damaged("its guids"))?;
            match entry[..16].cmp(&key) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(Some(u32::from_le_bytes(entry[16..].try_into()?))),
            }
        }
        Ok(None)
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
pub(crate) fn changed_while_searched() -> String {
    format!("{ASSETS_FILE} changed while it was searched; search again")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every guid finds its row through the table read from the file (a
    /// guid twice: its last row), Unity's or not; an absent one finds none.
    #[test]
    fn guids_find_their_rows_in_the_file() {
        let line = |guid: &str, name: &str| {
            serde_json::json!({"guid": guid, "path": format!("Assets/{name}.prefab"), "name": name, "type": "Prefab"})
                .to_string()
        };
        let mut lines: Vec<String> = (0..500u32)
            .map(|i| {
                line(
                    &format!("{:032x}", u128::from(i) * 7_919_000_000_000_000_000_003),
                    &format!("Row{i}"),
                )
            })
            .collect();
        lines.push(line("not-a-unity-guid", "Odd"));
        lines.push(line(&format!("{:032x}", 7_919_000_000_000_000_000_003u128), "Later"));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ASSETS_FILE), lines.join("\n")).unwrap();
        let limits = Limits::default();
        TermIndex::refresh(dir.path(), None, &limits).unwrap();
        let index = TermIndex::open_fresh(dir.path(), None, &limits).unwrap().unwrap();
        assert!(index.body.is_mapped(), "read from the file");
        let name_of = |guid: &str| index.rows_of([guid]).unwrap().unwrap().pop().map(|row| row.name);
        for i in [0u32, 2, 250, 499] {
            let guid = format!("{:032x}", u128::from(i) * 7_919_000_000_000_000_000_003);
            assert_eq!(name_of(&guid).as_deref(), Some(format!("Row{i}").as_str()), "{guid}");
        }
        assert_eq!(
            name_of(&format!("{:032x}", 7_919_000_000_000_000_000_003u128)).as_deref(),
            Some("Later")
        );
        assert_eq!(name_of("not-a-unity-guid").as_deref(), Some("Odd"));
        for absent in [
            "ffffffffffffffffffffffffffffffff",
            "00000000000000000000000000000001",
            "other",
        ] {
            assert_eq!(name_of(absent), None, "{absent}");
        }
    }
}
