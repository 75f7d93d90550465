//! Natural-language asset search: the native pieces the search and pick
//! pipelines call (`pipelines/search.yaml`, `pipelines/pick.yaml`).
//!
//! Each piece is narrow and testable on its own: `text` tokenises,
//! [`vocab`] loads `data/aliases.yml`, [`query`] turns a query into concepts,
//! `route` splits it into sub-intents, [`rank`] scores packages and assets.
//! The pipeline YAML owns the flow, thresholds and K values; [`register`]
//! gives it the functions its stages call (their arguments: `natives.rs`).

mod data_files;
pub(crate) mod filters;
pub(crate) mod hints;
mod indexed;
pub(crate) mod intent;
pub(crate) mod lexicon;
mod lexicon_merge;
pub(crate) mod load;
pub(crate) mod loanword;
pub(crate) mod morph;
pub(crate) mod names;
mod natives;
pub(crate) mod pick;
pub mod query;
pub mod rank;
pub mod records;
pub(crate) mod rerank;
pub(crate) mod result;
pub(crate) mod route;
pub(crate) mod scorer;
pub mod term_index;
pub(crate) mod text;
pub(crate) mod validate;
pub mod vocab;

pub use indexed::search_indexed;
pub use natives::register;
pub use result::shown_confidence;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::CallContext;

use hints::PastPickGroup;
use query::Query;
use rank::{Candidate, RankOptions, Thresholds};
use records::AssetRow;
use route::SubIntent;
use vocab::Vocabulary;

fn index_dir(ctx: &CallContext) -> PathBuf {
    ctx.workdir.join(crate::index::INDEX_DIR)
}

/// The project's index, read within the run's limits.
fn index_files(ctx: &CallContext) -> load::IndexFiles {
    load::IndexFiles::new(index_dir(ctx), ctx.limits)
}

/// The project's search index (built first, with a line saying so, when it
/// is missing or stale); opened once per process while the file is the same.
pub(crate) fn term_index(ctx: &CallContext) -> anyhow::Result<term_index::TermIndex> {
    let version = index_files(ctx).manifest_version();
    term_index::TermIndex::open_or_build(&index_dir(ctx), version.as_deref(), &ctx.limits, &mut |line| {
        ctx.output.line(line)
    })
}

/// Read the embedded vocabulary and lexicon on another thread, once per
/// process: a run about to search finds them ready instead of reading them
/// (~10 ms on a 2-core machine) after the project's opening, the trust
/// review and the compile, which it overlaps.
pub(crate) fn prepare_vocabulary() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("vocabulary".into())
            .spawn(|| drop(Vocabulary::embedded()));
    });
}

/// The vocabulary a call asked for: `aliases` (a path inside the project)
/// or the embedded one, with the lexicon of the run's resources (the
/// project's `data/lexicon/` files over the embedded ones); an unusable
/// aliases file warns once, a path that leaves the project is an error.
pub(crate) fn vocabulary(aliases: Option<&Path>, ctx: &CallContext) -> anyhow::Result<Arc<Vocabulary>> {
    let path = aliases
        .map(|p| ctx.path(p))
        .transpose()
        .map_err(|e| anyhow::anyhow!("`search.aliases`: {e}"))?;
    Ok(Vocabulary::load_with(
        path.as_deref(),
        ctx.limits.file_bytes,
        project_lexicon(ctx)?,
        |warning| ctx.output.line(&warning),
    ))
}

/// The embedded lexicon, unless the project has its own lexicon folder; a
/// lexicon override that cannot be read is an error, never skipped.
fn project_lexicon(ctx: &CallContext) -> anyhow::Result<Arc<lexicon::Lexicon>> {
    const FOLDER: &str = "data/lexicon";
    let own = ctx.resources.overrides().is_some_and(|dir| dir.join(FOLDER).is_dir());
    if !own {
        return Ok(lexicon::Lexicon::embedded());
    }
    let mut files: Vec<(String, String)> = vec![];
    for rel in ctx.resources.list(FOLDER) {
        if !(rel.ends_with(".yml") || rel.ends_with(".yaml")) {
            continue;
        }
        if let Some(r) = ctx.resources.get(&rel)? {
            files.push((r.origin, r.text.into_owned()));
        }
    }
    Ok(lexicon::Lexicon::cached(&files, |warning| ctx.output.line(&warning)))
}

/// One sub-intent and its ranked candidates.
#[derive(Debug, Clone)]
pub struct Group {
    /// The part of the query it answers.
    pub sub_intent: SubIntent,
    /// The assets found for it, best first.
    pub candidates: Vec<Candidate>,
}

/// The builtin ranking of `rows` for each sub-intent (its subtype hint and
/// the past picks of similar requests applied), one pass over the rows.
fn rank_for_intents(
    rows: &[AssetRow],
    intents: &[SubIntent],
    top_k: usize,
    past_picks: &[PastPickGroup],
    vocab: &Vocabulary,
    thresholds: Thresholds,
) -> Vec<Vec<Candidate>> {
    rank::rank_assets_each(rows, &rank_requests(intents, top_k, past_picks, vocab, thresholds))
}

/// What each ranking native (`search.rank-assets`, `search.ranked`,
/// `search.retrieve`) is given besides what it ranks: the sub-intents and
/// how to rank for them, read alike by the three.
#[derive(serde::Deserialize)]
struct RankingArgs {
    /// The sub-intents to rank for; `search.retrieve`'s stages name them
    /// `sub_intents`, as the pipelines around it do.
    #[serde(alias = "sub_intents")]
    intents: Vec<SubIntent>,
    /// Candidates kept per sub-intent.
    top_k: usize,
    #[serde(default)]
    past_picks: Vec<PastPickGroup>,
    /// `search.aliases`: the vocabulary file, when the project has its own.
    #[serde(default)]
    aliases: Option<PathBuf>,
    /// The pipeline's `confidence_threshold`, which the caps derive from.
    #[serde(default)]
    thresholds: Thresholds,
}

impl RankingArgs {
    /// What to rank for each sub-intent, `keep` candidates each, with the run's vocabulary.
    fn requests(&self, keep: usize, ctx: &CallContext) -> anyhow::Result<Vec<(Query, RankOptions<'_>)>> {
        let vocab = vocabulary(self.aliases.as_deref(), ctx)?;
        Ok(rank_requests(
            &self.intents,
            keep,
            &self.past_picks,
            &vocab,
            self.thresholds,
        ))
    }
}

/// What to rank for each sub-intent: its query and options.
fn rank_requests<'a>(
    intents: &'a [SubIntent],
    top_k: usize,
    past_picks: &[PastPickGroup],
    vocab: &Vocabulary,
    thresholds: Thresholds,
) -> Vec<(Query, RankOptions<'a>)> {
    intents
        .iter()
        .map(|intent| {
            let query = intent.query(vocab);
            let options = RankOptions {
                subtype_hint: intent.subtype_hint.as_deref(),
                past_boosts: hints::past_pick_boosts(&query, past_picks, vocab),
                top_k,
                thresholds,
            };
            (query, options)
        })
        .collect()
}

/// The builtin search in one call, without the pipeline: route the query,
/// then rank every row for each sub-intent. For evaluation and benchmarks;
/// the CLI runs `pipelines/search.yaml`, whose stages call the same pieces.
pub fn search_rows(rows: &[AssetRow], query: &str, vocab: &Vocabulary, top_k: usize) -> Vec<Group> {
    let sub_intents = route::route(query, vocab).sub_intents;
    let ranked = rank_for_intents(rows, &sub_intents, top_k, &[], vocab, Thresholds::default());
    sub_intents
        .into_iter()
        .zip(ranked)
        .map(|(sub_intent, candidates)| Group { sub_intent, candidates })
        .collect()
}
