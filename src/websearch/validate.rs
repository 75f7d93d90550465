//! `websearch.validate`: the input rules, before any request: a query of 3+
//! characters, a known type, a known format (empty: summary); see
//! `docs/contracts.md#web-search-input`.

use serde::Serialize;

pub const TYPES: [&str; 3] = ["official", "comprehensive", "best-practice"];
pub const FORMATS: [&str; 3] = ["summary", "detailed", "progressive"];

pub const SHORT_QUERY: &str = "검색어는 최소 3자 이상이어야 합니다.";
pub const BAD_TYPE: &str = "잘못된 검색 타입입니다. (허용: official, comprehensive, best-practice)";
pub const BAD_FORMAT: &str = "잘못된 출력 형식입니다. (허용: summary, detailed, progressive)";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub ok: bool,
    /// The fixed Korean message of the first rule broken.
    pub message: Option<String>,
    /// The query, trimmed.
    pub query: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The format, `summary` when given empty.
    pub format: String,
}

/// Checks in this order: query, type, format. Length counts characters
/// (`리액트` is 3), after trimming.
pub fn validate(query: &str, kind: &str, format: &str) -> Validation {
    let query = query.trim().to_owned();
    let kind = kind.trim().to_owned();
    let format = match format.trim() {
        "" => "summary".to_owned(),
        f => f.to_owned(),
    };
    let message = if query.chars().count() < 3 {
        Some(SHORT_QUERY)
    } else if !TYPES.contains(&kind.as_str()) {
        Some(BAD_TYPE)
    } else if !FORMATS.contains(&format.as_str()) {
        Some(BAD_FORMAT)
    } else {
        None
    };
    Validation {
        ok: message.is_none(),
        message: message.map(str::to_owned),
        query,
        kind,
        format,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_characters_not_bytes() {
        assert!(validate("리액트", "official", "summary").ok);
        assert_eq!(
            validate("리액", "official", "summary").message.as_deref(),
            Some(SHORT_QUERY)
        );
        assert_eq!(
            validate("  ab  ", "official", "summary").message.as_deref(),
            Some(SHORT_QUERY)
        );
        assert!(validate("abc", "official", "summary").ok);
    }

    #[test]
    fn type_and_format_rules_in_the_seeds_order() {
        assert_eq!(validate("ab", "bogus", "bogus").message.as_deref(), Some(SHORT_QUERY));
        assert_eq!(validate("react", "bogus", "bogus").message.as_deref(), Some(BAD_TYPE));
        assert_eq!(
            validate("react", "official", "bogus").message.as_deref(),
            Some(BAD_FORMAT)
        );
        let empty = validate("react", "best-practice", "");
        assert!(empty.ok);
        assert_eq!(empty.format, "summary");
        for t in TYPES {
            for f in FORMATS {
                assert!(validate("react", t, f).ok, "{t} {f}");
            }
        }
    }
}
