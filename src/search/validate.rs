//! `query.validate`: reject what cannot be searched before anything runs —
//! empty, unbalanced quotes, only symbols or emoji, no readable word — with a
//! short Korean reason for the `no_query` line, never a panic
//! (`docs/contracts.md#query-validation`).

use serde::Serialize;

use super::query::Query;
use super::vocab::Vocabulary;

/// Writing this phrase in a query means `--reindex`: index first, then search
/// (option B of the stale-index warning, `docs/contracts.md#stale-index`).
pub const REINDEX_PHRASE: &str = "재인덱스해서 검색";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The query to search for (trimmed, the reindex phrase removed).
    pub query: String,
    /// Whether the query asked to reindex first.
    pub reindex: bool,
}

pub fn validate(raw: &str, vocab: &Vocabulary) -> Validation {
    let reindex = raw.contains(REINDEX_PHRASE);
    let query = raw
        .replace(REINDEX_PHRASE, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let reject = |reason: &str| Validation {
        ok: false,
        reason: Some(reason.to_owned()),
        query: query.clone(),
        reindex,
    };
    if query.is_empty() {
        return reject("검색어가 비어 있습니다");
    }
    let straight = query.matches('"').count();
    let (open, close) = (query.matches(['“', '「']).count(), query.matches(['”', '」']).count());
    if straight % 2 == 1 || open != close {
        return reject("따옴표 짝이 맞지 않습니다");
    }
    if !query.chars().any(char::is_alphanumeric) {
        return reject("검색할 단어가 없습니다 (기호나 이모지만 있음)");
    }
    let readable = Query::analyze(&query, vocab).concepts.iter().any(|c| {
        c.terms
            .iter()
            .any(|(t, _)| t.chars().any(|ch| ch.is_ascii_alphabetic() || is_syllable(ch)))
    });
    if !readable {
        return reject("의미 있는 검색어를 찾지 못했습니다");
    }
    Validation {
        ok: true,
        reason: None,
        query,
        reindex,
    }
}

/// A complete Hangul syllable (not a lone jamo such as ㅋ).
fn is_syllable(c: char) -> bool {
    ('\u{AC00}'..='\u{D7A3}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(q: &str) -> Validation {
        validate(q, &Vocabulary::embedded())
    }

    #[test]
    fn rejects_unsearchable_input() {
        for q in [
            "",
            "   ",
            "\"좀비",
            "“좀비",
            "😀🔥",
            "!!!",
            "ㅋㅋㅋ",
            "만들어줘",
            "the of",
        ] {
            let v = check(q);
            assert!(!v.ok, "{q:?} passed");
            assert!(v.reason.as_deref().is_some_and(|r| r.chars().any(is_syllable)), "{v:?}");
        }
    }

    #[test]
    fn accepts_and_cleans_queries() {
        let v = check("  좀비 \"적\" 캐릭터 재인덱스해서 검색 ");
        assert!(v.ok, "{v:?}");
        assert!(v.reindex);
        assert_eq!(v.query, "좀비 \"적\" 캐릭터");
        assert!(check("zombie 😀").ok);
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let v = check(&s);
            prop_assert!(v.ok || v.reason.is_some());
        }
    }
}
