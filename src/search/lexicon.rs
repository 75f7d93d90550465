//! The Korean↔English domain lexicon (`data/lexicon/*.yml`): everyday asset
//! vocabulary by domain, keyed by the lemma [`super::morph`] reduces a query
//! word to.
//!
//! Each file is `{domain, entries: {korean: [english, …]}}`. An English
//! entry is a translation (weight 1, as good as the word itself); one
//! written `~word` is a looser synonym or near form (crate → `~chest`),
//! which counts [`LOOSE_WEIGHT`](super::lexicon_merge::LOOSE_WEIGHT).
//! Every embedded file may be overridden by
//! the project's `.claude/unity-assets/data/lexicon/` copy of the same
//! name, and any other `.yml` file there is added.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::data_files::LexiconFile;
pub use super::data_files::Role;
pub use super::lexicon_merge::{Lexicon, Sense, Text};

/// The files shipped in the binary, merged by `build.rs` (in name order).
const EMBEDDED_TABLE: &str = include_str!(concat!(env!("OUT_DIR"), "/lexicon.tsv"));

impl Lexicon {
    /// The embedded files.
    pub fn embedded() -> Arc<Self> {
        static LEXICON: OnceLock<Arc<Lexicon>> = OnceLock::new();
        LEXICON
            .get_or_init(|| Arc::new(Self::from_table(EMBEDDED_TABLE).expect("build.rs wrote the embedded lexicon")))
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

    pub fn role(&self, key: &str) -> Option<Role> {
        self.roles.get(key).copied()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn senses(&self, key: &str) -> &[Sense] {
        self.entries.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(|key| key.as_ref())
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `(term, key)` of every translation (not loose synonym), for the
    /// English→Korean direction.
    pub fn translations(&self) -> impl Iterator<Item = (&Text, &Text)> {
        self.entries
            .iter()
            .flat_map(|(key, senses)| senses.iter().filter(|s| s.weight >= 1.0).map(move |s| (&s.term, key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::lexicon_merge::LOOSE_WEIGHT;
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
    fn the_build_time_copy_is_the_yaml_files_as_parsed_at_run_time() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lexicon");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yml"))
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
            .collect();
        files.sort();
        let (from_yaml, problems) = Lexicon::from_files(&files);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(from_yaml.len() >= 1500);
        assert!(
            *Lexicon::embedded() == from_yaml,
            "build.rs's JSON and the YAML files disagree"
        );
    }

    #[test]
    fn the_table_carries_roles_weights_and_spaced_words_and_refuses_a_tab() {
        let files = vec![
            (
                "a.yml".to_owned(),
                "role: qualifier\nentries: {빨강: [red, ~crimson]}".to_owned(),
            ),
            (
                "b.yml".to_owned(),
                "entries: {제트팩: [jet pack], 통: [barrel]}".to_owned(),
            ),
        ];
        let (lexicon, problems) = Lexicon::from_files(&files);
        assert!(problems.is_empty(), "{problems:?}");
        let table = lexicon.table().unwrap();
        assert_eq!(table.lines().count(), 3);
        let read = Lexicon::from_table(Box::leak(table.into_boxed_str())).unwrap();
        assert_eq!(read, lexicon);
        assert_eq!(read.role("빨강"), Some(Role::Qualifier));
        assert_eq!(read.senses("제트팩")[0].written, "jet pack");
        assert_eq!(Lexicon::from_table("통\t9\n"), None, "an unknown role");
        assert_eq!(
            Lexicon::from_table("통\t0\tbarrel\tbarrel\n"),
            None,
            "a sense cut short"
        );

        let (tabbed, _) = Lexicon::from_files(&[("c.yml".to_owned(), "entries: {통: [\"bar\\trel\"]}".to_owned())]);
        assert_eq!(tabbed.table(), None);
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
