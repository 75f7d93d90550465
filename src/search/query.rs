//! A query as the ranker sees it: a list of *concepts*, each a set of
//! equivalent terms (the word itself, its translations, its siblings).
//!
//! A concept is what has to be found for the query to be satisfied: "좀비"
//! is one concept whose terms are `좀비`, `zombie`, `undead`; an asset that
//! holds any of them covers it. Coverage of concepts (not counts of words) is
//! what the confidence is calibrated on, see [`super::rank`].

use std::collections::HashSet;

use super::text::{is_hangul, korean_forms, phrase_term, words};
use super::vocab::{normal_word, Vocabulary};

/// Weight of a term reached through a sibling translation (`bgm` → 음악 →
/// `music`): related, but not what the user typed.
const SIBLING_WEIGHT: f32 = 0.7;
/// Weight of one part of a compound word (`main` of `main-menu`).
const PART_WEIGHT: f32 = 0.5;
/// Prior of a Korean word the vocabulary does not know: it may matter, but
/// we cannot tell, so missing it costs half as much as missing a known word.
const UNKNOWN_PRIOR: f32 = 0.5;
/// Prior of a `weak_words` entry ("게임", "game").
const WEAK_PRIOR: f32 = 0.3;

#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    /// How reasoning names it: the query word, or `좀비 (zombie)`.
    pub label: String,
    /// Normalised terms with their weight (1.0 for the word and its translations).
    pub terms: Vec<(String, f32)>,
    /// How much the concept counts in coverage.
    pub prior: f32,
}

/// The analysed query.
#[derive(Debug, Default)]
pub struct Query {
    pub concepts: Vec<Concept>,
    /// Every normalised word and Korean form, for rules (subtype, scene request).
    pub words: HashSet<String>,
    /// Korean word → its alias key and aliases, in query order (the hint block).
    pub alias_matches: Vec<(String, Vec<String>)>,
}

impl Query {
    pub fn analyze(text: &str, vocab: &Vocabulary) -> Self {
        let mut query = Query::default();
        let mut rest = words(text).peekable();
        while let Some(word) = rest.next() {
            if !word.chars().any(is_hangul) {
                query.add_latin(word, vocab);
                continue;
            }
            match rest.peek().and_then(|next| spaced_compound(word, next, vocab)) {
                Some(compound) => {
                    rest.next();
                    query.add_korean(&compound, vocab);
                }
                None => query.add_korean(word, vocab),
            }
        }
        query
    }

    /// Whether the query holds anything to search for.
    pub fn is_meaningful(&self) -> bool {
        !self.concepts.is_empty()
    }

    /// The English terms of all concepts (for category detection).
    pub fn english_terms(&self) -> impl Iterator<Item = &str> + Clone {
        self.concepts
            .iter()
            .flat_map(|c| c.terms.iter())
            .map(|(t, _)| t.as_str())
            .filter(|t| t.is_ascii())
    }

    fn add_korean(&mut self, word: &str, vocab: &Vocabulary) {
        let forms = korean_forms(&word.to_lowercase());
        self.words.extend(forms.iter().cloned());
        if forms.iter().any(|f| vocab.is_stopword(f)) {
            return;
        }
        let keys = vocab.korean_keys(word);
        if keys.is_empty() {
            let stripped = forms.last().cloned().unwrap_or_default();
            let terms = forms.iter().map(|f| (f.clone(), 1.0)).collect();
            self.push(Concept {
                label: stripped,
                terms,
                prior: UNKNOWN_PRIOR,
            });
            return;
        }
        for key in keys {
            if vocab.is_stopword(&key) {
                continue;
            }
            self.words.insert(key.clone());
            let aliases = vocab.aliases_of(&key).unwrap_or_default().to_vec();
            let mut terms = vec![(key.clone(), 1.0)];
            for term in aliases.iter().filter_map(|a| phrase_term(a)) {
                self.words.insert(term.clone());
                add_term(&mut terms, term, 1.0);
            }
            let label = match aliases.first() {
                Some(first) => format!("{key} ({first})"),
                None => key.clone(),
            };
            let prior = if vocab.is_weak(&key) { WEAK_PRIOR } else { 1.0 };
            self.alias_matches.push((key, aliases));
            self.push(Concept { label, terms, prior });
        }
    }

    fn add_latin(&mut self, word: &str, vocab: &Vocabulary) {
        let Some(normal) = normal_word(word) else { return };
        if normal.chars().all(|c| c.is_ascii_digit()) || normal.chars().count() < 2 {
            return;
        }
        self.words.insert(normal.clone());
        if vocab.is_stopword(&normal) {
            return;
        }
        let mut terms = vec![(normal.clone(), 1.0)];
        let parts = super::text::terms(word);
        if parts.len() > 1 {
            for part in parts.into_iter().filter(|p| *p != normal) {
                self.words.insert(part.clone());
                add_term(&mut terms, part, PART_WEIGHT);
            }
        }
        for key in vocab.keys_for_term(&normal) {
            add_term(&mut terms, key.clone(), SIBLING_WEIGHT);
            for sibling in vocab
                .aliases_of(key)
                .unwrap_or_default()
                .iter()
                .filter_map(|a| phrase_term(a))
            {
                add_term(&mut terms, sibling, SIBLING_WEIGHT);
            }
        }
        let prior = if vocab.is_weak(&normal) { WEAK_PRIOR } else { 1.0 };
        self.push(Concept {
            label: word.to_owned(),
            terms,
            prior,
        });
    }

    fn push(&mut self, concept: Concept) {
        let same = |c: &Concept| c.terms.first().map(|t| &t.0) == concept.terms.first().map(|t| &t.0);
        if !self.concepts.iter().any(same) {
            self.concepts.push(concept);
        }
    }
}

/// Korean compound nouns are written with or without a space ("배경 음악",
/// "배경음악"): two adjacent Korean words whose concatenation (without the
/// second word's particle) is a vocabulary key are that key, one concept,
/// so the compound's own translation (`bgm`) is what must be found rather
/// than each half separately.
fn spaced_compound(first: &str, second: &str, vocab: &Vocabulary) -> Option<String> {
    if !second.chars().any(is_hangul) {
        return None;
    }
    korean_forms(&format!("{first}{second}").to_lowercase())
        .into_iter()
        .find(|form| vocab.aliases_of(form).is_some() && !vocab.is_stopword(form))
}

/// Add `term` unless present; a present term keeps the higher weight.
fn add_term(terms: &mut Vec<(String, f32)>, term: String, weight: f32) {
    match terms.iter_mut().find(|(t, _)| *t == term) {
        Some(existing) => existing.1 = existing.1.max(weight),
        None => terms.push((term, weight)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::stem;

    #[test]
    fn korean_words_become_translated_concepts() {
        let q = Query::analyze("탑다운 게임용 좀비 적 캐릭터를 찾아줘", &Vocabulary::embedded());
        let labels: Vec<_> = q.concepts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "탑다운 (top-down)",
                "게임 (game)",
                "좀비 (zombie)",
                "적 (enemy)",
                "캐릭터 (character)"
            ]
        );
        assert!(q.concepts[2]
            .terms
            .iter()
            .any(|(t, w)| *t == stem("zombie") && *w == 1.0));
        assert!(q.concepts[1].prior < 1.0, "게임 is weak");
    }

    #[test]
    fn english_words_reach_siblings_through_korean_keys() {
        let q = Query::analyze("BGM loops", &Vocabulary::embedded());
        let bgm = &q.concepts[0];
        assert!(bgm.terms.iter().any(|(t, w)| *t == stem("music") && *w < 1.0));
        assert!(bgm.terms.iter().any(|(t, _)| t == "음악"));
        assert_eq!(q.concepts[1].terms[0].0, "loop");
    }

    #[test]
    fn spaced_korean_compounds_are_one_concept() {
        let vocab = Vocabulary::embedded();
        let spaced = Query::analyze("긴장감 있는 배경 음악을", &vocab);
        let joined = Query::analyze("긴장감 있는 배경음악을", &vocab);
        let labels = |q: &Query| q.concepts.iter().map(|c| c.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&spaced), labels(&joined));
        assert!(
            labels(&spaced).iter().any(|l| l.starts_with("배경음악")),
            "{:?}",
            labels(&spaced)
        );
        let apart = Query::analyze("좀비 음악", &vocab);
        assert_eq!(apart.concepts.len(), 2, "not a compound: two concepts");
    }

    #[test]
    fn unknown_korean_words_count_less_and_stopwords_vanish() {
        let q = Query::analyze("우주선 만들어줘", &Vocabulary::embedded());
        assert_eq!(q.concepts.len(), 1);
        assert_eq!(q.concepts[0].prior, UNKNOWN_PRIOR);
    }
}
