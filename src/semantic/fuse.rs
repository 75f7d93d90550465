//! Fusion of the lexical ranker's candidates with the nearest vectors and
//! the name channel's hits ([`crate::search::names`]), per sub-intent: an
//! asset whose file name is the query goes first. The method and its weights
//! are params of `search.semantic` in `pipelines/search.yaml`.
//!
//! Every candidate of the three lists joins one pool with what each channel
//! said of it ([`Channels`]). By default (`fusion: learned`) the learned
//! scorer ([`Scorer`]) turns that evidence into the probability that the
//! candidate is what was asked for, which orders the pool and becomes its
//! confidence, within the promises [`learned_confidence`] keeps. The older
//! methods stay for comparison and for a model's rerank, whose candidates
//! carry no evidence: `confidence` keeps the lexical scorer's confidence
//! where it found the asset, and gives a candidate found only by meaning
//! one that follows its similarity — 0 at `similarity.floor`, the confirm
//! threshold at `similarity.confirm`, the same slope above — capped
//! `cap_below_auto` under auto: meaning alone is always confirmed by a
//! person; `rrf` orders by reciprocal rank.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::nearest::Near;
use crate::search::filters::Filters;
use crate::search::names::NameCandidate;
use crate::search::rank::{stays_at_least, stays_under, Candidate, Thresholds};
use crate::search::result::{ResultGroup, SearchResult};
use crate::search::route::SubIntent;
use crate::search::scorer::{Channels, Features, Pool, Scorer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retrievers {
    /// Both lists, fused.
    Hybrid,
    /// The lexical ranker alone (search as it was without meaning).
    Lexical,
    /// The nearest vectors alone (for `eval --retrievers`).
    Semantic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Reciprocal rank fusion: Σ weight / (rrf_k + rank).
    Rrf,
    /// By confidence alone (lexical, or the calibrated similarity).
    Confidence,
    /// By the learned scorer's probability ([`Scorer`]), which becomes the
    /// confidence: every channel's evidence weighed together.
    Learned,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Weights {
    pub lexical: f32,
    pub semantic: f32,
}

/// Where similarity maps onto confidence for meaning-only candidates.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct SimilarityScale {
    /// At or under this cosine a meaning-only candidate is dropped.
    pub floor: f32,
    /// The cosine at which it reaches the confirm threshold.
    pub confirm: f32,
}

#[derive(Deserialize)]
pub struct FuseArgs {
    sub_intents: Vec<SubIntent>,
    /// The lexical path's groups (drill-down, fallbacks or a model's
    /// rerank); none when it found nothing.
    #[serde(default)]
    lexical: Option<Vec<ResultGroup>>,
    /// `semantic.nearest`'s output; none when the stage did not run.
    #[serde(default)]
    semantic: Option<SemanticIn>,
    /// The query's words, filters removed: the name channel looks them up.
    #[serde(default)]
    words: String,
    /// The query's filters, which the name channel's hits pass too.
    #[serde(default)]
    filters: Filters,
    retrievers: Retrievers,
    method: Method,
    rrf_k: f32,
    weights: Weights,
    similarity: SimilarityScale,
    cap_below_auto: f32,
    top_k: usize,
    confirm: f32,
    auto: f32,
}

#[derive(Deserialize)]
struct SemanticIn {
    available: bool,
    #[serde(default)]
    groups: Vec<SemanticGroup>,
}

#[derive(Deserialize)]
struct SemanticGroup {
    near: Vec<Near>,
}

#[derive(Serialize)]
pub struct FuseOut {
    groups: Vec<ResultGroup>,
    best_confidence: f32,
    /// How many shown candidates only meaning found.
    by_meaning: usize,
    /// Per sub-intent, every candidate fusion chose from, with its
    /// features: what `eval --features` records to train the scorer on.
    pool: Vec<Vec<Pooled>>,
}

/// One candidate of a fusion's pool.
#[derive(Serialize)]
pub struct Pooled {
    guid: String,
    path: String,
    features: Features,
}

impl From<&FuseArgs> for Thresholds {
    fn from(args: &FuseArgs) -> Self {
        Thresholds {
            confirm: args.confirm,
            auto: args.auto,
        }
    }
}

/// Fuse the lists of `args` and the name channel's hits for its words.
pub fn fuse_with_names(args: FuseArgs, ctx: &engine::CallContext) -> anyhow::Result<FuseOut> {
    let thresholds = Thresholds::from(&args);
    let names = crate::search::names::lookup(&args.sub_intents, &args.words, &args.filters, thresholds, ctx)?;
    let scorer = Scorer::load(ctx)?;
    Ok(fuse(args, &scorer, names))
}

pub fn fuse(mut args: FuseArgs, scorer: &Scorer, names: Vec<Vec<NameCandidate>>) -> FuseOut {
    let mut lexical = args.lexical.take().unwrap_or_default().into_iter();
    let semantic = args.semantic.take().filter(|s| s.available);
    let meaning_on = semantic.is_some() && args.retrievers != Retrievers::Lexical;
    let mut semantic = semantic.map(|s| s.groups).unwrap_or_default().into_iter();
    let mut names = names.into_iter();
    let mut by_meaning = 0;
    let mut pool = vec![];
    let groups: Vec<ResultGroup> = args
        .sub_intents
        .iter()
        .map(|intent| {
            let words = lexical.next();
            let meaning = semantic.next().map(|g| g.near).unwrap_or_default();
            let mut group = words.clone().unwrap_or_else(|| ResultGroup {
                sub_intent: intent.intent.clone(),
                category_hint: intent.category_hint.clone(),
                subtype_hint: intent.subtype_hint.clone(),
                candidates: vec![],
            });
            let lexical_candidates = match args.retrievers {
                Retrievers::Semantic => vec![],
                _ => words.map(|g| g.candidates).unwrap_or_default(),
            };
            let meaning = match args.retrievers {
                Retrievers::Lexical => vec![],
                _ => meaning,
            };
            let named = names.next().unwrap_or_default();
            let (candidates, pooled) = fuse_one(&args, scorer, meaning_on, named, lexical_candidates, &meaning);
            group.candidates = candidates;
            pool.push(pooled);
            by_meaning += group
                .candidates
                .iter()
                .filter(|c| c.reasoning.starts_with(BY_MEANING))
                .count();
            group
        })
        .collect();
    FuseOut {
        best_confidence: SearchResult::best_confidence(&groups),
        groups,
        by_meaning,
        pool,
    }
}

const BY_MEANING: &str = "by meaning";

/// One candidate of a sub-intent's pool, with what each channel said of it.
struct Fused {
    candidate: Candidate,
    channels: Channels,
    /// The words alone reached confirm: such a candidate keeps its
    /// place ahead of anything meaning adds under `confidence` and `rrf`
    /// (measured: interleaving them cost the dev sets' MRR 0.956 →
    /// 0.873 on FPSSample).
    confirmed_by_words: bool,
    rrf: f32,
}

/// One sub-intent's candidates from the three lists, best first, `top_k`
/// kept; with the pool every candidate was chosen from, and its features.
fn fuse_one(
    args: &FuseArgs,
    scorer: &Scorer,
    meaning_on: bool,
    named: Vec<NameCandidate>,
    lexical: Vec<Candidate>,
    meaning: &[Near],
) -> (Vec<Candidate>, Vec<Pooled>) {
    let fused = gather(args, named, lexical, meaning);
    rank(args, scorer, meaning_on, fused)
}

/// The three lists as one pool, each candidate once, its channels merged.
fn gather(args: &FuseArgs, named: Vec<NameCandidate>, lexical: Vec<Candidate>, meaning: &[Near]) -> Vec<Fused> {
    let rrf = |weight: f32, rank: usize| weight / (args.rrf_k + rank as f32 + 1.0);
    let mut fused: Vec<Fused> = vec![];
    let mut at: HashMap<String, usize> = HashMap::new();
    for (rank, mut candidate) in lexical.into_iter().enumerate() {
        at.insert(candidate.guid.clone(), fused.len());
        fused.push(Fused {
            rrf: rrf(args.weights.lexical, rank),
            channels: Channels {
                rule: candidate.confidence,
                lexical_rank: Some(rank),
                evidence: candidate.evidence.take(),
                ..Channels::default()
            },
            confirmed_by_words: candidate.confidence >= args.confirm,
            candidate,
        });
    }
    for (rank, NameCandidate { candidate, exact }) in named.into_iter().enumerate() {
        let score = rrf(args.weights.lexical, rank);
        let i = *at.entry(candidate.guid.clone()).or_insert_with(|| {
            fused.push(Fused {
                rrf: score,
                channels: Channels::default(),
                confirmed_by_words: false,
                candidate: Candidate {
                    reasoning: String::new(),
                    ..candidate.clone()
                },
            });
            fused.len() - 1
        });
        let f = &mut fused[i];
        f.rrf = f.rrf.max(score);
        f.channels.name_exact = exact;
        if !exact {
            f.channels.name_fuzzy = candidate.confidence;
        }
        f.channels.rule = f.channels.rule.max(candidate.confidence);
        f.confirmed_by_words |= candidate.confidence >= args.confirm;
        f.candidate.confidence = f.candidate.confidence.max(candidate.confidence);
        f.candidate.reasoning = format!("{} {}", candidate.reasoning, f.candidate.reasoning)
            .trim_end()
            .to_owned();
    }
    for (rank, near) in meaning.iter().enumerate() {
        let confidence = meaning_confidence(args, near.similarity);
        match at.get(&near.guid) {
            Some(&i) => {
                let both = &mut fused[i];
                both.rrf += rrf(args.weights.semantic, rank);
                both.channels.meaning = Some((near.similarity, rank));
                both.channels.word_cosine = near.word_similarity.unwrap_or(0.0);
                both.candidate.confidence = both.candidate.confidence.max(confidence);
                both.candidate.reasoning =
                    format!("{}; also by meaning ({:.2})", both.candidate.reasoning, near.similarity);
            }
            None if near.similarity > args.similarity.floor => {
                at.insert(near.guid.clone(), fused.len());
                fused.push(Fused {
                    rrf: rrf(args.weights.semantic, rank),
                    channels: Channels {
                        meaning: Some((near.similarity, rank)),
                        word_cosine: near.word_similarity.unwrap_or(0.0),
                        ..Channels::default()
                    },
                    confirmed_by_words: false,
                    candidate: Candidate {
                        guid: near.guid.clone(),
                        path: near.path.clone(),
                        confidence,
                        reasoning: match &near.because {
                            Some(because) => format!("{BY_MEANING}, {:.2}: {because}", near.similarity),
                            None => format!("{BY_MEANING}, {:.2}", near.similarity),
                        },
                        evidence: None,
                    },
                });
            }
            None => {}
        }
    }
    fused
}

/// The pool ordered by `args.method`, `top_k` kept, with every candidate's features.
fn rank(args: &FuseArgs, scorer: &Scorer, meaning_on: bool, fused: Vec<Fused>) -> (Vec<Candidate>, Vec<Pooled>) {
    let stats = Pool {
        meaning_on,
        best_rule: fused.iter().map(|f| f.channels.rule).fold(0.0, f32::max),
        best_cosine: fused
            .iter()
            .filter_map(|f| f.channels.meaning.map(|(similarity, _)| similarity))
            .fold(0.0, f32::max),
    };
    let features: Vec<Features> = fused.iter().map(|f| Features::of(&f.channels, stats)).collect();
    let pool: Vec<Pooled> = fused
        .iter()
        .zip(&features)
        .map(|(f, features)| Pooled {
            guid: f.candidate.guid.clone(),
            path: f.candidate.path.clone(),
            features: features.clone(),
        })
        .collect();
    // The weights read the builtin ranker's evidence: candidates a model
    // ranked carry none, and are ordered by their confidence.
    let method = match args.method {
        Method::Learned
            if fused
                .iter()
                .any(|f| f.channels.lexical_rank.is_some() && f.channels.evidence.is_none()) =>
        {
            Method::Confidence
        }
        method => method,
    };
    let mut keyed: Vec<(f32, Fused)> = fused
        .into_iter()
        .zip(&features)
        .map(|(mut f, features)| {
            let key = match method {
                Method::Rrf => f.rrf,
                Method::Confidence => f.candidate.confidence,
                Method::Learned => {
                    let confidence = learned_confidence(args, scorer.probability(features), &f.channels);
                    f.candidate.confidence = confidence;
                    f.candidate.reasoning = true_to(&f.candidate.reasoning, confidence, args.confirm);
                    confidence
                }
            };
            (key, f)
        })
        .collect();
    // Stable sorts: on a tie the lexical order comes first. The learned
    // scorer weighs confirmation by words itself.
    keyed.sort_by(|(ka, a), (kb, b)| {
        b.channels
            .name_exact
            .cmp(&a.channels.name_exact)
            .then(match method {
                Method::Learned => std::cmp::Ordering::Equal,
                _ => b.confirmed_by_words.cmp(&a.confirmed_by_words),
            })
            .then(kb.total_cmp(ka))
    });
    keyed.truncate(args.top_k);
    (keyed.into_iter().map(|(_, f)| f.candidate).collect(), pool)
}

/// The learned probability as a confidence, within what the evidence
/// allows: a file name the query names (exactly, or by a prefix or typo)
/// keeps the name channel's confidence; a record of a type the query rules
/// out, or found for a query whose subject no record of the project holds
/// ("wooden bridge" where nothing is a bridge), stays under confirm, as the
/// word ranker keeps it; and what only meaning found never reaches auto
/// (module docs). Measured on the judged corpus, the subject cap costs 0.012
/// Recall@3 for 3 of 43 controls; capping every missing subject cost 0.035.
fn learned_confidence(args: &FuseArgs, probability: f32, channels: &Channels) -> f32 {
    let evidence = channels.evidence.unwrap_or_default();
    let named = channels.name_exact || channels.name_fuzzy > 0.0;
    let mut confidence = probability;
    if named {
        confidence = confidence.max(channels.rule);
    } else if evidence.off_type || evidence.subject_unseen {
        confidence = confidence.min(Thresholds::from(args).subject_missing_cap());
    }
    let by_meaning = evidence.meaning_alone || (channels.lexical_rank.is_none() && channels.meaning.is_some());
    // Lacking half the query's words that other assets hold ("sci-fi
    // barrel" for a wooden barrel) leaves it a lead to confirm, never auto;
    // a scene role's theme word alone (1 of 4) does not.
    if (by_meaning || evidence.missing >= 0.5) && !named {
        confidence = confidence.min(args.auto - args.cap_below_auto);
    }
    (confidence * 1000.0).round() / 1000.0
}

/// `reasoning` without the word ranker's claims about where its confidence
/// stays ("so it stays under 0.40") that `confidence` no longer keeps.
fn true_to(reasoning: &str, confidence: f32, confirm: f32) -> String {
    let mut out = reasoning.to_owned();
    if confidence >= confirm {
        out = out.replace(&stays_under(confirm), ".");
    }
    if confidence < confirm {
        out = out.replace(&stays_at_least(confirm), ".");
    }
    out
}

/// The confidence of a candidate found by meaning alone (module docs).
fn meaning_confidence(args: &FuseArgs, similarity: f32) -> f32 {
    let SimilarityScale { floor, confirm } = args.similarity;
    let slope = args.confirm / (confirm - floor).max(1e-3);
    let cap = args.auto - args.cap_below_auto;
    ((similarity - floor) * slope).clamp(0.0, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(method: Method) -> FuseArgs {
        FuseArgs {
            sub_intents: vec![SubIntent {
                intent: "beaker".into(),
                category_hint: None,
                subtype_hint: None,
                meanings: vec![],
                theme: None,
            }],
            lexical: None,
            semantic: None,
            words: String::new(),
            filters: Filters::default(),
            retrievers: Retrievers::Hybrid,
            method,
            rrf_k: 60.0,
            weights: Weights {
                lexical: 1.0,
                semantic: 1.0,
            },
            similarity: SimilarityScale {
                floor: 0.30,
                confirm: 0.50,
            },
            cap_below_auto: 0.05,
            top_k: 3,
            confirm: 0.40,
            auto: 0.70,
        }
    }

    fn untrained() -> Scorer {
        Scorer::parse("version: 1\nbias: -4\nweights: {rule: 8}\n", "test").unwrap()
    }

    fn fused(args: &FuseArgs, named: Vec<NameCandidate>, lexical: Vec<Candidate>, meaning: &[Near]) -> Vec<Candidate> {
        fuse_one(args, &untrained(), true, named, lexical, meaning).0
    }

    fn lexical(guid: &str, confidence: f32) -> Candidate {
        Candidate {
            guid: guid.into(),
            path: format!("Assets/{guid}"),
            confidence,
            reasoning: "words".into(),
            evidence: None,
        }
    }

    fn near(guid: &str, similarity: f32) -> Near {
        Near {
            guid: guid.into(),
            path: format!("Assets/{guid}"),
            similarity,
            because: Some("비커 ≈ beaker".into()),
            word_similarity: Some(0.8),
        }
    }

    #[test]
    fn meaning_alone_follows_similarity_but_never_reaches_auto() {
        let a = args(Method::Rrf);
        assert_eq!(meaning_confidence(&a, 0.30), 0.0);
        assert!((meaning_confidence(&a, 0.50) - 0.40).abs() < 1e-6);
        assert!(
            (meaning_confidence(&a, 0.99) - 0.65).abs() < 1e-6,
            "capped 0.05 under auto"
        );
        let mut moved = args(Method::Rrf);
        moved.confirm = 0.55;
        assert!(
            (meaning_confidence(&moved, 0.50) - 0.55).abs() < 1e-6,
            "follows the confirm threshold"
        );
    }

    #[test]
    fn both_lists_interleave_by_rank_and_an_asset_in_both_keeps_the_better_confidence() {
        let fused = fused(
            &args(Method::Rrf),
            vec![],
            vec![lexical("a", 0.35), lexical("b", 0.30)],
            &[near("c", 0.80), near("a", 0.60), near("d", 0.20)],
        );
        let guids: Vec<&str> = fused.iter().map(|c| c.guid.as_str()).collect();
        assert_eq!(guids, ["a", "c", "b"], "a is in both lists; d is under the floor");
        assert!((fused[0].confidence - 0.60).abs() < 1e-6, "{:?}", fused[0]);
        assert!(fused[0].reasoning.starts_with("words; also by meaning"));
        assert_eq!(fused[1].reasoning, "by meaning, 0.80: 비커 ≈ beaker");
    }

    #[test]
    fn what_the_words_confirmed_stays_ahead_of_what_meaning_adds() {
        let fused = fused(
            &args(Method::Rrf),
            vec![],
            vec![lexical("a", 0.30), lexical("b", 0.55)],
            &[near("c", 0.95)],
        );
        let guids: Vec<&str> = fused.iter().map(|c| c.guid.as_str()).collect();
        assert_eq!(
            guids,
            ["b", "a", "c"],
            "b reached confirm by words; a and c tie on rank, words first"
        );
    }

    #[test]
    fn an_exact_name_goes_first_and_a_fuzzy_one_competes_by_confidence() {
        let name = |guid: &str, confidence: f32, exact: bool| NameCandidate {
            candidate: Candidate {
                reasoning: "named".into(),
                ..lexical(guid, confidence)
            },
            exact,
        };
        let fused = fused(
            &args(Method::Confidence),
            vec![name("script", 0.95, true), name("b", 0.60, false)],
            vec![lexical("a", 0.90), lexical("b", 0.30)],
            &[],
        );
        let guids: Vec<&str> = fused.iter().map(|c| c.guid.as_str()).collect();
        assert_eq!(guids, ["script", "a", "b"]);
        assert_eq!(fused[2].confidence, 0.60, "the better of its name and its words");
        assert_eq!(fused[2].reasoning, "named words");
    }

    #[test]
    fn lexical_retrievers_ignore_meaning_and_semantic_ones_ignore_words() {
        let group = |retrievers| {
            let mut a = args(Method::Confidence);
            a.retrievers = retrievers;
            a.lexical = Some(vec![ResultGroup {
                sub_intent: "beaker".into(),
                category_hint: None,
                subtype_hint: None,
                candidates: vec![lexical("a", 0.9)],
            }]);
            a.semantic = Some(SemanticIn {
                available: true,
                groups: vec![SemanticGroup {
                    near: vec![near("c", 0.8)],
                }],
            });
            fuse(a, &untrained(), vec![]).groups[0]
                .candidates
                .iter()
                .map(|c| c.guid.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(group(Retrievers::Lexical), ["a"]);
        assert_eq!(group(Retrievers::Semantic), ["c"]);
        assert_eq!(group(Retrievers::Hybrid), ["a", "c"]);
    }
}
