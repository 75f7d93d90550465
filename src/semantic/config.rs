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

use engine::llm::EmbeddingsSettings;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The `embeddings:` section: who embeds, the engine's client settings for
/// an `openai` server (read from the same section), and when search ranks
/// vectors by sketch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddingsConfig {
    /// Who embeds: `auto`, `builtin` or an `openai` server.
    pub provider: EmbeddingsProvider,
    /// openai: the server and how to talk to it.
    #[serde(flatten)]
    pub server: EmbeddingsSettings,
    /// From this many asset vectors on, search ranks them by their sign
    /// sketch and scores only the nearest few thousand, instead of reading
    /// every vector (docs/search-by-meaning.md#at-scale).
    pub ann_min_rows: usize,
}

impl Default for EmbeddingsConfig {
    fn default() -> Self {
        Self {
            provider: EmbeddingsProvider::Auto,
            server: EmbeddingsSettings::default(),
            ann_min_rows: ANN_MIN_ROWS,
        }
    }
}

/// Every key of the section, in the order an unknown key's message lists them.
const KEYS: &[&str] = &[
    "provider",
    "base_url",
    "model",
    "api_key_env",
    "batch_size",
    "concurrency",
    "timeout_s",
    "retries",
    "retry_after_max_s",
    "ann_min_rows",
];

/// By hand rather than `#[serde(flatten)]` with `deny_unknown_fields`, which
/// serde does not support together: an unknown key still names every key.
impl<'de> Deserialize<'de> for EmbeddingsConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut section = Map::<String, Value>::deserialize(deserializer)?;
        if let Some(key) = section.keys().find(|key| !KEYS.contains(&key.as_str())) {
            return Err(D::Error::unknown_field(key, KEYS));
        }
        let defaults = Self::default();
        let provider = match section.remove("provider") {
            Some(v) => serde_json::from_value(v).map_err(D::Error::custom)?,
            None => defaults.provider,
        };
        let ann_min_rows = match section.remove("ann_min_rows") {
            Some(v) => serde_json::from_value(v).map_err(D::Error::custom)?,
            None => defaults.ann_min_rows,
        };
        let server = serde_json::from_value(Value::Object(section)).map_err(D::Error::custom)?;
        Ok(Self {
            provider,
            server,
            ann_min_rows,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_the_products_around_the_engines() {
        let engine = serde_json::to_value(EmbeddingsSettings::default()).unwrap();
        let engine: Vec<&str> = engine.as_object().unwrap().keys().map(String::as_str).collect();
        let mut ours = KEYS.to_vec();
        let (first, last) = (ours.remove(0), ours.pop());
        assert_eq!((first, last), ("provider", Some("ann_min_rows")));
        ours.sort_unstable();
        let mut engine = engine;
        engine.sort_unstable();
        assert_eq!(ours, engine);
    }

    #[test]
    fn a_section_reads_as_before_and_an_unknown_key_names_every_key() {
        let read = |v: Value| serde_json::from_value::<EmbeddingsConfig>(v).map_err(|e| e.to_string());
        let config =
            read(serde_json::json!({"provider": "openai", "base_url": "http://x/v1", "model": "m", "ann_min_rows": 5}))
                .unwrap();
        assert_eq!(config.provider, EmbeddingsProvider::Openai);
        assert_eq!(config.server.base_url.as_deref(), Some("http://x/v1"));
        assert_eq!((config.server.batch_size, config.ann_min_rows), (64, 5));
        assert_eq!(read(serde_json::json!({})).unwrap(), EmbeddingsConfig::default());
        assert_eq!(
            read(serde_json::json!({"batch": 1})).unwrap_err(),
            "unknown field `batch`, expected one of `provider`, `base_url`, `model`, `api_key_env`, `batch_size`, \
             `concurrency`, `timeout_s`, `retries`, `retry_after_max_s`, `ann_min_rows`"
        );
        assert_eq!(
            read(serde_json::json!({"batch_size": "x"})).unwrap_err(),
            "invalid type: string \"x\", expected usize"
        );
        assert!(read(serde_json::json!({"provider": "cloud"}))
            .unwrap_err()
            .starts_with("unknown variant `cloud`"));
    }
}
