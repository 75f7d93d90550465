//! `unity-assets eval GOLDEN.yml`: search quality on a labelled query set.
//!
//! Two formats are read:
//! - the seed golden set (`sch1_recall` + `orc1_routing`, with
//!   `assets-template.yml` beside it naming each golden id's file), see
//!   `../shared/benchmarks/seed-golden/README.md`;
//! - our own: `queries: [{query, accepted: [paths or guids], category?, kind?}]`
//!   (`kind`: what the query tests — name, partial, description, loanword,
//!   sentence, filter, type, control — reported apart)
//!   and optionally `routing: [{query, multi, min_sub_intents?}]`. A query
//!   with `accepted: []` is a *no-answer control*: the project holds nothing
//!   that fits, so it passes when the top result stays under the confirm
//!   threshold the search pipeline resolves (`confidence_threshold.confirm`,
//!   given to `evaluate`); controls are scored apart from the
//!   Recall/Precision/MRR of the answerable queries.
//!
//! `evaluate` takes the search and the router as closures, so the CLI can
//! plug in the pipeline runner and tests the builtin ranker directly.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use engine::io::Limits;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How many results the metrics look at.
pub(crate) const CUTOFF: usize = 3;

/// A labelled query: which results count as right.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldenQuery {
    pub(crate) id: String,
    /// The words searched for.
    pub query: String,
    pub(crate) category: Option<String>,
    /// What the query tests (a judged set's `kind`).
    pub kind: Option<String>,
    /// The one answer Recall@3 looks for (seed: `expected_golden_id`);
    /// `None` means any accepted answer counts.
    pub expected: Option<Answer>,
    /// Every acceptable answer (Precision@3, MRR); empty for a control.
    pub accepted: Vec<Answer>,
}

impl GoldenQuery {
    /// Whether `hit` is one of this query's answers.
    pub fn accepts(&self, hit: &Hit) -> bool {
        self.accepted.iter().any(|a| a.matches(hit))
    }

    /// A no-answer control: nothing in the project is acceptable.
    pub(crate) fn is_control(&self) -> bool {
        self.accepted.is_empty() && self.expected.is_none()
    }
}

/// One acceptable result, matched by path or by guid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Answer {
    /// The project-relative path of the right asset.
    pub path: Option<String>,
    /// The right asset's guid, when the set names it so.
    pub guid: Option<String>,
}

impl Answer {
    /// The asset at `path`.
    pub fn path(path: String) -> Self {
        Self {
            path: Some(path),
            guid: None,
        }
    }

    fn matches(&self, hit: &Hit) -> bool {
        self.path.as_deref().is_some_and(|p| p == hit.path) || self.guid.as_deref().is_some_and(|g| g == hit.guid)
    }
}

/// A labelled routing case: is the query one request or several?
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RoutingCase {
    pub(crate) id: String,
    /// The words searched for.
    pub query: String,
    pub(crate) multi: bool,
    pub(crate) min_sub_intents: Option<usize>,
}

/// A labelled query set: the queries whose answers are known, and the routing cases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoldenSet {
    /// The labelled queries, in file order.
    pub queries: Vec<GoldenQuery>,
    pub(crate) routing: Vec<RoutingCase>,
}

/// One search result as eval sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The asset's guid.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    /// How sure search was of it (0 to 1).
    pub confidence: f32,
}

/// The guid the seed's fixture builder gave `dir/name+ext`: the first 16
/// bytes of its SHA-256, as 32 lowercase hex digits.
pub fn seed_guid(relative_path: &str) -> String {
    engine::digest::hex(&Sha256::digest(relative_path.as_bytes())[..16])
}

/// An entry of the seed's `assets-template.yml`.
#[derive(Debug, Clone, Deserialize)]
pub struct SeedTemplate {
    /// The Unity type of the asset (`Prefab`, `Material`, ...).
    pub kind: String,
    /// The file's name without its extension.
    pub name: String,
    pub(crate) dir: String,
    pub(crate) ext: String,
    /// The asset's labels, as Unity's `.meta` holds them.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Tags a tagger would give it, for seeding an index without a model.
    #[serde(default)]
    pub tags_hint: Vec<String>,
    /// A summary a tagger would give it, for the same.
    #[serde(default)]
    pub summary_hint: String,
    #[serde(default)]
    pub(crate) golden_id: Option<String>,
}

impl SeedTemplate {
    /// The asset's project-relative path: `dir/name+ext`.
    pub fn path(&self) -> String {
        format!("{}/{}{}", self.dir, self.name, self.ext)
    }
}

/// Read `assets-template.yml`.
pub fn load_seed_templates(path: &Path, limits: &Limits) -> anyhow::Result<Vec<SeedTemplate>> {
    #[derive(Deserialize)]
    struct File {
        templates: Vec<SeedTemplate>,
    }
    let text = read_text(path, limits)?;
    let file: File =
        serde_yaml::from_str(&text).with_context(|| format!("{} is not a seed template file", path.display()))?;
    Ok(file.templates)
}

#[derive(Deserialize)]
struct SeedGolden {
    #[serde(default)]
    sch1_recall: Vec<SeedQuery>,
    #[serde(default)]
    orc1_routing: Vec<SeedRouting>,
}

#[derive(Deserialize)]
struct SeedQuery {
    id: String,
    query: String,
    expected_golden_id: String,
    #[serde(default)]
    expected_relevant_ids: Vec<String>,
    #[serde(default)]
    category: Option<String>,
}

#[derive(Deserialize)]
struct SeedRouting {
    id: String,
    query: String,
    expected_multi: bool,
    #[serde(default)]
    expected_sub_intents_min: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnGolden {
    queries: Vec<OwnQuery>,
    #[serde(default)]
    routing: Vec<OwnRouting>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnQuery {
    #[serde(default)]
    id: Option<String>,
    query: String,
    accepted: Vec<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnRouting {
    query: String,
    multi: bool,
    #[serde(default)]
    min_sub_intents: Option<usize>,
}

/// Read a golden file in either format (the seed format needs its
/// `assets-template.yml` in the same folder).
pub fn load_golden(path: &Path, limits: &Limits) -> anyhow::Result<GoldenSet> {
    let text = read_text(path, limits)?;
    let value: serde_yaml::Value =
        serde_yaml::from_str(&text).with_context(|| format!("{} is not valid YAML", path.display()))?;
    if value.get("sch1_recall").is_some() || value.get("orc1_routing").is_some() {
        let templates_path = path.with_file_name("assets-template.yml");
        let templates = load_seed_templates(&templates_path, limits)
            .with_context(|| format!("the seed golden format needs {} beside it", templates_path.display()))?;
        let seed: SeedGolden = serde_yaml::from_value(value).with_context(|| format!("{}", path.display()))?;
        return seed_set(seed, &templates);
    }
    let own: OwnGolden = serde_yaml::from_value(value).with_context(|| {
        format!(
            "{}: expected `queries: [{{query, accepted: [paths]}}]` or the seed's `sch1_recall`",
            path.display()
        )
    })?;
    Ok(GoldenSet {
        queries: own
            .queries
            .into_iter()
            .enumerate()
            .map(|(i, q)| GoldenQuery {
                id: q.id.unwrap_or_else(|| format!("q{:02}", i + 1)),
                query: q.query,
                category: q.category,
                kind: q.kind,
                expected: None,
                accepted: q.accepted.into_iter().map(own_answer).collect(),
            })
            .collect(),
        routing: own
            .routing
            .into_iter()
            .enumerate()
            .map(|(i, r)| RoutingCase {
                id: format!("r{:02}", i + 1),
                query: r.query,
                multi: r.multi,
                min_sub_intents: r.min_sub_intents,
            })
            .collect(),
    })
}

/// A golden or template file, read as every other file is: a FIFO or device
/// is refused rather than blocking or read without end, and the file must
/// fit `limits.file_mb`.
fn read_text(path: &Path, limits: &Limits) -> anyhow::Result<String> {
    engine::io::read_text_limited(path, limits.file_bytes, engine::io::FILE_KEY, &crate::PRODUCT)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// A 32-hex-digit entry is a guid, anything else a path.
fn own_answer(text: String) -> Answer {
    if text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Answer {
            path: None,
            guid: Some(text.to_ascii_lowercase()),
        }
    } else {
        Answer {
            path: Some(text),
            guid: None,
        }
    }
}

fn seed_set(seed: SeedGolden, templates: &[SeedTemplate]) -> anyhow::Result<GoldenSet> {
    let by_id: HashMap<&str, &SeedTemplate> = templates
        .iter()
        .filter_map(|t| t.golden_id.as_deref().map(|id| (id, t)))
        .collect();
    let answer = |query_id: &str, golden_id: &str| -> anyhow::Result<Answer> {
        let t = by_id
            .get(golden_id)
            .with_context(|| format!("{query_id}: golden id `{golden_id}` is not in assets-template.yml"))?;
        let path = t.path();
        Ok(Answer {
            guid: Some(seed_guid(&path)),
            path: Some(path),
        })
    };
    let mut queries = Vec::new();
    for q in seed.sch1_recall {
        let mut ids = q.expected_relevant_ids.clone();
        if !ids.contains(&q.expected_golden_id) {
            ids.push(q.expected_golden_id.clone());
        }
        queries.push(GoldenQuery {
            expected: Some(answer(&q.id, &q.expected_golden_id)?),
            accepted: ids.iter().map(|id| answer(&q.id, id)).collect::<anyhow::Result<_>>()?,
            id: q.id,
            query: q.query,
            category: q.category,
            kind: None,
        });
    }
    let routing = seed
        .orc1_routing
        .into_iter()
        .map(|r| RoutingCase {
            id: r.id,
            query: r.query,
            multi: r.expected_multi,
            min_sub_intents: r.expected_sub_intents_min,
        })
        .collect();
    Ok(GoldenSet { queries, routing })
}

/// Recall@3, Precision@3 and MRR over some queries.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Metrics {
    /// How many queries the metrics are over.
    pub queries: usize,
    pub(crate) recall_at_3: f64,
    pub(crate) precision_at_3: f64,
    pub(crate) mrr: f64,
}

/// How one query went.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct QueryOutcome {
    pub(crate) id: String,
    /// The words searched for.
    pub query: String,
    pub(crate) category: Option<String>,
    /// What the query tests (its set's `kind`), if labelled.
    pub kind: Option<String>,
    /// A no-answer control: `hit` means its best result stayed under
    /// [`Controls::ceiling`].
    pub control: bool,
    /// The highest confidence among the results (0 when nothing came back).
    pub(crate) top_confidence: f32,
    pub(crate) hit: bool,
    /// 1-based rank of the first accepted result, if any.
    pub(crate) first_rank: Option<usize>,
    pub(crate) relevant_in_top: usize,
    pub(crate) top: Vec<String>,
    /// A miss whose answer the search showed among the closest candidates
    /// of its no_match, under the confirm threshold: shown, not confirmed.
    pub(crate) shown_not_confirmed: bool,
}

/// What one search returned: its results, best first, and for a no_match
/// the closest candidates it showed under the confirm threshold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Searched {
    pub(crate) hits: Vec<Hit>,
    pub(crate) closest: Vec<Hit>,
}

impl From<Vec<Hit>> for Searched {
    fn from(hits: Vec<Hit>) -> Self {
        Self {
            hits,
            closest: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct RoutingScore {
    pub correct: usize,
    pub total: usize,
    pub(crate) multi_correct: usize,
    pub(crate) multi_total: usize,
    pub(crate) single_correct: usize,
    pub(crate) single_total: usize,
    /// Per case: id and the number of sub-intents produced.
    pub cases: Vec<(String, usize, bool)>,
}

/// How the no-answer controls went.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Controls {
    /// The confirm threshold: a control passes when its best result is
    /// under it, so `build` would not place it without asking.
    pub(crate) ceiling: f32,
    pub(crate) total: usize,
    /// Controls whose best result stayed under [`Controls::ceiling`].
    pub passed: usize,
    /// The highest top confidence among them.
    pub(crate) max_confidence: f32,
}

/// What an eval run found: the metrics overall and per group, and each query's outcome.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Report {
    /// The answerable queries (controls excluded).
    pub overall: Metrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) controls: Option<Controls>,
    pub(crate) by_category: BTreeMap<String, Metrics>,
    /// By the judged sets' `kind` (empty when no query has one).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, Metrics>,
    /// Misses whose answer was shown among a no_match's closest candidates.
    pub(crate) shown_not_confirmed: usize,
    pub(crate) outcomes: Vec<QueryOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) routing: Option<RoutingScore>,
}

/// Run every query through `search` (ranked results, best first) and every
/// routing case through `route` (the number of sub-intents it produced); a
/// control passes under `control_ceiling` (the confirm threshold in effect).
pub(crate) fn evaluate(
    set: &GoldenSet,
    control_ceiling: f32,
    mut search: impl FnMut(&str) -> anyhow::Result<Searched>,
    mut route: impl FnMut(&str) -> anyhow::Result<usize>,
) -> anyhow::Result<Report> {
    let mut outcomes = Vec::new();
    for q in &set.queries {
        let Searched { hits, closest } =
            search(&q.query).with_context(|| format!("search failed for {} ({:?})", q.id, q.query))?;
        let accepted = |hit: &Hit| q.accepts(hit);
        let top = &hits[..hits.len().min(CUTOFF)];
        let top_confidence = hits.iter().map(|h| h.confidence).fold(0.0, f32::max);
        let hit = match &q.expected {
            _ if q.is_control() => top_confidence < control_ceiling,
            Some(expected) => top.iter().any(|h| expected.matches(h)),
            None => top.iter().any(accepted),
        };
        let relevant: HashSet<&str> = top.iter().filter(|h| accepted(h)).map(|h| h.path.as_str()).collect();
        outcomes.push(QueryOutcome {
            id: q.id.clone(),
            query: q.query.clone(),
            category: q.category.clone(),
            kind: q.kind.clone(),
            control: q.is_control(),
            top_confidence,
            hit,
            first_rank: hits.iter().position(accepted).map(|i| i + 1),
            relevant_in_top: relevant.len(),
            top: top.iter().map(|h| h.path.clone()).collect(),
            shown_not_confirmed: !hit && !q.is_control() && closest.iter().take(CUTOFF).any(accepted),
        });
    }
    let mut by_kind: BTreeMap<String, Vec<&QueryOutcome>> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| !o.control) {
        if let Some(kind) = &o.kind {
            by_kind.entry(kind.clone()).or_default().push(o);
        }
    }
    let mut by_category: BTreeMap<String, Vec<&QueryOutcome>> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| !o.control) {
        by_category
            .entry(o.category.clone().unwrap_or_else(|| "uncategorised".into()))
            .or_default()
            .push(o);
    }
    let routing = if set.routing.is_empty() {
        None
    } else {
        let mut score = RoutingScore::default();
        for case in &set.routing {
            let n = route(&case.query).with_context(|| format!("routing failed for {} ({:?})", case.id, case.query))?;
            let right = (n > 1) == case.multi && case.min_sub_intents.is_none_or(|min| n >= min);
            score.total += 1;
            score.correct += usize::from(right);
            if case.multi {
                score.multi_total += 1;
                score.multi_correct += usize::from(right);
            } else {
                score.single_total += 1;
                score.single_correct += usize::from(right);
            }
            score.cases.push((case.id.clone(), n, right));
        }
        Some(score)
    };
    let controls: Vec<&QueryOutcome> = outcomes.iter().filter(|o| o.control).collect();
    let controls = (!controls.is_empty()).then(|| Controls {
        ceiling: control_ceiling,
        total: controls.len(),
        passed: controls.iter().filter(|o| o.hit).count(),
        max_confidence: controls.iter().map(|o| o.top_confidence).fold(0.0, f32::max),
    });
    Ok(Report {
        overall: metrics(outcomes.iter().filter(|o| !o.control)),
        controls,
        by_category: by_category
            .into_iter()
            .map(|(k, v)| (k, metrics(v.into_iter())))
            .collect(),
        by_kind: by_kind.into_iter().map(|(k, v)| (k, metrics(v.into_iter()))).collect(),
        shown_not_confirmed: outcomes.iter().filter(|o| o.shown_not_confirmed).count(),
        outcomes,
        routing,
    })
}

fn metrics<'a>(outcomes: impl Iterator<Item = &'a QueryOutcome>) -> Metrics {
    let (mut n, mut hits, mut precision, mut rr) = (0usize, 0usize, 0f64, 0f64);
    for o in outcomes {
        n += 1;
        hits += usize::from(o.hit);
        precision += o.relevant_in_top as f64 / CUTOFF as f64;
        rr += o.first_rank.map_or(0.0, |r| 1.0 / r as f64);
    }
    let avg = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    Metrics {
        queries: n,
        recall_at_3: avg(hits as f64),
        precision_at_3: avg(precision),
        mrr: avg(rr),
    }
}

impl Report {
    /// The human summary `unity-assets eval` prints.
    pub fn render(&self) -> String {
        let line = |name: &str, m: &Metrics| {
            format!(
                "{name:<20} n={:<3} Recall@3 {:.3}  Precision@3 {:.3}  MRR {:.3}",
                m.queries, m.recall_at_3, m.precision_at_3, m.mrr
            )
        };
        let mut out = line("overall", &self.overall);
        for (category, m) in &self.by_category {
            let _ = write!(out, "\n{}", line(&format!("  {category}"), m));
        }
        for (kind, m) in &self.by_kind {
            let _ = write!(out, "\n{}", line(&format!("  kind {kind}"), m));
        }
        if self.shown_not_confirmed > 0 {
            let _ = write!(
                out,
                "\nshown, not confirmed: {} (a no_match whose closest candidates held the answer)",
                self.shown_not_confirmed
            );
        }
        if let Some(c) = &self.controls {
            let _ = write!(
                out,
                "\ncontrols {}/{} under {:.2} (highest top confidence {:.3})",
                c.passed, c.total, c.ceiling, c.max_confidence
            );
        }
        for o in self.outcomes.iter().filter(|o| !o.hit) {
            let kind = if o.control { "control over" } else { "miss" };
            let _ = write!(
                out,
                "\n{kind} {}: {:?} → top {:?} ({:.3})",
                o.id, o.query, o.top, o.top_confidence
            );
        }
        if let Some(r) = &self.routing {
            let _ = write!(
                out,
                "\nrouting {}/{} (multi {}/{}, single {}/{})",
                r.correct, r.total, r.multi_correct, r.multi_total, r.single_correct, r.single_total
            );
        }
        out
    }
}

#[cfg(test)]
mod tests;
