//! Ranking from the search index, reading only the rows that can reach a
//! top K.
//!
//! The postings say which of a query's concepts each row holds; that,
//! with the corpus statistics, bounds the confidence the row can get
//! ([`ConfidenceBound`]). Rows are read best bound first, in growing
//! batches, and scored exactly; once a query has K confidences, a row
//! whose bound is under the K-th cannot enter its top K (the order is by
//! confidence first) and is never read. The rows read are then ranked
//! together as a scan ranks every row, so the top K is the exhaustive one
//! (`tests/search_index.rs`), while a common word no longer means decoding
//! every row that holds it.

use std::collections::{HashMap, HashSet};

use super::super::filters::Filters;
use super::super::loanword::LoanIndex;
use super::super::query::Query;
use super::super::rank::{
    rank_resolved, scored_concepts, with_loanwords, Candidate, ConfidenceBound, Corpus, RankOptions,
};
use super::super::records::AssetRow;
use super::TermIndex;

/// Rows read in the first batch per query; each later batch doubles it.
/// Enough that the first holds a top 10 in most searches.
const FIRST_BATCH: usize = 64;

#[cfg(test)]
thread_local! {
    /// The last ranking's candidate rows (summed over its queries) and rows
    /// read: what the pruning saved, for tests.
    static READ: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// One query's candidate rows as (confidence bound, row id), highest
/// bound first (then by row id, so the reading order is deterministic).
type Queue = Vec<(f32, u32)>;

impl TermIndex {
    /// Each request ranked over every row, as [`super::super::rank::rank_assets_each`]
    /// ranks a scan of them, reading only rows that hold a query term and
    /// can reach its top K; `None` when `assets.jsonl` changed since the
    /// index was built.
    pub fn rank(
        &self,
        requests: &[(Query, RankOptions)],
        filters: &Filters,
    ) -> anyhow::Result<Option<Vec<Vec<Candidate>>>> {
        let loans = requests
            .iter()
            .any(|(q, _)| q.has_unknown_korean())
            .then(|| LoanIndex::from_words(self.header.loan_words.iter().cloned()));
        let resolved = with_loanwords(requests, loans.as_ref());
        let queries: Vec<&Query> = requests
            .iter()
            .zip(&resolved)
            .map(|((query, _), own)| own.as_ref().unwrap_or(query))
            .collect();
        let mut postings: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut df = Vec::with_capacity(requests.len());
        let mut held = Vec::with_capacity(requests.len());
        for query in &queries {
            // Row id → the scored concepts it holds (bit c for concept c).
            let mut concepts_of: HashMap<u32, u32> = HashMap::new();
            let mut per_concept = Vec::new();
            for (c, concept) in scored_concepts(query).iter().enumerate() {
                let mut holding: Vec<u32> = Vec::new();
                for (term, _) in concept.terms.iter().filter(|(_, weight)| *weight > 0.0) {
                    if !postings.contains_key(term.as_str()) {
                        postings.insert(term, self.postings(term)?);
                    }
                    holding.extend(&postings[term.as_str()]);
                }
                holding.sort_unstable();
                holding.dedup();
                per_concept.push(holding.len() as f32);
                for id in holding {
                    *concepts_of.entry(id).or_default() |= 1 << c;
                }
            }
            df.push(per_concept);
            held.push(concepts_of);
        }
        let corpus = Corpus {
            docs: self.header.rows,
            len_sums: self.header.len_sums,
            df,
        };
        let queues: Vec<Queue> = queries
            .iter()
            .zip(requests)
            .zip(held.iter().zip(&corpus.df))
            .map(|((query, (_, options)), (held, df))| {
                let bound = ConfidenceBound::new(query, options, df, corpus.docs);
                // A past pick's boost, bounded by the largest: a guid may
                // name more than one row.
                let past = options.past_boosts.values().copied().fold(0.0, f32::max);
                let mut queue: Queue = held.iter().map(|(&id, &mask)| (bound.of(mask, past), id)).collect();
                queue.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                queue
            })
            .collect();
        let Some(rows) = self.read_reachable(&queues, requests, &resolved, &corpus, filters)? else {
            return Ok(None);
        };
        Ok(Some(rank_resolved(&rows, requests, &resolved, Some(&corpus))))
    }

    /// The rows (those `filters` keep, in file order) that may be in some
    /// request's top K: read best bound first until every unread row's
    /// bound is under its query's K-th confidence so far, and kept when
    /// they were in it among their batch. `None` when `assets.jsonl`
    /// changed since the index was built.
    fn read_reachable(
        &self,
        queues: &[Queue],
        requests: &[(Query, RankOptions)],
        resolved: &[Option<Query>],
        corpus: &Corpus,
        filters: &Filters,
    ) -> anyhow::Result<Option<Vec<AssetRow>>> {
        let mut file = self.open_assets()?;
        let mut read: HashSet<u32> = HashSet::new();
        let mut kept: Vec<(u32, AssetRow)> = Vec::new();
        // Per request: the best K confidences of the rows read, best first.
        let mut best: Vec<Vec<f32>> = vec![Vec::new(); requests.len()];
        let mut next = vec![0usize; queues.len()];
        let mut batch_len = FIRST_BATCH;
        loop {
            let mut batch = Vec::new();
            for (r, queue) in queues.iter().enumerate() {
                let k = requests[r].1.top_k;
                // A bound under the K-th confidence so far cannot enter the top K.
                let bar = match k {
                    0 => f32::INFINITY,
                    _ => best[r].get(k - 1).copied().unwrap_or(f32::NEG_INFINITY),
                };
                let mut taken = 0;
                while taken < batch_len {
                    let Some(&(bound, id)) = queue.get(next[r]) else {
                        break;
                    };
                    if bound < bar {
                        next[r] = queue.len();
                        break;
                    }
                    next[r] += 1;
                    if read.insert(id) {
                        batch.push(id);
                        taken += 1;
                    }
                }
            }
            if batch.is_empty() {
                break;
            }
            batch.sort_unstable();
            let Some(rows) = self.fetch_from(&mut file, &batch)? else {
                return Ok(None);
            };
            // Filters narrow after the statistics: a row scores as it would unfiltered.
            let (ids, rows): (Vec<u32>, Vec<AssetRow>) = batch
                .into_iter()
                .zip(rows)
                .filter(|(_, row)| filters.matches(row))
                .unzip();
            // A row's confidence is its own (the statistics are the whole
            // corpus's) and the order total, so a row of the final top K is
            // in its batch's: only those are kept and ranked again at the end.
            let mut in_top: HashSet<String> = HashSet::new();
            for (best, ranked) in best
                .iter_mut()
                .zip(rank_resolved(&rows, requests, resolved, Some(corpus)))
            {
                best.extend(ranked.iter().map(|c| c.confidence));
                best.sort_unstable_by(|a, b| b.total_cmp(a));
                in_top.extend(ranked.into_iter().map(|c| c.guid));
            }
            for (best, (_, options)) in best.iter_mut().zip(requests) {
                best.truncate(options.top_k);
            }
            kept.extend(ids.into_iter().zip(rows).filter(|(_, row)| in_top.contains(&row.guid)));
            batch_len *= 2;
        }
        #[cfg(test)]
        READ.with(|counted| counted.set((queues.iter().map(Vec::len).sum(), read.len())));
        kept.sort_unstable_by_key(|(id, _)| *id);
        Ok(Some(kept.into_iter().map(|(_, row)| row).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::rank::rank_assets_each;
    use super::super::super::vocab::Vocabulary;
    use super::*;

    fn line(i: usize, name: &str, tags: &[&str]) -> String {
        serde_json::json!({"guid": format!("{i:032x}"), "path": format!("Assets/Props/{name}.prefab"),
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
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("assets.jsonl"), lines.join("\n")).unwrap();
        let limits = engine::io::Limits::default();
        let index = TermIndex::open_or_build(dir.path(), None, &limits, &mut |_| {}).unwrap();
        let rows: Vec<AssetRow> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        let vocab = Vocabulary::embedded();
        // A word every row holds ties them all at one bound: each is read
        // (the order among equal confidences is by BM25, then path).
        for (query, top_k, pruned) in [
            ("scifi barrel", 10, true),
            ("scifi barrel", 3, true),
            ("scifi", 0, true),
            ("barrel", 10, false),
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
            assert_eq!(
                read < candidates / 4,
                pruned,
                "{query:?}: read {read} of {candidates} candidate rows"
            );
        }
    }
}
