//! The builtin router (`search.route`): sub-intents with category and
//! subtype hints, in the shape of `schemas/search-routing.schema.json`.
//!
//! A query splits where the user joins requests: `,` `+` `&` `/` `;`, the
//! words 및 / 그리고 / and, and a Korean word ending in 와/과/랑/이랑/하고
//! whose stem is a known word ("메뉴와" splits, "효과" does not). An "and"
//! inside an English post-modifier joins its verbs, not two requests ("pot
//! that the player can pick up and throw"). A query
//! that asks to *make* a game or scene with no explicit split becomes one
//! sub-intent per role of `scene_request` (enemy, player, environment, UI),
//! each keeping the query's theme words.

use serde::{Deserialize, Serialize};

use super::query::{is_post_modifier_word, Query};
use super::text::{is_hangul, korean_forms, words};
use super::vocab::{normal_word, Vocabulary};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    pub multi_category: bool,
    pub sub_intents: Vec<SubIntent>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubIntent {
    pub intent: String,
    #[serde(default)]
    pub category_hint: Option<String>,
    #[serde(default)]
    pub subtype_hint: Option<String>,
    /// Its words the project does not hold, each with the project word
    /// nearest in meaning (`semantic.nearest`; empty without a model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meanings: Vec<WordMeaning>,
    /// The theme a scene request put before its role ("좀비 서바이벌" of "좀비
    /// 서바이벌 적 캐릭터"): it says what game the asset is for, not what it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl SubIntent {
    /// Its query as every ranking reads it, of packages or of assets: its
    /// words with the meanings found for them and its theme.
    pub(crate) fn query(&self, vocab: &Vocabulary) -> Query {
        Query::analyze(&self.intent, vocab)
            .with_meanings(&self.meanings, vocab)
            .with_theme(self.theme.as_deref())
    }
}

/// A query word and the project word nearest it in meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WordMeaning {
    pub word: String,
    pub term: String,
    pub similarity: f32,
    /// Its weight as a term of the word's concept (`search.semantic.words.weight`).
    pub weight: f32,
}

const SEPARATOR_CHARS: &[char] = &[',', '+', '&', '/', ';', '、', '，', '|'];
const SEPARATOR_WORDS: &[&str] = &["및", "그리고", "and"];
const JOINING_PARTICLES: &[&str] = &["이랑", "하고", "와", "과", "랑"];

pub fn route(query: &str, vocab: &Vocabulary) -> Routing {
    let segments: Vec<String> = split(query, vocab)
        .into_iter()
        .filter(|s| Query::analyze(s, vocab).is_meaningful())
        .collect();
    let sub_intents: Vec<SubIntent> = match segments.as_slice() {
        [] => vec![hinted(query.trim().to_owned(), vocab)],
        [single] => scene_roles(single, vocab).unwrap_or_else(|| vec![hinted(single.clone(), vocab)]),
        many => many.iter().map(|s| hinted(s.clone(), vocab)).collect(),
    };
    Routing {
        multi_category: sub_intents.len() > 1,
        sub_intents,
    }
}

/// The parts of a query the user joined with a separator.
fn split(query: &str, vocab: &Vocabulary) -> Vec<String> {
    let mut segments = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut close = |current: &mut Vec<String>| {
        if !current.is_empty() {
            segments.push(current.join(" "));
            current.clear();
        }
    };
    for chunk in query.split(SEPARATOR_CHARS) {
        for token in chunk.split_whitespace() {
            let in_post_modifier = current.iter().skip(1).any(|w| is_post_modifier_word(w));
            if SEPARATOR_WORDS.iter().any(|w| token.eq_ignore_ascii_case(w)) && !in_post_modifier {
                close(&mut current);
            } else if let Some(stem) = joined_stem(token, vocab) {
                current.push(stem.to_owned());
                close(&mut current);
            } else {
                current.push(token.to_owned());
            }
        }
        close(&mut current);
    }
    segments
}

/// `메뉴와` → `메뉴` when the stem is a word the vocabulary knows.
fn joined_stem<'a>(token: &'a str, vocab: &Vocabulary) -> Option<&'a str> {
    JOINING_PARTICLES.iter().find_map(|p| {
        let stem = token.strip_suffix(p)?;
        let known = stem.chars().any(is_hangul)
            && korean_forms(stem)
                .iter()
                .any(|f| vocab.aliases_of(f).is_some() && !vocab.is_stopword(f));
        known.then_some(stem)
    })
}

/// One sub-intent per scene role when the query asks to make a game/scene.
fn scene_roles(query: &str, vocab: &Vocabulary) -> Option<Vec<SubIntent>> {
    let request = &vocab.scene_request;
    let normal = |list: &[String]| list.iter().filter_map(|w| normal_word(w)).collect::<Vec<_>>();
    let (triggers, requires) = (normal(&request.triggers), normal(&request.requires_any));
    let analysed = Query::analyze(query, vocab);
    let asked =
        triggers.iter().any(|t| analysed.words.contains(t)) && requires.iter().any(|r| analysed.words.contains(r));
    if !asked || request.roles.is_empty() {
        return None;
    }
    let theme: Vec<&str> = words(query)
        .filter(|w| {
            let forms = match normal_word(w) {
                Some(n) if !w.chars().any(is_hangul) => vec![n],
                _ => korean_forms(w),
            };
            !forms
                .iter()
                .any(|f| vocab.is_stopword(f) || triggers.contains(f) || requires.contains(f))
        })
        .collect();
    let theme = theme.join(" ");
    Some(
        request
            .roles
            .iter()
            .map(|role| SubIntent {
                intent: format!("{theme} {}", role.intent).trim().to_owned(),
                category_hint: role.category.clone(),
                subtype_hint: role.subtype.clone(),
                meanings: vec![],
                theme: Some(theme.clone()).filter(|t| !t.is_empty()),
            })
            .collect(),
    )
}

/// A sub-intent with the category and subtype hints its words imply.
fn hinted(intent: String, vocab: &Vocabulary) -> SubIntent {
    let query = Query::analyze(&intent, vocab);
    let category_hint = vocab.category_of(query.english_terms()).map(str::to_owned);
    let subtype_hint = vocab
        .subtype_rules
        .iter()
        .find(|r| r.matches(&query.words))
        .and_then(|r| r.subtype.clone());
    SubIntent {
        intent,
        category_hint,
        subtype_hint,
        meanings: vec![],
        theme: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intents(q: &str) -> Vec<String> {
        route(q, &Vocabulary::embedded())
            .sub_intents
            .into_iter()
            .map(|s| s.intent)
            .collect()
    }

    #[test]
    fn splits_on_separators_and_joining_particles() {
        assert_eq!(
            intents("메인 메뉴와 일시정지 메뉴 둘 다"),
            ["메인 메뉴", "일시정지 메뉴 둘 다"]
        );
        assert_eq!(intents("zombie, tree and rock"), ["zombie", "tree", "rock"]);
        assert_eq!(intents("적 + 플레이어 + UI"), ["적", "플레이어", "UI"]);
        assert_eq!(intents("발자국 효과음 캐릭터"), ["발자국 효과음 캐릭터"]);
        assert_eq!(
            intents("pot that the player can pick up and throw"),
            ["pot that the player can pick up and throw"],
            "an and inside a post-modifier joins verbs"
        );
        assert_eq!(intents("door with a key, and a torch"), ["door with a key", "a torch"]);
    }

    #[test]
    fn scene_requests_split_into_roles_with_theme() {
        let got = intents("탑다운 좀비 게임 만들어줘");
        assert!(got.len() >= 3, "{got:?}");
        assert!(got.iter().all(|i| i.starts_with("탑다운 좀비")), "{got:?}");
        assert_eq!(
            intents("좀비 캐릭터 만들어줘").len(),
            1,
            "no game/scene word: not a scene request"
        );
    }

    #[test]
    fn subtype_and_category_hints() {
        let r = route("긴장감 있는 배경 음악", &Vocabulary::embedded());
        assert_eq!(r.sub_intents[0].subtype_hint.as_deref(), Some("AudioClip/music"));
        assert_eq!(r.sub_intents[0].category_hint.as_deref(), Some("audio"));
        let r = route("좀비 적 캐릭터", &Vocabulary::embedded());
        assert_eq!(r.sub_intents[0].subtype_hint.as_deref(), Some("Prefab/character"));
        let r = route("좀비 wave 스폰 설정", &Vocabulary::embedded());
        assert_eq!(r.sub_intents[0].subtype_hint, None);
        assert!(!r.multi_category);
    }
}
