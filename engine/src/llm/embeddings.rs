//! An OpenAI-compatible `/v1/embeddings` client (OpenAI, Ollama, LM Studio,
//! vLLM, llama.cpp server): texts in, one vector per text out.
//!
//! It shares the providers' transport — per-attempt timeout, retries with
//! backoff honouring `retry-after`, the answer size limit, the key scrubbed
//! from every message — and adds what embedding a whole index needs:
//! batches of `batch_size` texts, `concurrency` batches in flight, and a
//! check that each answer holds one vector per text, of one dimension.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::http::HttpTransport;
use super::retry::RetryPolicy;
use super::secret::ApiKey;
use super::{excerpt, LlmError};

const NAME: &str = "embeddings";

/// Where and how to ask for embeddings, as a product's settings file says
/// it (every key optional; the transport's defaults otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsSettings {
    /// The API root, e.g. `http://localhost:11434/v1` (`/embeddings` is appended).
    pub base_url: Option<String>,
    /// The model the server embeds with (`bge-m3`, `text-embedding-3-small`).
    pub model: Option<String>,
    /// The environment variable holding the key; `None` for a server that takes none.
    pub api_key_env: Option<String>,
    /// Texts per request.
    pub batch_size: usize,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// The limit of one attempt, in seconds.
    pub timeout_s: u64,
    /// Retries after a failed attempt (timeouts, connection errors, 429, 5xx).
    pub retries: u32,
    /// The longest `Retry-After` wait honoured.
    pub retry_after_max_s: u64,
}

impl Default for EmbeddingsSettings {
    fn default() -> Self {
        Self {
            base_url: None,
            model: None,
            api_key_env: None,
            batch_size: 64,
            concurrency: 4,
            timeout_s: 60,
            retries: 3,
            retry_after_max_s: 60,
        }
    }
}

/// A connected embeddings client.
#[derive(Debug)]
pub struct EmbeddingsClient {
    http: HttpTransport,
    url: String,
    headers: HeaderMap,
    model: String,
    batch_size: usize,
    concurrency: usize,
}

impl EmbeddingsClient {
    /// A client for `settings`, the key looked up with `env` (the process
    /// environment in the product); answers larger than `max_answer_bytes`
    /// are refused. Requests name `product` in their user agent.
    pub fn connect(
        settings: &EmbeddingsSettings,
        max_answer_bytes: u64,
        product: &crate::Product,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let setup = |message: String| LlmError::Setup {
            provider: NAME.into(),
            message,
        };
        if settings.batch_size == 0 || settings.concurrency == 0 {
            return Err(setup(
                "embeddings.batch_size and embeddings.concurrency must be at least 1".into(),
            ));
        }
        let (Some(base_url), Some(model)) = (&settings.base_url, &settings.model) else {
            return Err(setup("embeddings.base_url and embeddings.model must be set".into()));
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(setup(format!("embeddings.base_url {base_url:?} is not an http(s) URL")));
        }
        let key = match &settings.api_key_env {
            None => None,
            Some(var) => Some(env(var).and_then(ApiKey::new).ok_or_else(|| {
                setup(format!(
                    "embeddings.api_key_env names {var}, which is not set; export it, \
                     or remove embeddings.api_key_env for a server that needs no key"
                ))
            })?),
        };
        let key_env = settings.api_key_env.clone().unwrap_or_default();
        let mut headers = HeaderMap::new();
        if let Some(key) = &key {
            let bearer = key
                .header("Bearer ")
                .map_err(|message| setup(format!("{message} (from ${key_env})")))?;
            headers.insert(AUTHORIZATION, bearer);
        }
        let policy = RetryPolicy {
            retries: settings.retries,
            timeout: Duration::from_secs(settings.timeout_s),
            max_wait: Duration::from_secs(settings.retry_after_max_s),
        };
        Ok(Self {
            http: HttpTransport::new(NAME, key, key_env, policy, max_answer_bytes, product)?,
            url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            headers,
            model: model.clone(),
            batch_size: settings.batch_size,
            concurrency: settings.concurrency,
        })
    }

    /// The model vectors come from, for the index's record of it.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// One vector per text, in order. Every vector has the same dimension;
    /// an answer that breaks that (or holds another count) is an error, never
    /// a silently shifted index.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        // The requests are made before they are streamed: a closure in the
        // stream's type would make the future's Send-ness lifetime-generic.
        let requests: Vec<_> = texts
            .chunks(self.batch_size)
            .map(|batch| self.embed_batch(batch))
            .collect();
        let batches: Vec<Vec<Vec<f32>>> = futures::stream::iter(requests)
            .buffered(self.concurrency)
            .try_collect()
            .await?;
        let vectors: Vec<Vec<f32>> = batches.into_iter().flatten().collect();
        if let Some(first) = vectors.first() {
            if let Some(other) = vectors.iter().find(|v| v.len() != first.len()) {
                return Err(self.malformed(format!(
                    "vectors of two dimensions ({} and {}) in one run",
                    first.len(),
                    other.len()
                )));
            }
        }
        Ok(vectors)
    }

    async fn embed_batch(&self, batch: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let body = json!({"model": self.model, "input": batch, "encoding_format": "float"});
        let (answer, _retries) = self.http.post_json(&self.url, &self.headers, &body).await?;
        let vectors = vectors_of(&answer).map_err(|m| self.malformed(m))?;
        if vectors.len() != batch.len() {
            return Err(self.malformed(format!("{} vectors for {} texts", vectors.len(), batch.len())));
        }
        Ok(vectors)
    }

    fn malformed(&self, message: String) -> LlmError {
        self.http.scrub(LlmError::Transport {
            provider: NAME.into(),
            message: format!("unusable embeddings answer from {}: {message}", self.url),
        })
    }
}

/// The vectors of an answer's `data`, ordered by each item's `index` (the
/// API allows any order).
fn vectors_of(answer: &Value) -> Result<Vec<Vec<f32>>, String> {
    let data = answer["data"]
        .as_array()
        .ok_or_else(|| format!("no `data` list: {}", excerpt(&answer.to_string())))?;
    let mut items: Vec<(u64, Vec<f32>)> = Vec::with_capacity(data.len());
    for (position, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().unwrap_or(position as u64);
        let vector = item["embedding"]
            .as_array()
            .ok_or_else(|| format!("item {position} has no `embedding` list"))?
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .filter(|v| !v.is_empty() && v.iter().all(|x| x.is_finite()))
            .ok_or_else(|| format!("item {position}'s embedding is not a list of finite numbers"))?;
        items.push((index, vector));
    }
    items.sort_by_key(|(index, _)| *index);
    Ok(items.into_iter().map(|(_, v)| v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_any_order_come_back_in_input_order() {
        let answer = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]},
        ]});
        assert_eq!(vectors_of(&answer).unwrap(), vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    }

    #[test]
    fn an_answer_without_vectors_is_an_error() {
        assert!(vectors_of(&json!({"error": "x"})).unwrap_err().contains("no `data`"));
        let bad = json!({"data": [{"index": 0, "embedding": ["a"]}]});
        assert!(vectors_of(&bad).unwrap_err().contains("finite numbers"));
    }
}
