//! What the providers share about talking to a model, so none imports
//! another and none depends on the config: the settings [`connect`] resolves
//! for them, tier → model names, the Messages API usage object, and the
//! cut-off message.
//!
//! [`connect`]: super::connect

use serde_json::Value;

use super::retry::RetryPolicy;
use super::{Tier, Usage};

/// What an API provider (anthropic, openai) is built from, resolved from
/// `llm:` and `limits:` by `connect`.
#[derive(Debug, Clone)]
pub(crate) struct ApiSettings {
    /// `llm.base_url` without a trailing slash; `None` takes the vendor's.
    pub base_url: Option<String>,
    pub models: TierModels,
    /// `llm.max_tokens`: the answer limit of stages that set none.
    pub max_tokens: u32,
    pub policy: RetryPolicy,
    /// `limits.http_mb` in bytes: the largest answer read.
    pub max_answer_bytes: u64,
    /// Who the requests are for: their user agent, where the limit is raised.
    pub product: crate::Product,
}

impl ApiSettings {
    /// The configured base URL, else the vendor's `default`.
    pub(crate) fn base_url_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.base_url.as_deref().unwrap_or(default)
    }
}

/// The model name of each tier, resolved once.
#[derive(Debug, Clone)]
pub(crate) struct TierModels {
    pub fast: String,
    pub default: String,
}

impl TierModels {
    pub(crate) fn get(&self, tier: Tier) -> String {
        match tier {
            Tier::Fast => self.fast.clone(),
            Tier::Default => self.default.clone(),
        }
    }

    /// The model a server says answered (`"model"` of its reply), else the tier's.
    pub(crate) fn answered(&self, reply: &Value, tier: Tier) -> String {
        reply["model"].as_str().map_or_else(|| self.get(tier), str::to_owned)
    }
}

/// Token counts from a Messages API `usage` object (Claude Code's result
/// envelope reports the same one).
pub(crate) fn messages_usage(usage: &Value) -> Usage {
    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
    Usage {
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cache_read_input_tokens"),
        cache_write_tokens: count("cache_creation_input_tokens"),
    }
}

/// Why an answer without JSON stopped where it did.
pub(crate) fn cut_off_message(max_tokens: u32) -> String {
    format!("the answer was cut off at max_tokens ({max_tokens}); raise the stage's max_tokens or llm.max_tokens")
}
