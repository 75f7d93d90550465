//! Korean morphology by rule: a predicate in modifier or connective form
//! (깨지는, 닫힌, 떨어지던, 녹슨, 무거운) reduced to lemma candidates in
//! dictionary form (깨지다, 닫히다, 떨어지다, 녹슬다, 무겁다), and a
//! derived predicate to its noun root (폭발하는 → 폭발하다 → 폭발).
//!
//! The rules are data (`data/korean-morphology.yml`); the lexicon decides
//! which candidates are words, so a rule may over-generate.

use serde::Deserialize;

/// The copy shipped in the binary.
const EMBEDDED: &str = include_str!("../../data/korean-morphology.yml");

const SYLLABLE_BASE: u32 = 0xAC00;
const SYLLABLE_LAST: u32 = 0xD7A3;
const MEDIALS: u32 = 21;
const FINALS: u32 = 28;
/// Compatibility jamo of the 27 final consonants (index 1..=27).
const FINAL_JAMO: [char; 28] = [
    '\0', 'ㄱ', 'ㄲ', 'ㄳ', 'ㄴ', 'ㄵ', 'ㄶ', 'ㄷ', 'ㄹ', 'ㄺ', 'ㄻ', 'ㄼ', 'ㄽ', 'ㄾ', 'ㄿ', 'ㅀ', 'ㅁ', 'ㅂ', 'ㅄ',
    'ㅅ', 'ㅆ', 'ㅇ', 'ㅈ', 'ㅊ', 'ㅋ', 'ㅌ', 'ㅍ', 'ㅎ',
];
/// Compatibility jamo of the 21 medial vowels.
const MEDIAL_JAMO: [char; 21] = [
    'ㅏ', 'ㅐ', 'ㅑ', 'ㅒ', 'ㅓ', 'ㅔ', 'ㅕ', 'ㅖ', 'ㅗ', 'ㅘ', 'ㅙ', 'ㅚ', 'ㅛ', 'ㅜ', 'ㅝ', 'ㅞ', 'ㅟ', 'ㅠ', 'ㅡ',
    'ㅢ', 'ㅣ',
];

/// A Hangul syllable's parts: initial (0..19), medial (0..21), final (0..28).
pub fn decompose(c: char) -> Option<(u32, u32, u32)> {
    let code = c as u32;
    if !(SYLLABLE_BASE..=SYLLABLE_LAST).contains(&code) {
        return None;
    }
    let offset = code - SYLLABLE_BASE;
    Some((offset / (MEDIALS * FINALS), offset / FINALS % MEDIALS, offset % FINALS))
}

pub fn compose(initial: u32, medial: u32, last: u32) -> char {
    char::from_u32(SYLLABLE_BASE + (initial * MEDIALS + medial) * FINALS + last).unwrap_or('\u{FFFD}')
}

fn final_index(jamo: char) -> Option<u32> {
    FINAL_JAMO.iter().skip(1).position(|&j| j == jamo).map(|i| i as u32 + 1)
}

fn medial_index(jamo: char) -> Option<u32> {
    MEDIAL_JAMO.iter().position(|&j| j == jamo).map(|i| i as u32)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default, rename = "version")]
    _version: Option<u32>,
    endings: Vec<String>,
    final_endings: Vec<char>,
    contractions: std::collections::BTreeMap<char, char>,
    l_drop: bool,
    b_irregular: bool,
    h_irregular: Vec<char>,
    noun_roots: Vec<String>,
    modifier_nouns: Vec<String>,
}

/// The rule tables, with jamo resolved to indices.
#[derive(Debug)]
pub struct Morphology {
    endings: Vec<String>,
    final_endings: Vec<u32>,
    contractions: Vec<(u32, u32)>,
    l_drop: bool,
    b_irregular: bool,
    h_irregular: Vec<u32>,
    noun_roots: Vec<String>,
    modifier_nouns: Vec<String>,
}

impl Morphology {
    /// The rules shipped in the binary.
    pub fn embedded() -> &'static Self {
        static RULES: std::sync::OnceLock<Morphology> = std::sync::OnceLock::new();
        RULES.get_or_init(|| Self::parse(EMBEDDED).expect("the embedded data/korean-morphology.yml is valid (tested)"))
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let file: RulesFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let jamo = |c: char, index: fn(char) -> Option<u32>, what: &str| {
            index(c).ok_or_else(|| format!("{c:?} is not a Korean {what} jamo"))
        };
        Ok(Self {
            endings: file.endings,
            final_endings: file
                .final_endings
                .into_iter()
                .map(|c| jamo(c, final_index, "final consonant"))
                .collect::<Result<_, _>>()?,
            contractions: file
                .contractions
                .into_iter()
                .map(|(from, to)| Ok((jamo(from, medial_index, "vowel")?, jamo(to, medial_index, "vowel")?)))
                .collect::<Result<_, String>>()?,
            l_drop: file.l_drop,
            b_irregular: file.b_irregular,
            h_irregular: file
                .h_irregular
                .into_iter()
                .map(|c| jamo(c, medial_index, "vowel"))
                .collect::<Result<_, _>>()?,
            noun_roots: file.noun_roots,
            modifier_nouns: file.modifier_nouns,
        })
    }

    /// Whether `word` is a dependent noun a predicate in modifier form comes
    /// before (때 of 살 때): the word before it is read as a predicate first.
    pub fn is_modifier_noun(&self, word: &str) -> bool {
        self.modifier_nouns.iter().any(|n| n == word)
    }

    /// Lemma candidates of `word` (no particles), in dictionary form, most
    /// likely first, without duplicates; noun roots of derived predicates
    /// follow their lemma. The word itself is not included.
    pub fn lemmas(&self, word: &str) -> Vec<String> {
        let mut stems: Vec<Vec<char>> = Vec::new();
        let chars: Vec<char> = word.chars().collect();
        if chars.is_empty() || !chars.iter().all(|&c| decompose(c).is_some()) {
            return Vec::new();
        }
        for ending in &self.endings {
            if let Some(stem) = word.strip_suffix(ending.as_str()) {
                if !stem.is_empty() {
                    stems.push(stem.chars().collect());
                }
            }
        }
        // A connective 어/아 fused into the last syllable (닫혀 = 닫히 + 어).
        stems.push(chars.clone());
        if let Some((&last, rest)) = chars.split_last() {
            if let Some((i, m, f)) = decompose(last) {
                if self.final_endings.contains(&f) {
                    let mut stem = rest.to_vec();
                    stem.push(compose(i, m, 0));
                    stems.push(stem);
                }
            }
        }
        let mut variants = Vec::new();
        for stem in stems {
            self.variants(stem, &mut variants);
        }
        let mut out: Vec<String> = Vec::new();
        for stem in variants {
            let lemma: String = stem.iter().chain(['다'].iter()).collect();
            if lemma == word || out.contains(&lemma) {
                continue;
            }
            let root = self
                .noun_roots
                .iter()
                .find_map(|r| lemma.strip_suffix(r.as_str()).filter(|n| n.chars().count() >= 1));
            out.push(lemma.clone());
            if let Some(noun) = root {
                if !out.iter().any(|o| o == noun) {
                    out.push(noun.to_owned());
                }
            }
        }
        out
    }

    /// A stem and its irregular and contracted alternatives.
    fn variants(&self, stem: Vec<char>, out: &mut Vec<Vec<char>>) {
        let Some(&last) = stem.last() else { return };
        let Some((i, m, f)) = decompose(last) else { return };
        let head = &stem[..stem.len() - 1];
        let with_last = |c: char| head.iter().copied().chain([c]).collect::<Vec<char>>();
        let mut push = |s: Vec<char>| {
            if !s.is_empty() && !out.contains(&s) {
                out.push(s);
            }
        };
        push(stem.clone());
        // Past tense fused into the stem: 졌 → 지, 했 → 하, 닫혔 → 닫히; a bare 었/았/였 goes.
        let (m, f) = if f == 20 {
            if i == 11 && matches!(m, 0 | 4 | 6) {
                push(head.to_vec());
                // 였 is also 이 + 었 (움직였던 → 움직이다).
                if m == 6 {
                    push(head.iter().copied().chain([compose(11, 20, 0)]).collect());
                }
                return;
            }
            (m, 0)
        } else {
            (m, f)
        };
        if f == 0 {
            push(with_last(compose(i, m, 0)));
            if let Some(&(_, to)) = self.contractions.iter().find(|(from, _)| *from == m) {
                push(with_last(compose(i, to, 0)));
            }
            if self.l_drop {
                push(with_last(compose(i, m, 8)));
            }
            if self.h_irregular.contains(&m) {
                push(with_last(compose(i, m, 27)));
            }
            // 우 after a syllable: the ㅂ of an ㅂ-stem (무거우 → 무겁).
            if self.b_irregular && i == 11 && m == 13 {
                if let Some((&prev, before)) = head.split_last() {
                    if let Some((pi, pm, 0)) = decompose(prev) {
                        push(before.iter().copied().chain([compose(pi, pm, 17)]).collect());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn has(word: &str, lemma: &str) -> bool {
        Morphology::embedded().lemmas(word).iter().any(|l| l == lemma)
    }

    #[test]
    fn modifier_and_connective_forms_reach_the_lemma() {
        for (surface, lemma) in [
            ("깨지는", "깨지다"),
            ("깨진", "깨지다"),
            ("닫히는", "닫히다"),
            ("닫힌", "닫히다"),
            ("떨어지는", "떨어지다"),
            ("떨어지던", "떨어지다"),
            ("타오르는", "타오르다"),
            ("날아다니는", "날아다니다"),
            ("녹슨", "녹슬다"),
            ("다는", "달다"),
            ("여는", "열다"),
            ("무거운", "무겁다"),
            ("파란", "파랗다"),
            ("하얀", "하얗다"),
            ("큰", "크다"),
            ("부서졌던", "부서지다"),
            ("닫혀", "닫히다"),
            ("빛나게", "빛나다"),
            ("부서지면", "부서지다"),
            ("추락한", "추락하다"),
            ("추락한", "추락"),
            ("폭발하는", "폭발"),
            ("평화로운", "평화"),
            ("전통적인", "전통"),
            ("쏘는", "쏘다"),
        ] {
            assert!(
                has(surface, lemma),
                "{surface} → {:?}",
                Morphology::embedded().lemmas(surface)
            );
        }
        assert!(Morphology::embedded().lemmas("barrel").is_empty());
    }

    /// Regular present, past, retrospective and connective forms of a
    /// stem, built the textbook way (independently of the analyser).
    fn surfaces(lemma: &str) -> Vec<String> {
        let stem: Vec<char> = lemma.strip_suffix('다').unwrap().chars().collect();
        let (&last, head) = stem.split_last().unwrap();
        let (i, m, f) = decompose(last).unwrap();
        let s: String = stem.iter().collect();
        let head: String = head.iter().collect();
        let mut out = vec![format!("{s}던"), format!("{s}고"), format!("{s}게")];
        match f {
            // ㄹ-stem: ㄹ drops before ㄴ/는, and 면 follows directly.
            8 => {
                let open = format!("{head}{}", compose(i, m, 0));
                out.extend([
                    format!("{open}는"),
                    format!("{head}{}", compose(i, m, 4)),
                    format!("{s}면"),
                ]);
            }
            0 => out.extend([
                format!("{s}는"),
                format!("{head}{}", compose(i, m, 4)),
                format!("{s}면"),
                format!("{head}{}", compose(i, m, 8)),
            ]),
            _ => out.extend([format!("{s}는"), format!("{s}은"), format!("{s}으면"), format!("{s}을")]),
        }
        // Past retrospective with the vowel contraction of 이/히/지 stems.
        if f == 0 && m == 20 {
            out.push(format!("{head}{}던", compose(i, 6, 20)));
        }
        out
    }

    proptest! {
        /// Every common surface form of a lemma reduces to it.
        #[test]
        fn surface_forms_reduce_to_their_lemma(
            lemma in prop::sample::select(vec![
                "깨지다", "닫히다", "떨어지다", "타오르다", "날아다니다", "부서지다", "무너지다",
                "빛나다", "열다", "달다", "녹슬다", "만들다", "날다", "닫다", "먹다", "잡다",
                "찢다", "굴러가다", "회전하다", "폭발하다", "흔들리다", "쓰러지다", "숨기다",
                "잠기다", "떠다니다", "불타다", "얼다", "튀다", "달리다", "움직이다", "반짝이다",
            ])
        ) {
            for surface in surfaces(lemma) {
                let lemmas = Morphology::embedded().lemmas(&surface);
                prop_assert!(lemmas.iter().any(|l| l == lemma), "{} → {:?}, not {}", surface, lemmas, lemma);
            }
        }

        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = Morphology::embedded().lemmas(&s);
        }
    }
}
