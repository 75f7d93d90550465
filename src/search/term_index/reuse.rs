//! The previous search index, read back for a build to reuse: each row's
//! guid and field lengths by row id, its rows by line, and the postings of
//! its terms and loanword words. An index that does not decode whole is
//! not reused (the build starts from nothing).

use std::collections::HashMap;

use super::super::rank::FIELDS;
use super::format::{guid_text, loan_words, read_lens, read_postings, Header, RowEntry, GUID_BYTES, ROW_BYTES};

/// A previous index whose rows a build may reuse.
pub(super) struct Previous {
    rows: usize,
    /// (fingerprint, length) of a line → the rows holding it (whose guid
    /// is known), last first; a row is taken (reused) at most once.
    by_line: HashMap<(u64, u32), Vec<u32>>,
    /// Per row id, its guid and field lengths.
    guids: Vec<String>,
    lens: Vec<[u16; FIELDS]>,
    /// Terms and loanword words, sorted, with their row ids.
    terms: Vec<(Vec<u8>, Vec<u32>)>,
    loan_words: Vec<(Vec<u8>, Vec<u32>)>,
}

impl Previous {
    /// The previous index of `header` and `body` (the sections after the
    /// header), or `None` when a section does not decode.
    pub fn decode(header: &Header, body: &[u8]) -> Option<Self> {
        let section = |(start, end): (usize, usize)| body.get(start..end);
        let rows = header.rows;
        // A row shadowed by a later one of the same guid has no guid to
        // reuse: it is visited again (`String::new()` marks it).
        let mut guids = vec![String::new(); rows];
        for entry in section(header.guids)?.chunks(GUID_BYTES) {
            let id = u32::from_le_bytes(entry.get(16..GUID_BYTES)?.try_into().ok()?);
            *guids.get_mut(id as usize)? = guid_text(&entry[..16]);
        }
        for (guid, id) in &header.other_guids {
            *guids.get_mut(*id as usize)? = guid.clone();
        }

        let table = section(header.row_table).filter(|t| t.len() == rows * ROW_BYTES)?;
        let mut by_line: HashMap<(u64, u32), Vec<u32>> = HashMap::with_capacity(rows);
        for (id, entry) in table.chunks_exact(ROW_BYTES).enumerate().rev() {
            if guids[id].is_empty() {
                continue;
            }
            let entry = RowEntry::decode(entry)?;
            // Last id first: `take` pops the first.
            by_line.entry((entry.print, entry.len)).or_default().push(id as u32);
        }

        let lens_bytes = section(header.row_lens)?;
        let mut at = 0;
        let lens = (0..rows)
            .map(|_| read_lens(lens_bytes, &mut at))
            .collect::<Option<Vec<_>>>()?;

        let postings = section(header.postings)?;
        let dictionary = fst::Map::new(section(header.terms)?).ok()?;
        let mut terms = Vec::with_capacity(dictionary.len());
        let mut stream = dictionary.stream();
        while let Some((term, offset)) = fst::Streamer::next(&mut stream) {
            let mut at = usize::try_from(offset).ok()?;
            terms.push((term.to_vec(), read_postings(postings, &mut at, rows)?));
        }

        let loan_bytes = section(header.loan_postings)?;
        let mut at = 0;
        let loan_words = loan_words(section(header.loan_words)?)
            .map(|word| Some((word.to_vec(), read_postings(loan_bytes, &mut at, rows)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            rows,
            by_line,
            guids,
            lens,
            terms,
            loan_words,
        })
    }

    /// Rows of the previous index.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The row id of `line` in the previous index, when it held that line
    /// byte for byte (and knows its guid), and it was not taken before.
    pub fn take(&mut self, line: &[u8]) -> Option<u32> {
        let key = (super::format::fingerprint(line), u32::try_from(line.len()).ok()?);
        self.by_line.get_mut(&key)?.pop()
    }

    pub fn guid(&self, id: u32) -> &str {
        &self.guids[id as usize]
    }

    pub(crate) fn lens(&self, id: u32) -> [u16; FIELDS] {
        self.lens[id as usize]
    }

    /// Every term, sorted, with the row ids holding it.
    pub(crate) fn terms(&mut self) -> Vec<(Vec<u8>, Vec<u32>)> {
        std::mem::take(&mut self.terms)
    }

    /// Every loanword word, sorted, with the row ids holding it.
    pub(crate) fn loan_words(&mut self) -> Vec<(Vec<u8>, Vec<u32>)> {
        std::mem::take(&mut self.loan_words)
    }
}
