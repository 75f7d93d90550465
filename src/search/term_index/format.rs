//! The search index's bytes on disk, shared by the build that writes
//! them and the readers.
//!
//! Layout: an 8-byte magic holding the format version, a little-endian
//! `u32` header length, the JSON [`Header`], then the sections it names —
//! the row table (per row: offset `u64`, length `u32`, fingerprint `u64` of
//! its line), the row norms (per row: its length in each field, a byte,
//! at most 255), the term dictionary (an `fst` map: key → postings offset, a
//! key per term, field and count a row holds it there: [`field_key`]; a
//! key per normalised file name and per filter facet), the
//! postings (per key: a varint count, then varint row-id gaps), the
//! guid table (per guid, sorted: its 16 bytes, then its row id `u32`; a
//! guid that is not 32 lowercase hex digits is in the header's
//! `other_guids`), the row lengths (per row:
//! a `u16` mask of the fields it has terms in, then a varint length per
//! such field), the loanword words (sorted, each ending in a newline),
//! their postings (per word, in order: postings as above) and their keys
//! ([`Header::loan_keys`]). The words are a section, not a header field: a
//! million assets hold ~500,000 of them, which every search parsed (and
//! each stage cloned) with the header, and a query with a loanword keyed
//! them all.

use std::hash::Hasher as _;

use serde::{Deserialize, Serialize};

use super::super::rank::{Fnv, FIELDS};
use crate::index::is_written_guid;

/// The magic and format version: a file of another version is rebuilt.
pub(super) const MAGIC: &[u8; 8] = b"UASIDX\x00\x0a";
/// Bytes per row in the row table.
pub(super) const ROW_BYTES: usize = 20;
/// Bytes per entry of the guid table: a guid's 16 bytes, its row id.
pub(super) const GUID_BYTES: usize = 20;

/// Per field, the summed lengths of every row (a named type: serde's derive
/// has a `FIELDS` of its own).
pub(super) type LenSums = [f64; FIELDS];

/// What the index was built from, and the corpus statistics the exact
/// scorer needs ([`super::super::rank::Corpus`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Header {
    /// `assets.jsonl`'s length when the index was built.
    pub(crate) assets_bytes: u64,
    /// `manifest.json`'s version then (none without a manifest).
    pub manifest_version: Option<String>,
    /// Non-blank lines of `assets.jsonl` (what `search.index` counts).
    pub lines: usize,
    /// Rows that decode: the row ids are their order.
    pub rows: usize,
    pub(crate) len_sums: LenSums,
    /// Byte ranges `[start, end)` after the header.
    pub row_table: (usize, usize),
    /// Per row, its length in each field, at most 255 (a byte each).
    pub(crate) norms: (usize, usize),
    pub(crate) terms: (usize, usize),
    pub(crate) postings: (usize, usize),
    /// The guid table: guids as [`guid_key`]s, sorted, each with its row.
    pub guids: (usize, usize),
    /// Guids that have no [`guid_key`] (not Unity's), with their rows,
    /// sorted: none in a project Unity wrote.
    pub(crate) other_guids: Vec<(String, u32)>,
    /// What the next build reuses: each row's field lengths, and the rows
    /// of each loanword word.
    pub(crate) row_lens: (usize, usize),
    /// The words a loanword may stand for (`loanword::collect_words`), read by [`loan_words`].
    pub(crate) loan_words: (usize, usize),
    /// Each of those words' phonetic key and term (`loanword::keyed`), an
    /// `fst` set of `key`, [`KEY_SEPARATOR`], `term`: a query looks up its
    /// own keys.
    pub(crate) loan_keys: (usize, usize),
    pub(crate) loan_postings: (usize, usize),
}

/// The words of the loanword words section, in order.
pub(super) fn loan_words(section: &[u8]) -> impl Iterator<Item = &[u8]> {
    section.split(|b| *b == b'\n').filter(|word| !word.is_empty())
}

/// A row-table entry: where a row's line is in `assets.jsonl`, and its
/// fingerprint.
pub(super) struct RowEntry {
    pub offset: u64,
    pub len: u32,
    pub print: u64,
}

impl RowEntry {
    /// The entry in `entry` (`ROW_BYTES` of the row table); `None` when
    /// it is shorter.
    pub fn decode(entry: &[u8]) -> Option<Self> {
        let u64_at = |at: usize| Some(u64::from_le_bytes(entry.get(at..at + 8)?.try_into().ok()?));
        Some(Self {
            offset: u64_at(0)?,
            len: u32::from_le_bytes(entry.get(8..12)?.try_into().ok()?),
            print: u64_at(12)?,
        })
    }
}

/// A guid's key in the guid table: the 16 bytes its 32 lowercase hex
/// digits spell (the order of the keys is the order of the texts); `None`
/// for any other text.
pub(super) fn guid_key(guid: &str) -> Option<[u8; 16]> {
    if !is_written_guid(guid) {
        return None;
    }
    let nibble = |d: u8| if d <= b'9' { d - b'0' } else { d - b'a' + 10 };
    let mut key = [0; 16];
    for (byte, pair) in key.iter_mut().zip(guid.as_bytes().chunks_exact(2)) {
        *byte = nibble(pair[0]) << 4 | nibble(pair[1]);
    }
    Some(key)
}

/// The guid a [`guid_key`] was made from.
pub(super) fn guid_text(key: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(key.len() * 2);
    for byte in key {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 15)]));
    }
    text
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

/// Between a term and its field in a dictionary key: below every
/// character a term holds (letters and digits), so a term's keys are one
/// range of the dictionary, right after the term itself would be.
pub(super) const KEY_SEPARATOR: char = '\u{1f}';

/// The dictionary key of `term` held `count` times in field `field` (its
/// number in [`super::super::rank::Field::ALL`]) by a row: the term, the
/// separator, the field as a letter, then the count when it is more than one.
pub(super) fn field_key(term: &str, field: u8, count: u32) -> String {
    let field = char::from(b'a' + field);
    match count {
        1 => format!("{term}{KEY_SEPARATOR}{field}"),
        _ => format!("{term}{KEY_SEPARATOR}{field}{count}"),
    }
}

/// The field number and count of a key's part after its term and
/// separator; `None` when it is not one [`field_key`] writes.
pub(super) fn parse_field_key(suffix: &[u8]) -> Option<(usize, u32)> {
    let (&letter, count) = suffix.split_first()?;
    let field = usize::from(letter.checked_sub(b'a')?);
    let count = match count {
        [] => 1,
        digits => std::str::from_utf8(digits).ok()?.parse().ok().filter(|&n| n > 1)?,
    };
    (field < FIELDS).then_some((field, count))
}

/// A term's postings: the count, then the row-id gaps.
pub(super) fn push_postings(out: &mut Vec<u8>, ids: &[u32]) {
    push_varint(out, ids.len() as u64);
    let mut last = 0;
    for &id in ids {
        push_varint(out, u64::from(id - last));
        last = id;
    }
}

/// A row's field lengths: the mask of fields it has, then their lengths.
pub(super) fn push_lens(out: &mut Vec<u8>, lens: &[u16; FIELDS]) {
    let mask = lens
        .iter()
        .enumerate()
        .filter(|(_, &len)| len > 0)
        .fold(0u16, |mask, (f, _)| mask | 1 << f);
    out.extend_from_slice(&mask.to_le_bytes());
    for &len in lens.iter().filter(|&&len| len > 0) {
        push_varint(out, u64::from(len));
    }
}

/// The row lengths at `*at` (see [`push_lens`]), moving `*at` past them;
/// `None` when the bytes end first or a length is out of range.
pub(super) fn read_lens(bytes: &[u8], at: &mut usize) -> Option<[u16; FIELDS]> {
    let mask = u16::from_le_bytes(bytes.get(*at..*at + 2)?.try_into().ok()?);
    *at += 2;
    let mut lens = [0u16; FIELDS];
    for (f, len) in lens.iter_mut().enumerate() {
        if mask & (1 << f) != 0 {
            *len = u16::try_from(read_varint(bytes, at)?).ok()?;
        }
    }
    Some(lens)
}

/// The postings at `*at` (see [`push_postings`]), moving `*at` past them;
/// `None` when the bytes end first or an id is out of range.
pub(super) fn read_postings(bytes: &[u8], at: &mut usize, rows: usize) -> Option<Vec<u32>> {
    let count = usize::try_from(read_varint(bytes, at)?).ok()?;
    let mut ids = Vec::with_capacity(count.min(rows));
    let mut id = 0u64;
    for _ in 0..count {
        id += read_varint(bytes, at)?;
        ids.push(u32::try_from(id).ok().filter(|&id| (id as usize) < rows)?);
    }
    Some(ids)
}

/// LEB128: seven bits a byte, the high bit set while more follow.
pub(super) fn push_varint(out: &mut Vec<u8>, mut value: u64) {
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
    fn guid_keys_round_trip_keep_the_order_and_take_only_unitys_guids() {
        let guids = [
            "00ff10a0b1c2d3e4f5061728394a5b6c",
            "0a00000000000000000000000000000f",
            "ffffffffffffffffffffffffffffffff",
        ];
        for guid in guids {
            assert_eq!(guid_text(&guid_key(guid).unwrap()), guid);
        }
        assert!(guid_key(guids[0]) < guid_key(guids[1]) && guid_key(guids[1]) < guid_key(guids[2]));
        for other in [
            "",
            "00FF10A0B1C2D3E4F5061728394A5B6C",
            "00ff10a0b1c2d3e4f5061728394a5b6",
            "00ff10a0-1c2d3e4f5061728394a5b6c",
            "좀비",
        ] {
            assert_eq!(guid_key(other), None, "{other:?}");
        }
    }

    #[test]
    fn field_keys_round_trip_and_nothing_else_parses() {
        for (field, count) in [(0u8, 1u32), (6, 2), (15, 300)] {
            let key = field_key("rock", field, count);
            let suffix = key.strip_prefix("rock\u{1f}").expect("the term, then the separator");
            assert_eq!(parse_field_key(suffix.as_bytes()), Some((usize::from(field), count)));
        }
        for bad in ["", "q", "a1", "a0", "ax", "`"] {
            assert_eq!(parse_field_key(bad.as_bytes()), None, "{bad:?}");
        }
    }

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
