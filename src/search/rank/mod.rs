//! The builtin ranker: BM25F ordering and calibrated confidences.
//!
//! # Method
//! A record is a set of *fields* (name, tags, labels, filename signals, type,
//! path folders, summary, use cases and, from `index_depth: normal`, its
//! content facts: components, script class, child objects, shader,
//! textures, animator states; material properties at `rich`). One streaming pass tokenises every
//! field (`super::text`) and looks each term up in the query's term table,
//! so nothing is cloned or interned per record and only matching records are
//! kept; the same pass sums field lengths for BM25F's length normalisation.
//!
//! - **Order**: confidence, then BM25F (k1 = 1.2, per-field boosts and `b`),
//!   summed over query concepts with their IDF, so between two equally
//!   covering records the one whose matches are in its name, or rarer, wins.
//! - **Confidence** is calibrated on *coverage*, not on the BM25 score
//!   (which has no fixed scale and moves with the corpus):
//!   `coverage = Σ w_c · m_c / Σ w_c` where `m_c` is how well concept `c` is
//!   matched (1 in a name/tag/label, 0.85 in the summary, 0.7 in a folder
//!   name, times the term's weight: 0.7 for a sibling translation) and
//!   `w_c = prior_c · (0.5 + 0.5 · idf_c / idf_max)` (an unknown Korean word
//!   counts half, a weak word a third, a concept matched everywhere half).
//!   A concept no record mentions at all counts `0.35 · prior_c`: it is a
//!   gap of the index's vocabulary ("top-down" when no tag says so), which
//!   says nothing for or against any one record, so it should not sink a
//!   record that matches the rest of the query well.
//!   Then `confidence = 0.05 + 0.85 · coverage`, plus at most 0.05 for the
//!   subtype priority and 0.10 for past picks, capped at 0.99. So **0.70**
//!   (auto) needs ≈ 80 % of the query's weighted meaning found in strong
//!   fields, **0.40** (confirm) needs ≈ 40 %, and a record that matches
//!   nothing real — a query the vocabulary cannot read, or only a filler
//!   word — stays at 0.05–0.30, under the confirm threshold.
//! - **Subtype priority** (`docs/contracts.md#subtype-priority`): with a
//!   `subtype_hint`, an exact `type_subtype` match gets +0.05, the same type
//!   +0.02, anything else nothing; the tier is stated in every reasoning.
//! - **Subject** ([`Query::subject`]): a record without the query's subject
//!   is capped just under confirm (`Thresholds::subject_missing_cap`:
//!   "a crate" is no answer to "a wooden bridge" however much wood it has),
//!   and so is one that has it only as a part — a child object, a texture,
//!   a shader property (a spawner holding an `Imp` is no imp);
//!   a record with it is kept at confirm (`Thresholds::subject_found_floor`)
//!   or above when other words are missing (a barrel is an answer to "sci-fi
//!   barrel", to be confirmed).
//! - **Type intent** (`TypeIntents`): rows of the wanted type (a named
//!   type, else placeable prefabs then models) get a type priority of at
//!   most 0.03, added only at or above confirm so it breaks near-ties without
//!   making anything confirmable. When the query names a type, content of
//!   another type stays under confirm, and so do code and tooling rows unless
//!   the query asks for code: neither can be placed for it.
//!
//! The caps follow the pipeline's `confidence_threshold` ([`Thresholds`]),
//! so a team that moves confirm in its config moves the calibration with
//! the gate; the defaults (0.40 / 0.70) give the figures above.

mod bm25f;
mod bound;
#[cfg(test)]
mod content_tests;
mod evidence;
mod packages;
mod reasons;
#[cfg(test)]
mod subject_tests;
mod thresholds;

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::intent::TypeIntents;
use super::loanword::LoanIndex;
use super::query::Query;
use super::records::AssetRow;

pub(crate) use bm25f::Fnv;
pub use bm25f::{
    add_field_lengths, average_lengths, concept_bm25, concept_match, coverage_weights, for_each_field_term, idf,
    rare_concepts, score, score_each, score_each_in, scored_concepts, unseen_concepts, Corpus, Document, Field, Scored,
    FIELDS,
};
pub use bound::{ConfidenceBound, SUM_SLACK};
pub use evidence::Evidence;
pub use packages::{rank_packages, PackageChoice};
pub use thresholds::Thresholds;

use reasons::explain;

/// Confidence = FLOOR + SPAN · coverage (see the module docs).
const FLOOR: f32 = 0.05;
const SPAN: f32 = 0.85;
const MAX_CONFIDENCE: f32 = 0.99;
/// The least match of the subject that keeps a record at confirm: the word
/// or a translation in the summary (0.85) or better.
const STRONG_SUBJECT: f32 = 0.85;
/// How far under auto a record found by meaning alone stays (as
/// `search.semantic.cap_below_auto` keeps meaning-only candidates).
const MEANING_UNDER_AUTO: f32 = 0.05;
/// The calibrated confidence of a coverage (see the module docs).
pub fn confidence(coverage: f32, bonus: f32) -> f32 {
    round3((FLOOR + SPAN * coverage + bonus).clamp(0.0, MAX_CONFIDENCE))
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// A confidence as JSON: `0.822`, not the `0.8220000267028809` of a widened f32.
fn three_decimals<S: serde::Serializer>(x: &f32, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((f64::from(*x) * 1000.0).round() / 1000.0)
}

/// Where a record stands against a `subtype_hint`: exact `type_subtype` >
/// same type > anything else (`docs/contracts.md#subtype-priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubtypeTier {
    /// The record's `type_subtype` is the hint.
    Exact,
    /// The record has the hint's type, not its subtype.
    SameType,
    /// The record is of another type.
    Other,
    /// No hint was given.
    NoHint,
}

impl SubtypeTier {
    pub(crate) fn of(row: &AssetRow, hint: Option<&str>) -> Self {
        let Some(hint) = hint else { return Self::NoHint };
        if row
            .type_subtype
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(hint))
        {
            return Self::Exact;
        }
        let hint_type = hint.split_once('/').map_or(hint, |(t, _)| t);
        if row.asset_type.eq_ignore_ascii_case(hint_type) {
            Self::SameType
        } else {
            Self::Other
        }
    }

    fn bonus(self) -> f32 {
        match self {
            Self::Exact => 0.05,
            Self::SameType => 0.02,
            Self::Other | Self::NoHint => 0.0,
        }
    }

    fn sentence(self, hint: Option<&str>) -> String {
        let hint = hint.unwrap_or_default();
        let hint_type = hint.split_once('/').map_or(hint, |(t, _)| t);
        match self {
            Self::Exact => format!("Subtype priority: exact match of {hint} (first tier)."),
            Self::SameType => {
                format!("Subtype priority: same {hint_type} type but not {hint} (second tier, after exact matches).")
            }
            Self::Other => {
                format!("Subtype priority: not a {hint_type} (last tier, after exact and same-type matches).")
            }
            Self::NoHint => "No subtype hint was given, so every type ranks alike.".to_owned(),
        }
    }
}

/// One ranked asset, as search-result.json holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The asset's guid.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    /// How sure the ranker is that this is what was asked for (0 to 1).
    #[serde(serialize_with = "three_decimals")]
    pub confidence: f32,
    /// Why it ranked here, in words a person reads.
    pub reasoning: String,
    /// What the word ranker saw (its own candidates only): the learned
    /// scorer reads it in `semantic.fuse`, which drops it from the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) evidence: Option<Evidence>,
}

/// How to rank a set of asset rows for one sub-intent.
#[derive(Debug, Default)]
pub struct RankOptions<'a> {
    /// A `type_subtype` to prefer (`docs/contracts.md#subtype-priority`).
    pub subtype_hint: Option<&'a str>,
    /// Extra confidence per guid from past picks (see `super::hints::past_pick_boosts`).
    pub past_boosts: HashMap<String, f32>,
    /// How many candidates to keep.
    pub top_k: usize,
    /// The confidence thresholds the candidates are judged by.
    pub thresholds: Thresholds,
}

/// The best `top_k` assets for `query`, best first; only assets matching at
/// least one concept are returned.
pub fn rank_assets(rows: &[AssetRow], query: &Query, options: &RankOptions) -> Vec<Candidate> {
    let query = match query.has_unknown_korean() {
        true => std::borrow::Cow::Owned(query.with_loanwords(&LoanIndex::build(rows))),
        false => std::borrow::Cow::Borrowed(query),
    };
    candidates(rows, &query, options, score(rows, &query))
        .into_iter()
        .map(|(candidate, _)| candidate)
        .collect()
}

/// [`rank_assets`] for several sub-intents over the same rows, each row
/// read once ([`score_each`]).
pub(crate) fn rank_assets_each(rows: &[AssetRow], requests: &[(Query, RankOptions)]) -> Vec<Vec<Candidate>> {
    // Unknown Korean words are read as loanwords of these rows' words; the
    // index is built only when a query has one.
    let loans = requests
        .iter()
        .any(|(q, _)| q.has_unknown_korean())
        .then(|| LoanIndex::build(rows));
    let resolved = with_loanwords(requests, loans.as_ref());
    rank_resolved(rows, requests, &resolved, None)
}

/// Each request's query with its unknown Korean words read as loanwords
/// of `loans` (the corpus's words); `None` where nothing changed.
pub(crate) fn with_loanwords(requests: &[(Query, RankOptions)], loans: Option<&LoanIndex>) -> Vec<Option<Query>> {
    requests
        .iter()
        .map(|(q, _)| loans.filter(|_| q.has_unknown_korean()).map(|i| q.with_loanwords(i)))
        .collect()
}

/// Each request's query as resolved (its own where `resolved` holds none).
pub(crate) fn resolved_queries<'q>(
    requests: &'q [(Query, RankOptions)],
    resolved: &'q [Option<Query>],
) -> Vec<&'q Query> {
    requests
        .iter()
        .zip(resolved)
        .map(|((query, _), own)| own.as_ref().unwrap_or(query))
        .collect()
}

/// Rank `rows` for each request, its query as [`with_loanwords`] resolved
/// it; with `corpus`, `rows` may be only the records that match, scored
/// with the whole corpus's statistics ([`Corpus`]).
pub(crate) fn rank_resolved(
    rows: &[AssetRow],
    requests: &[(Query, RankOptions)],
    resolved: &[Option<Query>],
    corpus: Option<&Corpus>,
) -> Vec<Vec<Candidate>> {
    rank_resolved_with_bm25(rows, requests, resolved, corpus)
        .into_iter()
        .map(|ranked| ranked.into_iter().map(|(candidate, _)| candidate).collect())
        .collect()
}

/// [`rank_resolved`], each candidate with the BM25F score that orders it
/// among equal confidences.
pub(crate) fn rank_resolved_with_bm25(
    rows: &[AssetRow],
    requests: &[(Query, RankOptions)],
    resolved: &[Option<Query>],
    corpus: Option<&Corpus>,
) -> Vec<Vec<(Candidate, f32)>> {
    let queries = resolved_queries(requests, resolved);
    score_each_in(rows, &queries, corpus)
        .into_iter()
        .zip(requests.iter().zip(&queries))
        .map(|(scored, ((_, options), query))| candidates(rows, query, options, scored))
        .collect()
}

/// How the subject and the type intent shaped one record's confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Calibration {
    Plain,
    SubjectMissing,
    /// The subject is found only in what the record holds (a child, a texture).
    SubjectOnlyPart,
    SubjectFound,
    NonContent,
    OtherType,
    /// Matched only through words near in meaning, some query word not at all.
    MeaningAlone,
    /// Matched only through words near in meaning, every query word so.
    MeaningOnly,
}

/// The fields that name a part of a record ([`Field::names_a_part`]), as a
/// [`Scored::found_in`] mask.
fn part_fields() -> u16 {
    Field::ALL
        .iter()
        .enumerate()
        .filter(|(_, f)| f.names_a_part())
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The calibrated confidence of one scored record (see the module docs).
fn calibrate(row: &AssetRow, query: &Query, s: &Scored, bonus: f32, thresholds: Thresholds) -> (f32, Calibration) {
    let (cap, floor) = (thresholds.subject_missing_cap(), thresholds.subject_found_floor());
    let raw = confidence(s.coverage, bonus);
    let intents = TypeIntents::embedded();
    let preference = intents.preference(query.type_intent.as_deref(), row);
    let content = !intents.is_non_content(row) || query.type_intent.as_deref() == Some("script");
    let subject_mask = query.subject.and_then(|i| s.found_in.get(i)).copied();
    let subject_found = subject_mask.map(|mask| mask & !part_fields() != 0);
    // Only the subject itself, or a translation of it, in the record's own
    // words holds a record at confirm; a sibling translation or a folder
    // name (a ship for "boat") is weaker evidence, ranked but not lifted.
    let subject_strong = query
        .subject
        .and_then(|i| s.strength.get(i))
        .is_some_and(|&strength| strength >= STRONG_SUBJECT);
    // A named type excludes content of other types (a prefab is no answer
    // to "robot footstep sound").
    if query.type_named && intents.is_other_type(query.type_intent.as_deref(), row) {
        return (raw.min(cap), Calibration::OtherType);
    }
    // Words near in meaning are leads, not proof: a record they alone
    // match, while a query word found nothing in it, waits for a person
    // (`sniper rifle` is no `weapon` of an archer).
    // As search by meaning's own candidates, one found by meaning alone
    // never reaches auto: `build` asks before placing it.
    let by_meaning_alone = s.found_in.iter().any(|&mask| mask != 0)
        && query
            .concepts
            .iter()
            .zip(&s.found_in)
            .all(|(c, &mask)| mask == 0 || c.by_meaning.is_some());
    if by_meaning_alone {
        return match s.found_in.contains(&0) {
            true => (raw.min(cap), Calibration::MeaningAlone),
            false => (raw.min(thresholds.auto - MEANING_UNDER_AUTO), Calibration::MeaningOnly),
        };
    }
    let (c, calibration) = match subject_found {
        Some(false) if subject_mask.is_some_and(|mask| mask != 0) => (raw.min(cap), Calibration::SubjectOnlyPart),
        Some(false) => (raw.min(cap), Calibration::SubjectMissing),
        Some(true) if content && subject_strong && s.found_in.len() > 1 && raw < floor => {
            (floor, Calibration::SubjectFound)
        }
        _ => (raw, Calibration::Plain),
    };
    // The type priority, only where it cannot make a record confirmable.
    let c = if c >= floor {
        round3((c + preference).min(MAX_CONFIDENCE))
    } else {
        c
    };
    if content {
        (c, calibration)
    } else {
        (c.min(cap), Calibration::NonContent)
    }
}

/// Confidence, order, top-K and reasoning for one query's scores.
fn candidates(rows: &[AssetRow], query: &Query, options: &RankOptions, scored: Vec<Scored>) -> Vec<(Candidate, f32)> {
    // A subject no record holds moves to a thing some record holds (the
    // unseen concepts are the corpus's, the same on every record).
    let moved = scored.first().and_then(|s| query.with_held_subject(s.unseen));
    let query = moved.as_ref().unwrap_or(query);
    let mut scored: Vec<Entry> = scored
        .into_iter()
        .map(|s| {
            let row = &rows[s.index];
            let tier = SubtypeTier::of(row, options.subtype_hint);
            let past = options.past_boosts.get(&row.guid).copied().unwrap_or(0.0);
            let (confidence, calibration) = calibrate(row, query, &s, tier.bonus() + past, options.thresholds);
            (confidence, s, tier, past, calibration)
        })
        .collect();
    let order = |a: &Entry, b: &Entry| {
        b.0.total_cmp(&a.0)
            .then(b.1.bm25.total_cmp(&a.1.bm25))
            .then_with(|| rows[a.1.index].path.cmp(&rows[b.1.index].path))
    };
    let champions = rare_champions(&scored, order);
    top_k_sorted(&mut scored, options.top_k, order);
    if options.top_k > 0 {
        let kept: HashSet<usize> = scored.iter().map(|e| e.1.index).collect();
        scored.extend(champions.into_iter().filter(|e| !kept.contains(&e.1.index)));
        scored.sort_by(order);
    }
    let best_bm25 = scored.iter().map(|e| e.1.bm25).fold(0.0, f32::max);
    let intents = TypeIntents::embedded();
    scored
        .into_iter()
        .map(|(confidence, s, tier, past, calibration)| {
            let row = &rows[s.index];
            let mut reasoning = explain(row, query, &s);
            let subject = query
                .subject
                .and_then(|i| query.concepts.get(i))
                .map(|c| c.label.as_str());
            let floor = options.thresholds.subject_found_floor();
            let (under, at_least) = (stays_under(floor), stays_at_least(floor));
            match (calibration, subject) {
                (Calibration::SubjectMissing, Some(subject)) => {
                    reasoning.push_str(&format!(" The subject {subject} is not in it{under}"))
                }
                (Calibration::SubjectOnlyPart, Some(subject)) => {
                    reasoning.push_str(&format!(" The subject {subject} is only a part it holds{under}"))
                }
                (Calibration::SubjectFound, Some(subject)) => {
                    reasoning.push_str(&format!(" It has the subject {subject}{at_least}"))
                }
                (Calibration::NonContent, _) => reasoning.push_str(&format!(
                    " It is code or tooling, which the query did not ask for{under}"
                )),
                (Calibration::OtherType, _) => {
                    reasoning.push_str(&format!(" It is not of the type the query names{under}"))
                }
                (Calibration::MeaningAlone, _) => reasoning.push_str(&format!(
                    " Only words near in meaning match it, not every query word{under}"
                )),
                _ => {}
            }
            reasoning.push(' ');
            reasoning.push_str(&tier.sentence(options.subtype_hint));
            if past > 0.0 {
                reasoning.push_str(&format!(
                    " Boosted by {past:.2} because it was picked before for a similar request."
                ));
            }
            let wanted_type = intents.preference(query.type_intent.as_deref(), row) > 0.0;
            let candidate = Candidate {
                guid: row.guid.clone(),
                path: row.path.clone(),
                confidence,
                reasoning,
                evidence: Some(Evidence::of(&s, query.subject, calibration, wanted_type, best_bm25)),
            };
            (candidate, s.bm25)
        })
        .collect()
}

/// How reasoning says a confidence was held under `cap`; the learned scorer
/// (`crate::search::scorer`) drops it where its confidence is not.
pub(crate) fn stays_under(cap: f32) -> String {
    format!(", so it stays under {cap:.2}.")
}

/// How reasoning says a confidence was held at `floor` or above.
pub(crate) fn stays_at_least(floor: f32) -> String {
    format!(", so it stays at {floor:.2} or above.")
}

/// One scored record in ranking: its confidence, scores, subtype tier,
/// past-pick boost and how its confidence was calibrated.
type Entry = (f32, Scored, SubtypeTier, f32, Calibration);

/// Each rare concept's best record ([`rare_concepts`]): the one matching it
/// most strongly, ties as ranked. Kept among the candidates past the top K,
/// so the rare word that names an asset reaches the learned scorer however
/// the rules rank it.
fn rare_champions(scored: &[Entry], order: impl Fn(&Entry, &Entry) -> Ordering) -> Vec<Entry> {
    let Some(rare) = scored.first().map(|e| e.1.rare).filter(|&rare| rare != 0) else {
        return Vec::new();
    };
    let mut champions: Vec<Entry> = Vec::new();
    for c in (0..u32::BITS as usize).filter(|c| rare >> c & 1 == 1) {
        let best = scored
            .iter()
            .filter(|e| e.1.strength.get(c).is_some_and(|&s| s > 0.0))
            .min_by(|a, b| b.1.strength[c].total_cmp(&a.1.strength[c]).then_with(|| order(a, b)));
        if let Some(best) = best.filter(|best| champions.iter().all(|e| e.1.index != best.1.index)) {
            champions.push(best.clone());
        }
    }
    champions
}

/// Keep the best `k` of `items` under `order`, sorted.
fn top_k_sorted<T>(items: &mut Vec<T>, k: usize, order: impl Fn(&T, &T) -> std::cmp::Ordering) {
    if k == 0 {
        items.clear();
        return;
    }
    if items.len() > k {
        items.select_nth_unstable_by(k - 1, &order);
        items.truncate(k);
    }
    items.sort_by(order);
}

#[cfg(test)]
mod tests;
