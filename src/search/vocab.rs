//! The search vocabulary (`data/aliases.yml`): Korean↔English aliases,
//! stopwords, category words, subtype rules and scene-request roles; with
//! the domain lexicon (`data/lexicon/`, `Lexicon`) and the morphology
//! rules that reach its keys (`Morphology`).
//!
//! Loaded once per file and cached (the search pipeline asks for it from
//! several stages); a missing or broken file prints one warning and the
//! search goes on without aliases (`docs/contracts.md#routing-hints`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use super::data_files::SceneRequest;
use super::data_files::{Phrase, VocabularyFile};
use super::lexicon::{Lexicon, Role, Text};
use super::morph::Morphology;
use super::text::{is_hangul, korean_forms, phrase_term};

/// The copy shipped in the binary, used when no project file is named,
/// pre-parsed by `build.rs`.
const EMBEDDED_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/aliases.json"));

fn embedded_file() -> VocabularyFile {
    serde_json::from_str(EMBEDDED_JSON).expect("build.rs wrote the embedded data/aliases.yml")
}

/// A subtype rule with every word normalised like query words.
#[derive(Debug)]
pub(crate) struct SubtypeRule {
    any: Vec<Vec<String>>,
    with: Vec<Vec<String>>,
    pub(crate) subtype: Option<String>,
}

impl SubtypeRule {
    /// Whether a query whose normalised words are `words` matches this rule.
    pub fn matches(&self, words: &HashSet<String>) -> bool {
        let hit = |phrases: &[Vec<String>]| phrases.iter().any(|all| all.iter().all(|w| words.contains(w)));
        hit(&self.any) && (self.with.is_empty() || hit(&self.with))
    }
}

/// A loaded file and the modification time it was loaded at.
type CachedVocabulary = (Option<std::time::SystemTime>, Arc<Vocabulary>);

/// A vocabulary's aliases file (none: embedded) and lexicon (by address).
type CacheKey = (Option<PathBuf>, usize);

/// What a Korean key stands for: a term, its weight, and how it is written.
pub(crate) type Sense = (String, f32, String);

/// The loaded vocabulary, normalised for lookups.
#[derive(Debug, Default)]
pub struct Vocabulary {
    /// Korean (or any) key → its aliases as written (for the hint block).
    aliases: BTreeMap<String, Vec<String>>,
    /// Normalised English term → the keys listing it (the backward map).
    reverse: HashMap<Text, Vec<Text>>,
    stopwords: HashSet<String>,
    weak: HashSet<String>,
    /// Category → normalised English terms.
    categories: Vec<(String, HashSet<String>)>,
    pub(crate) subtype_rules: Vec<SubtypeRule>,
    pub(crate) scene_request: SceneRequest,
    pub(crate) lexicon: Arc<Lexicon>,
}

impl Vocabulary {
    /// The vocabulary shipped in the binary.
    pub fn embedded() -> Arc<Self> {
        static EMBEDDED_VOCABULARY: OnceLock<Arc<Vocabulary>> = OnceLock::new();
        EMBEDDED_VOCABULARY
            .get_or_init(|| Arc::new(Self::from_file(embedded_file(), Lexicon::embedded())))
            .clone()
    }

    /// The vocabulary at `path` (cached by path and modification time), or
    /// the embedded one when `path` is `None`, with the embedded lexicon.
    /// A file that cannot be read or parsed gives an empty vocabulary and a
    /// warning, passed to `warn` once per file version.
    pub fn load(path: Option<&Path>, limit: u64, warn: impl FnOnce(String)) -> Arc<Self> {
        Self::load_with(path, limit, Lexicon::embedded(), warn)
    }

    /// [`Vocabulary::load`] with a given lexicon (a project's own files).
    pub(crate) fn load_with(
        path: Option<&Path>,
        limit: u64,
        lexicon: Arc<Lexicon>,
        warn: impl FnOnce(String),
    ) -> Arc<Self> {
        let embedded_lexicon = Arc::ptr_eq(&lexicon, &Lexicon::embedded());
        if path.is_none() && embedded_lexicon {
            return Self::embedded();
        }
        static CACHE: OnceLock<Mutex<HashMap<CacheKey, CachedVocabulary>>> = OnceLock::new();
        let mtime = path.and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        let key = (path.map(Path::to_path_buf), Arc::as_ptr(&lexicon) as usize);
        let mut cache = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((seen, vocabulary)) = cache.get(&key) {
            if *seen == mtime {
                return vocabulary.clone();
            }
        }
        // A regular file within the limit: never a FIFO or `/dev/zero`.
        let loaded = match path {
            Some(path) => engine::io::read_text_limited(path, limit, engine::io::FILE_KEY, &crate::PRODUCT)
                .map_err(|e| e.to_string())
                .and_then(|text| Self::parse_with(&text, lexicon.clone())),
            None => Ok(Self::from_file(embedded_file(), lexicon.clone())),
        };
        let vocabulary = Arc::new(loaded.unwrap_or_else(|reason| {
            warn(format!(
                "[unity-assets:search] warning: aliases file {} unusable ({reason}); continuing without aliases",
                path.map(|p| p.display().to_string()).unwrap_or_default()
            ));
            Self {
                lexicon: lexicon.clone(),
                ..Self::default()
            }
        }));
        cache.insert(key, (mtime, vocabulary.clone()));
        vocabulary
    }

    /// Parse the YAML text of an aliases file (with the embedded lexicon).
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_with(text, Lexicon::embedded())
    }

    /// Parse the YAML text of an aliases file, with `lexicon`.
    pub(crate) fn parse_with(text: &str, lexicon: Arc<Lexicon>) -> Result<Self, String> {
        let file: VocabularyFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        Ok(Self::from_file(file, lexicon))
    }

    fn from_file(file: VocabularyFile, lexicon: Arc<Lexicon>) -> Self {
        let mut reverse: HashMap<Text, Vec<Text>> = HashMap::new();
        let aliases: BTreeMap<String, Vec<String>> = file
            .aliases
            .into_iter()
            .map(|(key, list)| (key.to_lowercase(), list))
            .collect();
        let alias_terms = aliases.iter().flat_map(|(key, list)| {
            list.iter()
                .filter_map(|a| phrase_term(a))
                .map(move |t| (Text::from(t), Text::from(key.clone())))
        });
        // English→Korean: an alias, then a lexicon translation, names its key.
        let translations = lexicon.translations().map(|(t, k)| (t.clone(), k.clone()));
        for (term, key) in alias_terms.chain(translations) {
            let keys = reverse.entry(term).or_default();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let normalise_all = |words: Vec<String>| words.iter().filter_map(|w| normal_word(w)).collect();
        let phrases = |list: Vec<Phrase>| {
            list.into_iter()
                .map(|p| match p {
                    Phrase::One(w) => vec![w],
                    Phrase::All(ws) => ws,
                })
                .map(|ws| ws.iter().filter_map(|w| normal_word(w)).collect::<Vec<_>>())
                .filter(|ws| !ws.is_empty())
                .collect()
        };
        Self {
            aliases,
            reverse,
            stopwords: normalise_all(file.stopwords),
            weak: normalise_all(file.weak_words),
            categories: file
                .categories
                .into_iter()
                .map(|(name, words)| (name, words.iter().filter_map(|w| phrase_term(w)).collect()))
                .collect(),
            subtype_rules: file
                .subtype_hints
                .into_iter()
                .map(|r| SubtypeRule {
                    any: phrases(r.any),
                    with: phrases(r.with),
                    subtype: r.subtype,
                })
                .collect(),
            scene_request: file.scene_request.unwrap_or_default(),
            lexicon,
        }
    }

    pub(crate) fn is_stopword(&self, normal: &str) -> bool {
        self.stopwords.contains(normal)
    }

    pub(crate) fn is_weak(&self, normal: &str) -> bool {
        self.weak.contains(normal)
    }

    pub(crate) fn aliases_of(&self, key: &str) -> Option<&[String]> {
        self.aliases.get(key).map(Vec::as_slice)
    }

    /// The role of a Korean key (its lexicon file's), or of an English
    /// term through the keys translating it: a qualifier or predicate only
    /// when every such key is one.
    pub fn role(&self, key_or_term: &str) -> Role {
        if let Some(role) = self.lexicon.role(key_or_term) {
            return role;
        }
        // An alias key in modifier form (빠른) has its lemma's role (빠르다).
        if key_or_term.chars().any(is_hangul) {
            if let Some(role) = Morphology::embedded()
                .lemmas(key_or_term)
                .iter()
                .find_map(|l| self.lexicon.role(l))
            {
                return role;
            }
        }
        let roles: Vec<Role> = self
            .keys_for_term(key_or_term)
            .iter()
            .filter_map(|k| self.lexicon.role(k))
            .collect();
        if roles.is_empty() || roles.contains(&Role::Thing) {
            Role::Thing
        } else if roles.iter().all(|r| *r == Role::Predicate) {
            Role::Predicate
        } else {
            Role::Qualifier
        }
    }

    /// Whether `key` is an alias or lexicon key.
    pub fn knows(&self, key: &str) -> bool {
        self.aliases.contains_key(key) || self.lexicon.contains(key)
    }

    /// What a Korean key stands for: its aliases (as translations), then its
    /// lexicon senses; each term once, at its highest weight.
    pub(crate) fn senses(&self, key: &str) -> Vec<Sense> {
        let mut out: Vec<Sense> = Vec::new();
        let aliases = self.aliases_of(key).unwrap_or_default().iter();
        let aliases = aliases.filter_map(|a| Some((phrase_term(a)?, 1.0, a.clone())));
        let lexicon = self
            .lexicon
            .senses(key)
            .iter()
            .map(|s| (s.term.to_string(), s.weight, s.written.to_string()));
        for (term, weight, written) in aliases.chain(lexicon) {
            match out.iter_mut().find(|s| s.0 == term) {
                Some(s) => s.1 = s.1.max(weight),
                None => out.push((term, weight, written)),
            }
        }
        out
    }

    /// A closed English compound's two words (`jellyfish` → `jelly`, `fish`;
    /// `firewood` → `fire`, `wood`), when its last word is one the
    /// vocabulary translates to and both have four letters or more (`sub`
    /// of `submarine`, `man` of `marksman` would match too much); the
    /// longest such last word.
    pub(crate) fn compound_words<'w>(&self, word: &'w str) -> Option<(&'w str, &'w str)> {
        const PART: usize = 4;
        if word.len() < 2 * PART || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            return None;
        }
        let known = |w: &str| phrase_term(w).is_some_and(|term| !self.keys_for_term(&term).is_empty());
        (PART..=word.len() - PART)
            .map(|at| word.split_at(at))
            .find(|(_, last)| known(last))
    }

    /// The full translations (weight 1, as terms) of the keys a query word
    /// stands for: a Korean word's own, an English word's siblings (explode
    /// of explosion) — what a meaning of it only confirms.
    pub(crate) fn translations(&self, word: &str) -> Vec<String> {
        let keys: Vec<String> = match word.chars().any(is_hangul) {
            true => self.korean_keys(word),
            false => normal_word(word)
                .map(|w| self.keys_for_term(&w).iter().map(|k| k.to_string()).collect())
                .unwrap_or_default(),
        };
        keys.iter().flat_map(|key| self.full_translations(key)).collect()
    }

    /// A key's translations (weight 1), not its loose synonyms.
    pub(crate) fn full_translations(&self, key: &str) -> impl Iterator<Item = String> {
        self.senses(key).into_iter().filter(|s| s.1 >= 1.0).map(|s| s.0)
    }

    /// Keys whose alias lists hold the normalised English `term`.
    pub(crate) fn keys_for_term(&self, term: &str) -> &[Text] {
        self.reverse.get(term).map(Vec::as_slice).unwrap_or_default()
    }

    /// The alias or lexicon keys a Korean query word stands for (the aliases
    /// hint, `docs/contracts.md#routing-hints`): an exact match of the word or
    /// of a particle-stripped form first; else a lemma of it
    /// (`Morphology::lemmas`: 깨지는 → 깨지다); else the keys contained in
    /// the word (longest first, not overlapping; keys of two syllables or
    /// more, since one syllable inside a word is noise). A word no key
    /// stands for is left to its loanword and its meaning: the alias key
    /// that merely contains it (주인공 for 주인, owner) is another word.
    pub fn korean_keys(&self, word: &str) -> Vec<String> {
        self.korean_match(word, false).0
    }

    /// [`Vocabulary::korean_keys`], and whether the key is a predicate's
    /// lemma (a modifier such as 깨지는, not a thing). A word that `modifies`
    /// a dependent noun after it (팔 of 팔 때) is read as a predicate first:
    /// 파다 "dig", not the noun 팔 "arm".
    pub(crate) fn korean_match(&self, word: &str, modifies: bool) -> (Vec<String>, bool) {
        let forms = korean_forms(word);
        let exact = forms.iter().find(|f| self.knows(f));
        if let Some(exact) = exact.filter(|_| !modifies) {
            return (vec![exact.clone()], false);
        }
        let morphology = Morphology::embedded();
        // The whole word first (다는 is 달다, not 다 + 는), then stripped forms;
        // a light verb's reading before any other (나는 is 나다, not 날다).
        let lemmas: Vec<String> = forms.iter().flat_map(|f| morphology.lemmas(f)).collect();
        if let Some(light) = lemmas.iter().find(|lemma| self.is_stopword(lemma)) {
            return (vec![light.clone()], true);
        }
        if let Some(lemma) = lemmas.into_iter().find(|lemma| self.knows(lemma)) {
            let predicate = lemma.ends_with('다');
            return (vec![lemma], predicate);
        }
        if let Some(exact) = exact {
            return (vec![exact.clone()], false);
        }
        let stripped = forms.last().map(String::as_str).unwrap_or(word);
        let mut inside: Vec<&str> = self
            .aliases
            .keys()
            .map(String::as_str)
            .chain(self.lexicon.keys())
            .filter(|k| k.chars().count() >= 2 && stripped.contains(k))
            .collect();
        // Longest first, then leftmost, then by name: keys come out of hash
        // maps, and two of one length that overlap (벚꽃|꽃잎 in 벚꽃잎) must
        // not be chosen between by the process's hash seed.
        inside.sort_by_cached_key(|k| (std::cmp::Reverse(k.chars().count()), stripped.find(k), *k));
        let mut taken: Vec<(usize, usize)> = Vec::new();
        let mut found = Vec::new();
        for key in inside {
            for (at, _) in stripped.match_indices(key) {
                let span = (at, at + key.len());
                if taken.iter().all(|&(s, e)| span.1 <= s || span.0 >= e) {
                    taken.push(span);
                    found.push((at, key.to_owned()));
                    break;
                }
            }
        }
        if !found.is_empty() {
            found.sort();
            return (found.into_iter().map(|(_, k)| k).collect(), false);
        }
        (Vec::new(), false)
    }

    /// The category whose words overlap `terms` most (ties: first by name).
    pub(crate) fn category_of<'a>(&self, terms: impl Iterator<Item = &'a str> + Clone) -> Option<&str> {
        self.categories
            .iter()
            .map(|(name, words)| (name, terms.clone().filter(|t| words.contains(*t)).count()))
            .filter(|&(_, hits)| hits > 0)
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(name, _)| name.as_str())
    }
}

/// A query word as rules and stopword lists compare it: Korean words as
/// written (particles are stripped by the caller), English words as terms.
pub(crate) fn normal_word(word: &str) -> Option<String> {
    if word.chars().any(is_hangul) {
        Some(word.trim().to_lowercase()).filter(|w| !w.is_empty())
    } else {
        phrase_term(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_file_parses_and_covers_the_basics() {
        let v = Vocabulary::embedded();
        assert_eq!(v.aliases_of("좀비").unwrap()[0], "zombie");
        assert!(v
            .keys_for_term(&crate::search::text::stem("zombie"))
            .contains(&Text::from("좀비")));
        assert!(v.is_stopword("만들어줘"));
        assert!(!v.subtype_rules.is_empty());
        assert!(!v.scene_request.roles.is_empty());
    }

    #[test]
    fn the_build_time_copy_is_the_yaml_file_as_parsed_at_run_time() {
        let yaml = include_str!("../../data/aliases.yml");
        let parsed: VocabularyFile = serde_yaml::from_str(yaml).unwrap();
        let built: serde_json::Value = serde_json::from_str(EMBEDDED_JSON).unwrap();
        assert_eq!(serde_json::to_value(parsed).unwrap(), built);
    }

    #[test]
    fn korean_keys_exact_stripped_and_partial() {
        let v = Vocabulary::embedded();
        assert_eq!(v.korean_keys("메뉴와"), ["메뉴"]);
        assert_eq!(v.korean_keys("분위기의"), ["분위기"]);
        assert_eq!(v.korean_keys("평화로운"), ["평화"]);
        assert_eq!(v.korean_keys("스폰설정"), ["스폰", "설정"]);
        assert!(v.korean_keys("퓨뷰퓨").is_empty());
        assert_eq!(v.korean_keys("우주선"), ["우주선"], "a lexicon key");
        assert_eq!(v.korean_keys("깨지는"), ["깨지다"], "a lemma");
        assert_eq!(v.korean_keys("천장에"), ["천장"]);
    }

    #[test]
    fn overlapping_keys_of_one_length_split_a_word_leftmost_whatever_the_hash_order() {
        // 벚꽃잎 holds 벚꽃 and 꽃잎; which one was taken followed the hash
        // seed of the process, so a search's answer changed run to run.
        // Made-up keys (퓨뷰, 뷰퓨), so no lexicon key covers the whole word.
        let v = Vocabulary::parse("version: 1\naliases:\n  뷰퓨: [petal]\n  퓨뷰: [cherry blossom]\n").unwrap();
        for _ in 0..20 {
            let v = Vocabulary::parse("version: 1\naliases:\n  퓨뷰: [cherry blossom]\n  뷰퓨: [petal]\n").unwrap();
            assert_eq!(
                v.korean_match("퓨뷰퓨나무", false).0.first().map(String::as_str),
                Some("퓨뷰")
            );
        }
        assert_eq!(
            v.korean_match("퓨뷰퓨나무", false).0.first().map(String::as_str),
            Some("퓨뷰")
        );
    }

    #[test]
    fn broken_file_warns_once_and_gives_empty_vocabulary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aliases.yml");
        std::fs::write(&path, "aliases: [not, a, map").unwrap();
        let mut warnings = Vec::new();
        let v = Vocabulary::load(Some(&path), 1 << 20, |w| warnings.push(w));
        assert!(v.aliases_of("좀비").is_none());
        let _again = Vocabulary::load(Some(&path), 1 << 20, |w| warnings.push(w));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let missing = Vocabulary::load(Some(&dir.path().join("none.yml")), 1 << 20, |w| warnings.push(w));
        assert!(missing.aliases_of("좀비").is_none());
        assert_eq!(warnings.len(), 2);
    }
}
