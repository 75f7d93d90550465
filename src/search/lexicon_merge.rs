//! Lexicon files merged into one table: Korean key → its English senses.
//!
//! `build.rs` includes this module (with [`super::text`] and
//! [`super::data_files`]) and merges the embedded files at build time into
//! a [`Lexicon::table`], so a search reads the finished table instead of
//! stemming 5,767 words on every run: merging took 17.7 M of a
//! 61.5 M-instruction FPSSample search, and reading the merged table as
//! JSON still 14.5 M (measured with callgrind). A project's own lexicon
//! files are merged at run time by the same code.

use std::borrow::Cow;
use std::collections::HashMap;

use super::data_files::{LexiconFile, Role};
use super::text::phrase_term;

/// Weight of a loose synonym (`~chest` under 상자): related, not the word.
pub const LOOSE_WEIGHT: f32 = 0.6;

/// A key or word of the lexicon: borrowed from the embedded table, which
/// lives as long as the program (its 6,500 keys and 13,600 senses were as
/// many allocations, ~5 ms of every search's start), owned when merged
/// from files.
pub type Text = Cow<'static, str>;

/// One English word of an entry, normalised like record terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Sense {
    pub term: Text,
    /// As written, for labels (`crate`).
    pub written: Text,
    pub weight: f32,
}

/// Every lexicon file merged: Korean key → its English senses.
#[derive(Debug, Default, PartialEq)]
pub struct Lexicon {
    pub(super) entries: HashMap<Text, Vec<Sense>>,
    /// A key's role: a thing when any file lists it as one.
    pub(super) roles: HashMap<Text, Role>,
}

/// What separates the fields of a [`Lexicon::table`] line; no key or word
/// of the embedded files holds it (the build checks).
const FIELD: char = '\t';

impl Lexicon {
    /// Merge `file` in: its keys lowercased, each word's term added to the
    /// key's senses once (a translation anywhere wins over a loose synonym).
    pub fn add(&mut self, file: LexiconFile) {
        for (key, words) in file.entries {
            let key: Text = key.trim().to_lowercase().into();
            self.roles
                .entry(key.clone())
                .and_modify(|r| {
                    if file.role == Role::Thing {
                        *r = Role::Thing;
                    }
                })
                .or_insert(file.role);
            let senses = self.entries.entry(key).or_default();
            for word in words {
                let (written, weight) = match word.trim().strip_prefix('~') {
                    Some(loose) => (loose.trim().to_owned(), LOOSE_WEIGHT),
                    None => (word.trim().to_owned(), 1.0),
                };
                let Some(term) = phrase_term(&written) else { continue };
                match senses.iter_mut().find(|s| s.term == term) {
                    Some(s) => {
                        s.weight = s.weight.max(weight);
                        // "jet pack" over "jetpack": the spaced form also
                        // matches a name split into its words (GirlJetPack).
                        if written.split_whitespace().count() > s.written.split_whitespace().count() {
                            s.written = written.into();
                        }
                    }
                    None => senses.push(Sense {
                        term: term.into(),
                        written: written.into(),
                        weight,
                    }),
                }
            }
        }
    }

    /// The merged lexicon as text, one key a line in key order (the same
    /// bytes on every build): `key, role, then term, written, weight for
    /// each sense`, tab-separated. `None` when a key or word holds a tab or
    /// a line break, which the table cannot carry.
    #[allow(dead_code)] // build.rs writes the table with it; the crate's tests read it back.
    pub fn table(&self) -> Option<String> {
        let mut keys: Vec<&Text> = self.entries.keys().collect();
        keys.sort();
        let mut out = String::new();
        for key in keys {
            let role = self.roles.get(key).copied().unwrap_or_default();
            let mut fields = vec![key.to_string(), ROLES.iter().position(|r| *r == role)?.to_string()];
            for sense in &self.entries[key] {
                fields.extend([
                    sense.term.to_string(),
                    sense.written.to_string(),
                    sense.weight.to_string(),
                ]);
            }
            if fields.iter().any(|f| f.contains([FIELD, '\n', '\r'])) {
                return None;
            }
            out.push_str(&fields.join("\t"));
            out.push('\n');
        }
        Some(out)
    }

    /// The lexicon a [`Lexicon::table`] holds, borrowing its words; `None`
    /// for a line it cannot read.
    pub fn from_table(table: &'static str) -> Option<Lexicon> {
        let lines = table.bytes().filter(|&b| b == b'\n').count();
        let mut lexicon = Lexicon {
            entries: HashMap::with_capacity(lines),
            roles: HashMap::with_capacity(lines),
        };
        for line in table.lines() {
            // A byte split: `str::split` searches again for every short field.
            let mut fields = line.as_bytes().split(|&b| b == FIELD as u8).map(std::str::from_utf8);
            let mut next = || fields.next()?.ok();
            let key = next()?;
            let role = *ROLES.get(next()?.parse::<usize>().ok()?)?;
            let mut senses = Vec::new();
            while let Some(term) = next() {
                senses.push(Sense {
                    term: term.into(),
                    written: next()?.into(),
                    weight: next()?.parse().ok()?,
                });
            }
            lexicon.roles.insert(key.into(), role);
            lexicon.entries.insert(key.into(), senses);
        }
        Some(lexicon)
    }
}

/// The roles by their number in a table.
const ROLES: [Role; 3] = [Role::Thing, Role::Qualifier, Role::Predicate];
