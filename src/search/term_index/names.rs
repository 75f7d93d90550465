//! The name channel's lookups ([`crate::search::names`]): the dictionary
//! posts every row under its normalised file name, so a name is found by
//! key, a prefix by one range and a typo by its neighbours' keys.

use fst::{IntoStreamer as _, Streamer as _};

use super::TermIndex;
use crate::search::names::{classify, key, NameMatch, NameQuery, KEPT, MIN_FUZZY, PREFIX_SCAN};
use crate::search::records::AssetRow;

impl TermIndex {
    /// The rows whose file name answers `query`, each with how; `None`
    /// when `assets.jsonl` changed since the index was built.
    pub fn named(&self, query: &NameQuery) -> anyhow::Result<Option<Vec<(NameMatch, AssetRow)>>> {
        // (how it was found, the normalised name, row id)
        let mut found: Vec<(NameMatch, String, u32)> = Vec::new();
        let mut exact = vec![query.stem.as_str()];
        if query.whole != query.stem {
            exact.push(&query.whole);
        }
        for name in exact {
            self.rows_named(name, NameMatch::Exact, &mut found)?;
        }
        if query.stem.chars().count() >= MIN_FUZZY {
            for name in self.names_starting(&query.stem) {
                self.rows_named(&name, NameMatch::Prefix, &mut found)?;
            }
            let neighbours = query.neighbours();
            for name in &neighbours {
                self.rows_named(name, NameMatch::Typo, &mut found)?;
            }
            if found.is_empty() {
                for name in neighbours.iter().flat_map(|n| self.names_starting(n)) {
                    self.rows_named(&name, NameMatch::TypoPrefix, &mut found)?;
                }
            }
        }
        // Each row once, as its best match.
        found.sort_by(|a, b| a.2.cmp(&b.2).then(a.0.cmp(&b.0)));
        found.dedup_by_key(|f| f.2);
        let ids: Vec<u32> = found.iter().map(|f| f.2).collect();
        let Some(rows) = self.fetch(&ids)? else {
            return Ok(None);
        };
        Ok(Some(
            found
                .into_iter()
                .zip(rows)
                .filter_map(|((by, name, _), row)| Some((classify(query, &name, &row.path, by)?, row)))
                .collect(),
        ))
    }

    /// Add the rows posted under the normalised name `name`.
    fn rows_named(&self, name: &str, by: NameMatch, found: &mut Vec<(NameMatch, String, u32)>) -> anyhow::Result<()> {
        let Some(at) = self.terms.get(key(name)) else {
            return Ok(());
        };
        let ids = self.postings_at(at, name)?;
        found.extend(ids.into_iter().map(|id| (by, name.to_owned(), id)));
        Ok(())
    }

    /// The shortest names longer than `prefix` that start with it.
    fn names_starting(&self, prefix: &str) -> Vec<String> {
        let start = key(prefix);
        let mut stream = self.terms.range().gt(&start).into_stream();
        let mut names = Vec::new();
        while let Some((k, _)) = stream.next() {
            if !k.starts_with(start.as_bytes()) || names.len() == PREFIX_SCAN {
                break;
            }
            names.push(String::from_utf8_lossy(&k[1..]).into_owned());
        }
        names.sort_by_key(String::len);
        names.truncate(KEPT);
        names
    }
}
