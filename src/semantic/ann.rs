//! `assets.ann`: an approximate nearest-neighbour index (HNSW, `usearch`)
//! of `assets.vectors`, written only past a size where scanning every
//! vector stops being fast (`embeddings.ann_min_rows`, measured in
//! docs/benchmarks.md#vectors-at-scale).
//!
//! A search maps the file and views the graph in place: nothing is rebuilt
//! or decoded on load, so one search per process costs the rows it visits,
//! not the size of the project. The rows it returns are re-scored with the
//! exact int8 cosine of [`super::vectors::int8_cosine`], so a row's
//! similarity is the one the exact scan gives it; only which rows come back
//! is approximate (recall@10 against the exact scan: docs/benchmarks.md).
//!
//! Layout (little-endian): the magic `UAANN\0\0\x01` (the format version),
//! a `u32` length and a JSON header (`Header`), zero padding to 8 bytes, `count + 1`
//! `u32` offsets into the guid bytes, the guid bytes, `count` `f32` scales,
//! zero padding to 64 bytes, then the `usearch` index (its keys are row
//! numbers of `assets.vectors`; its vectors are those rows' int8 values).
//! The header names the vectors it was built from by their
//! [`super::vectors::Vectors::fingerprint`]: an index whose fingerprint is
//! not the vectors file's is stale and never answers.
//!
//! The file lives in the user's cache ([`home`]), never in the project:
//! `usearch` views a graph without checking its neighbour ids, so an index
//! a project could ship would let it make search read out of bounds. One
//! in the user's cache was written by `index` from the project's vectors.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use usearch::{IndexOptions, MetricKind, ScalarKind};

use super::vectors::{int8_cosine, Vectors};

pub const ANN_FILE: &str = "assets.ann";
const MAGIC: &[u8; 8] = b"UAANN\0\0\x01";
/// Neighbours per node and the candidate list while building (usearch's
/// defaults), and while searching: 2048 rather than usearch's 64, which
/// left recall@10 at 0.81 on 10^4 real vectors, or 256, which left it at
/// 0.79 on 10^5; 2048 keeps 0.94 there for ~10 ms a search
/// (docs/benchmarks.md#vectors-at-scale).
const CONNECTIVITY: usize = 16;
const EXPANSION_ADD: usize = 128;
pub const EXPANSION_SEARCH: usize = 2048;
/// A search asks the graph for this many times the rows it keeps, then
/// keeps the best by exact cosine: cheap, and it lifts recall.
const OVERSAMPLE: usize = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    /// The fingerprint of the vectors it indexes.
    vectors: u64,
    dim: usize,
    count: usize,
    guid_bytes: usize,
    index_bytes: usize,
    /// FNV-1a of every byte after the header, checked by `index`.
    checksum: u64,
}

/// Why an index file cannot answer for the vectors beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    Missing,
    /// Built from other vectors than the current `assets.vectors`.
    Stale,
    /// Unreadable, cut short, of another format or failing its checksum.
    Damaged,
}

impl Unusable {
    pub fn word(self) -> &'static str {
        match self {
            Unusable::Missing => "missing",
            Unusable::Stale => "stale",
            Unusable::Damaged => "damaged",
        }
    }
}

/// The bytes of an index of every row of `vectors`.
pub fn build(vectors: &Vectors) -> anyhow::Result<Vec<u8>> {
    use rayon::prelude::*;
    let index = usearch::new_index(&options(vectors.dim)).context("cannot create the vector index")?;
    index
        .reserve_capacity_and_threads(vectors.len(), rayon::current_num_threads())
        .context("cannot reserve the vector index")?;
    (0..vectors.len())
        .into_par_iter()
        .try_for_each(|row| index.add(row as u64, vectors.values(row)))
        .context("cannot add a vector to the index")?;
    let mut offsets = Vec::with_capacity(vectors.len() + 1);
    let mut guids = Vec::new();
    offsets.push(0u32);
    for row in 0..vectors.len() {
        guids.extend_from_slice(vectors.guid(row).as_bytes());
        offsets.push(u32::try_from(guids.len()).context("too many guid bytes for the vector index")?);
    }
    let mut body = Vec::with_capacity(4 * offsets.len() + guids.len() + 4 * vectors.len() + 64);
    offsets.iter().for_each(|o| body.extend_from_slice(&o.to_le_bytes()));
    body.extend_from_slice(&guids);
    (0..vectors.len()).for_each(|row| body.extend_from_slice(&vectors.scale(row).to_le_bytes()));
    let mut header = Header {
        vectors: vectors.fingerprint(),
        dim: vectors.dim,
        count: vectors.len(),
        guid_bytes: guids.len(),
        index_bytes: index.serialized_length(),
        checksum: 0,
    };
    // The header's length fixes where the body starts, and so the padding;
    // the checksum is a fixed-width field, so filling it in keeps both.
    header.checksum = u64::MAX;
    let head_len = serde_json::to_vec(&header)?.len();
    let start = align(12 + head_len, 8);
    let index_at = align(start + body.len(), 64);
    let mut out = vec![0u8; index_at + header.index_bytes];
    out[start..start + body.len()].copy_from_slice(&body);
    index
        .save_to_buffer(&mut out[index_at..])
        .context("cannot save the vector index")?;
    header.checksum = checksum(&out[start..]);
    let mut head = serde_json::to_vec(&header)?;
    head.resize(head_len, b' ');
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&(head_len as u32).to_le_bytes());
    out[12..12 + head_len].copy_from_slice(&head);
    Ok(out)
}

fn options(dim: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        metric: MetricKind::Cos,
        quantization: ScalarKind::I8,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

fn align(at: usize, to: usize) -> usize {
    at.div_ceil(to) * to
}

/// FNV-1a over 8-byte words (the tail zero-padded): fast enough to check a
/// few hundred megabytes on each `index` run.
fn checksum(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut hash = (&mut chunks).fold(0xcbf2_9ce4_8422_2325u64, |h, word| {
        (h ^ u64::from_le_bytes(word.try_into().expect("8 bytes"))).wrapping_mul(0x0100_0000_01b3)
    });
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    hash = (hash ^ u64::from_le_bytes(tail)).wrapping_mul(0x0100_0000_01b3);
    hash ^ bytes.len() as u64
}

/// The folder holding the index of the project whose index folder is
/// `index_dir`: `$XDG_CACHE_HOME/unity-assets/ann/<hash of its path>`
/// (else under `~/.cache`); `None` without either, and then there is no
/// index, only the exact scan.
pub fn home(index_dir: &Path) -> Option<PathBuf> {
    let canonical = std::fs::canonicalize(index_dir).ok()?;
    let key = checksum(canonical.as_os_str().as_encoded_bytes());
    Some(
        crate::user_dirs::unity_assets_dir("XDG_CACHE_HOME", ".cache")?
            .join("ann")
            .join(format!("{key:016x}")),
    )
}

/// Write the index atomically into `dir` (a [`home`]).
pub fn write(dir: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(ANN_FILE);
    engine::io::write_atomic(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Remove the index (the vectors fell under the size that needs one).
pub fn remove(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(ANN_FILE);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// An index file mapped into memory and viewed in place.
pub struct Ann {
    // Declared before `map`, so dropped first: it points into the mapping.
    index: usearch::Index,
    map: memmap2::Mmap,
    header: Header,
    offsets_at: usize,
    guids_at: usize,
    scales_at: usize,
}

impl Ann {
    /// Open the index of `dir` for the vectors of fingerprint `vectors`.
    /// `verify` reads every byte against the checksum (what `index` does);
    /// a search checks the structure and the fingerprint only.
    pub fn open(dir: &Path, vectors: u64, verify: bool) -> Result<Ann, Unusable> {
        let file = match File::open(dir.join(ANN_FILE)) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unusable::Missing),
            Err(_) => return Err(Unusable::Damaged),
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(Unusable::Damaged);
        }
        // SAFETY: index files are replaced by rename, never written in place,
        // so the mapped bytes stay those of the file opened here.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|_| Unusable::Damaged)?;
        let (header, start) = parse_header(&map).ok_or(Unusable::Damaged)?;
        if header.vectors != vectors {
            return Err(Unusable::Stale);
        }
        let offsets_at = start;
        let guids_at = offsets_at + 4 * (header.count + 1);
        let scales_at = guids_at + header.guid_bytes;
        let index_at = align(scales_at + 4 * header.count, 64);
        if index_at.checked_add(header.index_bytes) != Some(map.len()) {
            return Err(Unusable::Damaged);
        }
        if verify && checksum(&map[start..]) != header.checksum {
            return Err(Unusable::Damaged);
        }
        let index = usearch::new_index(&options(header.dim)).map_err(|_| Unusable::Damaged)?;
        // SAFETY: `map` is kept beside `index` and outlives it (field order).
        unsafe { index.view_from_buffer(&map[index_at..]) }.map_err(|_| Unusable::Damaged)?;
        if index.size() != header.count || index.dimensions() != header.dim {
            return Err(Unusable::Damaged);
        }
        index.change_expansion_search(EXPANSION_SEARCH);
        Ok(Ann {
            index,
            map,
            header,
            offsets_at,
            guids_at,
            scales_at,
        })
    }

    /// Search with `expansion` candidates per step instead of
    /// [`EXPANSION_SEARCH`] (the bench measures recall against it).
    pub fn with_expansion(self, expansion: usize) -> Self {
        self.index.change_expansion_search(expansion);
        self
    }

    pub fn len(&self) -> usize {
        self.header.count
    }

    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.map[at..at + 4].try_into().expect("4 bytes"))
    }

    /// Row `row`'s guid; `None` when the table is damaged there.
    pub fn guid(&self, row: usize) -> Option<&str> {
        let start = self.u32_at(self.offsets_at + 4 * row) as usize;
        let end = self.u32_at(self.offsets_at + 4 * (row + 1)) as usize;
        let bytes = self
            .map
            .get(self.guids_at + start..self.guids_at + end.min(self.header.guid_bytes))?;
        std::str::from_utf8(bytes).ok()
    }

    fn scale(&self, row: usize) -> f32 {
        let at = self.scales_at + 4 * row;
        f32::from_le_bytes(self.map[at..at + 4].try_into().expect("4 bytes"))
    }

    /// Row `row`'s exact cosine with `query` (a unit vector), from the
    /// int8 values the index holds.
    pub fn cosine(&self, query: &[f32], row: usize, buffer: &mut Vec<i8>) -> anyhow::Result<f32> {
        buffer.resize(self.header.dim, 0);
        if self.index.get(row as u64, buffer)? != 1 {
            bail!("row {row} is not in the vector index");
        }
        Ok(int8_cosine(buffer, self.scale(row), query))
    }

    /// The `n` rows nearest `query` by the graph, most similar first, each
    /// with its exact cosine.
    pub fn nearest(&self, query: &[f32], n: usize) -> anyhow::Result<Vec<(usize, f32)>> {
        if n == 0 || self.is_empty() {
            return Ok(vec![]);
        }
        let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { 127.0 / max } else { 1.0 };
        let query8: Vec<i8> = query
            .iter()
            .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let matches = self.index.search(&query8, n * OVERSAMPLE)?;
        let mut buffer = vec![];
        let mut scored = matches
            .keys
            .iter()
            .filter(|key| (**key as usize) < self.len())
            .map(|key| Ok((*key as usize, self.cosine(query, *key as usize, &mut buffer)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(n);
        Ok(scored)
    }
}

fn parse_header(bytes: &[u8]) -> Option<(Header, usize)> {
    if bytes.get(..8)? != MAGIC {
        return None;
    }
    let head_len = u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?) as usize;
    let header: Header = serde_json::from_slice(bytes.get(12..12usize.checked_add(head_len)?)?).ok()?;
    let plausible = header.dim > 0 && header.dim <= 8192 && header.count < u32::MAX as usize;
    plausible.then_some((header, align(12 + head_len, 8)))
}

/// Bring the index of `dir` in line with `vectors` (what `index` does
/// after writing them): past `min_rows` rows a missing, stale or damaged
/// index is rebuilt, with the line saying so; under it there is none.
/// Whether the approximate index in `dir` is what [`refresh`] would leave
/// for `count` vectors of `fingerprint`: current, or absent under `min_rows`.
pub fn is_current(dir: &Path, count: usize, fingerprint: u64, min_rows: usize) -> bool {
    match count < min_rows.max(1) {
        true => !dir.join(ANN_FILE).exists(),
        false => Ann::open(dir, fingerprint, true).is_ok(),
    }
}

pub fn refresh(dir: &Path, vectors: &Vectors, min_rows: usize) -> anyhow::Result<Option<String>> {
    if vectors.len() < min_rows.max(1) {
        remove(dir)?;
        return Ok(None);
    }
    let why = match Ann::open(dir, vectors.fingerprint(), true) {
        Ok(_) => return Ok(None),
        Err(why) => why,
    };
    let started = std::time::Instant::now();
    write(dir, &build(vectors)?)?;
    let what = match why {
        Unusable::Missing => "built".to_owned(),
        other => format!("was {}: rebuilt", other.word()),
    };
    Ok(Some(format!(
        "[unity-assets:index] approximate vector index ({ANN_FILE}) {what}: {} rows in {:.1} s",
        vectors.len(),
        started.elapsed().as_secs_f64()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` unit vectors of `dim` values from a seeded generator.
    fn vectors(n: usize, dim: usize, seed: u64) -> Vectors {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let mut out = Vectors::new("m".into(), "t".into(), dim);
        for row in 0..n {
            let mut v: Vec<f32> = (0..dim).map(|_| next()).collect();
            super::super::embedder::normalize(&mut v);
            out.push(format!("guid{row:04}"), seed * 1000 + row as u64, &v);
        }
        out
    }

    fn written(vectors: &Vectors) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &build(vectors).unwrap()).unwrap();
        dir
    }

    /// The graph is built on several threads, so which rows a walk reaches
    /// may differ from build to build: the rows it returns always carry the
    /// exact cosine, in order, and on a set this small it finds nearly all
    /// of the exact top ten.
    #[test]
    fn on_a_small_set_the_index_returns_nearly_the_exact_top_ten_with_exact_cosines() {
        let rows = vectors(200, 32, 7);
        let dir = written(&rows);
        let ann = Ann::open(dir.path(), rows.fingerprint(), true).unwrap();
        assert_eq!(ann.len(), 200);
        let (mut found, mut wanted) = (0, 0);
        for q in 0..20 {
            let query = vectors(1, 32, 1000 + q);
            let query: Vec<f32> = (0..32)
                .map(|i| f32::from(query.values(0)[i]) * query.scale(0))
                .collect();
            let exact = rows.nearest(&query, 10, |_| true);
            let approximate = ann.nearest(&query, 10).unwrap();
            assert_eq!(approximate.len(), 10, "query {q}");
            assert!(approximate.windows(2).all(|w| w[0].1 >= w[1].1), "query {q}: in order");
            let mut buffer = Vec::new();
            for (row, similarity) in &approximate {
                assert_eq!(ann.guid(*row), Some(rows.guid(*row)));
                assert_eq!(ann.cosine(&query, *row, &mut buffer).unwrap(), *similarity);
                assert_eq!(rows.cosine(&query, *row), *similarity, "exact cosine");
            }
            found += approximate.iter().filter(|hit| exact.contains(hit)).count();
            wanted += exact.len();
        }
        assert!(found * 100 >= wanted * 95, "recall@10 {found}/{wanted}");
    }

    #[test]
    fn an_index_of_other_vectors_is_stale() {
        let rows = vectors(50, 16, 1);
        let dir = written(&rows);
        let other = vectors(50, 16, 2);
        assert_eq!(
            Ann::open(dir.path(), other.fingerprint(), false).err(),
            Some(Unusable::Stale)
        );
        let line = refresh(dir.path(), &other, 10).unwrap().unwrap();
        assert!(line.contains("(assets.ann) was stale: rebuilt: 50 rows"), "{line}");
        assert!(Ann::open(dir.path(), other.fingerprint(), true).is_ok());
    }

    #[test]
    fn a_damaged_index_is_refused_and_rebuilt() {
        let rows = vectors(60, 16, 3);
        let dir = written(&rows);
        let path = dir.path().join(ANN_FILE);
        let bytes = std::fs::read(&path).unwrap();

        // Cut short: refused even by a search, which does not read every byte.
        std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
        assert_eq!(
            Ann::open(dir.path(), rows.fingerprint(), false).err(),
            Some(Unusable::Damaged)
        );
        // Not an index at all.
        std::fs::write(&path, b"UAANN\0\0\x01\xff\xff\xff\xff").unwrap();
        assert_eq!(
            Ann::open(dir.path(), rows.fingerprint(), false).err(),
            Some(Unusable::Damaged)
        );
        // One byte changed in the graph: the checksum `index` reads finds it.
        let mut flipped = bytes.clone();
        let at = flipped.len() - 40;
        flipped[at] ^= 0x5a;
        std::fs::write(&path, &flipped).unwrap();
        assert_eq!(
            Ann::open(dir.path(), rows.fingerprint(), true).err(),
            Some(Unusable::Damaged)
        );
        let line = refresh(dir.path(), &rows, 10).unwrap().unwrap();
        assert!(
            line.starts_with(
                "[unity-assets:index] approximate vector index (assets.ann) was damaged: rebuilt: 60 rows in "
            ),
            "{line}"
        );
        assert!(Ann::open(dir.path(), rows.fingerprint(), true).is_ok());
        assert_eq!(
            refresh(dir.path(), &rows, 10).unwrap(),
            None,
            "up to date: nothing to say"
        );
    }

    #[test]
    fn under_the_threshold_there_is_no_index() {
        let rows = vectors(30, 16, 4);
        let dir = written(&rows);
        assert_eq!(refresh(dir.path(), &rows, 31).unwrap(), None);
        assert!(!dir.path().join(ANN_FILE).exists());
        let line = refresh(dir.path(), &rows, 30).unwrap().unwrap();
        assert!(line.contains("(assets.ann) built: 30 rows"), "{line}");
    }
}
