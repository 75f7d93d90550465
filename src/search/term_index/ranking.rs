//! Ranking from the search index, reading only the rows that can reach a
//! top K.
//!
//! The postings say in which fields, how often and with which terms each
//! row holds each of a query's concepts: with the corpus statistics and
//! the row's field lengths that is its BM25F score and its coverage, as
//! scoring will find them, and so a bound of its confidence
//! ([`ConfidenceBound`]: what only the row says, its type, is taken at its
//! best). Rows are read best bound first — confidence, then BM25F, the
//! order of a ranking — in growing batches, and scored exactly; once a
//! query has K results, a row whose bound is under the K-th cannot enter
//! its top K and is never read. The rows read are then ranked together as
//! a scan ranks every row, so the top K is the exhaustive one
//! (`tests/search_index.rs`), while a common word, or a thousand rows tied
//! at one confidence, no longer means decoding every row that holds it.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::super::filters::Filters;
use super::super::loanword::{hangul_key, LoanIndex};
use super::super::query::Query;
use super::super::rank::{
    average_lengths, concept_bm25, concept_match, coverage_weights, idf, rank_resolved, rank_resolved_with_bm25,
    rare_concepts, resolved_queries, scored_concepts, unseen_concepts, with_loanwords, Candidate, ConfidenceBound,
    Corpus, RankOptions, FIELDS, SUM_SLACK,
};
use super::super::records::AssetRow;
use super::format::KEY_SEPARATOR;
use super::RowSet;
use super::{damaged, FieldPostings, TermIndex};

/// Rows read in the first batch per query; each later batch doubles it.
/// Enough that the first holds a top 10 in most searches.
const FIRST_BATCH: usize = 64;

#[cfg(test)]
thread_local! {
    /// The last ranking's candidate rows (summed over its queries) and rows
    /// read: what the pruning saved, for tests.
    static READ: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// A row's place in a ranking: confidence, then BM25F.
type Key = (f32, f32);

/// One query's candidate rows as (bound of their key, row id), highest
/// first (then by row id, so the reading order is deterministic).
type Queue = Vec<(Key, u32)>;

/// The order of keys, best first.
fn best_first(a: &Key, b: &Key) -> Ordering {
    b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1))
}

/// One term of a concept found in one field of a row.
struct Hit {
    row: u32,
    concept: u8,
    field: u8,
    /// The term's weight times its count there (what scoring adds to the
    /// field's term frequency), and its weight (what it adds to coverage).
    tf: f32,
    weight: f32,
}

impl TermIndex {
    /// The project's words the Hangul words of `requests` no vocabulary
    /// knows may be loanwords of: the terms filed under their keys.
    fn loan_index(&self, requests: &[(Query, RankOptions)]) -> anyhow::Result<LoanIndex> {
        let unknown = requests.iter().flat_map(|(query, _)| &query.concepts);
        self.loanwords(unknown.filter_map(|c| c.unknown_korean.as_deref()))
    }

    /// The project's words `hangul` words may be loanwords of: the terms
    /// filed under their keys (read for those keys only, not the whole
    /// project's words).
    pub(crate) fn loanwords<'w>(&self, hangul: impl Iterator<Item = &'w str>) -> anyhow::Result<LoanIndex> {
        use fst::{IntoStreamer as _, Streamer as _};
        let (start, end) = self.header.loan_keys;
        let keys = self
            .body
            .section(start, end)
            .and_then(|section| fst::Set::new(section).ok())
            .ok_or_else(|| damaged("its loanword keys"))?;
        let mut pairs = Vec::new();
        for key in hangul.map(hangul_key) {
            let from = format!("{key}{KEY_SEPARATOR}");
            let to = format!("{key}{}", char::from(KEY_SEPARATOR as u8 + 1));
            let mut terms = keys.range().ge(&from).lt(&to).into_stream();
            while let Some(entry) = terms.next() {
                pairs.push((key.clone(), String::from_utf8_lossy(&entry[from.len()..]).into_owned()));
            }
        }
        Ok(LoanIndex::from_keyed(pairs))
    }

    /// Each request ranked over every row, as `super::super::rank::rank_assets_each`
    /// ranks a scan of them, reading only rows that hold a query term and
    /// can reach its top K; `None` when `assets.jsonl` changed since the
    /// index was built.
    pub fn rank(
        &self,
        requests: &[(Query, RankOptions)],
        filters: &Filters,
    ) -> anyhow::Result<Option<Vec<Vec<Candidate>>>> {
        let loans = match requests.iter().any(|(q, _)| q.has_unknown_korean()) {
            true => Some(self.loan_index(requests)?),
            false => None,
        };
        let mut resolved = with_loanwords(requests, loans.as_ref());
        let queries = resolved_queries(requests, &resolved);
        let mut postings: HashMap<&str, Vec<FieldPostings>> = HashMap::new();
        let mut hits = Vec::with_capacity(queries.len());
        let mut df = Vec::with_capacity(queries.len());
        for query in &queries {
            let concepts = scored_concepts(query);
            let mut found = Vec::new();
            for (c, concept) in concepts.iter().enumerate() {
                for (term, weight) in concept.terms.iter().filter(|(_, weight)| *weight > 0.0) {
                    if !postings.contains_key(term.as_str()) {
                        postings.insert(term, self.postings(term)?);
                    }
                    for held in &postings[term.as_str()] {
                        found.extend(held.rows.iter().map(|&row| Hit {
                            row,
                            concept: c as u8,
                            field: held.field as u8,
                            tf: weight * held.count as f32,
                            weight: *weight,
                        }));
                    }
                }
            }
            found.sort_unstable_by_key(|hit| hit.row);
            // Rows holding each concept (in any field, by any term).
            let mut per_concept = vec![0f32; concepts.len()];
            for row in found.chunk_by(|a, b| a.row == b.row) {
                let held = row.iter().fold(0u32, |mask, hit| mask | 1 << hit.concept);
                for (c, d) in per_concept.iter_mut().enumerate() {
                    *d += (held >> c & 1) as f32;
                }
            }
            df.push(per_concept);
            hits.push(found);
        }
        // A subject no row holds moves to a thing some row holds, before
        // the bounds are drawn, as the ranking of the rows read moves it.
        let moved: Vec<Option<Query>> = queries
            .iter()
            .zip(&df)
            .map(|(query, df)| query.with_held_subject(unseen_concepts(df)))
            .collect();
        for (own, moved) in resolved.iter_mut().zip(moved) {
            if moved.is_some() {
                *own = moved;
            }
        }
        let queries = resolved_queries(requests, &resolved);
        let corpus = Corpus {
            docs: self.header.rows,
            len_sums: self.header.len_sums,
            df,
        };
        // Field lengths only matter to order rows past the first batch.
        let mut rows: Vec<u32> = hits
            .iter()
            .filter(|found| found.len() > FIRST_BATCH)
            .flat_map(|found| found.iter().map(|hit| hit.row))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        let lens = self.row_norms(&rows)?;
        let queues: Vec<Queue> = queries
            .iter()
            .zip(requests)
            .zip(hits.iter().zip(&corpus.df))
            .map(|((query, (_, options)), (found, df))| queue(query, options, found, df, &corpus, &lens))
            .collect();
        let passing = match filters.is_empty() {
            true => None,
            false => Some(self.passing(filters)?),
        };
        let Some(rows) = self.read_reachable(&queues, requests, &resolved, &corpus, passing.as_ref())? else {
            return Ok(None);
        };
        Ok(Some(rank_resolved(&rows, requests, &resolved, Some(&corpus))))
    }

    /// The rows (those in `passing`, in file order) that may be in some
    /// request's top K: read best bound first until every unread row's
    /// bound is under its query's K-th key so far, and kept when they were
    /// in it among their batch. `None` when `assets.jsonl` changed since
    /// the index was built.
    fn read_reachable(
        &self,
        queues: &[Queue],
        requests: &[(Query, RankOptions)],
        resolved: &[Option<Query>],
        corpus: &Corpus,
        passing: Option<&RowSet>,
    ) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let mut read: HashSet<u32> = HashSet::new();
        let mut kept: Vec<(u32, AssetRow)> = Vec::new();
        // Per request: the best K keys of the rows read, best first.
        let mut best: Vec<Vec<Key>> = vec![Vec::new(); requests.len()];
        let mut next = vec![0usize; queues.len()];
        let mut batch_len = FIRST_BATCH;
        loop {
            let mut batch = Vec::new();
            for (r, queue) in queues.iter().enumerate() {
                let k = requests[r].1.top_k;
                // A bound under the K-th key so far cannot enter the top K.
                let bar = match k {
                    0 => (f32::INFINITY, f32::INFINITY),
                    _ => best[r]
                        .get(k - 1)
                        .copied()
                        .unwrap_or((f32::NEG_INFINITY, f32::NEG_INFINITY)),
                };
                let mut taken = 0;
                while taken < batch_len {
                    let Some(&(bound, id)) = queue.get(next[r]) else {
                        break;
                    };
                    if best_first(&bound, &bar) == Ordering::Greater {
                        next[r] = queue.len();
                        break;
                    }
                    next[r] += 1;
                    // Filters narrow after the statistics: a row scores as
                    // it would unfiltered, and one they drop is never read.
                    if passing.is_none_or(|set| set.contains(id)) && read.insert(id) {
                        batch.push(id);
                        taken += 1;
                    }
                }
            }
            if batch.is_empty() {
                break;
            }
            batch.sort_unstable();
            let Some(rows) = self.fetch(&batch)? else {
                return Ok(None);
            };
            // A row's key is its own (the statistics are the whole
            // corpus's) and the order total, so a row of the final top K is
            // in its batch's: only those are kept and ranked again at the end.
            let mut in_top: HashSet<String> = HashSet::new();
            for (best, ranked) in best
                .iter_mut()
                .zip(rank_resolved_with_bm25(&rows, requests, resolved, Some(corpus)))
            {
                best.extend(ranked.iter().map(|(c, bm25)| (c.confidence, *bm25)));
                best.sort_unstable_by(best_first);
                in_top.extend(ranked.into_iter().map(|(c, _)| c.guid));
            }
            for (best, (_, options)) in best.iter_mut().zip(requests) {
                best.truncate(options.top_k);
            }
            kept.extend(
                batch
                    .into_iter()
                    .zip(rows)
                    .filter(|(_, row)| in_top.contains(&row.guid)),
            );
            batch_len *= 2;
        }
        #[cfg(test)]
        READ.with(|counted| counted.set((queues.iter().map(Vec::len).sum(), read.len())));
        kept.sort_unstable_by_key(|(id, _)| *id);
        Ok(Some(kept.into_iter().map(|(_, row)| row).collect()))
    }
}

/// The rows of `found` (one query's hits, by row), best bound first. A
/// row's BM25F is bounded only when its field lengths are in `lens` (else
/// it is read in its confidence's turn, as in the first batch).
fn queue(
    query: &Query,
    options: &RankOptions,
    found: &[Hit],
    df: &[f32],
    corpus: &Corpus,
    lens: &HashMap<u32, [u8; FIELDS]>,
) -> Queue {
    let concepts: Vec<_> = scored_concepts(query).iter().collect();
    let n = corpus.docs.max(1) as f32;
    let (weights, total) = coverage_weights(&concepts, df, n);
    let idf: Vec<f32> = df.iter().map(|&d| idf(n, d)).collect();
    let avg = average_lengths(&corpus.len_sums, n);
    let rare = rare_concepts(df);
    let bound = ConfidenceBound::new(query, options);
    // A past pick's boost, bounded by the largest: a guid may name more than one row.
    let past = options.past_boosts.values().copied().fold(0.0, f32::max);
    let mut tf = vec![0f32; concepts.len() * FIELDS];
    let mut cover = vec![0f32; concepts.len() * FIELDS];
    let mut strength = vec![0f32; concepts.len()];
    let mut found_in = vec![0u16; concepts.len()];
    let mut queue: Queue = found
        .chunk_by(|a, b| a.row == b.row)
        .map(|held| {
            tf.fill(0.0);
            cover.fill(0.0);
            for hit in held {
                let at = usize::from(hit.concept) * FIELDS + usize::from(hit.field);
                tf[at] += hit.tf;
                cover[at] += hit.weight;
            }
            // Lengths at most the row's: a BM25F at least its.
            let row_lens = lens.get(&held[0].row).map(|norms| norms.map(u16::from));
            let (mut bm25, mut covered) = (0.0, 0.0);
            for (c, concept) in concepts.iter().enumerate() {
                let fields = c * FIELDS..(c + 1) * FIELDS;
                let (tfn, best, found) = concept_match(
                    &tf[fields.clone()],
                    &cover[fields],
                    &row_lens.unwrap_or([0; FIELDS]),
                    &avg,
                );
                bm25 += concept_bm25(concept.prior, idf[c], tfn);
                covered += weights[c] * best;
                strength[c] = best;
                found_in[c] = found;
            }
            // A rare concept's rows are all read: its best is a candidate
            // whatever its rank (`rare_concepts`).
            let holds_rare = (0..concepts.len()).any(|c| rare >> c & 1 == 1 && strength[c] > 0.0);
            let confidence = match holds_rare {
                true => f32::INFINITY,
                false => bound.of(covered / total, &strength, &found_in, past),
            };
            let bm25 = match row_lens {
                Some(_) => bm25 * (1.0 + SUM_SLACK) + SUM_SLACK,
                None => f32::INFINITY,
            };
            ((confidence, bm25), held[0].row)
        })
        .collect();
    queue.sort_unstable_by(|a, b| best_first(&a.0, &b.0).then(a.1.cmp(&b.1)));
    queue
}

#[cfg(test)]
mod tests {
    use super::super::super::rank::rank_assets_each;
    use super::super::super::vocab::Vocabulary;
    use super::*;

    fn line(i: usize, name: &str, tags: &[&str]) -> String {
        line_in(i, "Props", name, tags)
    }

    fn line_in(i: usize, folder: &str, name: &str, tags: &[&str]) -> String {
        serde_json::json!({"guid": format!("{i:032x}"), "path": format!("Assets/{folder}/{name}.prefab"),
            "name": name, "type": "Prefab", "llm_tags": tags, "llm_summary": ""})
        .to_string()
    }

    #[test]
    fn a_common_word_reads_only_the_rows_that_can_reach_the_top_k() {
        let mut lines: Vec<String> = (0..2000)
            .map(|i| line(i, &format!("Barrel_{i}"), &["barrel"]))
            .collect();
        lines.extend((2000..2020).map(|i| line(i, &format!("SciFi_Barrel_{i}"), &["scifi", "barrel"])));
        lines.extend((2020..2030).map(|i| line(i, &format!("SciFi_Panel_{i}"), &["scifi"])));
        // Alike but for their folder: the same confidence and BM25F for
        // "barrel", the best of all (a one-word name), so the order among
        // them is by path, and every one of them is read.
        lines.extend((2030..2330).map(|i| line_in(i, &format!("Set{i}"), "Barrel", &["barrel"])));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("assets.jsonl"), lines.join("\n")).unwrap();
        let limits = engine::io::Limits::default();
        let index = TermIndex::open_or_build(dir.path(), None, &limits, &mut |_| {}).unwrap();
        let rows: Vec<AssetRow> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        let vocab = Vocabulary::embedded();
        // (query, top K, the least rows it must read); each reads under a
        // quarter of its candidates.
        for (query, top_k, least) in [
            ("scifi barrel", 10, 0),
            ("scifi barrel", 3, 0),
            ("scifi", 0, 0),
            ("barrel", 10, 300),
        ] {
            let request = || {
                vec![(
                    Query::analyze(query, &vocab),
                    RankOptions {
                        top_k,
                        ..RankOptions::default()
                    },
                )]
            };
            let ranked = index.rank(&request(), &Filters::default()).unwrap().unwrap();
            assert_eq!(ranked, rank_assets_each(&rows, &request()), "{query:?}, top {top_k}");
            let (candidates, read) = READ.with(std::cell::Cell::get);
            assert!(
                (least..candidates / 4).contains(&read),
                "{query:?}: read {read} of {candidates} candidate rows"
            );
        }
    }
}
