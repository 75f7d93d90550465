//! A query as the ranker sees it: a list of *concepts*, each a set of
//! equivalent terms (the word itself, its translations, its siblings).
//!
//! A concept is what has to be found for the query to be satisfied: "좀비"
//! is one concept whose terms are `좀비`, `zombie`, `undead`; an asset that
//! holds any of them covers it. Coverage of concepts (not counts of words) is
//! what the confidence is calibrated on, see [`super::rank`].
//!
//! Type words ("소리", "material") are not concepts: they set the query's
//! `Query::type_intent` (`super::intent`). One concept is the query's
//! *subject* ([`Query::subject`]): the last noun that is neither a
//! predicate in modifier form (깨지는, crashed) nor a generic class word
//! (캐릭터, enemy) — Korean and English noun phrases put their head last.
//! An English noun phrase may also be followed by a post-modifier (a
//! relative clause "that opens…", a "to"-infinitive, a prepositional phrase
//! "with…", a participle "mounted on…"): the head is then the last noun
//! *before* it, so "door that opens when the player has the key" is about a
//! door, not a key. The others are modifiers.

use std::collections::HashSet;

use super::intent::TypeIntents;
use super::lexicon::Role;
use super::lexicon_merge::LOOSE_WEIGHT;
use super::loanword::LoanIndex;
use super::morph::Morphology;
use super::route::WordMeaning;
use super::text::{is_hangul, korean_forms, phrase_term, stem, words};
use super::vocab::{normal_word, Vocabulary};

/// Weight of a term reached through a sibling translation (`bgm` → 음악 →
/// `music`): related, but not what the user typed.
const SIBLING_WEIGHT: f32 = 0.7;
/// Weight of one of `parts` parts of a compound word (`main` of
/// `main-menu`, a half): all its parts together make one whole word, so
/// two of `PlyerOnBoxArea`'s four are no match of it.
fn part_weight(parts: usize) -> f32 {
    1.0 / parts.max(2) as f32
}
/// Prior of a Korean word the vocabulary does not know: it may matter, but
/// we cannot tell, so missing it costs half as much as missing a known word.
const UNKNOWN_PRIOR: f32 = 0.5;
/// Weight of an English word a Hangul word may be the loanword of: a
/// phonetic guess, good but not certain.
const LOANWORD_WEIGHT: f32 = 0.85;
/// Prior of a `weak_words` entry ("게임", "game").
const WEAK_PRIOR: f32 = 0.3;
/// English words that open a post-modifier: relative pronouns and
/// conjunctions, the "to" of an infinitive, prepositions. The noun phrase
/// before the first of them holds the head; they carry no asset meaning
/// themselves, so they are not concepts. ("over" is left out: `GameOver`.)
const POST_MODIFIER_WORDS: &[&str] = &[
    "that", "which", "who", "whom", "whose", "where", "when", "while", "if", "to", "with", "without", "for", "on",
    "in", "of", "at", "from", "by", "behind", "under", "near", "inside", "into", "onto", "above", "below", "beside",
    "between", "around", "across", "through", "along", "against", "like", "after", "before", "during",
];
/// Determiners: after a noun one starts a new noun phrase, a relative
/// clause without its "that" ("door the player can open").
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "these", "those", "my", "your", "our", "his", "her", "its", "their",
];

/// One thing the query asks for: a word, its translations and near forms, and how much it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    /// The query word it stands for (its lexicon key when the lexicon knows it).
    pub word: String,
    /// How reasoning names it: the query word, or `좀비 (zombie)`.
    pub label: String,
    /// Normalised terms with their weight (1.0 for the word and its translations).
    pub(crate) terms: Vec<(String, f32)>,
    /// How much the concept counts in coverage.
    pub(crate) prior: f32,
    /// A predicate (깨지는 → 깨지다, `crashed`): a modifier, never the subject.
    pub(crate) predicate: bool,
    /// A generic class word (캐릭터, `enemy`) or a qualifier (a sound,
    /// colour, size or material word): the subject only when no other noun is.
    pub generic: bool,
    /// Context: a word describing the game rather than the asset ("생존" in
    /// "생존 게임 배경 음악"): it comes right before a weak word (게임).
    pub(crate) context: bool,
    /// A Korean word no vocabulary knows, kept to be read as a loanword
    /// against the project's own words (`super::loanword`).
    pub(crate) unknown_korean: Option<String>,
    /// The project word it was found through, nearest in meaning, as
    /// written ([`Query::with_meanings`]): none of its own terms is in the
    /// project.
    pub(crate) by_meaning: Option<String>,
}

/// The analysed query.
#[derive(Debug, Default, Clone)]
pub struct Query {
    pub(crate) concepts: Vec<Concept>,
    /// Every normalised word and Korean form, for rules (subtype, scene request).
    pub words: HashSet<String>,
    /// Korean word → its alias key and aliases, in query order (the hint block).
    pub(crate) alias_matches: Vec<(String, Vec<String>)>,
    /// The asset type the query names (`audio`, `material`, …), if any.
    pub(crate) type_intent: Option<String>,
    /// Whether a type word was written (a type implied by 발소리 is not).
    pub(crate) type_named: bool,
    /// Index of the subject concept (see the module docs).
    pub subject: Option<usize>,
    /// The type words' own concepts: not scored, but routing reads their
    /// terms (category hints) and the hint block their aliases.
    pub(crate) type_concepts: Vec<Concept>,
    /// Where each English post-modifier starts: the index of its first
    /// concept, in order (see the module docs).
    post_modifiers: Vec<usize>,
}

impl Query {
    /// Split `text` into concepts, type intent and subject, with the words `vocab` knows.
    pub fn analyze(text: &str, vocab: &Vocabulary) -> Self {
        let intents = TypeIntents::embedded();
        let mut query = Query::default();
        // The concept each Latin word became, for joining compounds; and
        // the concepts of Korean words, whose translations join alike.
        let mut latin: Vec<(usize, String)> = Vec::new();
        let mut korean_concepts: Vec<usize> = Vec::new();
        let mut rest = words(text).peekable();
        while let Some(word) = rest.next() {
            let korean = word.chars().any(is_hangul);
            if !korean && query.opens_post_modifier(word, vocab) {
                query.post_modifiers.push(query.concepts.len());
                if is_post_modifier_word(word) {
                    continue;
                }
            }
            let (word, head) = match rest
                .peek()
                .filter(|_| korean)
                .and_then(|next| spaced_compound(word, next, vocab))
            {
                Some(compound) => (compound, rest.next()),
                None => (word.to_owned(), None),
            };
            let forms = if korean {
                korean_forms(&word.to_lowercase())
            } else {
                normal_word(&word).into_iter().collect()
            };
            let type_intent = forms.iter().find_map(|f| intents.intent_of(f));
            if let Some(intent) = type_intent.filter(|_| !forms.iter().any(|f| vocab.is_stopword(f))) {
                // Analysed apart: its concept is set aside, its words and
                // aliases still reach the router and the hint block.
                let mut aside = Query::default();
                aside.add_word(&word, korean, false, vocab);
                query.words.extend(aside.words);
                query.alias_matches.extend(aside.alias_matches);
                query.type_concepts.extend(aside.concepts);
                query.type_intent = Some(intent.to_owned());
                query.type_named = true;
                continue;
            }
            if korean && !query.type_named {
                // A type word written apart (엔진 소리) names the type as
                // "engine sound" does, even when the lexicon joins the two
                // into one concept; written together (발소리), its ending
                // only leans toward the type.
                let apart = head.and_then(|h| korean_forms(h).iter().find_map(|f| intents.intent_of(f)));
                if let Some(intent) = apart.or_else(|| forms.last().and_then(|f| intents.suffix_intent(f))) {
                    query.type_intent = Some(intent.to_owned());
                    query.type_named = apart.is_some();
                }
            }
            let before = query.concepts.len();
            // A word before a dependent noun (살 때) modifies it: a predicate.
            let modifies = korean
                && rest.peek().is_some_and(|next| {
                    korean_forms(next)
                        .iter()
                        .any(|f| Morphology::embedded().is_modifier_noun(f))
                });
            query.add_word(&word, korean, modifies, vocab);
            if query.concepts.len() > before {
                if let Some(head) = head {
                    query.concepts[before].add_head_senses(head, vocab);
                }
                match korean {
                    true => korean_concepts.push(before),
                    false => latin.push((before, word.to_lowercase())),
                }
            }
        }
        if query.concepts.is_empty() {
            query.concepts = std::mem::take(&mut query.type_concepts);
        }
        query.join_latin_compounds(&latin);
        query.join_translated_compounds(&korean_concepts);
        for concept in &mut query.concepts {
            let head = concept.terms.first().map(|t| t.0.as_str()).unwrap_or_default();
            match vocab.role(head) {
                Role::Predicate => concept.predicate = true,
                Role::Qualifier => concept.generic = true,
                Role::Thing => {}
            }
            concept.generic = concept.generic || intents.is_generic(head) || concept.prior <= WEAK_PRIOR;
        }
        for i in 1..query.concepts.len() {
            if query.concepts[i].prior <= WEAK_PRIOR {
                query.concepts[i - 1].context = true;
            }
        }
        query.subject = query.pick_subject();
        query
    }

    /// The last concept that is a thing (not a predicate, generic word or
    /// context) in the first phrase that has one — the noun phrase, else the
    /// post-modifiers in order ("sound of the imp" is about the imp); else
    /// the last qualifier or class word that is not weak; else the last
    /// that is not a predicate; else the last.
    fn pick_subject(&self) -> Option<usize> {
        let thing = |c: &Concept| !c.predicate && !c.generic && !c.context;
        let mut starts = std::iter::once(0).chain(self.post_modifiers.iter().copied()).peekable();
        while let Some(start) = starts.next() {
            let end = starts.peek().copied().unwrap_or(self.concepts.len());
            if let Some(i) = (start..end).rev().find(|&i| thing(&self.concepts[i])) {
                return Some(i);
            }
        }
        let last = |keep: &dyn Fn(&Concept) -> bool| self.concepts.iter().rposition(keep);
        last(&|c| !c.predicate && !c.context && c.prior > WEAK_PRIOR)
            .or_else(|| last(&|c| !c.predicate))
            .or_else(|| self.concepts.len().checked_sub(1))
    }

    /// Whether an English word starts a post-modifier: a word of
    /// [`POST_MODIFIER_WORDS`], or right after a noun of the current phrase
    /// a participle ("lamp mounted on…", "imp calling for help") or a
    /// determiner ("door the player can open").
    fn opens_post_modifier(&self, word: &str, vocab: &Vocabulary) -> bool {
        if is_post_modifier_word(word) {
            return true;
        }
        let lower = word.to_lowercase();
        let start = self.post_modifiers.last().copied().unwrap_or(0);
        let after_noun = self.concepts[start..].last().is_some_and(|c| !c.predicate);
        after_noun && (DETERMINERS.contains(&lower.as_str()) || is_participle(&lower, vocab))
    }

    /// English compounds are written apart or together ("spider web",
    /// `spiderweb`; "health bar", `ui_healthbar`): two adjacent words also
    /// match their concatenation, for both concepts.
    fn join_latin_compounds(&mut self, latin: &[(usize, String)]) {
        for pair in latin.windows(2) {
            let [(a, first), (b, second)] = pair else { continue };
            if *b != a + 1 {
                continue;
            }
            self.join_pair((*a, *b), std::slice::from_ref(first), std::slice::from_ref(second));
        }
    }

    /// Each of `firsts` written together with each of `seconds` becomes a
    /// term of both adjacent concepts `a` and `b`.
    fn join_pair(&mut self, (a, b): (usize, usize), firsts: &[String], seconds: &[String]) {
        for joined in firsts
            .iter()
            .flat_map(|f| seconds.iter().filter_map(move |s| phrase_term(&format!("{f}{s}"))))
        {
            for c in [a, b] {
                add_term(&mut self.concepts[c].terms, joined.clone(), 1.0);
            }
        }
    }

    /// A Korean phrase's translations join as English compounds do: "채팅
    /// 박스" is chat + box, which a project names `chatbox.png`. Only each
    /// word's first few whole translations join.
    fn join_translated_compounds(&mut self, korean: &[usize]) {
        const JOINED_SENSES: usize = 3;
        let senses = |c: &Concept| -> Vec<String> {
            c.terms
                .iter()
                .filter(|(t, w)| *w >= 1.0 && t.chars().all(|ch| ch.is_ascii_alphanumeric()))
                .take(JOINED_SENSES)
                .map(|(t, _)| t.clone())
                .collect()
        };
        for pair in korean.windows(2) {
            let &[a, b] = pair else { continue };
            if b != a + 1 {
                continue;
            }
            let (firsts, seconds) = (senses(&self.concepts[a]), senses(&self.concepts[b]));
            self.join_pair((a, b), &firsts, &seconds);
        }
    }

    /// Whether a Korean word is unknown and may be a loanword.
    pub(crate) fn has_unknown_korean(&self) -> bool {
        self.concepts.iter().any(|c| c.unknown_korean.is_some())
    }

    /// This query with its unknown Korean words read as loanwords of the
    /// project's English words (`LoanIndex`): 랜턴 finds `lantern`.
    pub(crate) fn with_loanwords(&self, index: &LoanIndex) -> Self {
        let mut query = self.clone();
        for concept in &mut query.concepts {
            let Some(word) = &concept.unknown_korean else { continue };
            let found = index.lookup(word);
            // The meaning stage weighed the words the key matches and took
            // one near enough in meaning (셔플: `shuffle`, of `shuffle` and
            // `espr`); a word it found instead means none of them was
            // (생각 is `thought`, not `chunk`). Without a meaning, the key
            // alone decides.
            // The index holds stems; a meaning's word is shown as written.
            let (shown, found): (Vec<String>, Vec<String>) = match &concept.by_meaning {
                Some(near) if found.contains(&stem(near)) => (vec![near.clone()], vec![stem(near)]),
                Some(_) => continue,
                None => (found.to_vec(), found.to_vec()),
            };
            if found.is_empty() {
                continue;
            }
            if let Some(near) = concept.by_meaning.take() {
                let near = stem(&near);
                concept.terms.retain(|(term, _)| *term != near);
            }
            concept.label = format!("{word} ({}?)", shown.join("/"));
            for term in found {
                add_term(&mut concept.terms, term, LOANWORD_WEIGHT);
            }
            concept.prior = 1.0;
            concept.unknown_korean = None;
        }
        query
    }

    /// Each concept whose word the project does not hold (nor a translation:
    /// a half of a compound may be held), with the project
    /// word nearest it in meaning as an alternative term, labelled so
    /// reasoning says how it matched (`복숭아 ≈ peach (0.83)`).
    pub(crate) fn with_meanings(mut self, meanings: &[WordMeaning], vocab: &Vocabulary) -> Self {
        for concept in &mut self.concepts {
            let Some(m) = meanings.iter().find(|m| m.word == concept.word) else {
                continue;
            };
            // The concept's own label stays: a half of a compound may
            // match too (`house` of 온실's greenhouse).
            concept.label = format!("{} ≈ {} ({:.2})", concept.label, m.term, m.similarity);
            let near = stem(&m.term);
            // A meaning that is one of the word's translations (`exploding`
            // for explosion, whose sibling is `explode`) confirms it: what it
            // matches stays the word's own evidence, not meaning alone.
            let given = vocab.translations(&concept.word).contains(&near);
            add_term(&mut concept.terms, near, m.weight);
            concept.prior = 1.0;
            // `unknown_korean` stays: a loanword of the project's words,
            // resolved at ranking, replaces this guess.
            concept.by_meaning = (!given).then(|| m.term.clone());
        }
        self
    }

    /// No subject when the one found is a word of the request's `theme` and
    /// the role after it named only class words (적 캐릭터): the asset is what
    /// they say, whatever game it is for.
    pub(crate) fn with_theme(mut self, theme: Option<&str>) -> Self {
        let Some(theme) = theme else { return self };
        let in_theme = |word: &str| {
            words(theme).any(|w| w.eq_ignore_ascii_case(word) || korean_forms(w).iter().any(|f| f == word))
        };
        // A role of type words alone (UI) keeps the theme's subject: an asset
        // that shares only the theme is no answer to it.
        let role_has_words = self.concepts.iter().any(|c| !in_theme(&c.word));
        if role_has_words && self.subject.is_some_and(|i| in_theme(&self.concepts[i].word)) {
            self.subject = None;
        }
        self
    }

    /// This query about another of its things, when no record of the corpus
    /// holds its subject (`unseen`: bit `c` per scored concept) and a thing
    /// of the subject's phrase is held: "철퇴 장애물" where nothing is an
    /// obstacle asks for the mace. A subject the project lacks is a gap of
    /// its words, no evidence against a record that has the rest. "wooden
    /// bridge" keeps its subject (wooden is no thing): a wooden barrel is
    /// still no bridge.
    pub(crate) fn with_held_subject(&self, unseen: u32) -> Option<Query> {
        let subject = self.subject?;
        let unseen = |c: usize| c >= 32 || unseen >> c & 1 == 1;
        if !unseen(subject) {
            return None;
        }
        let start = self
            .post_modifiers
            .iter()
            .rev()
            .copied()
            .find(|&p| p <= subject)
            .unwrap_or(0);
        let end = self
            .post_modifiers
            .iter()
            .copied()
            .find(|&p| p > subject)
            .unwrap_or(self.concepts.len());
        let thing = |c: &Concept| !c.predicate && !c.generic && !c.context;
        let held = (start..end)
            .rev()
            .find(|&c| c != subject && !unseen(c) && thing(&self.concepts[c]))?;
        let mut query = self.clone();
        query.subject = Some(held);
        Some(query)
    }

    /// Whether the query holds anything to search for.
    pub(crate) fn is_meaningful(&self) -> bool {
        !self.concepts.is_empty()
    }

    /// The English terms of all concepts, type words' included (for
    /// category detection).
    pub(crate) fn english_terms(&self) -> impl Iterator<Item = &str> + Clone {
        self.concepts
            .iter()
            .chain(&self.type_concepts)
            .flat_map(|c| c.terms.iter())
            .map(|(t, _)| t.as_str())
            .filter(|t| t.is_ascii())
    }

    fn add_word(&mut self, word: &str, korean: bool, modifies: bool, vocab: &Vocabulary) {
        if korean {
            self.add_korean(word, modifies, vocab);
        } else {
            self.add_latin(word, vocab);
        }
    }

    fn add_korean(&mut self, word: &str, modifies: bool, vocab: &Vocabulary) {
        let forms = korean_forms(&word.to_lowercase());
        self.words.extend(forms.iter().cloned());
        let (keys, predicate) = vocab.korean_match(word, modifies);
        // A predicate's lemma wins over a stopword left by stripping its
        // ending as a particle (다는 is 달다, not 다 + 는).
        if !predicate && forms.iter().any(|f| vocab.is_stopword(f)) {
            return;
        }
        if keys.is_empty() {
            let stripped = forms.last().cloned().unwrap_or_default();
            let terms = forms.iter().map(|f| (f.clone(), 1.0)).collect();
            self.push(Concept {
                word: stripped.clone(),
                label: stripped.clone(),
                terms,
                prior: UNKNOWN_PRIOR,
                predicate: false,
                generic: false,
                context: false,
                unknown_korean: Some(stripped),
                by_meaning: None,
            });
            return;
        }
        for key in keys {
            if vocab.is_stopword(&key) {
                continue;
            }
            self.words.insert(key.clone());
            let senses = vocab.senses(&key);
            let mut terms = vec![(key.clone(), 1.0)];
            for (i, (term, weight, written)) in senses.iter().enumerate() {
                self.words.insert(term.clone());
                add_term(&mut terms, term.clone(), *weight);
                // A phrase ("spider web") or the first translation's closed
                // compound (`jellyfish`; not `marksman` after `sniper`) also
                // counts by its words, each a part: together they make a
                // whole match in one field. A project may name the thing by
                // one of them (`Jelly.prefab`, `wood_pile` for `firewood`).
                if !vocab.aliases_of(&key).is_some_and(|a| a.contains(written)) {
                    add_compound_parts(&mut terms, written, term, *weight, vocab, i == 0);
                }
            }
            let label = match senses.first() {
                Some((_, _, first)) => format!("{key} ({first})"),
                None => key.clone(),
            };
            let prior = if vocab.is_weak(&key) { WEAK_PRIOR } else { 1.0 };
            self.alias_matches.push((
                key.clone(),
                senses.into_iter().filter(|s| s.1 >= 1.0).map(|s| s.2).collect(),
            ));
            self.push(Concept {
                word: key.clone(),
                label,
                terms,
                prior,
                predicate,
                generic: false,
                context: false,
                unknown_korean: None,
                by_meaning: None,
            });
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
        self.words
            .extend(add_compound_parts(&mut terms, word, &normal, 1.0, vocab, true));
        let keys = vocab.keys_for_term(&normal);
        // A word several keys translate has several senses (character: 캐릭터,
        // 문자): each sense's siblings stand for one of them, so they count
        // less. Keys grown from one root (폭발, 폭발하다, 폭발음) are one sense.
        let senses = keys
            .iter()
            .filter(|key| !keys.iter().any(|root| root != *key && key.starts_with(root.as_ref())))
            .count();
        let sibling_weight = SIBLING_WEIGHT / senses.max(1) as f32;
        for key in keys {
            add_term(&mut terms, key.to_string(), SIBLING_WEIGHT);
            // Siblings are other translations of the key (not its loose synonyms).
            for sibling in vocab.full_translations(key) {
                add_term(&mut terms, sibling, sibling_weight);
            }
        }
        let prior = if vocab.is_weak(&normal) { WEAK_PRIOR } else { 1.0 };
        // A participle or gerund (crashed, dripping) modifies the head noun.
        let predicate = is_participle(&word.to_lowercase(), vocab);
        self.push(Concept {
            word: word.to_owned(),
            label: word.to_owned(),
            terms,
            prior,
            predicate,
            generic: false,
            context: false,
            unknown_korean: None,
            by_meaning: None,
        });
    }

    pub(super) fn push(&mut self, concept: Concept) {
        let same = |c: &Concept| c.terms.first().map(|t| &t.0) == concept.terms.first().map(|t| &t.0);
        if !self.concepts.iter().any(same) {
            self.concepts.push(concept);
        }
    }
}

/// Add the parts of `written` other than its `whole` term to `terms`, the
/// whole's `weight` shared among them ([`part_weight`]); returns the parts.
fn add_compound_parts(
    terms: &mut Vec<(String, f32)>,
    written: &str,
    whole: &str,
    weight: f32,
    vocab: &Vocabulary,
    closed: bool,
) -> Vec<String> {
    let parts: Vec<String> = compound_parts(written, vocab, closed)
        .into_iter()
        .filter(|p| p != whole)
        .collect();
    for part in &parts {
        add_term(terms, part.clone(), weight * part_weight(parts.len()));
    }
    parts
}

/// The words of a compound, as terms: a phrase's or a name's parts
/// (`spider web`, `PlyerOnBoxArea`), else, when `closed` ones are asked
/// for, a closed English compound's two words
/// ([`Vocabulary::compound_words`]); none for a single plain word.
fn compound_parts(written: &str, vocab: &Vocabulary, closed: bool) -> Vec<String> {
    let parts = super::text::terms(written);
    if parts.len() > 1 {
        return parts;
    }
    let lower = written.to_lowercase();
    match vocab.compound_words(&lower).filter(|_| closed) {
        Some((first, last)) => super::text::terms(&format!("{first} {last}")),
        None => Vec::new(),
    }
}

/// Whether `word` is one of [`POST_MODIFIER_WORDS`] (any case).
pub(super) fn is_post_modifier_word(word: &str) -> bool {
    POST_MODIFIER_WORDS.contains(&word.to_lowercase().as_str())
}

/// A participle or gerund (crashed, dripping, mounted), not a noun that
/// only looks like one (ceiling, building: an -ing word written as the
/// translation of a lexicon thing; an -ed word is never a head noun).
fn is_participle(lower: &str, vocab: &Vocabulary) -> bool {
    if lower.len() <= 4 {
        return false;
    }
    if lower.ends_with("ed") {
        return true;
    }
    let noun = || {
        normal_word(lower).is_some_and(|normal| {
            vocab.keys_for_term(&normal).iter().any(|key| {
                vocab.role(key) == Role::Thing && vocab.senses(key).iter().any(|(_, _, written)| written == lower)
            })
        })
    };
    lower.ends_with("ing") && !noun()
}

/// Korean compound nouns are written with or without a space ("배경 음악",
/// "배경음악"): two adjacent Korean words whose concatenation (without the
/// second word's particle) is a vocabulary key are that key, one concept,
/// so the compound's own translation (`bgm`) is what must be found rather
/// than each half separately; a predicate alike, by its lemma ("숨 쉬는" is
/// 숨쉬다, breathe). The key must reach into the second word: a second word
/// whose end reads as particles (도로: 도 + 로) is no part of the first
/// (갈림길 도로 is a fork and a road).
fn spaced_compound(first: &str, second: &str, vocab: &Vocabulary) -> Option<String> {
    if !second.chars().any(is_hangul) {
        return None;
    }
    let first_len = first.chars().count();
    let forms = korean_forms(&format!("{first}{second}").to_lowercase());
    // Lemmas only when no written form is a key: most pairs stop at the first.
    let lemmas = forms.iter().flat_map(|form| Morphology::embedded().lemmas(form));
    forms
        .iter()
        .cloned()
        .chain(lemmas)
        .find(|form| form.chars().count() > first_len && vocab.knows(form) && !vocab.is_stopword(form))
}

impl Concept {
    /// A joined Korean compound (택배상자) is a kind of its last word (상자):
    /// that word's translations are loose terms of the compound, so a crate
    /// is found when the project has no `cardboard box`. Only a thing
    /// heads a compound so: a sound, colour or type word (엔진 소리, 카드
    /// 이미지) says what kind of asset, not what it shows.
    fn add_head_senses(&mut self, head: &str, vocab: &Vocabulary) {
        let intents = TypeIntents::embedded();
        let things = vocab.korean_match(head, false).0.into_iter().filter(|key| {
            vocab.role(key) == Role::Thing && intents.intent_of(key).is_none() && !intents.is_generic(key)
        });
        for term in things.flat_map(|key| vocab.full_translations(&key).collect::<Vec<_>>()) {
            add_term(&mut self.terms, term, LOOSE_WEIGHT);
        }
    }
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
    fn a_joined_compound_keeps_its_last_words_translations_as_loose_terms() {
        let vocab = Vocabulary::embedded();
        assert!(vocab.knows("택배상자"), "the lexicon lost 택배상자");
        let q = Query::analyze("택배 상자", &vocab);
        assert_eq!(q.concepts.len(), 1, "{:?}", q.concepts);
        let weight = |term: &str| q.concepts[0].terms.iter().find(|t| t.0 == term).map(|t| t.1);
        assert_eq!(weight("crate"), Some(LOOSE_WEIGHT), "{:?}", q.concepts[0].terms);
        assert_eq!(
            weight("parcel"),
            Some(1.0),
            "the compound's own translation stays whole"
        );
    }

    #[test]
    fn a_compounds_parts_together_make_one_whole_word() {
        let vocab = Vocabulary::embedded();
        let weight = |q: &Query, term: &str| q.concepts[0].terms.iter().find(|t| t.0 == term).map(|t| t.1);
        // Four parts: any two of them are half the name, not all of it.
        let q = Query::analyze("PlyerOnBoxArea", &vocab);
        assert_eq!(weight(&q, "box"), Some(0.25), "{:?}", q.concepts[0].terms);
        // A closed compound, typed or translated, counts by its two words.
        for typed in ["jellyfish", "해파리"] {
            let q = Query::analyze(typed, &vocab);
            assert_eq!(weight(&q, "jellyfish"), Some(1.0), "{typed}");
            assert_eq!(
                (weight(&q, &stem("jelly")), weight(&q, "fish")),
                (Some(0.5), Some(0.5)),
                "{typed}"
            );
        }
        assert_eq!(weight(&Query::analyze("장작", &vocab), "fire"), Some(0.5));
        // A part of three letters is no word of the compound (`carpet`,
        // `submarine`), nor is a later translation's (저격수: sniper, marksman).
        for (typed, part) in [("carpet", "car"), ("저격수", "man")] {
            let q = Query::analyze(typed, &vocab);
            assert_eq!(weight(&q, part), None, "{typed}: {:?}", q.concepts[0].terms);
        }
        assert_eq!(vocab.compound_words("submarine"), None);
    }

    #[test]
    fn a_light_verb_of_a_descriptive_sentence_is_no_concept() {
        // 나는 is 나다 ("a sound that is made"), not 날다 ("fly"); 나오는 plays.
        let vocab = Vocabulary::embedded();
        for (sentence, words) in [
            ("캐릭터가 땅에 착지할 때 나는 소리", &["캐릭터", "땅"][..]),
            ("영웅이 죽을 때 나오는 애니메이션", &["영웅"][..]),
        ] {
            let q = Query::analyze(sentence, &vocab);
            let concepts: Vec<&str> = q.concepts.iter().map(|c| c.word.as_str()).collect();
            assert!(words.iter().all(|w| concepts.contains(w)), "{sentence}: {concepts:?}");
            assert!(
                !concepts
                    .iter()
                    .any(|c| ["날다", "나다", "나오다", "나오는"].contains(c)),
                "{sentence}: {concepts:?}"
            );
        }
    }

    #[test]
    fn a_word_before_a_dependent_noun_is_read_as_a_predicate() {
        // 팔 때 is "when digging" (파다), not "arm" (팔); 살 때 "when buying".
        let vocab = Vocabulary::embedded();
        for (sentence, lemma, term) in [
            ("삽으로 땅 팔 때 나는 소리", "파다", "dig"),
            ("상점에서 아이템 살 때 나는 소리", "사다", "buy"),
        ] {
            let q = Query::analyze(sentence, &vocab);
            let read = q.concepts.iter().find(|c| c.word == lemma);
            assert!(
                read.is_some_and(|c| c.predicate && c.terms.iter().any(|(t, _)| t == term)),
                "{sentence}: {:?}",
                q.concepts
            );
            assert!(q.concepts.iter().all(|c| c.word != "팔"), "{sentence}");
        }
        // Elsewhere the noun stands: 팔 is an arm, 얼음 적 an ice enemy.
        let arm = Query::analyze("팔 아이콘", &vocab);
        assert!(arm.concepts.iter().any(|c| c.word == "팔" && !c.predicate));
        let ice = Query::analyze("얼음 적 캐릭터", &vocab);
        assert!(
            ice.concepts.iter().any(|c| c.word == "얼음" && !c.predicate),
            "{:?}",
            ice.concepts
        );
    }

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
        let q = Query::analyze("zombie loops", &Vocabulary::embedded());
        let zombie = &q.concepts[0];
        assert!(zombie.terms.iter().any(|(t, w)| t == "undead" && *w < 1.0));
        assert!(zombie.terms.iter().any(|(t, _)| t == "좀비"));
        assert_eq!(q.concepts[1].terms[0].0, "loop");
    }

    #[test]
    fn keys_grown_from_one_root_are_one_sense_of_an_english_word() {
        let vocab = Vocabulary::embedded();
        let keys = vocab.keys_for_term("explosion");
        for key in ["폭발", "폭발하다", "폭발음"] {
            assert!(keys.iter().any(|k| k == key), "{keys:?}");
        }
        let q = Query::analyze("explosion", &vocab);
        let weight = |term: &str| q.concepts[0].terms.iter().find(|t| t.0 == term).map(|t| t.1);
        // 폭발, 폭발하다 and 폭발음 are one sense, whatever else translates it.
        let senses = keys.iter().filter(|k| !k.starts_with("폭발")).count() + 1;
        assert_eq!(weight("explod"), Some(SIBLING_WEIGHT / senses as f32), "{keys:?}");
    }

    #[test]
    fn type_words_set_the_intent_and_are_not_concepts() {
        let vocab = Vocabulary::embedded();
        let q = Query::analyze("로봇 발소리 효과음", &vocab);
        assert_eq!(q.type_intent.as_deref(), Some("audio"));
        assert!(q.type_named);
        let labels: Vec<_> = q.concepts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["로봇 (robot)", "발소리 (footstep)"]);
        assert!(
            q.english_terms().any(|t| t == "sfx"),
            "routing still sees the type word"
        );
        let only = Query::analyze("효과음", &vocab);
        assert_eq!(only.concepts.len(), 1, "a query of type words only keeps them");
        assert_eq!(Query::analyze("발소리", &vocab).type_intent.as_deref(), Some("audio"));
        assert!(!Query::analyze("발소리", &vocab).type_named, "an ending only leans");
        let apart = Query::analyze("자동차 엔진 소리", &vocab);
        assert!(apart.type_named, "a type word written apart names the type");
        assert_eq!(apart.type_intent.as_deref(), Some("audio"));
    }

    /// The label of `query`'s subject concept.
    fn subject(query: &str) -> String {
        let q = Query::analyze(query, &Vocabulary::embedded());
        q.subject.map(|i| q.concepts[i].label.clone()).unwrap_or_default()
    }

    #[test]
    fn the_subject_is_the_last_thing_not_a_modifier_or_class_word() {
        assert!(subject("추락한 우주선").starts_with("우주선"), "추락한 is a predicate");
        assert!(subject("깨지는 항아리").starts_with("항아리"));
        assert!(
            subject("좀비 적 캐릭터").starts_with("좀비"),
            "적, 캐릭터 are class words"
        );
        assert!(
            subject("좀비 신음 효과음").starts_with("좀비"),
            "a sound word qualifies its source"
        );
        assert!(subject("빨간 램프").starts_with("램프"));
        assert_eq!(subject("water dripping sound"), "water");
        assert_eq!(subject("crashed spaceship"), "spaceship");
        assert!(
            subject("긴장감 있는 생존 게임 배경 음악").starts_with("긴장감"),
            "생존 describes the game"
        );
    }

    #[test]
    fn an_english_head_noun_comes_before_its_post_modifier() {
        let vocab = Vocabulary::embedded();
        for (query, head) in [
            ("door that opens when the player has the key", "door"),
            ("crate to hide the player behind", "crate"),
            ("lamp mounted on the wall of a corridor", "lamp"),
            ("pot the player can pick up", "pot"),
            ("wooden rowing boat on a lake", "boat"),
            ("bullet shaped like a star", "bullet"),
            // A type word before the post-modifier: the subject is in it.
            ("sound of the imp calling for help", "imp"),
            ("effect for the boss slamming the ground", "boss"),
            // A noun that looks like a participle is still a noun.
            ("ceiling with pipes", "ceiling"),
        ] {
            assert_eq!(subject(query), head, "{query:?}");
        }
        let q = Query::analyze("door that opens when the player has the key", &vocab);
        let labels: Vec<_> = q.concepts.iter().map(|c| c.label.as_str()).collect();
        assert!(
            !labels.iter().any(|l| ["that", "when", "has", "the"].contains(l)),
            "grammar words are not concepts: {labels:?}"
        );
    }

    #[test]
    fn predicates_in_modifier_form_reach_the_lexicon() {
        let q = Query::analyze("깨지는 천장에 다는 녹슨", &Vocabulary::embedded());
        let labels: Vec<_> = q.concepts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels.len(), 4, "{labels:?}");
        assert!(labels[0].starts_with("깨지다"), "{labels:?}");
        assert!(labels[1].starts_with("천장"), "{labels:?}");
        assert!(labels[2].starts_with("달다"), "{labels:?}");
        assert!(labels[3].starts_with("녹슬다"), "{labels:?}");
        assert!(q.concepts[0].predicate && !q.concepts[1].predicate);
    }

    #[test]
    fn korean_phrases_match_their_translations_written_together() {
        let q = Query::analyze("채팅 박스 이미지", &Vocabulary::embedded());
        let labels: Vec<_> = q.concepts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(q.concepts.len(), 2, "{labels:?}");
        assert!(
            q.concepts.iter().all(|c| c.terms.iter().any(|(t, _)| t == "chatbox")),
            "{:?}",
            q.concepts
        );
    }

    #[test]
    fn english_compounds_match_written_together() {
        let q = Query::analyze("spider web", &Vocabulary::embedded());
        assert!(q.concepts.iter().all(|c| c.terms.iter().any(|(t, _)| t == "spiderweb")));
    }

    #[test]
    fn unknown_korean_words_become_loanwords_of_project_words() {
        let vocab = Vocabulary::embedded();
        let q = Query::analyze("스노우모빌", &vocab);
        assert!(q.has_unknown_korean());
        let row = crate::search::records::AssetRow {
            path: "Assets/Vehicles/Snowmobile_A.prefab".into(),
            name: "Snowmobile_A".into(),
            ..Default::default()
        };
        let resolved = q.with_loanwords(&LoanIndex::build(&[row]));
        assert!(!resolved.has_unknown_korean());
        assert!(resolved.concepts[0].terms.iter().any(|(t, _)| t == "snowmobil"));
        assert_eq!(resolved.concepts[0].prior, 1.0);
    }

    #[test]
    fn a_loanword_stands_unless_meaning_found_another_word() {
        let row = |path: &str| crate::search::records::AssetRow {
            path: path.into(),
            name: path.rsplit('/').next().unwrap().split('.').next().unwrap().into(),
            ..Default::default()
        };
        let near = |word: &str, term: &str| crate::search::route::WordMeaning {
            word: word.into(),
            term: term.into(),
            similarity: 0.9,
            weight: 0.6,
        };
        let vocab = Vocabulary::embedded();
        // Without a meaning (no model), the key alone decides.
        let loans = LoanIndex::build(&[row("Assets/Anim/Right Punch.anim"), row("Assets/Dept Water.png")]);
        let heard = Query::analyze("펀치", &vocab).with_loanwords(&loans);
        let terms: Vec<&str> = heard.concepts[0].terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(terms.contains(&"punch") && !terms.contains(&"dept"), "{terms:?}");
        assert!(!heard.has_unknown_korean());

        // The meaning stage weighed `chunk`, the word the sound of 생각
        // files, and found `thought` instead: the meaning stands.
        let loans = LoanIndex::build(&[row("Assets/Terrain/Chunk.prefab"), row("Assets/UI/ThoughtBubble.png")]);
        let by_meaning = Query::analyze("생각", &vocab).with_meanings(&[near("생각", "thought")], &vocab);
        let resolved = by_meaning.with_loanwords(&loans);
        let terms: Vec<&str> = resolved.concepts[0].terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(terms.contains(&"thought") && !terms.contains(&"chunk"), "{terms:?}");

        // Of several project words of its key, the one nearest in meaning
        // is the loanword; the others are not.
        let loans = LoanIndex::build(&[row("Assets/Icons/shuffle.png"), row("Assets/esPR.asset")]);
        let analyzed = Query::analyze("셔플", &vocab);
        let heard = analyzed
            .clone()
            .with_meanings(&[near("셔플", "shuffle")], &vocab)
            .with_loanwords(&loans);
        let terms: Vec<&str> = heard.concepts[0].terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(terms.contains(&"shuffl") && !terms.contains(&"espr"), "{terms:?}");
        let other = analyzed
            .with_meanings(&[near("셔플", "lzw")], &vocab)
            .with_loanwords(&loans);
        let terms: Vec<&str> = other.concepts[0].terms.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(terms, ["셔플", "lzw"], "ambiguous sound, the meaning stands");

        // A meaning that is a translation the lexicon gave confirms it.
        let confirmed = Query::analyze("explosion", &vocab).with_meanings(&[near("explosion", "exploding")], &vocab);
        assert_eq!(
            confirmed.concepts[0].by_meaning, None,
            "explode is explosion's own sibling"
        );
        let found = Query::analyze("explosion", &vocab).with_meanings(&[near("explosion", "kaboom")], &vocab);
        assert_eq!(found.concepts[0].by_meaning.as_deref(), Some("kaboom"));
    }

    #[test]
    fn spaced_korean_compounds_are_one_concept() {
        let vocab = Vocabulary::embedded();
        let spaced = Query::analyze("긴장감 있는 배경 음악을", &vocab);
        let joined = Query::analyze("긴장감 있는 배경음악을", &vocab);
        let labels = |q: &Query| {
            q.concepts
                .iter()
                .chain(&q.type_concepts)
                .map(|c| c.label.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(&spaced), labels(&joined));
        assert!(
            labels(&spaced).iter().any(|l| l.starts_with("배경음악")),
            "{:?}",
            labels(&spaced)
        );
        let apart = Query::analyze("좀비 악마", &vocab);
        assert_eq!(apart.concepts.len(), 2, "not a compound: two concepts");
        // 도로 read as particles (도 + 로) would leave 갈림길 alone and lose the road.
        let road = Query::analyze("갈림길 도로", &vocab);
        assert_eq!(labels(&road).len(), 2, "{:?}", labels(&road));
        let breathing = Query::analyze("숨 쉬는 소리", &vocab);
        assert!(labels(&breathing)[0].starts_with("숨쉬다"), "{:?}", labels(&breathing));
        // A word no key stands for is no key that contains it (주인, owner, is no 주인공).
        let owner = Query::analyze("상점 주인", &vocab);
        assert_eq!(
            owner.concepts[1].unknown_korean.as_deref(),
            Some("주인"),
            "{:?}",
            labels(&owner)
        );
        // A lexicon key joins as an alias does.
        let heartbeat = Query::analyze("심장 박동 소리", &vocab);
        assert!(
            labels(&heartbeat).iter().any(|l| l.starts_with("심장박동")),
            "{:?}",
            labels(&heartbeat)
        );
    }

    #[test]
    fn unknown_korean_words_count_less_and_stopwords_vanish() {
        let q = Query::analyze("퓨뷰퓨 만들어줘", &Vocabulary::embedded());
        assert_eq!(q.concepts.len(), 1);
        assert_eq!(q.concepts[0].prior, UNKNOWN_PRIOR);
    }
}
