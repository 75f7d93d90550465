//! Filters beside natural language, in Unity Search's spelling: `t:Prefab
//! dir:Environment 이끼 낀 바위` keeps the prefabs under a folder named
//! `Environment` and ranks them by the words (`docs/filters.md`).
//!
//! [`parse`] splits a query into its filters and its words; a filter that
//! names no known key is an error with a did-you-mean, never silently words.
//! [`Filters::matches`] is a plain predicate over one [`AssetRow`], so every
//! place rows come from applies the same test (`matches.rs`).

mod matches;
mod stages;

pub use matches::facets;

pub(super) use stages::register;

use std::fmt;

use serde::{Deserialize, Serialize};

use super::records::AssetRow;
use crate::index::is_guid;

/// What a filter tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Key {
    /// `t:` the row's type or subtype, a component type, a ScriptableObject's script class.
    Type,
    /// `l:` a label.
    Label,
    /// `dir:` a folder on the path, by its exact name.
    Dir,
    /// `path:` the project-relative path contains the value (`path=`: is it).
    Path,
    /// `ext:` the file extension.
    Ext,
    /// `ref:` the row references this asset (a path or a guid).
    Ref,
    /// `guid:` or a bare 32-digit hexadecimal guid: this asset.
    Guid,
    /// `prefab:variant|regular|model|any`.
    Prefab,
    /// `missing:scripts`.
    Missing,
}

/// Every spelling a query may use, the short (Unity) one first per key.
const SPELLINGS: &[(&str, Key)] = &[
    ("t", Key::Type),
    ("type", Key::Type),
    ("l", Key::Label),
    ("label", Key::Label),
    ("dir", Key::Dir),
    ("path", Key::Path),
    ("ext", Key::Ext),
    ("ref", Key::Ref),
    ("guid", Key::Guid),
    ("prefab", Key::Prefab),
    ("missing", Key::Missing),
];

/// The values `prefab:` takes; each is answered by the row's type and `variant_of`.
pub const PREFAB_VALUES: &[&str] = &["variant", "regular", "model", "any"];
/// The values `missing:` takes.
pub const MISSING_VALUES: &[&str] = &["scripts"];

impl Key {
    /// Every key, in declaration order.
    pub const ALL: [Key; 9] = [
        Key::Type,
        Key::Label,
        Key::Dir,
        Key::Path,
        Key::Ext,
        Key::Ref,
        Key::Guid,
        Key::Prefab,
        Key::Missing,
    ];

    /// The spelling a filter is written back with (Unity's short one).
    pub fn spelling(self) -> &'static str {
        SPELLINGS
            .iter()
            .find(|(_, key)| *key == self)
            .map(|(spelling, _)| *spelling)
            .expect("every key has a spelling")
    }

    fn from_spelling(spelling: &str) -> Option<Self> {
        SPELLINGS.iter().find(|(s, _)| *s == spelling).map(|(_, key)| *key)
    }
}

/// One filter of a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    pub key: Key,
    pub value: String,
    /// Written with a leading `-`: the rows that do NOT match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    /// Written with `=` (Unity's `t=Material`): the whole name must match,
    /// where `:` lets a part match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// `ref:` only, once resolved against the index: the guid of the asset
    /// referenced (a path is looked up by [`Filters::resolve`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let negated = if self.negated { "-" } else { "" };
        let op = if self.exact { '=' } else { ':' };
        let value = if self.value.contains(char::is_whitespace) {
            format!("\"{}\"", self.value)
        } else {
            self.value.clone()
        };
        write!(f, "{negated}{}{op}{value}", self.key.spelling())
    }
}

/// The filters of a query: a row passes when it matches every one (Unity's
/// default `and`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Filters(pub Vec<Filter>);

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `row` passes every filter.
    pub fn matches(&self, row: &AssetRow) -> bool {
        self.0.iter().all(|filter| filter.matches(row))
    }

    /// Resolve each `ref:` to the guid of the asset it names: a guid as
    /// written, else the row whose path is the value (exactly, then ignoring
    /// case). `rows_at` gives the rows whose path is a value ignoring ASCII
    /// case, in the index's order. Returns the `ref:` values no row
    /// answers; those match nothing.
    pub fn resolve(
        &mut self,
        mut rows_at: impl FnMut(&str) -> anyhow::Result<Vec<AssetRow>>,
    ) -> anyhow::Result<Vec<String>> {
        let mut unresolved = vec![];
        for filter in self.0.iter_mut().filter(|f| f.key == Key::Ref) {
            filter.target = if is_guid(&filter.value) {
                Some(filter.value.to_ascii_lowercase())
            } else {
                let rows = rows_at(&filter.value)?;
                rows.iter()
                    .find(|row| row.path == filter.value)
                    .or_else(|| rows.first())
                    .map(|row| row.guid.clone())
            };
            if filter.target.is_none() {
                unresolved.push(filter.value.clone());
            }
        }
        Ok(unresolved)
    }

    /// [`Self::resolve`] against rows in memory.
    pub fn resolve_in(&mut self, rows: &[AssetRow]) -> Vec<String> {
        let rows_at = |path: &str| {
            Ok(rows
                .iter()
                .filter(|row| row.path.eq_ignore_ascii_case(path))
                .cloned()
                .collect())
        };
        self.resolve(rows_at).unwrap_or_default()
    }
}

impl fmt::Display for Filters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let written: Vec<String> = self.0.iter().map(Filter::to_string).collect();
        f.write_str(&written.join(" "))
    }
}

/// A query split into what narrows and what ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub filters: Filters,
    /// The words, in order, without the filters.
    pub words: String,
}

/// A token that looks like a filter but is not one (an unknown key, a value
/// the key does not take), with how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub token: String,
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\": {}", self.token, self.message)
    }
}

/// Split `query` into filters and words.
///
/// A whitespace-separated token is a filter when, outside double quotes, it
/// is `KEY:VALUE` or `KEY=VALUE` (optionally after `-`) with KEY made of
/// ASCII letters only and VALUE non-empty and not starting with `/` or `\`
/// (so `https://…` and `C:\…` stay words), or when it is a bare 32-digit
/// hexadecimal guid. A value may be quoted to hold spaces
/// (`ref:"Assets/My Props/Crate.prefab"`). Everything else is words:
/// Korean text, `UI: button` (nothing after the colon), `12:30`.
pub fn parse(query: &str) -> Result<Parsed, FilterError> {
    let mut filters = vec![];
    let mut words: Vec<&str> = vec![];
    let mut tokens = query.split_whitespace();
    let mut in_quotes = false;
    while let Some(token) = tokens.next() {
        if in_quotes {
            in_quotes = token.matches('"').count() % 2 == 0;
            words.push(token);
            continue;
        }
        let Some(candidate) = Candidate::of(token) else {
            in_quotes = token.matches('"').count() % 2 == 1;
            words.push(token);
            continue;
        };
        let mut value = candidate.value.to_owned();
        if let Some(open) = value.strip_prefix('"') {
            value = open.to_owned();
            // A quoted value runs to the token that closes it.
            while !value.ends_with('"') {
                let Some(next) = tokens.next() else {
                    break;
                };
                value.push(' ');
                value.push_str(next);
            }
            value = value.trim_end_matches('"').to_owned();
        }
        filters.push(candidate.into_filter(token, value)?);
    }
    Ok(Parsed {
        filters: Filters(filters),
        words: words.join(" "),
    })
}

/// A token shaped like a filter, before its key and value are checked.
struct Candidate<'a> {
    negated: bool,
    key: &'a str,
    exact: bool,
    value: &'a str,
}

impl<'a> Candidate<'a> {
    fn of(token: &'a str) -> Option<Self> {
        let (negated, body) = match token.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, token),
        };
        if is_guid(body) {
            return Some(Self {
                negated,
                key: "guid",
                exact: false,
                value: body,
            });
        }
        let at = body.find([':', '='])?;
        let (key, value) = (&body[..at], &body[at + 1..]);
        let shaped = !key.is_empty()
            && key.len() <= 16
            && key.chars().all(|c| c.is_ascii_alphabetic())
            && !value.is_empty()
            && !value.starts_with(['/', '\\']);
        shaped.then_some(Self {
            negated,
            key,
            exact: body.as_bytes()[at] == b'=',
            value,
        })
    }

    fn into_filter(self, token: &str, value: String) -> Result<Filter, FilterError> {
        let error = |message: String| FilterError {
            token: token.to_owned(),
            message,
        };
        let lower = self.key.to_ascii_lowercase();
        let key = Key::from_spelling(&lower).ok_or_else(|| {
            let spellings: Vec<&str> = SPELLINGS.iter().map(|(s, _)| *s).collect();
            let hint = match engine::diagnostic::did_you_mean(&lower, spellings.iter().copied()) {
                Some(best) => format!("did you mean `{best}:`? "),
                None => String::new(),
            };
            error(format!(
                "`{}:` is not a filter; {hint}filters: {}. To search for the words, put them in quotes",
                self.key,
                known_filters()
            ))
        })?;
        let value = match key {
            Key::Prefab | Key::Missing => {
                let allowed = if key == Key::Prefab {
                    PREFAB_VALUES
                } else {
                    MISSING_VALUES
                };
                let lower = value.to_ascii_lowercase();
                if !allowed.contains(&lower.as_str()) {
                    let hint = match engine::diagnostic::did_you_mean(&lower, allowed.iter().copied()) {
                        Some(best) => format!("did you mean `{}:{best}`? ", key.spelling()),
                        None => String::new(),
                    };
                    return Err(error(
                        format!("`{}:` takes {}; {hint}", key.spelling(), allowed.join(", "))
                            .trim_end_matches([';', ' '])
                            .to_owned(),
                    ));
                }
                lower
            }
            Key::Guid if !is_guid(&value) => {
                return Err(error(
                    "a guid is 32 hexadecimal digits (as in the asset's .meta file)".into(),
                ));
            }
            Key::Guid => value.to_ascii_lowercase(),
            Key::Ext => value.trim_start_matches('.').to_owned(),
            _ => value,
        };
        Ok(Filter {
            key,
            value,
            negated: self.negated,
            exact: self.exact,
            target: None,
        })
    }
}

/// The filters a query may use, as `search --help` and errors list them.
pub fn known_filters() -> String {
    let mut spellings: Vec<String> = vec![];
    for (spelling, key) in SPELLINGS {
        if key.spelling() == *spelling {
            spellings.push(format!("{spelling}:"));
        }
    }
    spellings.push("a bare guid".into());
    spellings.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(query: &str) -> Parsed {
        parse(query).unwrap_or_else(|e| panic!("{query:?}: {e}"))
    }

    fn written(query: &str) -> Vec<String> {
        parsed(query).filters.0.iter().map(Filter::to_string).collect()
    }

    #[test]
    fn filters_narrow_and_the_rest_are_words() {
        let p = parsed("t:Prefab dir:Environment 이끼 낀 바위");
        assert_eq!(p.words, "이끼 낀 바위");
        assert_eq!(
            written("t:Prefab dir:Environment 이끼 낀 바위"),
            ["t:Prefab", "dir:Environment"]
        );
        assert_eq!(
            written("T=Material -l:Old ext:.png Type:Light"),
            ["t=Material", "-l:Old", "ext:png", "t:Light"]
        );
        let guid = "7f64a6e091143c0458506b559165cf72";
        assert_eq!(written(guid), [format!("guid:{guid}")]);
        assert_eq!(written(&format!("-{}", guid.to_uppercase())), [format!("-guid:{guid}")]);
        assert_eq!(
            written("ref:\"Assets/My Props/Crate.prefab\" crate"),
            ["ref:\"Assets/My Props/Crate.prefab\""]
        );
        assert_eq!(parsed("ref:\"Assets/My Props/Crate.prefab\" crate").words, "crate");
        assert_eq!(
            written("prefab:Variant missing:scripts"),
            ["prefab:variant", "missing:scripts"]
        );
    }

    #[test]
    fn ordinary_text_is_never_a_filter() {
        for query in [
            "UI: button",
            "무기:검 좀비",
            "https://docs.unity3d.com/Manual/search-assets.html",
            "C:\\Users\\me",
            "12:30 알람",
            "\"t:Prefab is a word here\"",
            "-5 degrees",
            "HUD :canvas",
        ] {
            let p = parsed(query);
            assert!(p.filters.is_empty(), "{query:?} gave {:?}", p.filters);
            assert_eq!(p.words, query.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }

    #[test]
    fn an_unknown_filter_is_an_error_with_a_did_you_mean() {
        let e = parse("tpye:Prefab rock").unwrap_err();
        assert_eq!(e.token, "tpye:Prefab");
        assert!(e.message.contains("did you mean `type:`?"), "{e}");
        assert!(e.message.contains("in quotes"), "{e}");
        let e = parse("lable:nature").unwrap_err();
        assert!(e.message.contains("`label:`"), "{e}");
        let e = parse("zzz:x").unwrap_err();
        assert!(!e.message.contains("did you mean") && e.message.contains("dir:"), "{e}");
        let e = parse("prefab:varient").unwrap_err();
        assert!(e.message.contains("did you mean `prefab:variant`?"), "{e}");
        assert!(parse("missing:materials").unwrap_err().message.contains("scripts"));
        assert!(parse("guid:1234").unwrap_err().message.contains("32 hexadecimal"));
    }

    #[test]
    fn known_filters_name_each_key_once() {
        assert_eq!(
            known_filters(),
            "t: l: dir: path: ext: ref: guid: prefab: missing: a bare guid"
        );
    }
}
