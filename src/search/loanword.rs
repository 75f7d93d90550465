//! Loanword matching: a Hangul word that no vocabulary knows may be an
//! English word written in Hangul (랜턴, 헬리콥터, 바리케이드). Both sides are
//! reduced to a *phonetic key*, a skeleton of consonant classes robust to
//! how Korean spells English sounds — vowels dropped (so the ㅡ added after
//! a final consonant, 트/스/크, costs nothing), ㅍ/ㅂ with p/b/f/v,
//! ㄹ with l/r (an r after a vowel and before a consonant is silent, as in
//! 랜턴 for lantern), ㅈ/ㅊ/ㅅ with j/z/s/ch/sh, ㄱ/ㅋ with g/k/c/q, a
//! final ㅅ with t (로봇) — and the project's own English words (asset names
//! and folders) are searched for the key, so an unseen loanword finds its
//! asset without a lexicon entry.

use std::collections::{HashMap, HashSet};

use super::morph::decompose;
use super::records::AssetRow;
use super::text::{for_each_part, stem, words as words_of, Scratch};

/// A key shorter than this many consonant classes matches too much (팬 →
/// `PN`: fan, pan, pin, bone…).
pub const MIN_KEY: usize = 3;
/// The most English words one key may stand for; more is ambiguous.
const MAX_WORDS: usize = 4;

/// Consonant classes of the 19 Hangul initials (`-`: silent ㅇ and ㅎ).
const INITIAL: [&str; 19] = [
    "K", "K", "N", "T", "T", "L", "M", "P", "P", "S", "S", "", "S", "S", "S", "K", "T", "P", "",
];
/// Consonant classes of the 28 finals (index 0: none).
const FINAL: [&str; 28] = [
    "", "K", "K", "KS", "N", "N", "N", "T", "L", "LK", "LM", "LP", "LS", "LT", "LP", "L", "M", "P", "PS", "T", "T",
    "N", "T", "T", "K", "T", "P", "",
];

/// Append a class, collapsing a repeat (ㄹㄹ, `rr` → one L).
fn push(key: &mut String, class: &str) {
    for c in class.chars() {
        if !key.ends_with(c) {
            key.push(c);
        }
    }
}

/// The phonetic key of a Hangul word; empty when it holds no syllable.
pub fn hangul_key(word: &str) -> String {
    let mut key = String::new();
    for c in word.chars() {
        if let Some((i, _, f)) = decompose(c) {
            push(&mut key, INITIAL[i as usize]);
            push(&mut key, FINAL[f as usize]);
        }
    }
    key
}

/// The phonetic key of an English word (ASCII letters; others ignored).
pub fn latin_key(word: &str) -> String {
    let lower: Vec<u8> = word
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .map(|b| b.to_ascii_lowercase())
        .collect();
    // A silent final e (fire, crate, barricade) does not keep an r or soften a c.
    let end = match lower.as_slice() {
        [.., c, b'e'] if lower.len() > 3 && !is_vowel(*c) => lower.len() - 1,
        _ => lower.len(),
    };
    let w = &lower[..end];
    // Look-ahead sees the silent e too: it still softens c and g (fence, stage).
    let at = |i: usize| lower.get(i).copied().unwrap_or(0);
    let soft = |b: u8| matches!(b, b'e' | b'i' | b'y');
    let mut key = String::new();
    let mut i = 0;
    while i < w.len() {
        let (c, next) = (w[i], at(i + 1));
        let (class, step) = match (c, next) {
            (b't', b'c') if at(i + 2) == b'h' => ("S", 3),
            // -tion, -sion, -ture: 션, 처 (potion, texture).
            (b't' | b's', b'i') if at(i + 2) == b'o' => ("S", 2),
            (b't', b'u') if at(i + 2) == b'r' && i + 4 == lower.len() => ("S", 1),
            // -ts: ㅊ (boots 부츠).
            (b't', b's') if i + 2 >= w.len() => ("S", 2),
            (b'c' | b's' | b't', b'h') => ("S", 2),
            (b'p', b'h') => ("P", 2),
            (b'g', b'h') if i == 0 => ("K", 2),
            (b'g', b'h') => ("", 2),
            (b'g', b'n') => ("", 1),
            (b'd', b'g') => ("", 1),
            (b'c', b'k') => ("K", 2),
            (b'q', b'u') => ("K", 2),
            // ng: 응 at the end, 응ㄱ/응ㅈ before a vowel (hangar 행거, engine 엔진).
            (b'n', b'g') if soft(at(i + 2)) => ("NS", 2),
            (b'n', b'g') if is_vowel(at(i + 2)) => ("NK", 2),
            (b'n', b'g') => ("N", 2),
            (b'k', b'n') if i == 0 => ("N", 2),
            (b'm', b'b' | b'n') if i + 2 >= w.len() => ("M", 2),
            (b'c', _) if soft(next) => ("S", 1),
            (b'g', b'e' | b'y') if i == 0 || w[i - 1] != b'g' => ("S", 1),
            (b'c' | b'k' | b'q' | b'g', _) => ("K", 1),
            (b'x', _) => ("KS", 1),
            (b's' | b'z' | b'j', _) => ("S", 1),
            (b'b' | b'p' | b'f' | b'v', _) => ("P", 1),
            (b'd' | b't', _) => ("T", 1),
            (b'm', _) => ("M", 1),
            (b'n', _) => ("N", 1),
            (b'l', _) => ("L", 1),
            // An r after a vowel and not before one is not pronounced.
            (b'r', _) if i > 0 && is_vowel(w[i - 1]) && !w.get(i + 1).copied().is_some_and(is_vowel) => ("", 1),
            (b'r', _) => ("L", 1),
            _ => ("", 1),
        };
        push(&mut key, class);
        i += step;
    }
    key
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// Add the words of `row` a loanword may stand for: every part of its
/// name and folders, three ASCII letters or more.
pub fn collect_words(row: &AssetRow, scratch: &mut Scratch, words: &mut HashSet<String>) {
    let folders = row.path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
    let mut keep = |word: &str| {
        if word.len() >= 3 && word.bytes().all(|b| b.is_ascii_alphabetic()) && !words.contains(word) {
            words.insert(word.to_owned());
        }
    };
    for text in [row.name.as_str(), folders] {
        for word in words_of(text) {
            // A word of two or three parts is also its parts joined
            // (`FireBall3` → `fireball`), as the record's terms are: 파이어볼.
            let mut joined = String::new();
            let mut parts = 0;
            for_each_part(word, scratch, |part| {
                keep(part);
                if part.bytes().all(|b| b.is_ascii_alphabetic()) {
                    joined.push_str(part);
                    parts += 1;
                }
            });
            if (2..=3).contains(&parts) {
                keep(&joined);
            }
        }
    }
}

/// A project word's phonetic key and the term it stands for, when the key
/// is long enough to trust: how [`LoanIndex`] files the word.
pub fn keyed(word: &str) -> Option<(String, String)> {
    let key = latin_key(word);
    (key.len() >= MIN_KEY).then(|| (key, stem(word)))
}

/// The project's English words by phonetic key: every part of every asset
/// name and folder (stemmed like record terms), three letters or more.
#[derive(Debug, Default)]
pub struct LoanIndex {
    by_key: HashMap<String, Vec<String>>,
}

impl LoanIndex {
    pub fn build(rows: &[AssetRow]) -> Self {
        let mut words = HashSet::new();
        let mut scratch = Scratch::default();
        for row in rows {
            collect_words(row, &mut scratch, &mut words);
        }
        Self::from_words(words)
    }

    /// The index of words [`collect_words`] gathered.
    pub fn from_words(words: impl IntoIterator<Item = String>) -> Self {
        Self::from_keyed(words.into_iter().filter_map(|word| keyed(&word)))
    }

    /// The index of `(key, term)` pairs [`keyed`] made (the search index
    /// stores them, so a query reads the terms of its own keys only, not
    /// the whole project's words).
    pub fn from_keyed(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut by_key: HashMap<String, Vec<String>> = HashMap::new();
        for (key, term) in pairs {
            let list = by_key.entry(key).or_default();
            if !list.contains(&term) {
                list.push(term);
            }
        }
        for list in by_key.values_mut() {
            list.sort();
        }
        Self { by_key }
    }

    /// The project's words a Hangul word may be the loanword of (none when
    /// its key is short or stands for too many words).
    pub fn lookup(&self, hangul: &str) -> &[String] {
        let key = hangul_key(hangul);
        if key.len() < MIN_KEY {
            return &[];
        }
        match self.by_key.get(&key) {
            Some(words) if words.len() <= MAX_WORDS => words,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ≥ 200 common game loanwords and their English forms (tab separated).
    const PAIRS: &str = include_str!("testdata/loanwords.tsv");

    #[test]
    fn common_game_loanwords_share_the_key_of_their_english_form() {
        let pairs: Vec<(&str, &str)> = PAIRS
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| l.split_once('\t'))
            .collect();
        assert!(pairs.len() >= 200, "{} pairs", pairs.len());
        let misses: Vec<String> = pairs
            .iter()
            .filter(|(ko, en)| hangul_key(ko) != latin_key(en))
            .map(|(ko, en)| format!("{ko} {} / {en} {}", hangul_key(ko), latin_key(en)))
            .collect();
        let rate = 1.0 - misses.len() as f64 / pairs.len() as f64;
        println!(
            "loanword keys agree on {:.1}% of {} pairs; misses: {misses:?}",
            rate * 100.0,
            pairs.len()
        );
        assert!(rate >= 0.85, "{rate:.3}: {misses:#?}");
    }

    #[test]
    fn keys_follow_korean_spelling_of_english_sounds() {
        for (ko, en) in [
            ("랜턴", "lantern"),
            ("헬리콥터", "helicopter"),
            ("바리케이드", "barricade"),
            ("트램펄린", "trampoline"),
            ("컨테이너", "container"),
            ("로봇", "robot"),
            ("토치", "torch"),
        ] {
            assert_eq!(hangul_key(ko), latin_key(en), "{ko} / {en}");
        }
        assert_ne!(hangul_key("랜턴"), latin_key("lamp"));
    }

    #[test]
    fn the_index_finds_project_words_by_loanword() {
        let row = |path: &str| AssetRow {
            path: path.into(),
            name: path.rsplit('/').next().unwrap().split('.').next().unwrap().into(),
            ..Default::default()
        };
        let rows = vec![
            row("Assets/Props/Lanterns/Lantern_Old.prefab"),
            row("Assets/Vehicles/Helicopter_A.prefab"),
            row("Assets/Props/Fan.prefab"),
            row("Assets/Vehicles/SnowMobile_02.prefab"),
        ];
        let index = LoanIndex::build(&rows);
        // A name's words joined are a word too, as the record's terms are.
        assert_eq!(
            index.lookup("스노우모빌"),
            [stem("snowmobile")],
            "stemmed as the index is"
        );
        assert!(crate::search::text::terms("SnowMobile_02").contains(&"snowmobil".to_owned()));
        assert_eq!(index.lookup("랜턴"), [stem("lantern")]);
        assert_eq!(index.lookup("헬리콥터"), ["helicopter"]);
        assert!(index.lookup("팬").is_empty(), "too short to trust");
        assert!(index.lookup("우주선").is_empty());
    }
}
