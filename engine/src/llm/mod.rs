//! LLM providers behind one interface.
//!
//! An `llm` stage renders its prompt, asks a [`Provider`] for a JSON value,
//! and gates it with the stage's output schema (the repair loop lives in the
//! stage, see `stages::llm`). Providers own the wire format, authentication,
//! timeouts and retries; none of them ever prints or logs a key.

/// The [`Provider`] impl every wire format shares: the module's `NAME`, the
/// type's `models` (tier → model) and its inherent `async fn call`.
macro_rules! impl_provider {
    ($provider:ty) => {
        impl $crate::llm::Provider for $provider {
            fn name(&self) -> &str {
                NAME
            }

            fn model(&self, tier: $crate::llm::Tier) -> String {
                self.models.get(tier)
            }

            fn complete<'a>(
                &'a self,
                request: &'a $crate::llm::LlmRequest,
            ) -> futures::future::BoxFuture<'a, Result<$crate::llm::LlmReply, $crate::llm::LlmError>> {
                futures::FutureExt::boxed(self.call(request))
            }
        }
    };
}

mod anthropic;
mod cache;
mod check;
mod claude_code;
pub mod config;
mod connect;
mod embeddings;
pub mod extract;
mod http;
mod limit;
mod openai;
mod retry;
mod secret;
pub mod structured;
mod wire;

pub(crate) use cache::ReplyCache;
pub use check::{check, CheckReport};
pub use config::{CommandLine, JsonMode, LlmConfig, Models, ProviderKind};
pub use connect::{connect, connect_with_env};
pub use embeddings::{EmbeddingsClient, EmbeddingsSettings};
pub use secret::ApiKey;

use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which model class a stage asks for; each provider maps it to a model name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The cheaper, quicker model (`models.fast`).
    Fast,
    /// The stronger model used unless a stage asks for `fast` (`models.default`).
    #[default]
    Default,
}

/// One structured-output call, already rendered.
#[derive(Debug, Clone)]
pub struct LlmRequest {
    /// The stage asking, for messages and the run report.
    pub stage: String,
    /// Instructions (the template's `system` block).
    pub system: Option<String>,
    /// A large block that stays the same across calls of this stage (the
    /// template's `cached` block), sent first so providers can cache it.
    pub cached: Option<String>,
    /// The per-call message (the template's `user` block, or the whole render).
    pub user: String,
    /// The JSON Schema the answer must satisfy (the stage's `output:` gate).
    pub schema: Option<Value>,
    /// A short identifier for the schema (tool / response_format name).
    pub schema_name: String,
    /// Which model class to ask.
    pub tier: Tier,
    /// The stage's own answer limit; `None` takes the provider's
    /// (`llm.max_tokens`), so the config is not overridden by a default.
    pub max_tokens: Option<u32>,
}

impl LlmRequest {
    /// The answer limit to send: the stage's own, else `configured`
    /// (`llm.max_tokens`, itself 4096 when unset). The one place that order lives.
    pub fn max_tokens_or(&self, configured: u32) -> u32 {
        self.max_tokens.unwrap_or(configured)
    }
}

/// Token accounting of one or more calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Tokens sent, cached ones excluded.
    pub input_tokens: u64,
    /// Tokens of the answer.
    pub output_tokens: u64,
    /// Tokens read from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Self) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }
}

/// A provider's answer: the JSON value it produced (not yet schema-checked).
#[derive(Debug, Clone)]
pub struct LlmReply {
    /// The JSON value the answer held.
    pub value: Value,
    /// Tokens the call spent.
    pub usage: Usage,
    /// Transport-level retries spent on this call (429, 5xx, timeouts).
    pub retries: u32,
    /// The model that answered, as the provider names it.
    pub model: String,
}

/// Why a provider call failed; each variant names the provider.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// One attempt took longer than `llm.timeout_s`.
    #[error("{provider}: request timed out after {}s", .after.as_secs())]
    Timeout {
        /// The provider's name.
        provider: String,
        /// The limit that ran out.
        after: Duration,
    },
    /// The exchange itself failed (no connection, an oversized or unreadable answer body).
    #[error("{provider}: {message}")]
    Transport {
        /// The provider's name.
        provider: String,
        /// What went wrong.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{provider}: HTTP {status}: {message}")]
    Http {
        /// The provider's name.
        provider: String,
        /// The HTTP status code.
        status: u16,
        /// The server's error message, with a hint where one helps.
        message: String,
    },
    /// An answer arrived (and was paid for: `usage`) but held no usable JSON.
    #[error("{provider}: the answer held no JSON value: {message}")]
    NoJson {
        /// The provider's name.
        provider: String,
        /// What was wrong with the answer.
        message: String,
        /// Tokens the answer spent.
        usage: Usage,
    },
    /// The provider could not be set up (a missing key, a bad command or URL).
    #[error("{provider}: {message}")]
    Setup {
        /// The provider's name.
        provider: String,
        /// What is missing or wrong.
        message: String,
    },
    /// The last failure of a call whose transport retries all failed too.
    #[error("{last} (gave up after {retries} {})", if *.retries == 1 { "retry" } else { "retries" })]
    GaveUp {
        /// Retries spent.
        retries: u32,
        /// The last attempt's failure.
        last: Box<LlmError>,
    },
}

impl LlmError {
    /// What was wrong with an answer that arrived but held no usable JSON
    /// (prose, cut off at max_tokens, a refusal): a repair turn may fix it,
    /// unlike a transport failure.
    pub fn unusable_answer(&self) -> Option<&str> {
        match self {
            LlmError::NoJson { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The tokens an answer that failed to parse still cost.
    pub fn usage(&self) -> Usage {
        match self {
            LlmError::NoJson { usage, .. } => *usage,
            LlmError::GaveUp { last, .. } => last.usage(),
            _ => Usage::default(),
        }
    }

    /// Transport retries spent before this error, for the run report.
    pub fn retries(&self) -> u32 {
        match self {
            LlmError::GaveUp { retries, .. } => *retries,
            _ => 0,
        }
    }
}

/// A model behind some wire format.
pub trait Provider: Send + Sync {
    /// `anthropic`, `openai`, `claude-code`.
    fn name(&self) -> &str;
    /// The model a tier maps to, as configured.
    fn model(&self, tier: Tier) -> String;
    /// Make one call (with the provider's own transport retries).
    fn complete<'a>(&'a self, request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmReply, LlmError>>;
}

/// The start of `text`, for messages quoting what a server or model said.
fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 300;
    let text = text.trim();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
