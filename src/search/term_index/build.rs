//! Building the search index from the text of `assets.jsonl` (its bytes:
//! [`super::format`]).
//!
//! A build reuses the previous index ([`Previous`]): a row whose line is
//! byte for byte what it was keeps its terms, field lengths, loanword words
//! and guid, read back from the old sections rather than tokenised again;
//! only new and changed lines are decoded and visited. The bytes are those
//! a build from nothing gives (`tests/search_index.rs` holds that).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use rayon::prelude::*;

use super::super::loanword::{collect_words, keyed};
use super::super::names;
use super::super::rank::{add_field_lengths, for_each_field_term, Fnv, FIELDS};
use super::super::records::AssetRow;
use super::super::text::Scratch;
use super::facets::facet_keys;
use super::format::{
    field_key, fingerprint, guid_key, lines_with_offsets, push_lens, push_postings, Header, LenSums, GUID_BYTES,
    KEY_SEPARATOR, MAGIC,
};
use super::reuse::Previous;

/// What a build did: the index's bytes, and how many rows it decoded and
/// visited (the others were reused).
pub(super) struct Built {
    pub bytes: Vec<u8>,
    pub(crate) visited: usize,
}

/// The search index of `assets` (the bytes of `assets.jsonl`), reusing the
/// rows of `previous` whose lines are unchanged. A line over `line_limit`
/// (`limits.line_kb`) is no row, as a line that does not decode is not:
/// a search would refuse to read it back.
pub(super) fn build(
    assets: &[u8],
    manifest_version: Option<String>,
    mut previous: Option<Previous>,
    line_limit: u64,
) -> anyhow::Result<Built> {
    let lines: Vec<(usize, &[u8])> = lines_with_offsets(assets).collect();
    let fits = |line: &[u8]| line.len() as u64 <= line_limit;
    // Which lines the previous index holds (in order: a line is taken once).
    let taken: Vec<Option<u32>> = lines
        .iter()
        .map(|(_, line)| previous.as_mut().filter(|_| fits(line)).and_then(|p| p.take(line)))
        .collect();
    // The rest are decoded and tokenised in parallel, a run of lines per
    // part, and the parts joined in order.
    let part = lines.len().div_ceil(rayon::current_num_threads() * 4).max(1024);
    let reusable = previous.as_ref();
    let parts: Vec<Rows> = lines
        .par_chunks(part)
        .zip(taken.par_chunks(part))
        .map(|(lines, taken)| {
            let mut rows = Rows::default();
            for (&(offset, line), &old) in lines.iter().zip(taken) {
                rows.lines += 1;
                match old.zip(reusable) {
                    Some((old, previous)) => {
                        rows.reused.push((old, rows.count));
                        rows.push(offset, line, previous.guid(old).to_owned(), previous.lens(old));
                    }
                    None if fits(line) => {
                        if let Ok(row) = serde_json::from_slice::<AssetRow>(line) {
                            rows.visit(offset, line, row);
                        }
                    }
                    None => {}
                }
            }
            rows
        })
        .collect();
    let mut rows = parts.into_iter().fold(Rows::default(), Rows::join);
    let mut kept = vec![u32::MAX; previous.as_ref().map_or(0, Previous::rows)];
    for &(old, new) in &rows.reused {
        kept[old as usize] = new;
    }
    let (old_terms, old_loans) = match previous.as_mut() {
        Some(previous) => (previous.terms(), previous.loan_words()),
        None => Default::default(),
    };
    // The dictionaries and the guid table are built in key order, each on
    // its own thread: an `fst` takes its keys one by one.
    let terms = (std::mem::take(&mut rows.term_ids), std::mem::take(&mut rows.postings));
    let loans = (
        std::mem::take(&mut rows.loan_ids),
        std::mem::take(&mut rows.loan_postings),
    );
    let guids = std::mem::take(&mut rows.guids);
    let (terms, (loans, (guid_table, other_guids))) = rayon::join(
        || term_sections(old_terms, terms, &kept),
        || rayon::join(|| loan_sections(old_loans, loans, &kept), || guid_section(guids)),
    );
    let ((dictionary, posting_bytes), (loan_words, loan_bytes, loan_keys)) = (terms?, loans?);
    let mut at = 0;
    let mut section = |len: usize| {
        at += len;
        (at - len, at)
    };
    let header = Header {
        assets_bytes: assets.len() as u64,
        manifest_version,
        lines: rows.lines,
        rows: rows.count as usize,
        len_sums: rows.len_sums,
        row_table: section(rows.table.len()),
        norms: section(rows.norms.len()),
        terms: section(dictionary.len()),
        postings: section(posting_bytes.len()),
        guids: section(guid_table.len()),
        other_guids,
        row_lens: section(rows.lens.len()),
        loan_words: section(loan_words.len()),
        loan_postings: section(loan_bytes.len()),
        loan_keys: section(loan_keys.len()),
    };
    let header_bytes = serde_json::to_vec(&header)?;
    let mut out = Vec::with_capacity(12 + header_bytes.len() + at);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(header_bytes.len())?.to_le_bytes());
    out.extend_from_slice(&header_bytes);
    for part in [
        &rows.table,
        &rows.norms,
        &dictionary,
        &posting_bytes,
        &guid_table,
        &rows.lens,
        &loan_words,
        &loan_bytes,
        &loan_keys,
    ] {
        out.extend_from_slice(part);
    }
    Ok(Built {
        bytes: out,
        visited: rows.visited,
    })
}

/// The term dictionary and the postings, from the previous index's terms
/// (`old`, its row ids mapped through `kept`) and the rows visited (keys
/// numbered, with their postings).
fn term_sections(
    old: Vec<(Vec<u8>, Vec<u32>)>,
    (ids, postings): (Ids, Vec<Vec<u32>>),
    kept: &[u32],
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let mut new = take_postings(ids, postings);
    new.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut posting_bytes = Vec::new();
    let mut dictionary = fst::MapBuilder::memory();
    let mut dictionary_error = None;
    merge_postings(old, new, kept, &mut |term, ids| {
        if dictionary_error.is_none() {
            dictionary_error = dictionary.insert(term, posting_bytes.len() as u64).err();
        }
        push_postings(&mut posting_bytes, ids);
    });
    if let Some(e) = dictionary_error {
        return Err(e.into());
    }
    Ok((dictionary.into_inner()?, posting_bytes))
}

/// The loanword words and their postings, as [`term_sections`] merges
/// terms, and the set of their keys.
fn loan_sections(
    old: Vec<(Vec<u8>, Vec<u32>)>,
    (ids, postings): (Ids, Vec<Vec<u32>>),
    kept: &[u32],
) -> anyhow::Result<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let mut new = take_postings(ids, postings);
    new.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut words = Vec::new();
    let mut bytes = Vec::new();
    let mut keys = Vec::new();
    merge_postings(old, new, kept, &mut |word, ids| {
        words.extend_from_slice(word);
        words.push(b'\n');
        if let Some((key, term)) = keyed(&String::from_utf8_lossy(word)) {
            keys.push(format!("{key}{KEY_SEPARATOR}{term}"));
        }
        push_postings(&mut bytes, ids);
    });
    keys.sort_unstable();
    keys.dedup();
    Ok((words, bytes, fst::Set::from_iter(keys)?.into_fst().into_inner()))
}

/// The guid table of `guids` (guid, row id), and the guids it cannot
/// hold ([`guid_key`]) with their rows.
fn guid_section(mut guids: Vec<(String, u32)>) -> (Vec<u8>, Vec<(String, u32)>) {
    // A guid twice (a broken index) keeps its last row, as a scan would.
    guids.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    guids.dedup_by(|later, first| later.0 == first.0);
    let mut table = Vec::with_capacity(guids.len() * GUID_BYTES);
    let mut others = Vec::new();
    for (guid, id) in guids {
        match guid_key(&guid) {
            Some(key) => {
                table.extend_from_slice(&key);
                table.extend_from_slice(&id.to_le_bytes());
            }
            None => others.push((guid, id)),
        }
    }
    (table, others)
}

/// The rows of a build as they are read: their table entries and lengths,
/// and the postings of the rows visited (the reused ones' come from the
/// previous index at the end).
#[derive(Default)]
struct Rows {
    lines: usize,
    count: u32,
    visited: usize,
    table: Vec<u8>,
    norms: Vec<u8>,
    lens: Vec<u8>,
    len_sums: LenSums,
    guids: Vec<(String, u32)>,
    /// Rows reused from the previous index: (previous id, id).
    reused: Vec<(u32, u32)>,
    /// Dictionary keys ([`field_key`]) and their postings.
    term_ids: Ids,
    postings: Vec<Vec<u32>>,
    loan_ids: Ids,
    loan_postings: Vec<Vec<u32>>,
    scratch: Scratch,
    /// The terms of the rows visited, numbered; per term, its keys so far
    /// as (field, count, key number): a key is formatted once, not per row.
    words: Ids,
    word_keys: Vec<(String, Vec<FieldKey>)>,
    /// The row being visited: (term, field) per term it holds.
    row_terms: Vec<(u32, u8)>,
    row_words: HashSet<String>,
}

impl Rows {
    /// These rows, then `later`'s.
    fn join(mut self, later: Rows) -> Rows {
        let base = self.count;
        self.lines += later.lines;
        self.count += later.count;
        self.visited += later.visited;
        self.table.extend(later.table);
        self.norms.extend(later.norms);
        self.lens.extend(later.lens);
        // Sums of whole numbers far below 2^53: exact in any order.
        for (sum, more) in self.len_sums.iter_mut().zip(later.len_sums) {
            *sum += more;
        }
        self.guids
            .extend(later.guids.into_iter().map(|(guid, id)| (guid, id + base)));
        self.reused
            .extend(later.reused.into_iter().map(|(old, id)| (old, id + base)));
        join_postings(
            &mut self.term_ids,
            &mut self.postings,
            later.term_ids,
            later.postings,
            base,
        );
        join_postings(
            &mut self.loan_ids,
            &mut self.loan_postings,
            later.loan_ids,
            later.loan_postings,
            base,
        );
        self
    }

    /// Add a row: its table entry, guid and field lengths.
    fn push(&mut self, offset: usize, line: &[u8], guid: String, lens: [u16; FIELDS]) {
        self.table.extend_from_slice(&(offset as u64).to_le_bytes());
        // A line is within `limits.line_kb`, far below 4 GiB.
        self.table.extend_from_slice(&(line.len() as u32).to_le_bytes());
        self.table.extend_from_slice(&fingerprint(line).to_le_bytes());
        self.norms.extend(lens.map(|len| u8::try_from(len).unwrap_or(u8::MAX)));
        push_lens(&mut self.lens, &lens);
        for (sum, len) in self.len_sums.iter_mut().zip(lens) {
            *sum += f64::from(len);
        }
        self.guids.push((guid, self.count));
        self.count += 1;
    }

    /// Add a new or changed row, tokenised as the ranker reads it.
    fn visit(&mut self, offset: usize, line: &[u8], row: AssetRow) {
        let id = self.count;
        self.visited += 1;
        let mut lens = [0u16; FIELDS];
        self.row_terms.clear();
        let (words, word_keys, row_terms) = (&mut self.words, &mut self.word_keys, &mut self.row_terms);
        for_each_field_term(&row, &mut self.scratch, &mut |field, term| {
            add_field_lengths(&mut lens, field);
            let word = match words.get(term) {
                Some(&word) => word,
                None => {
                    word_keys.push((term.to_owned(), Vec::new()));
                    words.insert(term.to_owned(), word_keys.len() as u32 - 1);
                    word_keys.len() as u32 - 1
                }
            };
            row_terms.push((word, field as u8));
        });
        self.row_terms.sort_unstable();
        for held in self.row_terms.chunk_by(|a, b| a == b) {
            let (word, field) = held[0];
            let count = u32::try_from(held.len()).unwrap_or(u32::MAX);
            let (term, keys) = &mut self.word_keys[word as usize];
            let key = match keys.iter().find(|(f, c, _)| (*f, *c) == (field, count)) {
                Some(&(_, _, key)) => key,
                None => {
                    let key = intern(&mut self.term_ids, &mut self.postings, &field_key(term, field, count));
                    keys.push((field, count, key));
                    key
                }
            };
            self.postings[key as usize].push(id);
        }
        // The name channel's key: the file name, normalised.
        let name = names::normalized(names::stem_and_extension(&row.path).0);
        if !name.is_empty() {
            let key = intern(&mut self.term_ids, &mut self.postings, &names::key(&name));
            self.postings[key as usize].push(id);
        }
        // The filter channel's keys: the row's facets.
        let (term_ids, postings) = (&mut self.term_ids, &mut self.postings);
        facet_keys(&row, &mut |facet| {
            let key = intern(term_ids, postings, facet);
            postings[key as usize].push(id);
        });
        self.row_words.clear();
        collect_words(&row, &mut self.scratch, &mut self.row_words);
        for word in &self.row_words {
            let w = intern(&mut self.loan_ids, &mut self.loan_postings, word);
            self.loan_postings[w as usize].push(id);
        }
        self.push(offset, line, row.guid, lens);
    }
}

/// A key of a term: (field, count, the key's number).
type FieldKey = (u8, u32, u32);

/// Strings numbered: a build looks up every term of every row, short
/// strings where FNV beats SipHash. A project crafted to collide slows
/// its own build, and nothing else.
type Ids = HashMap<String, u32, BuildHasherDefault<Fnv>>;

/// The id of `key`, added (with empty postings) when new.
fn intern(ids: &mut Ids, postings: &mut Vec<Vec<u32>>, key: &str) -> u32 {
    if let Some(&id) = ids.get(key) {
        return id;
    }
    let id = postings.len() as u32;
    ids.insert(key.to_owned(), id);
    postings.push(Vec::new());
    id
}

/// Add the postings of later rows (ids from `base` on) to each key's.
fn join_postings(
    ids: &mut Ids,
    postings: &mut Vec<Vec<u32>>,
    later_ids: Ids,
    mut later_postings: Vec<Vec<u32>>,
    base: u32,
) {
    for (key, later) in later_ids {
        let id = match ids.get(&key) {
            Some(&id) => id,
            None => {
                ids.insert(key, postings.len() as u32);
                postings.push(Vec::new());
                postings.len() as u32 - 1
            }
        };
        let later = std::mem::take(&mut later_postings[later as usize]);
        postings[id as usize].extend(later.into_iter().map(|row| row + base));
    }
}

/// Each key with its postings.
fn take_postings(ids: Ids, mut postings: Vec<Vec<u32>>) -> Vec<(String, Vec<u32>)> {
    ids.into_iter()
        .map(|(key, id)| (key, std::mem::take(&mut postings[id as usize])))
        .collect()
}

/// The keys of the previous index (sorted, with its row ids) and of the
/// rows visited (sorted, with new row ids), merged in key order: `emit`
/// gets each key that still has rows, with its new row ids ascending. A
/// previous row id maps through `kept` (`u32::MAX`: the row is gone or changed).
fn merge_postings(
    old: Vec<(Vec<u8>, Vec<u32>)>,
    new: Vec<(String, Vec<u32>)>,
    kept: &[u32],
    emit: &mut dyn FnMut(&[u8], &[u32]),
) {
    let mut old = old.into_iter().peekable();
    let mut new = new.into_iter().peekable();
    let mut ids = Vec::new();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((o, _)), Some((n, _))) => o.as_slice().cmp(n.as_bytes()),
        };
        ids.clear();
        let mut key = Vec::new();
        if order.is_le() {
            let (k, old_ids) = old.next().expect("peeked");
            ids.extend(
                old_ids
                    .iter()
                    .filter_map(|&id| kept.get(id as usize).copied().filter(|&n| n != u32::MAX)),
            );
            key = k;
        }
        if order.is_ge() {
            let (k, new_ids) = new.next().expect("peeked");
            ids.extend(new_ids);
            key = k.into_bytes();
        }
        if ids.is_empty() {
            continue;
        }
        // Reused rows keep their order, so this is a merge of two runs.
        ids.sort_unstable();
        emit(&key, &ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "Zombie",
        "Barrel",
        "Crate",
        "Lantern",
        "Scifi",
        "Wooden",
        "Old",
        "Metal",
        "Footstep",
        "좀비",
        "나무",
        "Helicopter",
        "Walk",
        "run",
        "red",
    ];
    const KINDS: &[&str] = &["Prefab", "Material", "Texture2D", "AudioClip", "MonoScript"];

    /// A row line from a guid number and word picks (or a line that is
    /// not a row: `kind` past the kinds).
    fn line((guid, words, kind): &(u8, Vec<usize>, usize)) -> String {
        let word = |i: usize| WORDS[words.get(i).copied().unwrap_or(i) % WORDS.len()];
        if *kind >= KINDS.len() {
            return ["{\"guid\": 3}", "not json", "{}"][kind % 3].to_owned();
        }
        let name = format!("{}_{}", word(0), word(1));
        // Some guids are not Unity's: the header keeps them.
        let guid = match guid % 5 {
            0 => format!("odd-{guid}"),
            _ => format!("{guid:032x}"),
        };
        serde_json::json!({
            "guid": guid,
            "path": format!("Assets/{}/{}/{name}.asset", word(2), word(3)),
            "name": name,
            "type": KINDS[*kind],
            "labels": [word(4)],
            "llm_tags": words.iter().skip(5).map(|&w| WORDS[w % WORDS.len()].to_lowercase()).collect::<Vec<_>>(),
            "llm_summary": format!("A {} {}.", word(1), word(0)),
        })
        .to_string()
    }

    fn row() -> impl Strategy<Value = (u8, Vec<usize>, usize)> {
        (
            any::<u8>(),
            prop::collection::vec(0..WORDS.len(), 0..9),
            0..KINDS.len() + 1,
        )
    }

    /// An edit of the rows: replace, insert or remove at a place, or a blank line.
    fn edit() -> impl Strategy<Value = (u8, usize, (u8, Vec<usize>, usize))> {
        (0u8..4, any::<usize>(), row())
    }

    fn text(lines: &[String]) -> Vec<u8> {
        (lines.join("\n") + "\n").into_bytes()
    }

    /// The previous index in `bytes`, as a build reads it back.
    fn previous(bytes: &[u8]) -> Previous {
        super::super::reusable(bytes.to_vec()).expect("the index just built decodes")
    }

    proptest! {
        /// Reusing the previous index (twice over) gives the bytes a build
        /// from nothing gives, whatever rows were edited, added or removed.
        #[test]
        fn a_build_from_the_previous_index_is_the_build_from_nothing(
            first in prop::collection::vec(row(), 0..40),
            rounds in prop::collection::vec(prop::collection::vec(edit(), 0..12), 1..3),
        ) {
            let mut lines: Vec<String> = first.iter().map(line).collect();
            let mut index = build(&text(&lines), Some("v1.0".into()), None, u64::MAX).unwrap().bytes;
            for (round, edits) in rounds.iter().enumerate() {
                // A row shadowed by a later one of its guid is visited again.
                let guids: Vec<String> = lines
                    .iter()
                    .filter_map(|l| serde_json::from_str::<AssetRow>(l).ok())
                    .map(|r| r.guid)
                    .collect();
                let shadowed = guids.len() - guids.iter().collect::<HashSet<_>>().len();
                for (what, at, row) in edits {
                    let at = at % (lines.len() + 1);
                    match what {
                        0 if at < lines.len() => lines[at] = line(row),
                        1 if at < lines.len() => { lines.remove(at); }
                        2 => lines.insert(at, "   ".to_owned()),
                        _ => lines.insert(at, line(row)),
                    }
                }
                let version = Some(format!("v1.{}", round + 1));
                let fresh = build(&text(&lines), version.clone(), None, u64::MAX).unwrap();
                let reused = build(&text(&lines), version, Some(previous(&index)), u64::MAX).unwrap();
                prop_assert!(reused.bytes == fresh.bytes, "round {round}: the bytes differ");
                let changed = edits.iter().filter(|(what, _, _)| *what != 2).count();
                prop_assert!(
                    reused.visited <= changed + shadowed,
                    "{} rows visited for {changed} edits and {shadowed} shadowed rows",
                    reused.visited
                );
                index = reused.bytes;
            }
        }
    }
}
