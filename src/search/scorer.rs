//! The learned scorer: the probability that a candidate is what the query
//! asked for, from the evidence of every channel (name, words, meaning) —
//! a logistic model whose weights are data (`data/search-weights.yml`,
//! overridable like every data file), trained on the candidates `unity-assets
//! eval --features` dumps for judged queries by `benchmarks/judged/train.py`
//! (which reproduces the shipped file).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::rank::Evidence;

/// The data file the scorer's weights are read from.
pub const WEIGHTS_FILE: &str = "data/search-weights.yml";

/// Every feature, in the order [`Features::of`] gives them; a weights file names them.
pub const FEATURES: [&str; 28] = [
    "meaning_on",
    "rule",
    "rule_gap",
    "lexical",
    "lexical_rank",
    "name_exact",
    "name_fuzzy",
    "cosine",
    "cosine_gap",
    "meaning_rank",
    "word_cosine",
    "agree",
    "coverage",
    "named",
    "in_file_name",
    "brevity",
    "folder_only",
    "part_only",
    "missing",
    "unseen",
    "subject_missing",
    "subject_unseen",
    "off_type",
    "wanted_type",
    "meaning_alone",
    "bm25",
    "subject_strength",
    "loose",
];

/// One candidate's evidence as numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Features(pub Vec<f32>);

/// What fusion knows about one candidate, channel by channel.
#[derive(Debug, Clone, Default)]
pub struct Channels {
    /// The word ranker's (or the name channel's) confidence; 0 when neither found it.
    pub rule: f32,
    /// Its rank in the word ranker's list.
    pub lexical_rank: Option<usize>,
    /// Its file name is the query.
    pub name_exact: bool,
    /// The name channel's confidence for a prefix or typo of its name.
    pub name_fuzzy: f32,
    /// Its similarity and rank among the nearest vectors.
    pub meaning: Option<(f32, usize)>,
    /// The cosine of the query word and its word closest in meaning, when explained.
    pub word_cosine: f32,
    pub evidence: Option<Evidence>,
}

/// What a candidate is weighed against: the pool it was chosen from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pool {
    /// Search by meaning ran (the encoder is installed and asked): without
    /// it no candidate has a similarity, which says nothing against any.
    pub meaning_on: bool,
    /// The best rule confidence among the candidates.
    pub best_rule: f32,
    /// The best similarity among them.
    pub best_cosine: f32,
}

impl Features {
    /// The features of `c` among the candidates of `pool`.
    pub fn of(c: &Channels, pool: Pool) -> Self {
        let Pool {
            meaning_on,
            best_rule,
            best_cosine,
        } = pool;
        let e = c.evidence.unwrap_or_default();
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let reciprocal = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (1.0 + r as f32));
        let cosine = c.meaning.map_or(0.0, |(similarity, _)| similarity);
        Self(vec![
            flag(meaning_on),
            c.rule,
            best_rule - c.rule,
            flag(c.lexical_rank.is_some()),
            reciprocal(c.lexical_rank),
            flag(c.name_exact),
            c.name_fuzzy,
            cosine,
            best_cosine - cosine,
            reciprocal(c.meaning.map(|(_, rank)| rank)),
            c.word_cosine,
            flag(c.lexical_rank == Some(0) && c.meaning.is_some_and(|(_, rank)| rank == 0)),
            e.coverage,
            e.named,
            e.in_file_name,
            e.brevity,
            e.folder_only,
            e.part_only,
            e.missing,
            e.unseen,
            flag(e.subject_missing),
            flag(e.subject_unseen),
            flag(e.off_type),
            flag(e.wanted_type),
            flag(e.meaning_alone),
            e.bm25,
            e.subject_strength,
            e.loose,
        ])
    }
}

/// `data/search-weights.yml`: a logistic model over [`FEATURES`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scorer {
    /// The file format; only 1 exists.
    pub version: u32,
    /// What it was trained on, for people.
    #[serde(default)]
    pub trained_on: String,
    pub bias: f32,
    /// By feature name; a feature left out weighs nothing.
    pub weights: BTreeMap<String, f32>,
    /// `weights` in [`FEATURES`] order, laid out once when parsed: a
    /// search scores every pooled candidate with them.
    #[serde(skip)]
    ordered: Vec<f32>,
}

impl Scorer {
    /// Parse a weights file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Self> {
        let mut scorer: Self = serde_yaml::from_str(text).map_err(|e| {
            anyhow::anyhow!("{origin}: {e} (expected {{version: 1, bias: NUMBER, weights: {{FEATURE: NUMBER}}}})")
        })?;
        if scorer.version != 1 {
            anyhow::bail!("{origin}: version {} is not known (only 1 is)", scorer.version);
        }
        if let Some(unknown) = scorer.weights.keys().find(|k| !FEATURES.contains(&k.as_str())) {
            anyhow::bail!("{origin}: `{unknown}` is no feature (known: {})", FEATURES.join(", "));
        }
        scorer.ordered = FEATURES
            .iter()
            .map(|name| scorer.weights.get(*name).copied().unwrap_or(0.0))
            .collect();
        Ok(scorer)
    }

    /// The weights file the run's resources hold (a project's override, else the embedded one).
    pub fn load(ctx: &engine::CallContext) -> anyhow::Result<Self> {
        let resource = ctx
            .resources
            .get(WEIGHTS_FILE)?
            .ok_or_else(|| anyhow::anyhow!("{WEIGHTS_FILE} is missing"))?;
        Self::parse(&resource.text, &resource.origin)
    }

    /// The weights in [`FEATURES`] order.
    #[cfg(test)]
    pub fn vector(&self) -> &[f32] {
        &self.ordered
    }

    /// The probability that the candidate with `features` is an answer.
    pub fn probability(&self, features: &Features) -> f32 {
        let z = self.bias + features.0.iter().zip(&self.ordered).map(|(x, w)| x * w).sum::<f32>();
        1.0 / (1.0 + (-z).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_weights_parse_and_name_only_known_features() {
        let text = include_str!("../../data/search-weights.yml");
        let scorer = Scorer::parse(text, WEIGHTS_FILE).unwrap();
        assert_eq!(scorer.vector().len(), FEATURES.len());
        let err = Scorer::parse("version: 1\nbias: 0\nweights: {colour: 1}\n", "w.yml").unwrap_err();
        assert!(err.to_string().contains("`colour` is no feature"), "{err}");
    }

    #[test]
    fn more_evidence_is_more_probable_under_positive_weights() {
        let scorer = Scorer::parse("version: 1\nbias: -2\nweights: {rule: 4, name_exact: 3}\n", "w.yml").unwrap();
        let pool = Pool {
            best_rule: 0.3,
            ..Pool::default()
        };
        let weak = Features::of(
            &Channels {
                rule: 0.3,
                ..Channels::default()
            },
            pool,
        );
        let named = Features::of(
            &Channels {
                rule: 0.3,
                name_exact: true,
                ..Channels::default()
            },
            pool,
        );
        assert!(scorer.probability(&named) > scorer.probability(&weak));
    }
}
