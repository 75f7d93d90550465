//! The Korean↔English domain lexicon (`data/lexicon/*.yml`): everyday asset
//! vocabulary by domain, keyed by the lemma [`super::morph`] reduces a query
//! word to.
//!
//! Each file is `{domain, entries: {korean: [english, …]}}`. An English
//! entry is a translation (weight 1, as good as the word itself); one
//! written `~word` is a looser synonym or near form (crate → `~chest`),
//! which counts [`LOOSE_WEIGHT`]. Every embedded file may be overridden by
//! the project's `.claude/unity-assets/data/lexicon/` copy of the same
//! name, and any other `.yml` file there is added.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use include_dir::{include_dir, Dir};
use serde::Deserialize;

use super::text::phrase_term;

/// The files shipped in the binary.
static EMBEDDED: Dir = include_dir!("$CARGO_MANIFEST_DIR/data/lexicon");

/// Weight of a loose synonym (`~chest` under 상자): related, not the word.
pub const LOOSE_WEIGHT: f32 = 0.6;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    #[serde(default, rename = "domain")]
    _domain: Option<String>,
    /// What the file's words are in a query (default: things).
    #[serde(default)]
    role: Role,
    entries: BTreeMap<String, Vec<String>>,
}

/// What a word is in a query, by the domain it comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A thing that can be the subject (barrel, bridge, zombie).
    #[default]
    Thing,
    /// A word that qualifies a thing: how it sounds, its colour, size or
    /// material (신음, 빨강, 금속); the subject only when nothing else is.
    Qualifier,
    /// An action or state (깨지다, 떨어지다): a modifier, never the subject
    /// while a noun is there.
    Predicate,
}

/// One English word of an entry, normalised like record terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Sense {
    pub term: String,
    /// As written, for labels (`crate`).
    pub written: String,
    pub weight: f32,
}

/// Every lexicon file merged: Korean key → its English senses.
#[derive(Debug, Default)]
pub struct Lexicon {
    entries: HashMap<String, Vec<Sense>>,
    /// A key's role: a thing when any file lists it as one.
    roles: HashMap<String, Role>,
}

impl Lexicon {
    /// The embedded files.
    pub fn embedded() -> Arc<Self> {
        static LEXICON: OnceLock<Arc<Lexicon>> = OnceLock::new();
        LEXICON
            .get_or_init(|| {
                let files: Vec<(String, String)> = EMBEDDED
                    .files()
                    .filter_map(|f| Some((f.path().display().to_string(), f.contents_utf8()?.to_owned())))
                    .collect();
                let (lexicon, problems) = Self::from_files(&files);
                assert!(
                    problems.is_empty(),
                    "the embedded lexicon is valid (tested): {problems:?}"
                );
                Arc::new(lexicon)
            })
            .clone()
    }

    /// The lexicon of `(origin, text)` files, cached by content; a file
    /// that does not parse is skipped and reported in `warn` once.
    pub fn cached(files: &[(String, String)], warn: impl FnOnce(String)) -> Arc<Self> {
        static CACHE: OnceLock<Mutex<HashMap<u64, Arc<Lexicon>>>> = OnceLock::new();
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        files.hash(&mut hasher);
        let key = hasher.finish();
        let mut cache = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(lexicon) = cache.get(&key) {
            return lexicon.clone();
        }
        let (lexicon, problems) = Self::from_files(files);
        if !problems.is_empty() {
            warn(format!(
                "[unity-assets:search] warning: lexicon file(s) skipped (fix the YAML or remove the file; see docs/lexicon.md): {}",
                problems.join("; ")
            ));
        }
        let lexicon = Arc::new(lexicon);
        cache.insert(key, lexicon.clone());
        lexicon
    }

    /// Merge files (later files add senses to earlier keys); the problems
    /// of files that do not parse, as `origin: reason`.
    pub fn from_files(files: &[(String, String)]) -> (Self, Vec<String>) {
        let mut lexicon = Self::default();
        let mut problems = Vec::new();
        for (origin, text) in files {
            match serde_yaml::from_str::<LexiconFile>(text) {
                Ok(file) => lexicon.add(file),
                Err(e) => problems.push(format!("{origin}: {e}")),
            }
        }
        (lexicon, problems)
    }

    fn add(&mut self, file: LexiconFile) {
        for (key, words) in file.entries {
            let key = key.trim().to_lowercase();
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
                            s.written = written;
                        }
                    }
                    None => senses.push(Sense { term, written, weight }),
                }
            }
        }
    }

    pub fn role(&self, key: &str) -> Option<Role> {
        self.roles.get(key).copied()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn senses(&self, key: &str) -> &[Sense] {
        self.entries.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    pub fn keys_owned(&self) -> impl Iterator<Item = &String> {
        self.entries.keys()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(term, key)` of every translation (not loose synonym), for the
    /// English→Korean direction.
    pub fn translations(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().flat_map(|(key, senses)| {
            senses
                .iter()
                .filter(|s| s.weight >= 1.0)
                .map(move |s| (s.term.as_str(), key.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::stem;

    #[test]
    fn embedded_lexicon_is_large_and_keeps_loose_synonyms_weaker() {
        let lexicon = Lexicon::embedded();
        assert!(lexicon.len() >= 1500, "{} Korean entries", lexicon.len());
        let crate_senses = lexicon.senses("상자");
        let weight = |w: &str| crate_senses.iter().find(|s| s.term == stem(w)).map(|s| s.weight);
        assert_eq!(weight("crate"), Some(1.0));
        assert_eq!(weight("chest"), Some(LOOSE_WEIGHT));
    }

    #[test]
    fn files_merge_and_a_broken_file_is_reported() {
        let files = vec![
            ("a.yml".to_owned(), "entries: {통: [barrel, ~bin]}".to_owned()),
            ("b.yml".to_owned(), "entries: {통: [bin, tub]}".to_owned()),
            ("c.yml".to_owned(), "entries: [not a map".to_owned()),
        ];
        let (lexicon, problems) = Lexicon::from_files(&files);
        let senses = lexicon.senses("통");
        assert_eq!(senses.len(), 3);
        assert_eq!(
            senses.iter().find(|s| s.term == "bin").unwrap().weight,
            1.0,
            "a translation elsewhere wins"
        );
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("c.yml"), "{problems:?}");
    }
}
