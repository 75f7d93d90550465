//! The two calls that touch vectors: embedding the index's rows (the index
//! pipeline's `embed` stage) and finding the rows nearest a query (search).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use engine::io::Limits;
use engine::CallContext;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::asset_text::{asset_text, VERSION};
use super::embedder::{Embedder, Unavailable};
use super::vectors::{self, text_hash, Vectors};
use crate::index::store;
use crate::search::filters::Filters;
use crate::search::intent::TypeIntents;
use crate::search::load::IndexFiles;
use crate::search::records::AssetRow;
use crate::search::route::SubIntent;
use crate::search::term_index::RowSet;
use crate::search::text::words;

fn index_dir(ctx: &CallContext) -> std::path::PathBuf {
    ctx.workdir.join(crate::index::INDEX_DIR)
}

#[derive(Serialize)]
pub struct EmbedOut {
    /// The embedder's id; none when there is no embedder.
    model: Option<String>,
    embedded: usize,
    /// The distinct texts of the rows embedded: each was embedded once.
    distinct: usize,
    reused: usize,
    /// The line the index run prints (none without an embedder).
    line: Option<String>,
}

/// Bring `assets.vectors` up to date with `assets.jsonl`: a row whose text
/// (and embedder) are unchanged keeps its vector; the rest are embedded.
/// A vectors file that cannot be read is rebuilt, never a reason to fail.
pub async fn embed_assets(
    embedder: &Result<Arc<Embedder>, Unavailable>,
    args: EmbedArgs,
    ctx: &CallContext,
) -> anyhow::Result<EmbedOut> {
    let Ok(embedder) = embedder else {
        return Ok(EmbedOut {
            model: None,
            embedded: 0,
            distinct: 0,
            reused: 0,
            line: None,
        });
    };
    let model = embedder.id();
    let dir = index_dir(ctx);
    if let Some(count) = args
        .rows_unchanged
        .then(|| up_to_date(ctx, &model))
        .transpose()?
        .flatten()
    {
        return Ok(EmbedOut {
            model: Some(model),
            embedded: 0,
            distinct: 0,
            reused: count,
            line: None,
        });
    }
    // A file from before the header carried the fingerprint and the sketch
    // is rewritten once.
    let opened = vectors::open(&dir, &ctx.limits);
    let current_format =
        matches!(&opened, Ok(Some(file)) if file.summary().fingerprint.is_some() && file.summary().sketched);
    let previous = match opened.and_then(|file| file.map(vectors::VectorsFile::rows_and_sketch).transpose()) {
        Ok(previous) => previous.filter(|p| p.model == model && p.text == VERSION),
        Err(e) => {
            ctx.output.line(&format!(
                "[unity-assets:index] warning: {e:#}; embedding every row again"
            ));
            None
        }
    };
    let rows = IndexFiles::new(&dir, ctx.limits).rows_matching()?;
    let texts: Vec<String> = rows.par_iter().map(asset_text).collect();
    let hashes: Vec<u64> = texts.par_iter().map(|t| text_hash(t)).collect();
    let words = super::words::project_words(&rows);
    // Only the guids are needed past here: a million decoded rows are
    // not held while they are embedded.
    let guids: Vec<String> = rows.into_iter().map(|row| row.guid).collect();
    // Borrowed keys do not live across the await below.
    let reuse: Vec<Option<usize>> = {
        let reusable = previous.as_ref().map(Vectors::rows_by_key).unwrap_or_default();
        guids
            .iter()
            .zip(&hashes)
            .map(|(guid, hash)| reusable.get(&(guid.as_str(), *hash)).copied())
            .collect()
    };
    // Each distinct text is embedded once: copies of an asset named alike
    // in folders named alike share one vector.
    let mut first_of_text: HashMap<&str, usize> = HashMap::new();
    let mut wanted: Vec<String> = vec![];
    let fresh_of: Vec<Option<usize>> = reuse
        .iter()
        .zip(&texts)
        .map(|(reused, text)| {
            reused.is_none().then(|| {
                *first_of_text.entry(text.as_str()).or_insert_with(|| {
                    wanted.push(text.clone());
                    wanted.len() - 1
                })
            })
        })
        .collect();
    let fresh = embed_counted(embedder, &model, &wanted, ctx).await?;
    let dim = fresh
        .as_ref()
        .map(|f| f.dim)
        .or(previous.as_ref().map(|p| p.dim))
        .unwrap_or(0);
    let mut out = Vectors::new(model.clone(), VERSION.to_owned(), dim);
    for (((guid, hash), reused), fresh_at) in guids.iter().zip(&hashes).zip(&reuse).zip(&fresh_of) {
        match (reused, &previous) {
            (Some(at), Some(previous)) => out.push_from(previous, *at),
            _ => {
                let fresh = fresh.as_ref().zip(*fresh_at).expect("a row not reused is embedded");
                out.push_as(guid, *hash, fresh.0, fresh.1)
            }
        }
    }
    let embedded = fresh_of.iter().flatten().count();
    let unchanged = previous.as_ref() == Some(&out) && current_format;
    if !unchanged {
        vectors::write(&dir, &out)?;
    }
    record_in_manifest(ctx, &out)?;
    let words = super::words::embed_vocabulary(embedder, &words, ctx).await?;
    let distinct = wanted.len();
    let vectors_line = (embedded > 0 || !unchanged).then(|| {
        let copies = match distinct < embedded {
            true => format!(" ({distinct} distinct texts)"),
            false => String::new(),
        };
        format!(
            "[unity-assets:index] vectors: {embedded} embedded{copies}, {} reused ({model})",
            guids.len() - embedded
        )
    });
    let words_line = (words > 0).then(|| format!("[unity-assets:index] vocabulary: {words} words embedded ({model})"));
    Ok(EmbedOut {
        line: match (vectors_line, words_line) {
            (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
            (a, b) => a.or(b),
        },
        model: Some(model),
        embedded,
        distinct,
        reused: guids.len() - embedded,
    })
}

/// Texts embedded per call: a bar of a long run moves (and shows its rate
/// and time left) every few seconds, while each call still keeps every core
/// busy.
const TEXTS_PER_CALL: usize = 4096;

/// The vectors of `texts` (none without texts), in order, counted on the
/// stage's bar; each call's kept in int8 as it returns (at 10^6 the f32
/// vectors of every text were 1.8 GB held at once).
async fn embed_counted(
    embedder: &Embedder,
    model: &str,
    texts: &[String],
    ctx: &CallContext,
) -> anyhow::Result<Option<Vectors>> {
    let bar = ctx.count(texts.len());
    let mut vectors: Option<Vectors> = None;
    for slice in texts.chunks(TEXTS_PER_CALL) {
        let embedded = embedder.embed(slice).await?;
        let dim = embedded.first().map_or(0, Vec::len);
        let kept = vectors.get_or_insert_with(|| Vectors::new(model.to_owned(), VERSION.to_owned(), dim));
        for vector in &embedded {
            kept.push(String::new(), 0, vector);
        }
        if let Some(bar) = &bar {
            bar.advance_by(slice.len());
        }
    }
    Ok(vectors)
}

/// The `embed` stage's arguments.
#[derive(Deserialize)]
pub struct EmbedArgs {
    /// The index run found nothing changed (its `touch` path): the rows are
    /// those the vectors were last made from.
    #[serde(default)]
    rows_unchanged: bool,
}

/// Whether the last run left every vector file current for `model`: the
/// manifest records the vectors file as it is (model, text version, count),
/// the file's rows check out against its header (as a full run reads them)
/// and carry their sketch, and the vocabulary was embedded by the same
/// model. A file the manifest's stamp says is the one the last run wrote or
/// checked is not read again (a no-op beside a watcher costs what the
/// lexical one does). Never reads `assets.jsonl`, decodes a row or hashes a
/// text. `Some(rows)` when current.
fn up_to_date(ctx: &CallContext, model: &str) -> anyhow::Result<Option<usize>> {
    let dir = index_dir(ctx);
    let Some(recorded) = store::read_manifest(&ctx.workdir, &ctx.limits)?.and_then(|m| m.embedding) else {
        return Ok(None);
    };
    let Ok(Some(file)) = vectors::open(&dir, &ctx.limits) else {
        return Ok(None);
    };
    let vocabulary_current = matches!(
        vectors::open_named(&dir, super::words::VOCABULARY_FILE, &ctx.limits),
        Ok(Some(words)) if words.summary().model == model
    );
    let summary = file.summary();
    let as_recorded = summary.model == recorded.model
        && summary.text == recorded.text
        && summary.dim == recorded.dim
        && summary.count == recorded.count;
    let ours = recorded.model == model && recorded.text == VERSION && vocabulary_current && summary.sketched;
    if !(as_recorded && ours) {
        return Ok(None);
    }
    if recorded.checked.is_some() && recorded.checked == vectors::stamp(&dir) {
        return Ok(Some(recorded.count));
    }
    let Ok(vectors) = file.rows_and_sketch() else {
        return Ok(None);
    };
    let checked = store::Embedding {
        checked: None,
        ..recorded
    };
    Ok((embedding_of(&vectors, None) == checked).then_some(vectors.len()))
}

/// What the manifest records of `vectors`, written or checked as `checked`.
fn embedding_of(vectors: &Vectors, checked: Option<store::FileStamp>) -> store::Embedding {
    store::Embedding {
        model: vectors.model.clone(),
        text: vectors.text.clone(),
        dim: vectors.dim,
        count: vectors.len(),
        checked,
    }
}

/// The manifest names the vectors' embedder, text and size, and the file
/// as this run wrote or checked it.
fn record_in_manifest(ctx: &CallContext, vectors: &Vectors) -> anyhow::Result<()> {
    let Some(mut manifest) = store::read_manifest(&ctx.workdir, &ctx.limits)? else {
        return Ok(());
    };
    let embedding = Some(embedding_of(vectors, vectors::stamp(&index_dir(ctx))));
    if manifest.embedding != embedding {
        manifest.embedding = embedding;
        store::write_manifest(&ctx.workdir, &manifest)?;
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearestArgs {
    sub_intents: Vec<SubIntent>,
    /// Nearest rows kept per sub-intent.
    top_n: usize,
    /// How many of them get a word-level explanation ("비커 ≈ beaker"),
    /// which costs a few more encodings each.
    #[serde(default = "default_explained")]
    explained: usize,
    /// The query's filters: only matching assets are searched by meaning.
    #[serde(default)]
    filters: Filters,
}

fn default_explained() -> usize {
    3
}

/// One asset near a sub-intent in meaning.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Near {
    pub guid: String,
    pub path: String,
    pub similarity: f32,
    /// The closest query word and asset word, when explained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    /// The cosine of those two words (evidence for the learned scorer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub word_similarity: Option<f32>,
}

#[derive(Serialize)]
pub struct NearestOut {
    /// False without an embedder or usable vectors; `note` says why.
    available: bool,
    note: Option<String>,
    /// Per sub-intent, in order.
    groups: Vec<NearGroup>,
}

#[derive(Serialize)]
pub struct NearGroup {
    near: Vec<Near>,
    /// The guids alone, for stages that merge them into another list.
    guids: Vec<String>,
}

fn unavailable(note: String) -> NearestOut {
    NearestOut {
        available: false,
        note: Some(note),
        groups: vec![],
    }
}

/// The `top_n` assets nearest each sub-intent. The vectors are read and
/// walked on a blocking thread: the word ranker runs meanwhile.
pub async fn nearest(
    embedder: &Result<Arc<Embedder>, Unavailable>,
    sketch_min_rows: usize,
    args: NearestArgs,
    ctx: &CallContext,
) -> anyhow::Result<NearestOut> {
    let NearestArgs {
        sub_intents,
        top_n,
        explained,
        filters,
    } = args;
    let embedder = match embedder {
        Ok(e) => e,
        Err(Unavailable(why)) => return Ok(unavailable(why.clone())),
    };
    let intents: Vec<String> = sub_intents.into_iter().map(|s| s.intent).collect();
    // The words an explanation may name go with the intents, in one call
    // (each call to the encoder reads all its weights).
    let explaining: Vec<Vec<String>> = match explained {
        0 => vec![vec![]; intents.len()],
        _ => intents.iter().map(|intent| explaining_words(intent)).collect(),
    };
    let texts: Vec<String> = intents.iter().chain(explaining.iter().flatten()).cloned().collect();
    // The vectors are mapped (their sketch read in) while the query is encoded.
    let (dir, limits, model) = (index_dir(ctx), ctx.limits, embedder.id());
    let opened = tokio::task::spawn_blocking(move || open_vectors(&dir, &limits, &model, sketch_min_rows));
    let (opened, queries) = tokio::join!(opened, embedder.embed(&texts));
    let vectors = match opened? {
        Ok(vectors) => vectors,
        Err(note) => return Ok(unavailable(note)),
    };
    let mut queries = queries?;
    let mut word_vectors = queries.split_off(intents.len()).into_iter();
    let filtered = !filters.is_empty();
    let index = IndexFiles::new(index_dir(ctx), ctx.limits).narrowed(filters);
    let found =
        tokio::task::spawn_blocking(move || nearest_rows(&vectors, &index, filtered, &queries, top_n)).await??;
    let vocabulary = super::words::vocabulary_vectors(embedder, ctx).ok();
    let mut groups = vec![];
    for (words, mut near) in explaining.into_iter().zip(found) {
        let explained = explained.min(near.len());
        let vectors: Vec<Vec<f32>> = word_vectors.by_ref().take(words.len()).collect();
        let query = QueryWords { words, vectors };
        explain(embedder, vocabulary.as_ref(), &query, &mut near[..explained]).await?;
        groups.push(NearGroup {
            guids: near.iter().map(|n| n.guid.clone()).collect(),
            near,
        });
    }
    Ok(NearestOut {
        available: true,
        note: None,
        groups,
    })
}

/// The index's vectors of `model`, read through their sketch past
/// `sketch_min_rows`; why not, when they cannot serve this search.
fn open_vectors(dir: &Path, limits: &Limits, model: &str, sketch_min_rows: usize) -> Result<Arc<Vectors>, String> {
    let file = match vectors::open(dir, limits) {
        Ok(Some(file)) => file,
        Ok(None) => return Err("the index has no vectors yet; `unity-assets index` embeds them".into()),
        Err(e) => return Err(format!("{e:#}")),
    };
    let summary = file.summary();
    if summary.model != model || summary.text != VERSION {
        return Err(format!(
            "the index's vectors come from {} and search would embed with {model}; `unity-assets index` re-embeds them",
            summary.model
        ));
    }
    // Past `ann_min_rows` the rows are ranked by their sketch, and only
    // the nearest by it are read and scored.
    let sketched = summary.count >= sketch_min_rows.max(1) && summary.sketched;
    file.for_search(sketched).map_err(|e| format!("{e:#}"))
}

/// Which vector rows a filtered search may answer with.
enum Allowed {
    Every,
    /// By row number, as the search index numbers its rows.
    Rows(RowSet),
    /// By guid (no fresh search index, or one of other rows).
    Guids(HashSet<String>),
}

/// Per query, the `top_n` rows nearest it that `index` holds (and, when
/// `filtered`, its filters pass), with their paths.
fn nearest_rows(
    vectors: &Vectors,
    index: &IndexFiles,
    filtered: bool,
    queries: &[Vec<f32>],
    top_n: usize,
) -> anyhow::Result<Vec<Vec<Near>>> {
    // Narrowed, the nearest are sought among the matching assets only, so
    // filters never leave fewer than `top_n` when more match.
    let allowed = match filtered {
        false => Allowed::Every,
        true => match index.rows_passing()? {
            // The vectors are in `assets.jsonl` order, as the search index's
            // rows are: with as many of them, a row is asked by its number,
            // its record unread (the paths below check the filters again).
            Some((rows, count)) if count == vectors.len() => Allowed::Rows(rows),
            _ => Allowed::Guids(index.guids_matching()?),
        },
    };
    let passes = |row: usize| match &allowed {
        Allowed::Every => true,
        Allowed::Rows(rows) => u32::try_from(row).is_ok_and(|row| rows.contains(row)),
        Allowed::Guids(guids) => guids.contains(vectors.guid(row)),
    };
    let found: Vec<Vec<(usize, f32)>> = queries.iter().map(|q| vectors.nearest(q, top_n, passes)).collect();
    let paths = {
        let wanted: HashSet<&str> = found.iter().flatten().map(|(row, _)| vectors.guid(*row)).collect();
        index.indexed_paths(&wanted)?
    };
    // Vectors of rows no longer in the index (a stale file) are not answers.
    Ok(found
        .iter()
        .map(|rows| {
            rows.iter()
                .filter_map(|(row, similarity)| {
                    let guid = vectors.guid(*row);
                    Some(Near {
                        path: paths.get(guid)?.clone(),
                        guid: guid.to_owned(),
                        similarity: *similarity,
                        because: None,
                        word_similarity: None,
                    })
                })
                .collect()
        })
        .collect())
}

/// The words of `intent` an explanation may name. The query's subject
/// words are preferred: "모델 ≈ model" (a `Models` folder) says the asset
/// is a model, which any model is, not which one.
fn explaining_words(intent: &str) -> Vec<String> {
    let kinds = TypeIntents::embedded();
    let subject: Vec<String> = words(intent)
        .filter(|w| !kinds.names_a_kind(w))
        .map(str::to_owned)
        .collect();
    match subject.is_empty() {
        true => words(intent).map(str::to_owned).collect(),
        false => subject,
    }
}

/// A sub-intent's [`explaining_words`] and their vectors.
struct QueryWords {
    words: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

/// For each asset, the query word and asset word closest in meaning
/// ("비커 ≈ beaker"): what a person needs to trust a match no word shares.
/// With the project's `vocabulary` the asset words are those it holds
/// (embedded at index time; not `a` or `01`); without it every word of
/// the asset's text is embedded here.
async fn explain(
    embedder: &Embedder,
    vocabulary: Option<&Vectors>,
    query: &QueryWords,
    near: &mut [Near],
) -> anyhow::Result<()> {
    let stored = vocabulary.map(Vectors::rows_by_key);
    let stored_row = |word: &str| stored.as_ref()?.get(&(word, text_hash(word))).copied();
    let asset_words: Vec<Vec<String>> = near
        .iter()
        .map(|n| {
            let row = AssetRow {
                path: n.path.clone(),
                ..AssetRow::default()
            };
            asset_text(&row)
                .split(' ')
                .filter(|w| stored.is_none() || stored_row(w).is_some())
                .map(str::to_owned)
                .collect()
        })
        .collect();
    if query.words.is_empty() || asset_words.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let unknown: Vec<String> = match stored {
        Some(_) => vec![],
        None => asset_words
            .iter()
            .flatten()
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let unknown_vectors = match unknown.is_empty() {
        true => vec![],
        false => embedder.embed(&unknown).await?,
    };
    let similarity = |query: &[f32], word: &str| match (stored_row(word), vocabulary) {
        (Some(row), Some(vocabulary)) => vocabulary.cosine(query, row),
        _ => {
            let at = unknown
                .binary_search_by(|u| u.as_str().cmp(word))
                .expect("an unknown word was embedded");
            query.iter().zip(&unknown_vectors[at]).map(|(a, b)| a * b).sum::<f32>()
        }
    };
    for (n, words) in near.iter_mut().zip(&asset_words) {
        let best = query
            .words
            .iter()
            .zip(&query.vectors)
            .flat_map(|(q, qv)| words.iter().map(move |w| (q, w, qv)))
            .map(|(q, w, qv)| (q, w, similarity(qv, w)))
            .max_by(|a, b| a.2.total_cmp(&b.2));
        n.because = best.map(|(q, w, _)| format!("{q} ≈ {w}"));
        n.word_similarity = best.map(|(_, _, similarity)| similarity);
    }
    Ok(())
}
