//! Search by meaning: asset vectors beside the index, the nearest assets to
//! a query, and the fusion of those with the lexical ranker's candidates.
//!
//! A layer above [`crate::search`]: the lexical ranker keeps the calibrated
//! confidences and explanations; meaning adds candidates the words missed,
//! with a confidence that follows their similarity but never reaches auto
//! (a meaning-only candidate is always confirmed by a person). Without an
//! embedder every function here answers "not available" and search is what
//! it was.

pub(crate) mod asset_text;
pub(crate) mod config;
pub mod embedder;
mod fuse;
mod nearest;
mod sketch;
pub mod vectors;
mod words;

use std::sync::{Arc, OnceLock};

use engine::{CallContext, Reach, Registry};

/// What the two embedding calls can reach: the configured embeddings server,
/// with the key its variable holds.
const EMBEDDINGS_SERVER: Reach = Reach {
    programs: false,
    network: true,
    credentials: true,
};

pub use config::{EmbeddingsConfig, EmbeddingsProvider};
pub use embedder::{Embedder, Unavailable};
pub(crate) use words::VOCABULARY_FILE;

/// The project's embedder, opened on first use and kept for the process
/// (the MCP server answers many searches with one).
struct Shared {
    config: EmbeddingsConfig,
    opened: OnceLock<Result<Result<Arc<Embedder>, Unavailable>, String>>,
}

impl Shared {
    fn embedder(&self, ctx: &CallContext) -> anyhow::Result<Result<Arc<Embedder>, Unavailable>> {
        self.opened
            .get_or_init(|| {
                Embedder::open(&self.config, &ctx.limits)
                    .map(|opened| opened.map(Arc::new))
                    .map_err(|e| format!("{e:#}"))
            })
            .clone()
            .map_err(|e| anyhow::anyhow!(e))
    }
}

/// Register `semantic.embed-assets` (index), `semantic.word-meanings`,
/// `semantic.nearest` and `semantic.fuse` (search).
pub(crate) fn register(registry: &mut Registry, config: EmbeddingsConfig) {
    let shared = Arc::new(Shared {
        config,
        opened: OnceLock::new(),
    });
    let for_index = Arc::clone(&shared);
    let for_meanings = Arc::clone(&shared);
    registry
        .async_function(
            "semantic.embed-assets",
            EMBEDDINGS_SERVER,
            "one vector per asset row for search by meaning; only rows whose text changed are embedded",
            move |args: nearest::EmbedArgs, ctx: CallContext| {
                let shared = Arc::clone(&for_index);
                async move {
                    let embedder = shared.embedder(&ctx)?;
                    Ok(nearest::embed_assets(&embedder, args, &ctx).await?)
                }
            },
        )
        // With `embeddings.provider: openai` these calls send text and the key
        // to a server: a project pipeline calling them is a trust item.
        .async_function(
            "semantic.word-meanings",
            EMBEDDINGS_SERVER,
            "each query word the project lacks, with the project word nearest it in meaning: the word ranker searches with those too",
            move |args: words::MeaningsArgs, ctx: CallContext| {
                let shared = Arc::clone(&for_meanings);
                async move {
                    let embedder = shared.embedder(&ctx)?;
                    Ok(words::word_meanings(&embedder, args, &ctx).await?)
                }
            },
        )
        .async_function(
            "semantic.nearest",
            EMBEDDINGS_SERVER,
            "the assets nearest in meaning to each sub-intent, with how they matched",
            move |args: nearest::NearestArgs, ctx: CallContext| {
                let shared = Arc::clone(&shared);
                async move {
                    let embedder = shared.embedder(&ctx)?;
                    Ok(nearest::nearest(&embedder, shared.config.ann_min_rows, args, &ctx).await?)
                }
            },
        )
        .function(
            "semantic.fuse",
            Reach::NONE,
            "the name channel's, lexical and semantic candidates fused per sub-intent: an exact file name first, meaning alone never at auto",
            |args: fuse::FuseArgs, ctx| Ok(fuse::fuse_with_names(args, ctx)?),
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedding_calls_are_declared_as_reaching_a_server_with_a_key() {
        let mut registry = Registry::new();
        register(&mut registry, EmbeddingsConfig::default());
        for name in ["semantic.embed-assets", "semantic.word-meanings", "semantic.nearest"] {
            assert_eq!(registry.reach(name), EMBEDDINGS_SERVER, "{name}");
        }
        assert_eq!(registry.reach("semantic.fuse"), Reach::NONE);
    }
}
