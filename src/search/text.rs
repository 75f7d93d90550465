//! Text normalisation shared by the validator, the router and the ranker.
//!
//! Asset fields are English identifiers and prose (`Zombie_Fast`, `main-menu`,
//! `"Fast-chasing zombie enemy prefab."`); queries are Korean or English
//! prose. Both sides go through the same word splitting and stemming so a term
//! produced from a query compares equal to a term produced from a record:
//! - a *word* is a run of letters/digits joined by `-` or `_`;
//! - a word splits into *parts* at `-`/`_`, lower→Upper (`MainMenu`),
//!   acronym ends (`HUDOverlay`) and letter↔digit boundaries; every part is a
//!   term and, when there are several, so is their concatenation
//!   (`main-menu`, `MainMenu` → `main`, `menu`, `mainmenu`), so `top-down`
//!   in a tag meets `topdown` in a query; a compound with a number is also
//!   its words alone (`FireBall3` → `fireball3`, `fireball`);
//! - English terms are lowercased and lightly stemmed ([`stem`]);
//! - Korean words are kept whole; query words also lose trailing particles
//!   ([`korean_forms`]).

/// Call `emit` with every term of `text`, in order. `scratch` is reused
/// between calls so scanning many records allocates nothing per term.
pub fn for_each_term(text: &str, scratch: &mut Scratch, mut emit: impl FnMut(&str)) {
    for_each_term_where(
        text,
        scratch,
        |_| true,
        |term| {
            if let Some(term) = term {
                emit(term);
            }
        },
    );
}

/// [`for_each_term`] for scoring: every term position is reported, but a
/// term whose unstemmed text `may_match` rules out is reported as `None`
/// without being lowercased and stemmed, so a ranker counts field lengths
/// while paying only for the terms it can use. Stemming keeps a term's first
/// character (lowercased), so a first-letter test is a sound filter.
pub fn for_each_term_where(
    text: &str,
    scratch: &mut Scratch,
    may_match: impl Fn(&str) -> bool,
    mut emit: impl FnMut(Option<&str>),
) {
    for word in words(text) {
        scratch.parts.clear();
        split_parts(word, &mut scratch.parts);
        // A compound starts where its first part does.
        let compound = scratch.parts.len() > 1;
        let want_compound = compound && may_match(&word[scratch.parts[0].0..]);
        // A numbered compound is also its words alone (`FireBall3` →
        // `fireball`): the number tells copies apart, not what they are.
        // Single letters are no words here (`Stairs_400x100_A` has one).
        let is_number = |&(start, end): &(usize, usize)| word[start..end].bytes().all(|b| b.is_ascii_digit());
        let is_word =
            |&(start, end): &(usize, usize)| !is_number(&(start, end)) && word[start..end].chars().nth(1).is_some();
        let words_alone =
            scratch.parts.iter().any(is_number) && scratch.parts.iter().filter(|p| is_word(p)).count() > 1;
        let want_words_alone = words_alone
            && scratch
                .parts
                .iter()
                .find(|p| is_word(p))
                .is_some_and(|&(start, _)| may_match(&word[start..]));
        scratch.joined.clear();
        scratch.lettered.clear();
        for &(start, end) in &scratch.parts {
            let part = &word[start..end];
            if part.chars().nth(1).is_none() && !part.chars().any(is_hangul) {
                // Single letters and digits ("a", "2") carry no meaning alone,
                // but still count towards the compound ("2d", "ui2").
            } else if may_match(part) {
                scratch.term.clear();
                stem_into(part, &mut scratch.term);
                emit(Some(&scratch.term));
            } else {
                emit(None);
            }
            if want_compound {
                lower_into(part, &mut scratch.joined);
            }
            if want_words_alone && is_word(&(start, end)) {
                lower_into(part, &mut scratch.lettered);
            }
        }
        emit_joined(compound, want_compound, &scratch.joined, &mut scratch.term, &mut emit);
        emit_joined(
            words_alone,
            want_words_alone,
            &scratch.lettered,
            &mut scratch.term,
            &mut emit,
        );
    }
}

/// A term made of several parts (a compound, a numbered compound's words):
/// stemmed into `term` and emitted when wanted, else counted as a position.
fn emit_joined(exists: bool, wanted: bool, joined: &str, term: &mut String, emit: &mut impl FnMut(Option<&str>)) {
    if wanted {
        term.clear();
        stem_into(joined, term);
        emit(Some(term));
    } else if exists {
        emit(None);
    }
}

/// All terms of `text` (see [`for_each_term`]).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, &mut Scratch::default(), |t| out.push(t.to_owned()));
    out
}

/// Every part of every word of `text`, lowercased but not stemmed
/// (`Zombie_Walker` → `zombie`, `walker`), skipping single letters and
/// digits. For text that is stored and tokenised again later, where a
/// stem would be stemmed twice.
pub fn for_each_part(text: &str, scratch: &mut Scratch, mut emit: impl FnMut(&str)) {
    for word in words(text) {
        scratch.parts.clear();
        split_parts(word, &mut scratch.parts);
        for &(start, end) in &scratch.parts {
            let part = &word[start..end];
            if part.chars().nth(1).is_none() && !part.chars().any(is_hangul) {
                continue;
            }
            scratch.term.clear();
            lower_into(part, &mut scratch.term);
            emit(&scratch.term);
        }
    }
}

/// The single term a phrase stands for: `"sound-effect"`, `"sound effect"` and
/// `"SoundEffects"` all give `soundeffect`. Used for alias and rule entries,
/// which name one concept even when written as several words.
pub fn phrase_term(phrase: &str) -> Option<String> {
    let joined: String = phrase.chars().filter(|c| c.is_alphanumeric()).collect();
    if joined.is_empty() {
        return None;
    }
    let mut out = String::new();
    stem_into(&joined, &mut out);
    Some(out)
}

/// Reusable buffers for [`for_each_term`].
#[derive(Default)]
pub struct Scratch {
    parts: Vec<(usize, usize)>,
    joined: String,
    lettered: String,
    term: String,
}

/// Words of `text`: runs of alphanumerics, with `-` and `_` inside a word.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .map(|w| w.trim_matches(|c| c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
}

pub fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
}

/// Byte ranges of the parts of one word (no allocation: this runs for
/// every word of every record). An ASCII word is walked byte by byte,
/// skipping UTF-8 decoding; both walks apply [`split_chars`]' rule.
fn split_parts(word: &str, out: &mut Vec<(usize, usize)>) {
    if word.is_ascii() {
        split_chars(word.bytes().map(char::from).enumerate(), word.len(), out);
    } else {
        split_chars(word.char_indices(), word.len(), out);
    }
}

fn split_chars(chars: impl Iterator<Item = (usize, char)>, len: usize, out: &mut Vec<(usize, usize)>) {
    let mut start: Option<usize> = None;
    let mut prev = '\0';
    let mut chars = chars.peekable();
    while let Some((at, c)) = chars.next() {
        if c == '-' || c == '_' {
            if let Some(s) = start.take() {
                out.push((s, at));
            }
        } else if let Some(s) = start {
            let next = chars.peek().map(|&(_, n)| n);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
                || prev.is_ascii_digit() != c.is_ascii_digit();
            if boundary && s < at {
                out.push((s, at));
                start = Some(at);
            }
        } else {
            start = Some(at);
        }
        prev = c;
    }
    if let Some(s) = start {
        out.push((s, len));
    }
}

fn lower_into(s: &str, out: &mut String) {
    if s.is_ascii() {
        out.extend(s.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        out.extend(s.chars().flat_map(char::to_lowercase));
    }
}

/// Lowercase and stem one word into `out`, in place (no allocation).
fn stem_into(word: &str, out: &mut String) {
    let start = out.len();
    lower_into(word, out);
    let (keep, suffix) = stem_edit(&out[start..]);
    out.truncate(start + keep);
    out.push_str(suffix);
}

/// A light English stemmer: plurals, `-ing`, `-ed`, with the doubled
/// consonant undone (`running` → `run`). Both sides of every comparison are
/// stemmed the same way, so it only has to be consistent, not linguistically
/// exact; it is deliberately timid so that distinct words stay distinct.
pub fn stem(word: &str) -> String {
    let (keep, suffix) = stem_edit(word);
    format!("{}{suffix}", &word[..keep])
}

/// The stem of `word` as an edit: keep this many bytes, then add this suffix.
fn stem_edit(word: &str) -> (usize, &'static str) {
    if word.len() <= 3 || !word.is_ascii() {
        return (word.len(), "");
    }
    // A final y and ie both become i, so enemy/enemies and zombie/zombies
    // meet: enemi, zombi.
    if word.ends_with("ies") && word.len() >= 5 {
        return (word.len() - 3, "i");
    }
    let w = if word.ends_with("sses") {
        &word[..word.len() - 2]
    } else if word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is") {
        &word[..word.len() - 1]
    } else {
        word
    };
    // A final oe loses its e, so hero/heroes and shoe/shoes both meet:
    // hero, sho.
    if w.len() >= 4 && w.ends_with("oe") {
        return (w.len() - 1, "");
    }
    for suffix in ["ing", "ed"] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.len() >= 3 && base.bytes().any(|b| b"aeiouy".contains(&b)) {
                let single = undouble(base);
                // A short stem lost its e (firing, shaking): it is fire, shake.
                let e = if single.len() == base.len() && short_syllable(base) {
                    "e"
                } else {
                    ""
                };
                return (single.len(), e);
            }
        }
    }
    let b = w.as_bytes();
    match b {
        [.., b'i', b'e'] => (w.len() - 1, ""),
        [.., c, b'y'] if !b"aeiou".contains(c) => (w.len() - 1, "i"),
        // A final e goes unless the stem is one short syllable (fire, shake
        // keep it), so explode and exploding, bounce and bouncing meet.
        [.., b'e'] if !is_vowel(b, b.len() - 2) && !short_syllable(&w[..w.len() - 1]) => (w.len() - 1, ""),
        _ => (w.len(), ""),
    }
}

/// Whether `b[i]` is a vowel: a, e, i, o, u, and y after a consonant.
fn is_vowel(b: &[u8], i: usize) -> bool {
    match b[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => true,
        b'y' => i > 0 && !is_vowel(b, i - 1),
        _ => false,
    }
}

/// Whether `stem` is one syllable ending consonant–vowel–consonant (fir,
/// shak, hop; not w, x or y last): Porter's test for a lost final e.
fn short_syllable(stem: &str) -> bool {
    let b = stem.as_bytes();
    let n = b.len();
    let vowels = (0..n)
        .filter(|&i| is_vowel(b, i) && (i == 0 || !is_vowel(b, i - 1)))
        .count();
    n >= 3
        && vowels == 1
        && !is_vowel(b, n - 1)
        && is_vowel(b, n - 2)
        && !is_vowel(b, n - 3)
        && !b"wxy".contains(&b[n - 1])
}

fn undouble(base: &str) -> &str {
    let b = base.as_bytes();
    let n = b.len();
    if n >= 2 && b[n - 1] == b[n - 2] && !b"aeioulsz".contains(&b[n - 1]) {
        &base[..n - 1]
    } else {
        base
    }
}

/// Korean particles and endings a query word may carry, longest first.
const PARTICLES: &[&str] = &[
    "에서는",
    "으로는",
    "으로",
    "에서",
    "에게",
    "한테",
    "까지",
    "부터",
    "처럼",
    "보다",
    "하고",
    "이랑",
    "에는",
    "에도",
    "랑",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "의",
    "에",
    "용",
    "로",
    "와",
    "과",
    "도",
    "만",
    "한",
];

/// A Korean query word and the forms left after removing trailing particles
/// one at a time (`게임용으로` → `게임용으로`, `게임용`, `게임`). The word
/// itself comes first; a form is never reduced to nothing.
pub fn korean_forms(word: &str) -> Vec<String> {
    let mut forms = vec![word.to_owned()];
    let mut current = word;
    for _ in 0..2 {
        let Some(next) = PARTICLES
            .iter()
            .find_map(|p| current.strip_suffix(p).filter(|rest| rest.chars().any(is_hangul)))
        else {
            break;
        };
        forms.push(next.to_owned());
        current = next;
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn splits_camel_snake_kebab_and_digits() {
        assert_eq!(
            terms("Wall_02_Decorated"),
            ["wall", "02", "decorat", "wall02decorat", "walldecorat"]
        );
        assert_eq!(terms("MainMenu"), ["main", "menu", "mainmenu"]);
        assert_eq!(terms("HUDOverlay"), ["hud", "overlay", "hudoverlay"]);
        assert_eq!(terms("top-down view"), ["top", "down", "topdown", "view"]);
        assert_eq!(terms("Assets/Packages/ZombieKit/Prefabs/Zombie_Fast.prefab").len(), 10);
    }

    #[test]
    fn stems_consistently() {
        assert_eq!(stem("zombies"), stem("zombie"));
        assert_eq!(stem("heroes"), stem("hero"));
        assert_eq!(stem("shoes"), stem("shoe"));
        assert_eq!(stem("potatoes"), stem("potato"));
        assert_eq!(stem("settings"), stem("setting"));
        assert_eq!(stem("running"), "run");
        assert_eq!(stem("weathered"), "weather");
        assert_eq!(stem("enemies"), stem("enemy"));
        assert_eq!(stem("glass"), "glass");
        for (a, b) in [
            ("explode", "exploding"),
            ("bounce", "bouncing"),
            ("fire", "firing"),
            ("shake", "shaking"),
            ("animate", "animated"),
            ("slide", "slides"),
            ("table", "tables"),
            ("rotate", "rotating"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} and {b} meet");
        }
        assert_ne!(stem("fire"), stem("fir"));
        assert_ne!(stem("plane"), stem("plan"));
        assert_eq!(stem("waving"), "wave", "not the wav extension");
        assert_eq!(stem("tree"), "tree");
        assert_eq!(stem("ui"), "ui");
        assert_eq!(phrase_term("sound-effect"), phrase_term("Sound Effects"));
    }

    #[test]
    fn strips_korean_particles() {
        assert_eq!(korean_forms("게임용으로"), ["게임용으로", "게임용", "게임"]);
        assert_eq!(korean_forms("메뉴와"), ["메뉴와", "메뉴"]);
        assert_eq!(korean_forms("이"), ["이"]);
        assert_eq!(terms("좀비 캐릭터"), ["좀비", "캐릭터"]);
    }

    proptest! {
        /// The ranker's first-letter filter is sound: it reports every term
        /// position and drops exactly the terms whose first letter it rules out.
        #[test]
        fn a_first_letter_filter_drops_only_what_it_rules_out(s in "[ -~가-힣]*", letters in "[a-z0-9]{0,6}") {
            let allowed = |t: &str| {
                t.as_bytes()
                    .first()
                    .is_some_and(|&b| !b.is_ascii() || letters.as_bytes().contains(&b.to_ascii_lowercase()))
            };
            let all = terms(&s);
            let (mut positions, mut kept) = (0, Vec::new());
            for_each_term_where(&s, &mut Scratch::default(), allowed, |t| {
                positions += 1;
                kept.extend(t.map(str::to_owned));
            });
            prop_assert_eq!(positions, all.len());
            let expected: Vec<String> = all.into_iter().filter(|t| allowed(t)).collect();
            prop_assert_eq!(kept, expected);
        }

        #[test]
        fn tokenizer_never_panics(s in "\\PC*") {
            let _ = terms(&s);
            for w in words(&s) { let _ = korean_forms(w); }
            let _ = phrase_term(&s);
        }
    }
}
