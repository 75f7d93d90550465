//! The name channel: a query that is an asset's file name finds that asset
//! first, as Unity's own search box does, before any evidence of meaning is
//! weighed. Names are compared *normalised*: letters and digits only,
//! lowercased, so case, `_ - . space` and camelCase boundaries do not matter
//! (`ability rocketjump` is `Ability_RocketJump`). A name given with its
//! extension narrows to that extension.
//!
//! The search index posts every row under its normalised file name
//! ([`key`]), so an exact name is one dictionary lookup, a prefix one range,
//! a one-edit typo (names of 5+ letters) a few hundred lookups, and a typo
//! of a prefix as many ranges when nothing nearer answers, at any
//! project size. `semantic.fuse` looks the names up ([`lookup`]) and puts
//! them with the other retrievers' candidates.

use serde::{Deserialize, Serialize};

use super::filters::Filters;
use super::rank::{Candidate, Thresholds};
use super::route::SubIntent;

/// Before a normalised name in the search index's dictionary: below every
/// character a term holds, so name keys never meet a term's range.
pub const KEY_PREFIX: char = '\u{1}';
/// A prefix or a typo is looked for only in queries at least this long
/// (normalised): shorter ones prefix or neighbour too many names.
pub const MIN_FUZZY: usize = 5;
/// The longest extension a query is read with: Unity's run long
/// (`.overrideController`, `.shadersubgraph`).
const MAX_EXTENSION: usize = 24;
/// Names a prefix may reach before the shortest are kept.
pub const PREFIX_SCAN: usize = 256;
/// Hits kept per kind of match.
pub const KEPT: usize = 10;

/// A file name as the name channel compares it.
pub fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The dictionary key of a normalised name.
pub fn key(normalized: &str) -> String {
    format!("{KEY_PREFIX}{normalized}")
}

/// An asset path's file stem and extension (`Assets/A/Rock.mat` → `Rock`, `mat`).
pub fn stem_and_extension(path: &str) -> (&str, Option<&str>) {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (file, None),
    }
}

/// A query read as a file name: normalised, with the extension it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct NameQuery {
    /// The normalised name without the extension.
    pub stem: String,
    /// The extension typed (`cs` of `Player.cs`), lowercased.
    pub extension: Option<String>,
    /// The whole text normalised, extension included: a name holding a
    /// dot (`Foo.Bar.prefab`) is also looked up whole.
    pub whole: String,
}

impl NameQuery {
    /// `None` when `text` holds no letter or digit.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let whole = normalized(text);
        if whole.is_empty() {
            return None;
        }
        let extension = text
            .rsplit_once('.')
            .filter(|(stem, ext)| {
                !normalized(stem).is_empty()
                    && (1..=MAX_EXTENSION).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            })
            .map(|(stem, ext)| (normalized(stem), ext.to_ascii_lowercase()));
        Some(match extension {
            Some((stem, ext)) => Self {
                stem,
                extension: Some(ext),
                whole,
            },
            None => Self {
                stem: whole.clone(),
                extension: None,
                whole,
            },
        })
    }

    /// Every one-edit neighbour of the stem (a letter or digit deleted,
    /// replaced, inserted, or two neighbours swapped), for a typo lookup.
    pub fn neighbours(&self) -> Vec<String> {
        let chars: Vec<char> = self.stem.chars().collect();
        if chars.len() < MIN_FUZZY {
            return Vec::new();
        }
        let alphabet = ('a'..='z').chain('0'..='9');
        let with = |at: usize, skip: usize, insert: Option<char>| -> String {
            chars[..at]
                .iter()
                .chain(insert.as_ref())
                .chain(&chars[at + skip..])
                .collect()
        };
        let mut out = Vec::new();
        for at in 0..=chars.len() {
            for c in alphabet.clone() {
                out.push(with(at, 0, Some(c)));
                if at < chars.len() && chars[at] != c {
                    out.push(with(at, 1, Some(c)));
                }
            }
            if at < chars.len() {
                out.push(with(at, 1, None));
            }
            if at + 1 < chars.len() && chars[at] != chars[at + 1] {
                let mut swapped = chars.clone();
                swapped.swap(at, at + 1);
                out.push(swapped.into_iter().collect());
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// How an asset's file name answers a [`NameQuery`], best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameMatch {
    /// The name, and the extension when one was typed.
    Exact,
    /// The name, but not the extension typed.
    OtherExtension,
    /// The name starts with the query.
    Prefix,
    /// The name is one edit away from the query.
    Typo,
    /// The name starts with what is one edit away from the query
    /// (`Quiksand` of `Quicksand-Bold`); looked for only when nothing
    /// nearer answers.
    TypoPrefix,
}

impl NameMatch {
    /// The confidence of a hit when `alone` (no other hit of this kind or
    /// better): an exact name alone is auto; shared, or fuzzy, a person
    /// confirms it, above the lexical evidence it would otherwise trail.
    pub fn confidence(self, alone: bool, t: Thresholds) -> f32 {
        let between = |at: f32| t.confirm + (t.auto - t.confirm) * at;
        let c = match (self, alone) {
            (NameMatch::Exact, true) => 0.95f32.max(t.auto),
            (NameMatch::Exact, false) => between(0.9),
            (NameMatch::OtherExtension, _) => between(0.5),
            (NameMatch::Prefix | NameMatch::Typo | NameMatch::TypoPrefix, true) => between(0.7),
            (NameMatch::Prefix | NameMatch::Typo | NameMatch::TypoPrefix, false) => between(0.4),
        };
        (c * 1000.0).round() / 1000.0
    }

    fn reasoning(self, query: &NameQuery, path: &str) -> String {
        let file = path.rsplit('/').next().unwrap_or(path);
        match self {
            NameMatch::Exact => format!("Its file name {file} is the name asked for."),
            NameMatch::OtherExtension => format!(
                "Its file name {file} is the name asked for, but not a .{}.",
                query.extension.as_deref().unwrap_or_default()
            ),
            NameMatch::Prefix => format!("Its file name {file} starts with the name asked for."),
            NameMatch::Typo => format!("Its file name {file} is one letter from the name asked for."),
            NameMatch::TypoPrefix => {
                format!("Its file name {file} starts with what is one letter from the name asked for.")
            }
        }
    }
}

/// One asset the name channel found.
#[derive(Debug, Clone)]
pub struct NameHit {
    pub kind: NameMatch,
    pub guid: String,
    pub path: String,
}

/// A candidate of the name channel, as `semantic.fuse` receives it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NameCandidate {
    #[serde(flatten)]
    pub candidate: Candidate,
    /// Its file name is the name asked for (extension included when typed):
    /// it goes before anything only evidence found.
    pub exact: bool,
}

/// The candidates of `hits` (best kind first, then path), with the
/// confidence and reasoning of each; a kind's hits share its confidence.
pub fn candidates(query: &NameQuery, mut hits: Vec<NameHit>, thresholds: Thresholds) -> Vec<NameCandidate> {
    hits.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.path.cmp(&b.path)));
    hits.dedup_by(|later, first| later.guid == first.guid);
    let mut out = Vec::new();
    for group in hits.chunk_by(|a, b| a.kind == b.kind) {
        let alone = out.is_empty() && group.len() == 1;
        for hit in group.iter().take(KEPT) {
            out.push(NameCandidate {
                candidate: Candidate {
                    guid: hit.guid.clone(),
                    path: hit.path.clone(),
                    confidence: hit.kind.confidence(alone, thresholds),
                    reasoning: hit.kind.reasoning(query, &hit.path),
                    evidence: None,
                },
                exact: hit.kind == NameMatch::Exact,
            });
        }
    }
    out
}

/// The kind of match of an asset at `path` found under the normalised
/// name `found` for `query` (by exact, prefix or typo lookup).
pub fn classify(query: &NameQuery, found: &str, path: &str, by: NameMatch) -> Option<NameMatch> {
    let (stem, ext) = stem_and_extension(path);
    let stem = normalized(stem);
    if stem != found {
        return None;
    }
    if by != NameMatch::Exact {
        return Some(by);
    }
    let typed = query.extension.as_deref();
    let matches_ext = |e: Option<&str>| match (typed, e) {
        (None, _) => true,
        (Some(t), Some(e)) => t.eq_ignore_ascii_case(e),
        (Some(_), None) => false,
    };
    Some(if found == query.whole && found != query.stem {
        // The whole text with its dot is the name (`Foo.Bar` of `Foo.Bar.prefab`).
        NameMatch::Exact
    } else if matches_ext(ext) {
        NameMatch::Exact
    } else {
        NameMatch::OtherExtension
    })
}

/// Per sub-intent, the assets whose file name its text is, through
/// `filters`, as `semantic.fuse` receives them. The whole query's `words`
/// are looked up too: a router splits a name at its `&` or `,`
/// (`GrassJoinHillRight&Left.png`); an asset so named leads the first group,
/// and the pieces are not looked up.
pub fn lookup(
    sub_intents: &[SubIntent],
    words: &str,
    filters: &Filters,
    thresholds: Thresholds,
    ctx: &engine::CallContext,
) -> anyhow::Result<Vec<Vec<NameCandidate>>> {
    let index = super::term_index(ctx)?;
    let named = |text: &str| -> anyhow::Result<Vec<NameCandidate>> {
        let Some(query) = NameQuery::parse(text) else {
            return Ok(Vec::new());
        };
        let hits = index
            .named(&query)?
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, row)| filters.matches(row))
            .map(|(kind, row)| NameHit {
                kind,
                guid: row.guid,
                path: row.path,
            })
            .collect();
        Ok(candidates(&query, hits, thresholds))
    };
    let whole = named(words)?;
    if sub_intents.len() == 1 {
        return Ok(vec![whole]);
    }
    // The whole query names an asset: its pieces are no names.
    if whole.iter().any(|c| c.exact) {
        let mut groups = vec![Vec::new(); sub_intents.len()];
        groups[0] = whole.into_iter().filter(|c| c.exact).collect();
        return Ok(groups);
    }
    sub_intents.iter().map(|s| named(&s.intent)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case_or_separators() {
        assert_eq!(normalized("Ability_RocketJump"), "abilityrocketjump");
        assert_eq!(normalized("ability rocket-jump"), "abilityrocketjump");
        assert_eq!(normalized("P2 Water dripping"), "p2waterdripping");
        assert_eq!(normalized("좀비_01"), "좀비01");
    }

    #[test]
    fn a_query_gives_its_extension() {
        let q = NameQuery::parse("Ability_RocketJump.cs").unwrap();
        assert_eq!(
            (q.stem.as_str(), q.extension.as_deref()),
            ("abilityrocketjump", Some("cs"))
        );
        let q = NameQuery::parse("CharacterSet_Archer.overrideController").unwrap();
        assert_eq!(q.extension.as_deref(), Some("overridecontroller"));
        let q = NameQuery::parse("RocketLauncherUI").unwrap();
        assert_eq!((q.stem.as_str(), q.extension), ("rocketlauncherui", None));
        // A version number is no extension.
        assert_eq!(NameQuery::parse("shader v1.2").unwrap().extension, None);
        assert!(NameQuery::parse("  .. ").is_none());
    }

    #[test]
    fn the_typed_extension_narrows() {
        let q = NameQuery::parse("rock.mat").unwrap();
        let at = |path: &str| classify(&q, "rock", path, NameMatch::Exact);
        assert_eq!(at("Assets/Rock.mat"), Some(NameMatch::Exact));
        assert_eq!(at("Assets/Rock.prefab"), Some(NameMatch::OtherExtension));
        assert_eq!(at("Assets/Rocks.mat"), None);
    }

    #[test]
    fn one_edit_neighbours_hold_the_typo() {
        let q = NameQuery::parse("zombei").unwrap();
        let near = q.neighbours();
        assert!(near.contains(&"zombie".to_owned()));
        assert!(near.contains(&"zombe".to_owned()) && near.contains(&"zombeix".to_owned()));
        assert!(
            NameQuery::parse("rock").unwrap().neighbours().is_empty(),
            "short names are not fuzzed"
        );
    }

    #[test]
    fn an_exact_name_alone_is_auto_shared_it_is_confirmed() {
        let t = Thresholds::default();
        assert!(NameMatch::Exact.confidence(true, t) >= t.auto);
        let shared = NameMatch::Exact.confidence(false, t);
        assert!(shared >= t.confirm && shared < t.auto);
        for fuzzy in [
            NameMatch::Prefix,
            NameMatch::Typo,
            NameMatch::TypoPrefix,
            NameMatch::OtherExtension,
        ] {
            let c = fuzzy.confidence(true, t);
            assert!(c >= t.confirm && c < t.auto, "{fuzzy:?} {c}");
        }
    }
}
