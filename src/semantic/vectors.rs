//! `assets.vectors`: one vector per asset row, beside `assets.jsonl`.
//!
//! Layout (little-endian): the magic `UAVECS01`, a `u32` length and a JSON
//! header `{model, dim, count, text}`, then `count` records of a `u8` guid
//! length, the guid, the `u64` hash of the text that was embedded, an `f32`
//! scale and `dim` `i8` values (the unit vector divided by the scale). int8
//! keeps a 4,000-asset index near 2 MB and a cosine within ~0.001 of the
//! float one. Each record carries its text's hash, so a reindex re-embeds
//! only the rows whose text changed; `model` and `text` name the space, so a
//! change of either re-embeds every row. The header also carries the
//! rows' [`Vectors::fingerprint`], and the byte length of the records:
//! after them, zero padding to 8 bytes, each record's `u64` offset in the
//! file and each row's sketch (its sign bits, `semantic::sketch`), which past
//! `embeddings.ann_min_rows` rows a search ranks instead of reading every
//! record ([`VectorsFile::sketched`]). A file without the length (written
//! before the sketch existed) is read as it is and rewritten by `index`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context as _};
use engine::io::Limits;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::sketch;
use crate::index::store::FileStamp;

/// The vectors' file in the index folder.
pub const VECTORS_FILE: &str = "assets.vectors";
const MAGIC: &[u8; 8] = b"UAVECS01";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    model: String,
    dim: usize,
    count: usize,
    text: String,
    /// [`Vectors::fingerprint`]; absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fingerprint: Option<u64>,
    /// The records' bytes, after which the sketch section starts; absent
    /// in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    records_bytes: Option<usize>,
}

/// What the header of a vectors file says, read without its rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    /// The embedder's id.
    pub model: String,
    pub(crate) text: String,
    /// The length of each vector.
    pub dim: usize,
    pub(crate) count: usize,
    pub(crate) fingerprint: Option<u64>,
    /// The file holds the rows' sketch (and so is of the current format).
    pub sketched: bool,
}

/// Every asset's vector, in `assets.jsonl` order, held as the file's
/// records: built in memory while indexing, mapped in place when read, so
/// a search reads no more of the file than the rows it scores (read and
/// copied into arrays, a 10^5-row file cost a search ~100 ms).
#[derive(Default)]
pub struct Vectors {
    /// The embedder's id ([`super::Embedder::id`]).
    pub model: String,
    /// Which asset text was embedded (`super::asset_text::VERSION`).
    pub text: String,
    /// The length of each vector.
    pub dim: usize,
    records: Records,
    starts: Starts,
    /// Where the rows' sketches start in `records`, when a search ranks
    /// them before scoring ([`VectorsFile::sketched`]); `None`: every row is
    /// scored.
    signs: Option<usize>,
}

/// The bytes the records are read from.
enum Records {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Default for Records {
    fn default() -> Self {
        Records::Owned(Vec::new())
    }
}

impl std::ops::Deref for Records {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Records::Owned(bytes) => bytes,
            Records::Mapped(map) => map,
        }
    }
}

/// Where each row's record starts in `records`.
enum Starts {
    /// Listed as the records were built or walked.
    Listed(Vec<usize>),
    /// The file's own `u64` offsets, read in place as a row is: a search
    /// through the sketch reads the offsets of the rows it scores only
    /// (parsed up front, a million of them cost it ~10 ms and 8 MB).
    InFile {
        /// Where the offsets are in `records`.
        at: usize,
        count: usize,
        /// The first and the last place a record may start.
        first: usize,
        last: usize,
    },
}

impl Default for Starts {
    fn default() -> Self {
        Starts::Listed(Vec::new())
    }
}

/// A record's bytes before its guid and after it, before the values: the
/// guid's length, then the text hash and the scale.
const LEN_BYTES: usize = 1;
const HASH_AND_SCALE: usize = 8 + 4;

/// One row as its record holds it.
struct Record<'a> {
    guid: &'a [u8],
    hash: u64,
    scale: f32,
    values: &'a [i8],
}

impl Vectors {
    /// An empty set of vectors of length `dim`, made by `model` from asset text of version `text`.
    pub fn new(model: String, text: String, dim: usize) -> Self {
        Self {
            model,
            text,
            dim,
            ..Self::default()
        }
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        match &self.starts {
            Starts::Listed(starts) => starts.len(),
            Starts::InFile { count, .. } => *count,
        }
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where row `row`'s record starts.
    fn start(&self, row: usize) -> usize {
        match &self.starts {
            Starts::Listed(starts) => starts[row],
            Starts::InFile { at, count, first, last } => {
                assert!(row < *count, "row {row} of {count}");
                let offset = u64::from_le_bytes(self.records[at + 8 * row..][..8].try_into().expect("8 bytes"));
                usize::try_from(offset).unwrap_or(usize::MAX).clamp(*first, *last)
            }
        }
    }

    fn record(&self, row: usize) -> Record<'_> {
        let bytes = &self.records[self.start(row)..];
        // Read through the sketch, records are not walked: a damaged offset
        // or length byte is kept inside the file (an offset inside the
        // records), so it misreads one row instead of the file.
        let guid_len = usize::from(bytes[0]).min(bytes.len() - LEN_BYTES - HASH_AND_SCALE - self.dim);
        let (guid, rest) = bytes[LEN_BYTES..].split_at(guid_len);
        let (hash, rest) = rest.split_at(8);
        let (scale, rest) = rest.split_at(4);
        Record {
            guid,
            hash: u64::from_le_bytes(hash.try_into().expect("8 bytes")),
            scale: f32::from_le_bytes(scale.try_into().expect("4 bytes")),
            values: bytemuck::cast_slice(&rest[..self.dim]),
        }
    }

    /// Row `row`'s guid (empty when a file read through its sketch holds
    /// a damaged one: no asset has it).
    pub fn guid(&self, row: usize) -> &str {
        std::str::from_utf8(self.record(row).guid).unwrap_or_default()
    }

    fn push_record(&mut self, guid: &[u8], hash: u64, scale: f32, values: impl Iterator<Item = i8>) {
        let guid_len = u8::try_from(guid.len()).expect("a guid is at most 255 bytes");
        // Rows are added only to vectors built in memory (`new`); a read
        // file lends its rows through `push_from`.
        let (Records::Owned(bytes), Starts::Listed(starts)) = (&mut self.records, &mut self.starts) else {
            unreachable!("rows are never added to a file read from disk")
        };
        let start = bytes.len();
        bytes.push(guid_len);
        bytes.extend_from_slice(guid);
        bytes.extend_from_slice(&hash.to_le_bytes());
        bytes.extend_from_slice(&scale.to_le_bytes());
        bytes.extend(values.map(|v| v as u8));
        starts.push(start);
    }

    /// Add a row; `vector` must be a unit vector of `dim` values.
    pub fn push(&mut self, guid: String, text_hash: u64, vector: &[f32]) {
        debug_assert_eq!(vector.len(), self.dim);
        let max = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        let values = vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8);
        self.push_record(guid.as_bytes(), text_hash, scale, values);
    }

    /// Copy row `row` of `other` (same space) as it is: a reused vector.
    pub(crate) fn push_from(&mut self, other: &Vectors, row: usize) {
        let Record {
            guid,
            hash,
            scale,
            values,
        } = other.record(row);
        self.push_record(guid, hash, scale, values.iter().copied());
    }

    /// Row `row` of `other` (same space) as the row of `guid` and
    /// `text_hash`: one text's vector, embedded once, for each row of it.
    pub(crate) fn push_as(&mut self, guid: &str, text_hash: u64, other: &Vectors, row: usize) {
        let Record { scale, values, .. } = other.record(row);
        self.push_record(guid.as_bytes(), text_hash, scale, values.iter().copied());
    }

    /// Row of each `(guid, text hash)` pair, for reuse on reindex.
    pub(crate) fn rows_by_key(&self) -> HashMap<(&str, u64), usize> {
        (0..self.len())
            .map(|row| {
                let record = self.record(row);
                let guid = std::str::from_utf8(record.guid).expect("guids are checked when the file is read");
                ((guid, record.hash), row)
            })
            .collect()
    }

    /// Row `row`'s int8 values.
    pub fn values(&self, row: usize) -> &[i8] {
        self.record(row).values
    }

    /// Row `row`'s scale: its values times it are the unit vector.
    pub fn scale(&self, row: usize) -> f32 {
        self.record(row).scale
    }

    /// Cosine of `query` (a unit vector) with row `row`.
    pub fn cosine(&self, query: &[f32], row: usize) -> f32 {
        let record = self.record(row);
        int8_cosine(record.values, record.scale, query)
    }

    /// A hash of what the rows are: the space (model, text, dimension) and
    /// each row's guid and text hash, in order. Equal fingerprints mean
    /// equal vectors (one embedder maps one text to one vector), so an index
    /// built from these rows is still theirs.
    pub fn fingerprint(&self) -> u64 {
        let space = format!("{}\n{}\n{}\n", self.model, self.text, self.dim);
        (0..self.len()).fold(text_hash(&space), |h, row| {
            let record = self.record(row);
            let h = fnv_bytes(h, record.guid);
            fnv_bytes(h, &record.hash.to_le_bytes())
        })
    }

    /// The `n` rows nearest to `query` among those `keep` accepts, most
    /// similar first: every row scored, or, read through the sketch, the
    /// [`sketch_candidates`] nearest by sketch.
    pub fn nearest(&self, query: &[f32], n: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        self.nearest_scoring(query, n, sketch_candidates(n), keep)
    }

    /// [`Vectors::nearest`], scoring `candidates` rows when read through
    /// the sketch (the bench measures recall against this number).
    pub fn nearest_scoring(
        &self,
        query: &[f32],
        n: usize,
        candidates: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        let rows: Vec<usize> = match self.signs {
            Some(at) => {
                let end = at + self.len() * sketch::words(self.dim) * 8;
                let signs = &self.records[at..end];
                sketch::candidates(signs, &sketch::query_signs(query), candidates, keep)
            }
            None => (0..self.len()).filter(|row| keep(*row)).collect(),
        };
        // The rows read are scattered through the file: each is a page
        // fault of its own, taken on every core.
        let mut scored: Vec<(usize, f32)> = rows
            .into_par_iter()
            .with_min_len(SCORED_TOGETHER)
            .map(|row| (row, self.cosine(query, row)))
            .collect();
        let n = n.min(scored.len());
        if n == 0 {
            return vec![];
        }
        scored.select_nth_unstable_by(n - 1, |a, b| b.1.total_cmp(&a.1));
        scored.truncate(n);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let record_bytes = LEN_BYTES + HASH_AND_SCALE + self.dim;
        let records_bytes = (0..self.len())
            .map(|row| self.record(row).guid.len() + record_bytes)
            .sum();
        let header = serde_json::to_vec(&Header {
            model: self.model.clone(),
            dim: self.dim,
            count: self.len(),
            text: self.text.clone(),
            fingerprint: Some(self.fingerprint()),
            records_bytes: Some(records_bytes),
        })
        .expect("a header serialises");
        let records_at = 12 + header.len();
        let section = SketchSection::after(records_at + records_bytes, self.len(), self.dim);
        let mut out = Vec::with_capacity(section.end);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        let mut starts = Vec::with_capacity(8 * self.len());
        let mut signs = Vec::with_capacity(section.end - section.signs);
        for row in 0..self.len() {
            let record = self.record(row);
            starts.extend_from_slice(&(out.len() as u64).to_le_bytes());
            out.push(record.guid.len() as u8);
            out.extend_from_slice(record.guid);
            out.extend_from_slice(&record.hash.to_le_bytes());
            out.extend_from_slice(&record.scale.to_le_bytes());
            out.extend(record.values.iter().map(|v| *v as u8));
            sketch::push_signs(record.values, &mut signs);
        }
        out.resize(section.starts, 0);
        out.extend_from_slice(&starts);
        out.extend_from_slice(&signs);
        debug_assert_eq!(out.len(), section.end);
        out
    }

    #[cfg(test)]
    fn from_bytes(bytes: &[u8]) -> anyhow::Result<Self> {
        Self::from_records(Records::Owned(bytes.to_vec()), true)
    }

    /// Check a whole file's bytes and find each row's record in them; with
    /// `check_sketch`, also that the offsets and sketch are the rows' own.
    fn from_records(records: Records, check_sketch: bool) -> anyhow::Result<Self> {
        let mut reader = Reader { bytes: &records, at: 0 };
        let header = read_header(&mut reader)?;
        let first = reader.at;
        let record_bytes = LEN_BYTES + HASH_AND_SCALE + header.dim;
        // A count the file cannot hold is refused before anything is
        // allocated for it.
        if header.count > records.len() / record_bytes {
            bail!("header counts {} rows, more than the file holds", header.count);
        }
        let mut starts = Vec::with_capacity(header.count);
        for _ in 0..header.count {
            starts.push(reader.at);
            let guid_len = usize::from(reader.take(1)?[0]);
            let guid = std::str::from_utf8(reader.take(guid_len)?).context("a guid is not UTF-8")?;
            reader.take(8)?;
            let scale = f32::from_le_bytes(reader.array()?);
            if !scale.is_finite() {
                bail!("row {guid}: scale is not a number");
            }
            reader.take(header.dim)?;
        }
        let section = match header.records_bytes {
            None => None,
            Some(bytes) if reader.at - first == bytes => {
                Some(SketchSection::after(reader.at, header.count, header.dim))
            }
            Some(bytes) => bail!(
                "the header counts {bytes} bytes of rows, the rows take {}",
                reader.at - first
            ),
        };
        let end = section.as_ref().map_or(reader.at, |s| s.end);
        if end != records.len() {
            bail!("the file is {} bytes, its rows need {end}", records.len());
        }
        let vectors = Self {
            model: header.model,
            text: header.text,
            dim: header.dim,
            records,
            starts: Starts::Listed(starts),
            signs: None,
        };
        if header.fingerprint.is_some_and(|f| f != vectors.fingerprint()) {
            bail!("the rows do not match the header's fingerprint");
        }
        // What a search trusts is checked here, where `index` reads the
        // file whole: the offsets and sketch must be the ones these rows make.
        if let Some(section) = section.filter(|_| check_sketch) {
            vectors.check_section(&section)?;
        }
        Ok(vectors)
    }

    /// The section after the records holds each row's offset and sketch.
    fn check_section(&self, section: &SketchSection) -> anyhow::Result<()> {
        let words = sketch::words(self.dim) * 8;
        let mut signs = Vec::with_capacity(words);
        for row in 0..self.len() {
            let start = self.start(row);
            let offset = &self.records[section.starts + 8 * row..][..8];
            signs.clear();
            sketch::push_signs(self.record(row).values, &mut signs);
            if offset != (start as u64).to_le_bytes() || self.records[section.signs + words * row..][..words] != signs {
                bail!("row {row}'s offset or sketch does not match the row");
            }
        }
        Ok(())
    }

    /// A file's rows found through its offsets, not walked: a search past
    /// `ann_min_rows` reads the header and the sketch, and then only the
    /// offsets and records of the rows it scores. An offset is kept inside
    /// the records as it is read; the records and offsets themselves are
    /// checked by `index`, which reads the file whole
    /// ([`VectorsFile::rows_and_sketch`]).
    fn from_sketch(records: Records) -> anyhow::Result<Self> {
        let mut reader = Reader { bytes: &records, at: 0 };
        let header = read_header(&mut reader)?;
        let Some(records_bytes) = header.records_bytes else {
            bail!("the file has no sketch");
        };
        let first = reader.at;
        let records_end = first
            .checked_add(records_bytes)
            .context("the records' length overflows")?;
        let section = SketchSection::after(records_end, header.count, header.dim);
        if section.end != records.len() {
            bail!("the file is {} bytes, its header says {}", records.len(), section.end);
        }
        let shortest = LEN_BYTES + HASH_AND_SCALE + header.dim;
        if header.count > records_bytes / shortest {
            bail!("the header counts {} rows, more than its records hold", header.count);
        }
        // Every distance reads the whole sketch: its pages are mapped in
        // one call rather than a fault at a time (a kernel before 5.14
        // declines, and they fault in as before). The records are read a
        // few scattered rows at a time: each fault maps its own page, not
        // the 16 around it.
        #[cfg(target_os = "linux")]
        if let Records::Mapped(map) = &records {
            let _ = map.advise_range(
                memmap2::Advice::PopulateRead,
                section.signs,
                section.end - section.signs,
            );
            let _ = map.advise_range(memmap2::Advice::Random, first, records_bytes);
        }
        Ok(Self {
            model: header.model,
            text: header.text,
            dim: header.dim,
            starts: Starts::InFile {
                at: section.starts,
                count: header.count,
                first,
                last: records_end.saturating_sub(shortest).max(first),
            },
            records,
            signs: Some(section.signs),
        })
    }
}

/// Rows a thread scores at least, so that a small index is scored where it is.
const SCORED_TOGETHER: usize = 512;

/// How many rows a search read through the sketch scores exactly for `n`
/// answers: measured in docs/benchmarks.md#vectors-at-scale.
pub fn sketch_candidates(n: usize) -> usize {
    (n * SKETCH_CANDIDATES_PER_ANSWER).max(SKETCH_CANDIDATES_MIN)
}
const SKETCH_CANDIDATES_PER_ANSWER: usize = 64;
const SKETCH_CANDIDATES_MIN: usize = 2048;

/// Where the sections after the records lie in a file.
struct SketchSection {
    /// The `u64` record offsets (after zero padding to 8 bytes).
    starts: usize,
    /// The rows' sketches.
    signs: usize,
    /// The file's length.
    end: usize,
}

impl SketchSection {
    fn after(records_end: usize, count: usize, dim: usize) -> Self {
        let starts = records_end.div_ceil(8) * 8;
        let signs = starts + 8 * count;
        Self {
            starts,
            signs,
            end: signs + count * sketch::words(dim) * 8,
        }
    }
}

impl PartialEq for Vectors {
    /// The same space and rows, however each is held.
    fn eq(&self, other: &Self) -> bool {
        (&self.model, &self.text, self.dim, self.len()) == (&other.model, &other.text, other.dim, other.len())
            && (0..self.len()).all(|row| {
                let (a, b) = (self.record(row), other.record(row));
                (a.guid, a.hash, a.scale.to_bits(), a.values) == (b.guid, b.hash, b.scale.to_bits(), b.values)
            })
    }
}

impl std::fmt::Debug for Vectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vectors")
            .field("model", &self.model)
            .field("text", &self.text)
            .field("dim", &self.dim)
            .field("rows", &self.len())
            .finish()
    }
}

/// Cosine of `query` (a unit vector) with int8 `values` of scale `scale`:
/// the one formula both the exact scan and the approximate index's
/// re-scoring use, so a row gets the same similarity either way.
///
/// The products are summed in sixteen running sums: one sum would force
/// one addition at a time (float addition does not reorder), while sixteen
/// are a few vector registers the compiler fills at once, several times
/// faster on a scan of every row.
pub(crate) fn int8_cosine(values: &[i8], scale: f32, query: &[f32]) -> f32 {
    let (value_chunks, value_rest) = values.as_chunks::<LANES>();
    let (query_chunks, query_rest) = query.as_chunks::<LANES>();
    let mut sums = [0f32; LANES];
    for (v, q) in value_chunks.iter().zip(query_chunks) {
        for lane in 0..LANES {
            sums[lane] += f32::from(v[lane]) * q[lane];
        }
    }
    let rest: f32 = value_rest.iter().zip(query_rest).map(|(v, q)| f32::from(*v) * q).sum();
    (sums.iter().sum::<f32>() + rest) * scale
}

/// Running sums of [`int8_cosine`].
const LANES: usize = 16;

/// FNV-1a over `bytes`, continuing from `hash`.
fn fnv_bytes(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn read_header(reader: &mut Reader) -> anyhow::Result<Header> {
    if reader.take(8)? != MAGIC {
        bail!("not a vectors file (bad magic)");
    }
    let header_len = u32::from_le_bytes(reader.array()?) as usize;
    let header: Header = serde_json::from_slice(reader.take(header_len)?).context("bad header")?;
    if header.dim == 0 || header.dim > 8192 {
        bail!("implausible dimension {}", header.dim);
    }
    Ok(header)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> anyhow::Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| anyhow::anyhow!("cut short at byte {}", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> anyhow::Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("take returned N bytes"))
    }
}

/// The project's vectors file, mapped and its header read: a search that
/// answers from the approximate index reads no more of it, and one that
/// scans every row checks them in the same mapping ([`VectorsFile::rows`]).
pub struct VectorsFile {
    path: std::path::PathBuf,
    map: memmap2::Mmap,
    summary: Summary,
    /// Which version of the file this is.
    identity: FileStamp,
}

impl VectorsFile {
    pub(crate) fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Every row, checked against the header, as a search that scores
    /// every row reads them (a file that does not parse is an error naming
    /// it and the fix).
    pub fn rows(self) -> anyhow::Result<Vectors> {
        let path = self.path;
        Vectors::from_records(Records::Mapped(self.map), false).with_context(|| corrupt(&path))
    }

    /// [`VectorsFile::rows`], and the offsets and sketch checked against
    /// them: what `index` reads, so that a search may trust them.
    pub(crate) fn rows_and_sketch(self) -> anyhow::Result<Vectors> {
        let path = self.path;
        Vectors::from_records(Records::Mapped(self.map), true).with_context(|| corrupt(&path))
    }

    /// The rows as a search past `ann_min_rows` reads them: through the
    /// offsets and the sketch, no record read until it is scored.
    pub fn sketched(self) -> anyhow::Result<Vectors> {
        let path = self.path;
        Vectors::from_sketch(Records::Mapped(self.map)).with_context(|| corrupt(&path))
    }

    /// [`VectorsFile::sketched`] (or, not `sketched`, [`VectorsFile::rows`]),
    /// kept for the process while the file is this version: the MCP server
    /// answers many searches from one mapping, and no search unmaps it while
    /// other threads run (a 10^6-row file's populated sketch took ~4 ms to
    /// unmap, every thread's TLB flushed, on the search's path).
    pub fn for_search(self, sketched: bool) -> anyhow::Result<Arc<Vectors>> {
        static KEPT: Mutex<Option<(FileStamp, bool, Arc<Vectors>)>> = Mutex::new(None);
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((identity, as_sketched, vectors)) = kept.as_ref() {
            if *identity == self.identity && *as_sketched == sketched {
                return Ok(Arc::clone(vectors));
            }
        }
        let identity = self.identity.clone();
        let vectors = Arc::new(match sketched {
            true => self.sketched()?,
            false => self.rows()?,
        });
        *kept = Some((identity, sketched, Arc::clone(&vectors)));
        Ok(vectors)
    }
}

fn corrupt(path: &Path) -> String {
    format!("{} is corrupt; `unity-assets index` rebuilds it", path.display())
}

/// The stamp of the project's vectors file as it is now (none without one).
pub(crate) fn stamp(index_dir: &Path) -> Option<FileStamp> {
    FileStamp::at(&index_dir.join(VECTORS_FILE))
}

/// The project's vectors file, `None` when there is none.
pub fn open(index_dir: &Path, limits: &Limits) -> anyhow::Result<Option<VectorsFile>> {
    open_named(index_dir, VECTORS_FILE, limits)
}

/// The vectors file `name` of the index folder (the assets', the
/// vocabulary's), `None` when there is none.
pub(crate) fn open_named(index_dir: &Path, name: &str, limits: &Limits) -> anyhow::Result<Option<VectorsFile>> {
    let path = index_dir.join(name);
    let file = match engine::io::open_limited(&path, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT) {
        Ok((file, _)) => file,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // SAFETY: index files are replaced by renaming a finished file over
    // them ([`write`]), never written in place, so the mapped bytes do not
    // change while they are read.
    let map = unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("cannot read {}", path.display()))?;
    let identity = FileStamp::of(&file).with_context(|| format!("cannot read {}", path.display()))?;
    let header = read_header(&mut Reader { bytes: &map, at: 0 }).with_context(|| corrupt(&path))?;
    let summary = Summary {
        model: header.model,
        text: header.text,
        dim: header.dim,
        count: header.count,
        fingerprint: header.fingerprint,
        sketched: header.records_bytes.is_some(),
    };
    Ok(Some(VectorsFile {
        path,
        map,
        summary,
        identity,
    }))
}

/// The project's vectors, `None` when there is no file.
pub fn read(index_dir: &Path, limits: &Limits) -> anyhow::Result<Option<Vectors>> {
    open(index_dir, limits)?.map(VectorsFile::rows).transpose()
}

/// Write the asset vectors atomically.
pub fn write(index_dir: &Path, vectors: &Vectors) -> anyhow::Result<()> {
    write_named(index_dir, VECTORS_FILE, vectors)
}

/// Write the vectors file `name` of the index folder atomically.
pub(crate) fn write_named(index_dir: &Path, name: &str, vectors: &Vectors) -> anyhow::Result<()> {
    let path = index_dir.join(name);
    engine::io::write_atomic(&path, &vectors.to_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

/// A stable 64-bit hash of a text (FNV-1a): the same on every machine and
/// every Rust release, unlike the standard hasher.
pub(crate) fn text_hash(text: &str) -> u64 {
    fnv_bytes(0xcbf2_9ce4_8422_2325, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32, dim: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dim)
            .map(|i| ((i as u32 * 7919 + seed * 104_729) % 1000) as f32 - 500.0)
            .collect();
        super::super::embedder::normalize(&mut v);
        v
    }

    #[test]
    fn a_file_round_trips_and_keeps_cosines_within_a_thousandth() {
        let mut vectors = Vectors::new("m".into(), "t".into(), 64);
        for i in 0..5 {
            vectors.push(format!("g{i}"), text_hash(&format!("text {i}")), &unit(i, 64));
        }
        let back = Vectors::from_bytes(&vectors.to_bytes()).unwrap();
        assert_eq!(back, vectors);
        for i in 0..5 {
            let exact: f32 = unit(i, 64).iter().zip(unit(2, 64)).map(|(a, b)| a * b).sum();
            assert!((back.cosine(&unit(2, 64), i as usize) - exact).abs() < 1e-3);
        }
        assert_eq!(back.nearest(&unit(3, 64), 2, |_| true)[0].0, 3);
        assert!(back
            .nearest(&unit(3, 64), 2, |row| row != 3)
            .iter()
            .all(|(row, _)| *row != 3));
    }

    /// The lane sums and the tail past the last full lane add up to the
    /// plain dot product, at every length around a multiple of the lanes.
    #[test]
    fn the_int8_cosine_is_the_plain_dot_product_at_any_dimension() {
        for dim in [1, 15, 16, 17, 37, 512] {
            let values: Vec<i8> = (0..dim).map(|i| ((i * 37 % 255) as i32 - 127) as i8).collect();
            let query = unit(dim as u32, dim);
            let plain: f32 = values.iter().zip(&query).map(|(v, q)| f32::from(*v) * q).sum::<f32>() * 0.01;
            let summed = int8_cosine(&values, 0.01, &query);
            assert!((summed - plain).abs() < 1e-5, "dim {dim}: {summed} vs {plain}");
        }
    }

    /// Read back, the file is mapped: its rows are the ones written, and a
    /// reindex can copy them into a new file (which then owns its bytes).
    #[test]
    fn a_mapped_file_reads_back_the_rows_written_and_lends_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut vectors = Vectors::new("m".into(), "t".into(), 24);
        for i in 0..4 {
            vectors.push(format!("guid-{i}"), u64::from(i) * 7, &unit(i, 24));
        }
        write(dir.path(), &vectors).unwrap();
        let mapped = read(dir.path(), &Limits::default()).unwrap().unwrap();
        assert_eq!(mapped, vectors);
        assert_eq!(mapped.rows_by_key()[&("guid-2", 14)], 2);
        let mut copied = Vectors::new("m".into(), "t".into(), 24);
        copied.push_from(&mapped, 3);
        copied.push_from(&mapped, 0);
        assert_eq!((copied.guid(0), copied.guid(1)), ("guid-3", "guid-0"));
        assert_eq!(copied.values(0), vectors.values(3));
        assert_eq!(copied.scale(1), vectors.scale(0));
        assert!(read(&dir.path().join("none"), &Limits::default()).unwrap().is_none());
    }

    /// A search keeps its mapping while the file is the same, and reads a
    /// file written since (as the MCP server does after `index`).
    #[test]
    fn the_kept_mapping_follows_the_file_version() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            open(dir.path(), &Limits::default())
                .unwrap()
                .unwrap()
                .for_search(false)
                .unwrap()
        };
        let mut vectors = Vectors::new("m".into(), "t".into(), 24);
        vectors.push("guid-0".into(), 1, &unit(0, 24));
        write(dir.path(), &vectors).unwrap();
        let (first, again) = (open(), open());
        assert!(Arc::ptr_eq(&first, &again));
        vectors.push("guid-1".into(), 2, &unit(1, 24));
        write(dir.path(), &vectors).unwrap();
        let written = open();
        assert_eq!((first.len(), written.len()), (1, 2));
        assert_eq!(*written, vectors);
    }

    /// Read through its sketch, a file answers as the full scan does when
    /// every row is a candidate; a cut file or offsets out of place are
    /// refused, and an old file without a sketch is read as before.
    #[test]
    fn a_sketched_read_answers_as_the_scan_and_refuses_what_is_out_of_place() {
        let dir = tempfile::tempdir().unwrap();
        let mut vectors = Vectors::new("m".into(), "t".into(), 70);
        for i in 0..40 {
            vectors.push(format!("guid-{i}"), u64::from(i), &unit(i, 70));
        }
        write(dir.path(), &vectors).unwrap();
        let limits = Limits::default();
        let file = || open(dir.path(), &limits).unwrap().unwrap();
        assert!(file().summary().sketched);
        let (sketched, scanned) = (file().sketched().unwrap(), file().rows().unwrap());
        for q in 0..5 {
            let query = unit(100 + q, 70);
            assert_eq!(
                sketched.nearest(&query, 7, |_| true),
                scanned.nearest(&query, 7, |_| true)
            );
            let odd = |row: usize| row % 2 == 1;
            assert_eq!(sketched.nearest(&query, 3, odd), scanned.nearest(&query, 3, odd));
        }
        assert!(sketched.nearest_scoring(&unit(3, 70), 1, 40, |_| true)[0].0 == 3);

        let bytes = std::fs::read(dir.path().join(VECTORS_FILE)).unwrap();
        let path = dir.path().join(VECTORS_FILE);
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(file().sketched().is_err() && file().rows().is_err());
        // Row 5's offset pointed into row 4's record, then past the file:
        // read through the sketch, row 5 is misread and every other row
        // read as written; the full read, which checks every offset, refuses it.
        let section = SketchSection::after(file_records_end(&bytes), 40, 70);
        let at = section.starts + 8 * 5;
        let offset = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        for moved_to in [offset - 20, u64::MAX] {
            let mut moved = bytes.clone();
            moved[at..at + 8].copy_from_slice(&moved_to.to_le_bytes());
            std::fs::write(&path, &moved).unwrap();
            let misread = file().sketched().unwrap();
            assert_ne!(misread.guid(5), "guid-5");
            assert!((0..40)
                .filter(|row| *row != 5)
                .all(|row| misread.guid(row) == format!("guid-{row}")));
            assert!(file().rows_and_sketch().is_err());
        }

        // Without `records_bytes` and the section: the format before the sketch.
        let header_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        let mut header: serde_json::Value = serde_json::from_slice(&bytes[12..12 + header_len]).unwrap();
        let records = &bytes[12 + header_len..file_records_end(&bytes)];
        header.as_object_mut().unwrap().remove("records_bytes");
        let header = serde_json::to_vec(&header).unwrap();
        let mut old = MAGIC.to_vec();
        old.extend_from_slice(&(header.len() as u32).to_le_bytes());
        old.extend_from_slice(&header);
        old.extend_from_slice(records);
        std::fs::write(&path, &old).unwrap();
        assert!(!file().summary().sketched);
        assert_eq!(file().rows().unwrap(), vectors);
        assert!(file().sketched().is_err());
    }

    /// Where the records of a written file end (its header says how long they are).
    fn file_records_end(bytes: &[u8]) -> usize {
        let header_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        let header: Header = serde_json::from_slice(&bytes[12..12 + header_len]).unwrap();
        12 + header_len + header.records_bytes.unwrap()
    }

    #[test]
    fn a_damaged_file_is_refused_not_misread() {
        let mut vectors = Vectors::new("m".into(), "t".into(), 8);
        vectors.push("g".into(), 1, &unit(1, 8));
        let bytes = vectors.to_bytes();
        assert!(Vectors::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Vectors::from_bytes(&longer).is_err());
        assert!(Vectors::from_bytes(b"UAVECS01\xff\xff\xff\xff").is_err());
    }
}
