//! `search-result.json` (`docs/contracts.md#search-result`) and the answer
//! printed for a person. `reasoning` is carried through untouched: the summary
//! shows its first sentence, the file keeps every byte.

use std::path::Path;

use engine::io::{ConfineError, Limits};
use serde::{Deserialize, Serialize};

use super::filters::{Filter, Filters};
use super::rank::Candidate;

pub const RESULT_FILE: &str = "search-result.json";

/// The last search's result as text, read within `limits.file_mb` (a link
/// out of the project or a device is refused); `Ok(None)` before any search.
/// `pick`, `build`'s preflight and the MCP resource all read it here.
pub fn read_text(index_dir: &Path, limits: &Limits) -> Result<Option<String>, ConfineError> {
    match engine::io::read_text_limited(
        &index_dir.join(RESULT_FILE),
        limits.file_bytes,
        engine::io::FILE_KEY,
        &crate::PRODUCT,
    ) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    NoMatch,
    NoQuery,
}

/// The `search-result.json` document (`schemas/search-result.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub manifest_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_action: Option<String>,
    #[serde(default)]
    pub groups: Vec<ResultGroup>,
    /// With `no_match`: the best candidates found, all under the confirm
    /// threshold — shown so a person can judge, never picked or placed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closest: Vec<ResultGroup>,
    /// The query's filters (`docs/filters.md`), `ref:` resolved to its guid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<Filter>,
    /// With filters: how many assets of the index pass them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<usize>,
    /// A query of filters only: `groups` lists matches by path, not a ranking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listing: bool,
}

/// What the search knows about why nothing reached confirm, for the next
/// step a `no_match` answer suggests.
#[derive(Debug, Clone, PartialEq)]
pub struct Situation {
    /// The confirm threshold the search ran with.
    pub confirm: f32,
    /// Whether the index was fresh (or rebuilt by `--reindex`): then
    /// reindexing would find nothing new.
    pub index_fresh: bool,
    /// Why search by meaning did not run, with what turns it on (`None`: it ran).
    pub meaning_off: Option<String>,
    /// End a found answer with `Next: pick … or build …`; build's own search
    /// does not, as build goes on.
    pub pick_or_build: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultGroup {
    pub sub_intent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype_hint: Option<String>,
    pub candidates: Vec<Candidate>,
}

impl SearchResult {
    /// The result of a search: `ok` with one group per routed sub-intent
    /// (a sub-intent that found nothing keeps its empty group, so the user
    /// sees it was understood), or `no_match` (with the reindex suggestion)
    /// when no group holds a candidate.
    pub fn found(query: &str, manifest_version: Option<String>, groups: Vec<ResultGroup>) -> Self {
        if groups.iter().all(|g| g.candidates.is_empty()) {
            return Self::no_match(query, manifest_version, Vec::new());
        }
        Self {
            manifest_version,
            query: Some(query.to_owned()),
            status: Status::Ok,
            reason: None,
            suggested_action: None,
            groups,
            closest: Vec::new(),
            filters: Vec::new(),
            matched: None,
            listing: false,
        }
    }

    /// Fallback stage 3: nothing reached the confirm threshold; `closest`
    /// holds what came nearest (groups without a candidate are dropped).
    /// `suggested_action` stays the seed's `reindex`; the summary says what
    /// would help in this situation.
    pub fn no_match(query: &str, manifest_version: Option<String>, closest: Vec<ResultGroup>) -> Self {
        Self {
            manifest_version,
            query: Some(query.to_owned()),
            status: Status::NoMatch,
            reason: None,
            suggested_action: Some("reindex".to_owned()),
            groups: Vec::new(),
            closest: closest.into_iter().filter(|g| !g.candidates.is_empty()).collect(),
            filters: Vec::new(),
            matched: None,
            listing: false,
        }
    }

    /// A query the validator rejected.
    pub fn no_query(query: &str, manifest_version: Option<String>, reason: &str) -> Self {
        Self {
            manifest_version,
            query: Some(query.to_owned()),
            status: Status::NoQuery,
            reason: Some(reason.to_owned()),
            suggested_action: None,
            groups: Vec::new(),
            closest: Vec::new(),
            filters: Vec::new(),
            matched: None,
            listing: false,
        }
    }

    /// Record what narrowed the search: the filters, how many assets pass
    /// them, and whether the groups are a listing (a query of filters only).
    pub fn narrowed(self, filters: Filters, matched: Option<usize>, listing: bool) -> Self {
        Self {
            filters: filters.0,
            matched,
            listing,
            ..self
        }
    }

    /// The highest confidence of any candidate (0 when there is none).
    pub fn best_confidence(groups: &[ResultGroup]) -> f32 {
        groups
            .iter()
            .flat_map(|g| &g.candidates)
            .map(|c| c.confidence)
            .fold(0.0, f32::max)
    }

    /// The answer for a person: how many sub-intents, the top 3 of each with
    /// its global pick number, confidence and first reasoning sentence, and
    /// the next step (for `no_match`, the closest candidates and what would
    /// help in `situation`).
    pub fn summary(&self, shown_per_group: usize, situation: &Situation) -> String {
        let query = self.query.as_deref().unwrap_or_default();
        if let Some(text) = self.filtered_summary(shown_per_group, situation) {
            return text;
        }
        match self.status {
            Status::NoQuery => {
                format!(
                    "[unity-assets:search] no query: {}",
                    self.reason.as_deref().unwrap_or_default()
                )
            }
            Status::NoMatch => self.no_match_summary(shown_per_group, situation),
            Status::Ok => {
                let mut lines = vec![format!(
                    "[unity-assets:search] {} sub-intent(s) for \"{query}\"",
                    self.groups.len()
                )];
                let mut offset = 0;
                for (i, group) in self.groups.iter().enumerate() {
                    lines.push(format!("{}. {}", i + 1, group.sub_intent));
                    if group.candidates.is_empty() {
                        lines.push("   (no candidate for this part of the request)".to_owned());
                    }
                    for (j, c) in group.candidates.iter().take(shown_per_group).enumerate() {
                        lines.push(format!(
                            "   [{}] {} ({}) — {}",
                            offset + j,
                            c.path,
                            shown_confidence(c.confidence),
                            first_sentence(&c.reasoning)
                        ));
                    }
                    // `pick` takes every candidate of the file, not only those shown.
                    if let Some(hidden) = group.candidates.len().checked_sub(shown_per_group).filter(|n| *n > 0) {
                        let first = offset + shown_per_group;
                        lines.push(format!(
                            "   … and {hidden} more, [{first}]–[{}], in search-result.json",
                            offset + group.candidates.len() - 1
                        ));
                    }
                    offset += group.candidates.len();
                }
                if situation.pick_or_build {
                    lines.push(format!(
                        "Next: `unity-assets pick 0` to choose candidate [0] (or any [N]), or `unity-assets build {}` to assemble a scene.",
                        engine::template::shell_word(query)
                    ));
                }
                lines.join("\n")
            }
        }
    }
}

impl SearchResult {
    /// With filters: a listing (each match numbered for `pick`), no match at
    /// all, or the line saying what narrowed before the usual answer.
    fn filtered_summary(&self, shown_per_group: usize, situation: &Situation) -> Option<String> {
        let matched = self
            .matched
            .filter(|_| !self.filters.is_empty() && self.status != Status::NoQuery)?;
        let filters = Filters(self.filters.clone()).to_string();
        if matched == 0 {
            return Some(format!(
                "[unity-assets:search] no asset matches {filters}\n\
                 Next: loosen a filter (`t:` matches a part of a type, subtype or component name, `=` the whole; \
                 `dir:` a whole folder name); component, reference and prefab filters need an index at depth normal or rich."
            ));
        }
        if self.listing {
            let listed: Vec<&Candidate> = self.groups.iter().flat_map(|g| &g.candidates).collect();
            let mut lines = vec![match listed.len() {
                n if n < matched => {
                    format!("[unity-assets:search] {matched} asset(s) match {filters}; the first {n} by path:")
                }
                _ => format!("[unity-assets:search] {matched} asset(s) match {filters}, by path:"),
            }];
            for (i, c) in listed.iter().enumerate() {
                lines.push(format!("   [{i}] {} — {}", c.path, first_sentence(&c.reasoning)));
            }
            lines.push(
                "Next: `unity-assets pick 0` to choose asset [0] (or any [N]), or add words to rank the matches."
                    .to_owned(),
            );
            return Some(lines.join("\n"));
        }
        let narrowed = format!("[unity-assets:search] filters {filters} keep {matched} asset(s); the words rank them");
        let rest = Self {
            matched: None,
            ..self.clone()
        };
        Some(format!("{narrowed}\n{}", rest.summary(shown_per_group, situation)))
    }

    /// Nothing reached confirm: the closest candidates, labelled as under
    /// it and unnumbered (they cannot be picked), then the next step — other
    /// words, a lower threshold, search by meaning; reindex only when the
    /// index was stale.
    fn no_match_summary(&self, shown_per_group: usize, situation: &Situation) -> String {
        let confirm = situation.confirm;
        let query = self.query.as_deref().unwrap_or_default();
        let mut lines = vec![format!(
            "[unity-assets:search] no asset reached the confirm threshold ({confirm:.2}) for \"{query}\""
        )];
        if self.closest.is_empty() {
            lines.push("No asset shares a word with the request.".to_owned());
        } else {
            lines.push(format!(
                "Closest candidates, all below confirm ({confirm:.2}); shown to judge, not picked or placed:"
            ));
        }
        for group in &self.closest {
            if self.closest.len() > 1 {
                lines.push(format!("- {}", group.sub_intent));
            }
            for c in group.candidates.iter().take(shown_per_group) {
                lines.push(format!(
                    "   {} ({}) — {}",
                    c.path,
                    shown_confidence(c.confidence),
                    first_sentence(&c.reasoning)
                ));
            }
        }
        // The stage 3 line above (a fixed line) says suggested_action=reindex:
        // the next step agrees, and says when a reindex helps.
        if !situation.index_fresh {
            lines.push("Next: the index is stale; run `unity-assets reindex`, then search again.".to_owned());
            return lines.join("\n");
        }
        if let Some(off) = &situation.meaning_off {
            lines.push(format!("Search by meaning was off: {off}."));
        }
        let mut steps =
            vec!["try other words (what the asset is called or what it is, rather than what it does)".to_owned()];
        let best = Self::best_confidence(&self.closest);
        if best > 0.0 {
            // Two decimals, rounded down: the closest candidate then reaches it.
            let lower = (best * 100.0).floor() / 100.0;
            steps.push(format!(
                "accept weaker matches with `--set confidence_threshold.confirm={lower:.2}`"
            ));
        }
        if situation.meaning_off.is_some() {
            steps.push("turn search by meaning on (above) and search again".to_owned());
        }
        lines.push(format!(
            "Next: {}. The index is up to date, so `unity-assets reindex` (the suggested_action) helps only once assets or labels change.",
            steps.join("; or ")
        ));
        lines.join("\n")
    }
}

/// A confidence as people read it: two places, never rounded up, so a
/// candidate under a threshold never shows as the threshold (0.399 reads
/// 0.39, not confirm's 0.40).
pub fn shown_confidence(confidence: impl Into<f64>) -> String {
    // The small lift keeps a value stored as 0.6999999 at 0.70.
    format!("{:.2}", (confidence.into() * 100.0 + 1e-3).floor() / 100.0)
}

/// The first sentence of a reasoning text, on one line.
fn first_sentence(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.find(". ") {
        Some(end) => line[..=end].to_owned(),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL_MISSING: &str =
        "the builtin model is not installed (`unity-assets model install` turns on search by meaning)";

    fn fresh() -> Situation {
        Situation {
            confirm: 0.40,
            index_fresh: true,
            meaning_off: Some(MODEL_MISSING.to_owned()),
            pick_or_build: true,
        }
    }

    fn candidate(guid: &str, confidence: f32) -> Candidate {
        Candidate {
            guid: guid.into(),
            path: format!("Assets/{guid}.prefab"),
            confidence,
            reasoning: format!("Matches {guid} fully.\nSecond sentence stays in the file."),
            evidence: None,
        }
    }

    #[test]
    fn summary_numbers_candidates_globally_and_suggests_next_steps() {
        let groups = vec![
            ResultGroup {
                sub_intent: "적".into(),
                category_hint: None,
                subtype_hint: None,
                candidates: vec![candidate("a", 0.9), candidate("b", 0.5)],
            },
            ResultGroup {
                sub_intent: "UI".into(),
                category_hint: None,
                subtype_hint: None,
                candidates: vec![candidate("c", 0.7)],
            },
        ];
        let result = SearchResult::found("적 + UI", Some("v1.0".into()), groups);
        let text = result.summary(3, &fresh());
        assert!(text.starts_with("[unity-assets:search] 2 sub-intent(s)"), "{text}");
        assert!(
            text.contains("   [2] Assets/c.prefab (0.70) — Matches c fully."),
            "{text}"
        );
        assert!(text.contains("`unity-assets pick 0`") && text.contains("`unity-assets build '적 + UI'`"));
        assert!(!text.contains("more,"), "every candidate is shown: {text}");
        let within_build = result.summary(
            3,
            &Situation {
                pick_or_build: false,
                ..fresh()
            },
        );
        assert!(!within_build.contains("Next:"), "{within_build}");
        let text = result.summary(1, &fresh());
        assert!(
            text.contains("   [0] Assets/a.prefab (0.90) — Matches a fully.\n   … and 1 more, [1]–[1], in search-result.json\n2. UI\n   [2] Assets/c.prefab"),
            "{text}"
        );
        assert!(result.groups[0].candidates[0].reasoning.contains("Second sentence"));
        assert_eq!(SearchResult::best_confidence(&result.groups), 0.9);
    }

    #[test]
    fn a_confidence_under_a_threshold_never_shows_as_it() {
        assert_eq!(shown_confidence(0.399_f32), "0.39");
        assert_eq!(shown_confidence(0.3996), "0.39");
        assert_eq!(shown_confidence(0.402), "0.40");
        assert_eq!(shown_confidence(0.7_f32), "0.70", "an f32 just under 0.7 is 0.7");
        assert_eq!(shown_confidence(1.0), "1.00");
    }

    #[test]
    fn every_sub_intent_keeps_its_group_even_when_empty() {
        let group = |name: &str, candidates: Vec<Candidate>| ResultGroup {
            sub_intent: name.into(),
            category_hint: None,
            subtype_hint: None,
            candidates,
        };
        let result = SearchResult::found(
            "a, b",
            None,
            vec![group("a", vec![candidate("a", 0.8)]), group("b", vec![])],
        );
        assert_eq!(result.status, Status::Ok);
        assert_eq!(result.groups.len(), 2);
        let text = result.summary(3, &fresh());
        assert!(text.starts_with("[unity-assets:search] 2 sub-intent(s)"), "{text}");
        assert!(text.contains("2. b\n   (no candidate"), "{text}");
    }

    #[test]
    fn empty_groups_become_no_match_that_fits_the_schema() {
        let result = SearchResult::found("q", Some("v1.0".into()), vec![]);
        assert_eq!(result.status, Status::NoMatch);
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/search-result.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&serde_json::to_value(&result).unwrap()));
        let ok = SearchResult::found(
            "q",
            None,
            vec![ResultGroup {
                sub_intent: "q".into(),
                category_hint: None,
                subtype_hint: None,
                candidates: vec![candidate("a", 0.5)],
            }],
        );
        assert!(validator.is_valid(&serde_json::to_value(&ok).unwrap()));
        assert!(validator.is_valid(&serde_json::to_value(SearchResult::no_query("", None, "비어 있음")).unwrap()));
    }

    #[test]
    fn no_match_shows_the_closest_under_confirm_and_what_would_help() {
        let closest = vec![ResultGroup {
            sub_intent: "crate to hide behind".into(),
            category_hint: None,
            subtype_hint: None,
            candidates: vec![candidate("player", 0.352), candidate("wall", 0.2)],
        }];
        let result = SearchResult::no_match("crate to hide behind", Some("v1.0".into()), closest);
        let text = result.summary(3, &fresh());
        assert!(
            text.starts_with("[unity-assets:search] no asset reached the confirm threshold (0.40)"),
            "{text}"
        );
        assert!(text.contains("all below confirm (0.40)"), "{text}");
        assert!(
            text.contains("\n   Assets/player.prefab (0.35) — Matches player fully."),
            "{text}"
        );
        assert!(!text.contains("[0]"), "closest candidates are not pick numbers: {text}");
        assert!(text.contains("helps only once assets or labels change"), "{text}");
        assert!(text.contains("--set confidence_threshold.confirm=0.35"), "{text}");
        assert!(
            text.contains(&format!("Search by meaning was off: {MODEL_MISSING}.")),
            "{text}"
        );
        assert!(!text.contains("run `unity-assets reindex`"), "{text}");

        let stale = result.summary(
            3,
            &Situation {
                confirm: 0.5,
                index_fresh: false,
                ..fresh()
            },
        );
        assert!(stale.contains("threshold (0.50)"), "{stale}");
        assert!(
            stale.contains("run `unity-assets reindex`, then search again"),
            "{stale}"
        );

        let searched_by_meaning = SearchResult::no_match("q", None, vec![]).summary(
            3,
            &Situation {
                meaning_off: None,
                ..fresh()
            },
        );
        assert!(!searched_by_meaning.contains("by meaning"), "{searched_by_meaning}");
        let nothing = SearchResult::no_match("q", None, vec![]).summary(3, &fresh());
        assert!(
            nothing.contains("No asset shares a word") && !nothing.contains("--set"),
            "{nothing}"
        );

        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/search-result.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let document = serde_json::to_value(&result).unwrap();
        assert_eq!(document["status"], "no_match");
        assert_eq!(document["groups"], serde_json::json!([]));
        assert!(validator.is_valid(&document), "{document}");
    }
}
