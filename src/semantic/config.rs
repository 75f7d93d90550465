//! The `embeddings:` section of `.claude/unity-assets.yml`: where the
//! vectors of search by meaning come from.
//!
//! ```yaml
//! embeddings:
//!   provider: auto             # auto (builtin when the model is installed) | builtin | openai | off
//!   base_url: http://localhost:11434/v1   # openai: any OpenAI-compatible /v1/embeddings server
//!   model: bge-m3
//!   api_key_env: OPENAI_API_KEY          # the variable holding the key, never the key
//!   batch_size: 64
//!   concurrency: 4
//!   timeout_s: 60
//!   retries: 3
//!   retry_after_max_s: 60
//!   ann_min_rows: 20000        # from this many vectors on, search ranks them by sketch first
//! ```

use serde::{Deserialize, Serialize};

/// The `embeddings:` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsConfig {
    pub provider: EmbeddingsProvider,
    /// openai: the API root (`/embeddings` is appended).
    pub base_url: Option<String>,
    /// openai: the model the server embeds with.
    pub model: Option<String>,
    /// openai: the environment variable holding the key; none for a local server.
    pub api_key_env: Option<String>,
    /// openai: texts per request.
    pub batch_size: usize,
    /// openai: requests in flight.
    pub concurrency: usize,
    pub timeout_s: u64,
    pub retries: u32,
    pub retry_after_max_s: u64,
    /// From this many asset vectors on, search ranks them by their sign
    /// sketch and scores only the nearest few thousand, instead of reading
    /// every vector (docs/search-by-meaning.md#at-scale).
    pub ann_min_rows: usize,
}

impl Default for EmbeddingsConfig {
    fn default() -> Self {
        Self {
            provider: EmbeddingsProvider::Auto,
            base_url: None,
            model: None,
            api_key_env: None,
            batch_size: 64,
            concurrency: 4,
            timeout_s: 60,
            retries: 3,
            retry_after_max_s: 60,
            ann_min_rows: ANN_MIN_ROWS,
        }
    }
}

/// Where scoring every vector stops being cheap: at 10,000 rows reading and
/// scanning them takes ~3.6 ms against ~1 ms through the sketch (recall@10
/// 0.998), at 50,000 ~15 ms against ~2.3 ms (docs/benchmarks.md#vectors-at-scale).
pub const ANN_MIN_ROWS: usize = 20_000;

/// Who embeds texts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingsProvider {
    /// The builtin encoder when its model is installed, else none (search is lexical).
    #[default]
    Auto,
    /// The builtin encoder; an error when its model is not installed.
    Builtin,
    /// An OpenAI-compatible `/v1/embeddings` server.
    Openai,
    /// No vectors: lexical search only.
    Off,
}
