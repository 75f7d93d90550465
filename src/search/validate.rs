//! `query.validate`: reject what cannot be searched before anything runs —
//! empty, unbalanced quotes, an unknown filter, only symbols or emoji, no
//! readable word — with a short Korean reason for the `no_query` line, never
//! a panic (`docs/contracts.md#query-validation`). The query's filters
//! (`docs/filters.md`) are split from its words here.

use serde::Serialize;

use super::filters::{self, Filters};
use super::query::Query;
use super::vocab::Vocabulary;

/// Writing this phrase in a query means `--reindex`: index first, then search
/// (option B of the stale-index warning, `docs/contracts.md#stale-index`).
pub const REINDEX_PHRASE: &str = "재인덱스해서 검색";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub ok: bool,
    /// The short Korean reason of the seed's `no_query` line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The same in English, with what to do: the line a person reads under it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The words to search for (trimmed, the reindex phrase and the filters
    /// removed; empty for a query of filters only). Rejected: the whole query.
    pub query: String,
    /// The query's filters, in order (`t:Prefab`, `-dir:Old`, …).
    pub filters: Filters,
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
    let reject = |reason: &str, detail: &str| Validation {
        ok: false,
        reason: Some(reason.to_owned()),
        detail: Some(detail.to_owned()),
        query: query.clone(),
        filters: Filters::default(),
        reindex,
    };
    if query.is_empty() {
        return reject(
            "검색어가 비어 있습니다",
            "the query is empty; say what you are looking for",
        );
    }
    let straight = query.matches('"').count();
    let (open, close) = (query.matches(['“', '「']).count(), query.matches(['”', '」']).count());
    if straight % 2 == 1 || open != close {
        return reject(
            "따옴표 짝이 맞지 않습니다",
            "a quote is not closed; close it, or leave the quotes out",
        );
    }
    let parsed = match filters::parse(&query) {
        Ok(parsed) => parsed,
        Err(e) => return reject(&format!("알 수 없는 필터 \"{}\"", e.token), &e.message),
    };
    if parsed.words.is_empty() {
        return Validation {
            ok: true,
            reason: None,
            detail: None,
            query: parsed.words,
            filters: parsed.filters,
            reindex,
        };
    }
    let query = parsed.words;
    if !query.chars().any(char::is_alphanumeric) {
        return reject(
            "검색할 단어가 없습니다 (기호나 이모지만 있음)",
            "the query holds only symbols or emoji; use words",
        );
    }
    let readable = Query::analyze(&query, vocab).concepts.iter().any(|c| {
        c.terms
            .iter()
            .any(|(t, _)| t.chars().any(|ch| ch.is_ascii_alphabetic() || is_syllable(ch)))
    });
    // A number is no word, but a file name may be one (`0011.png`, `Asset 14`).
    let may_be_a_name = query.chars().any(|c| c.is_ascii_digit());
    if !readable && !may_be_a_name {
        return reject(
            "의미 있는 검색어를 찾지 못했습니다",
            "no readable word in the query; use words in Korean or English",
        );
    }
    Validation {
        ok: true,
        reason: None,
        detail: None,
        query,
        filters: parsed.filters,
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
        // Numbers name files (`0011.png`, `Asset 14`): the name channel reads them.
        assert!(check("0011").ok && check("Asset 14").ok);
    }

    #[test]
    fn filters_are_split_from_the_words() {
        let v = check("t:Prefab dir:Environment 이끼 낀 바위");
        assert!(v.ok, "{v:?}");
        assert_eq!(v.query, "이끼 낀 바위");
        assert_eq!(v.filters.to_string(), "t:Prefab dir:Environment");
        let v = check("t=Material -l:Old");
        assert!(v.ok && v.query.is_empty(), "filters alone are a query: {v:?}");
        let v = check("tpye:Prefab 바위");
        assert!(!v.ok);
        // The seed's line in Korean, the explanation in English on its own line.
        assert_eq!(v.reason.unwrap(), "알 수 없는 필터 \"tpye:Prefab\"");
        assert!(v.detail.unwrap().contains("`type:`"));
        assert!(!check("t:Prefab ㅋㅋㅋ").ok, "the words still have to be readable");
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let v = check(&s);
            prop_assert!(v.ok || v.reason.is_some());
        }
    }
}
