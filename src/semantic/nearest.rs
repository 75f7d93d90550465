//! The two calls that touch vectors: embedding the index's rows (the index
//! pipeline's `embed` stage) and finding the rows nearest a query (search).

use std::collections::HashSet;
use std::sync::Arc;

use engine::CallContext;
use serde::{Deserialize, Serialize};

use super::asset_text::{asset_text, VERSION};
use super::embedder::{Embedder, Unavailable};
use super::vectors::{self, text_hash, Vectors};
use crate::index::store;
use crate::search::filters::Filters;
use crate::search::load::IndexFiles;
use crate::search::records::{decode_row, AssetRow};
use crate::search::route::SubIntent;
use crate::search::text::words;

fn index_dir(ctx: &CallContext) -> std::path::PathBuf {
    ctx.workdir.join(crate::index::INDEX_DIR)
}

fn rows(ctx: &CallContext) -> anyhow::Result<Vec<AssetRow>> {
    Ok(IndexFiles::new(index_dir(ctx), ctx.limits)
        .asset_lines(None)?
        .into_iter()
        .filter_map(|line| decode_row(serde_json::Value::String(line)))
        .collect())
}

#[derive(Serialize)]
pub struct EmbedOut {
    /// The embedder's id; none when there is no embedder.
    model: Option<String>,
    embedded: usize,
    reused: usize,
    /// The line the index run prints (none without an embedder).
    line: Option<String>,
}

/// Bring `assets.vectors` up to date with `assets.jsonl`: a row whose text
/// (and embedder) are unchanged keeps its vector; the rest are embedded.
/// A vectors file that cannot be read is rebuilt, never a reason to fail.
pub async fn embed_assets(
    embedder: &Result<Arc<Embedder>, Unavailable>,
    ctx: &CallContext,
) -> anyhow::Result<EmbedOut> {
    let Ok(embedder) = embedder else {
        return Ok(EmbedOut {
            model: None,
            embedded: 0,
            reused: 0,
            line: None,
        });
    };
    let model = embedder.id();
    let dir = index_dir(ctx);
    let previous = match vectors::read(&dir, &ctx.limits) {
        Ok(previous) => previous.filter(|p| p.model == model && p.text == VERSION),
        Err(e) => {
            ctx.output.line(&format!(
                "[unity-assets:index] warning: {e:#}; embedding every row again"
            ));
            None
        }
    };
    let rows = rows(ctx)?;
    let texts: Vec<String> = rows.iter().map(asset_text).collect();
    let hashes: Vec<u64> = texts.iter().map(|t| text_hash(t)).collect();
    // Borrowed keys do not live across the await below.
    let reuse: Vec<Option<usize>> = {
        let reusable = previous.as_ref().map(Vectors::rows_by_key).unwrap_or_default();
        rows.iter()
            .zip(&hashes)
            .map(|(row, hash)| reusable.get(&(row.guid.as_str(), *hash)).copied())
            .collect()
    };
    let wanted: Vec<String> = reuse
        .iter()
        .zip(&texts)
        .filter(|(reused, _)| reused.is_none())
        .map(|(_, text)| text.clone())
        .collect();
    let fresh = if wanted.is_empty() {
        vec![]
    } else {
        embedder.embed(&wanted).await?
    };
    let dim = fresh
        .first()
        .map(Vec::len)
        .or(previous.as_ref().map(|p| p.dim))
        .unwrap_or(0);
    let mut out = Vectors::new(model.clone(), VERSION.to_owned(), dim);
    let mut fresh = fresh.into_iter();
    for ((row, hash), reused) in rows.iter().zip(&hashes).zip(&reuse) {
        match (reused, &previous) {
            (Some(at), Some(previous)) => out.push_from(previous, *at),
            _ => out.push(
                row.guid.clone(),
                *hash,
                &fresh.next().expect("one vector per text embedded"),
            ),
        }
    }
    let unchanged = previous.as_ref() == Some(&out);
    if !unchanged {
        vectors::write(&dir, &out)?;
    }
    record_in_manifest(ctx, &out)?;
    let embedded = wanted.len();
    Ok(EmbedOut {
        line: (embedded > 0 || !unchanged).then(|| {
            format!(
                "[unity-assets:index] vectors: {embedded} embedded, {} reused ({model})",
                rows.len() - embedded
            )
        }),
        model: Some(model),
        embedded,
        reused: rows.len() - embedded,
    })
}

/// The manifest names the vectors' embedder, text and size.
fn record_in_manifest(ctx: &CallContext, vectors: &Vectors) -> anyhow::Result<()> {
    let Some(mut manifest) = store::read_manifest(&ctx.workdir, &ctx.limits)? else {
        return Ok(());
    };
    let embedding = Some(store::Embedding {
        model: vectors.model.clone(),
        text: vectors.text.clone(),
        dim: vectors.dim,
        count: vectors.len(),
    });
    if manifest.embedding != embedding {
        manifest.embedding = embedding;
        store::write_manifest(&ctx.workdir, &manifest)?;
    }
    Ok(())
}

#[derive(Deserialize)]
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

/// The `top_n` assets nearest each sub-intent.
pub async fn nearest(
    embedder: &Result<Arc<Embedder>, Unavailable>,
    args: NearestArgs,
    ctx: &CallContext,
) -> anyhow::Result<NearestOut> {
    let embedder = match embedder {
        Ok(e) => e,
        Err(Unavailable(why)) => return Ok(unavailable(why.clone())),
    };
    let vectors = match vectors::read(&index_dir(ctx), &ctx.limits) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return Ok(unavailable(
                "the index has no vectors yet; `unity-assets index` embeds them".into(),
            ))
        }
        Err(e) => return Ok(unavailable(format!("{e:#}"))),
    };
    if vectors.model != embedder.id() || vectors.text != VERSION {
        return Ok(unavailable(format!(
            "the index's vectors come from {} and search would embed with {}; `unity-assets index` re-embeds them",
            vectors.model,
            embedder.id()
        )));
    }
    let intents: Vec<String> = args.sub_intents.iter().map(|s| s.intent.clone()).collect();
    let queries = embedder.embed(&intents).await?;
    let index = IndexFiles::new(index_dir(ctx), ctx.limits).narrowed(args.filters.clone());
    // Narrowed, the nearest are sought among the matching assets only, so
    // filters never leave fewer than `top_n` when more match.
    let allowed: Option<HashSet<String>> = match args.filters.is_empty() {
        true => None,
        false => Some(index.rows_matching()?.into_iter().map(|row| row.guid).collect()),
    };
    let keep = |row: usize| allowed.as_ref().is_none_or(|guids| guids.contains(vectors.guid(row)));
    let mut found: Vec<Vec<(usize, f32)>> = queries.iter().map(|q| vectors.nearest(q, args.top_n, keep)).collect();
    let paths = {
        let wanted: HashSet<&str> = found.iter().flatten().map(|(row, _)| vectors.guid(*row)).collect();
        index.indexed_paths(&wanted)?
    };
    // Vectors of rows no longer in the index (a stale file) are not answers.
    found
        .iter_mut()
        .for_each(|rows| rows.retain(|(row, _)| paths.contains_key(vectors.guid(*row))));
    let mut groups = vec![];
    for (intent, rows) in intents.iter().zip(found) {
        let mut near: Vec<Near> = rows
            .iter()
            .map(|(row, similarity)| {
                let guid = vectors.guid(*row).to_owned();
                Near {
                    path: paths[&guid].clone(),
                    guid,
                    similarity: *similarity,
                    because: None,
                }
            })
            .collect();
        let explained = args.explained.min(near.len());
        explain(embedder, intent, &mut near[..explained]).await?;
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

/// For each asset, the query word and asset word closest in meaning
/// ("비커 ≈ beaker"): what a person needs to trust a match no word shares.
async fn explain(embedder: &Embedder, intent: &str, near: &mut [Near]) -> anyhow::Result<()> {
    let query_words: Vec<String> = words(intent).map(str::to_owned).collect();
    let asset_words: Vec<Vec<String>> = near
        .iter()
        .map(|n| {
            let row = AssetRow {
                path: n.path.clone(),
                ..AssetRow::default()
            };
            asset_text(&row).split(' ').map(str::to_owned).collect()
        })
        .collect();
    let mut texts: Vec<String> = query_words.clone();
    asset_words.iter().for_each(|w| texts.extend(w.iter().cloned()));
    if query_words.is_empty() || texts.len() == query_words.len() {
        return Ok(());
    }
    let vectors = embedder.embed(&texts).await?;
    let (query_vectors, mut rest) = vectors.split_at(query_words.len());
    for (n, words) in near.iter_mut().zip(&asset_words) {
        let (mine, others) = rest.split_at(words.len());
        rest = others;
        let best = query_words
            .iter()
            .zip(query_vectors)
            .flat_map(|(q, qv)| {
                words
                    .iter()
                    .zip(mine)
                    .map(move |(w, wv)| (q, w, qv.iter().zip(wv).map(|(a, b)| a * b).sum::<f32>()))
            })
            .max_by(|a, b| a.2.total_cmp(&b.2));
        n.because = best.map(|(q, w, _)| format!("{q} ≈ {w}"));
    }
    Ok(())
}
