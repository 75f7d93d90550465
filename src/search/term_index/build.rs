//! Building the search index from the text of `assets.jsonl`, and its
//! bytes on disk.
//!
//! Layout: an 8-byte magic holding the format version, a little-endian
//! `u32` header length, the JSON [`Header`], then the sections it names —
//! the row table (per row: offset `u64`, length `u32`, fingerprint `u64` of
//! its line), the term dictionary (an `fst` map: term → postings offset),
//! the postings (per term: a varint count, then varint row-id gaps), and
//! the guid dictionary (an `fst` map: guid → row id).

use std::collections::{HashMap, HashSet};
use std::hash::Hasher as _;

use serde::{Deserialize, Serialize};

use super::super::loanword::collect_words;
use super::super::rank::{add_field_lengths, for_each_field_term, Fnv, FIELDS};
use super::super::records::AssetRow;
use super::super::text::Scratch;

/// The magic and format version: a file of another version is rebuilt.
pub(super) const MAGIC: &[u8; 8] = b"UASIDX\x00\x01";
/// Bytes per row in the row table.
pub(super) const ROW_BYTES: usize = 20;

/// Per field, the summed lengths of every row (a named type: serde's derive
/// has a `FIELDS` of its own).
pub(super) type LenSums = [f64; FIELDS];

/// What the index was built from, and the corpus statistics the exact
/// scorer needs ([`super::super::rank::Corpus`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Header {
    /// `assets.jsonl`'s length when the index was built.
    pub assets_bytes: u64,
    /// `manifest.json`'s version then (none without a manifest).
    pub manifest_version: Option<String>,
    /// Non-blank lines of `assets.jsonl` (what `search.index` counts).
    pub lines: usize,
    /// Rows that decode: the row ids are their order.
    pub rows: usize,
    pub len_sums: LenSums,
    /// The words a loanword may stand for ([`collect_words`]), sorted.
    pub loan_words: Vec<String>,
    /// Byte ranges `[start, end)` after the header.
    pub row_table: (usize, usize),
    pub terms: (usize, usize),
    pub postings: (usize, usize),
    pub guids: (usize, usize),
}

/// The fingerprint of a row's line: a row read back by offset is checked
/// against it, so a file changed behind the index is never read as a row.
pub(super) fn fingerprint(line: &[u8]) -> u64 {
    let mut hasher = Fnv::default();
    hasher.write(line);
    hasher.finish()
}

/// The non-blank lines of a JSONL text with their byte offsets, a leading
/// byte-order mark left out (as `load::row_lines` reads them).
pub(super) fn lines_with_offsets(text: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let mut start = 0;
    text.split(|&b| b == b'\n').filter_map(move |raw| {
        let at = start;
        start += raw.len() + 1;
        let mut line = raw;
        let mut offset = at;
        while let Some(rest) = line.strip_prefix(BOM) {
            line = rest;
            offset += BOM.len();
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        (!line.iter().all(u8::is_ascii_whitespace)).then_some((offset, line))
    })
}

/// The bytes of the search index of `assets` (the text of `assets.jsonl`).
pub(super) fn build(assets: &[u8], manifest_version: Option<String>) -> anyhow::Result<Vec<u8>> {
    let mut row_table = Vec::new();
    let mut term_ids: HashMap<String, u32> = HashMap::new();
    let mut postings: Vec<Vec<u32>> = Vec::new();
    let mut guids: Vec<(String, u32)> = Vec::new();
    let mut len_sums = [0f64; FIELDS];
    let mut loan_words = HashSet::new();
    let mut scratch = Scratch::default();
    let mut row_terms: Vec<u32> = Vec::new();
    let (mut lines, mut rows) = (0usize, 0u32);
    for (offset, line) in lines_with_offsets(assets) {
        lines += 1;
        let Ok(row) = serde_json::from_slice::<AssetRow>(line) else {
            continue;
        };
        let id = rows;
        rows += 1;
        row_table.extend_from_slice(&(offset as u64).to_le_bytes());
        row_table.extend_from_slice(&u32::try_from(line.len())?.to_le_bytes());
        row_table.extend_from_slice(&fingerprint(line).to_le_bytes());
        let mut lens = [0u16; FIELDS];
        row_terms.clear();
        for_each_field_term(&row, &mut scratch, &mut |field, term| {
            add_field_lengths(&mut lens, field);
            let next = term_ids.len() as u32;
            let term_id = match term_ids.get(term) {
                Some(&t) => t,
                None => {
                    term_ids.insert(term.to_owned(), next);
                    postings.push(Vec::new());
                    next
                }
            };
            row_terms.push(term_id);
        });
        row_terms.sort_unstable();
        row_terms.dedup();
        for &t in &row_terms {
            postings[t as usize].push(id);
        }
        for (sum, len) in len_sums.iter_mut().zip(lens) {
            *sum += f64::from(len);
        }
        collect_words(&row, &mut scratch, &mut loan_words);
        guids.push((row.guid, id));
    }

    // Terms in byte order for the fst, each pointing at its postings.
    let mut terms: Vec<(String, u32)> = term_ids.into_iter().collect();
    terms.sort_unstable();
    let mut posting_bytes = Vec::new();
    let mut dictionary = fst::MapBuilder::memory();
    for (term, t) in &terms {
        dictionary.insert(term, posting_bytes.len() as u64)?;
        let ids = &postings[*t as usize];
        push_varint(&mut posting_bytes, ids.len() as u64);
        let mut last = 0;
        for &id in ids {
            push_varint(&mut posting_bytes, u64::from(id - last));
            last = id;
        }
    }
    // A guid twice (a broken index) keeps its last row, as a scan would.
    guids.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    guids.dedup_by(|later, first| later.0 == first.0);
    let mut guid_map = fst::MapBuilder::memory();
    for (guid, id) in &guids {
        guid_map.insert(guid, u64::from(*id))?;
    }

    let dictionary = dictionary.into_inner()?;
    let guid_map = guid_map.into_inner()?;
    let mut loan_words: Vec<String> = loan_words.into_iter().collect();
    loan_words.sort_unstable();
    let mut at = 0;
    let mut section = |len: usize| {
        at += len;
        (at - len, at)
    };
    let header = Header {
        assets_bytes: assets.len() as u64,
        manifest_version,
        lines,
        rows: rows as usize,
        len_sums,
        loan_words,
        row_table: section(row_table.len()),
        terms: section(dictionary.len()),
        postings: section(posting_bytes.len()),
        guids: section(guid_map.len()),
    };
    let header_bytes = serde_json::to_vec(&header)?;
    let mut out = Vec::with_capacity(12 + header_bytes.len() + at);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(header_bytes.len())?.to_le_bytes());
    out.extend_from_slice(&header_bytes);
    for part in [&row_table, &dictionary, &posting_bytes, &guid_map] {
        out.extend_from_slice(part);
    }
    Ok(out)
}

/// LEB128: seven bits a byte, the high bit set while more follow.
fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The varint at `*at` in `bytes`, moving `*at` past it; `None` when the
/// bytes end first (a damaged file).
pub(super) fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut bytes = Vec::new();
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            push_varint(&mut bytes, v);
        }
        let mut at = 0;
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(read_varint(&bytes, &mut at), Some(v));
        }
        assert_eq!(read_varint(&bytes, &mut at), None, "past the end");
        assert_eq!(read_varint(&[0x80], &mut 0), None, "cut short");
    }

    #[test]
    fn lines_keep_their_offsets_past_blank_lines_and_a_bom() {
        let text = "\u{feff}{\"a\":1}\n\n  \n{\"b\":2}\r\n".as_bytes();
        let lines: Vec<(usize, &[u8])> = lines_with_offsets(text).collect();
        assert_eq!(lines, [(3, &b"{\"a\":1}"[..]), (15, &b"{\"b\":2}"[..])]);
        assert_eq!(&text[15..22], b"{\"b\":2}");
    }
}
