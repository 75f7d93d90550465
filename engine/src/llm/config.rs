//! The `llm:` section of `.claude/unity-assets.yml`, and [`connect`], which
//! turns it into a ready provider.
//!
//! ```yaml
//! llm:
//!   provider: anthropic          # builtin (default) | anthropic | openai | claude-code
//!   base_url: https://api.anthropic.com
//!   api_key_env: ANTHROPIC_API_KEY   # the variable holding the key, never the key
//!   models: {fast: claude-haiku-4-5, default: claude-sonnet-4-5}
//!   max_tokens: 4096
//!   timeout_s: 60
//!   retries: 3
//!   retry_after_max_s: 60        # the longest Retry-After wait honoured
//!   command: claude              # claude-code only; a string split on spaces, or a list
//!   json_mode: schema            # openai only: schema | plain
//! ```
//!
//! There is deliberately no key field: keys come only from the environment.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::io::Limits;

use super::anthropic::Anthropic;
use super::claude_code::ClaudeCode;
use super::limit::limit_concurrency;
use super::openai::OpenAi;
use super::retry::RetryPolicy;
use super::secret::ApiKey;
use super::{LlmError, Provider, Tier};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub provider: ProviderKind,
    /// The API root; each provider has its vendor's as default.
    pub base_url: Option<String>,
    /// The environment variable holding the key (default per provider).
    pub api_key_env: Option<String>,
    pub models: Models,
    /// The answer limit for stages that set none.
    pub max_tokens: u32,
    /// The limit of one attempt of one call, in seconds.
    pub timeout_s: u64,
    /// Transport retries after a failed attempt (timeouts, connection errors, 429, 5xx).
    pub retries: u32,
    /// The longest wait a server's `Retry-After` may ask for; a longer one
    /// ends the call at once, saying so.
    pub retry_after_max_s: u64,
    /// The Claude Code command (`claude` by default).
    pub command: Option<CommandLine>,
    pub json_mode: JsonMode,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            provider: ProviderKind::Builtin,
            base_url: None,
            api_key_env: None,
            models: Models::default(),
            max_tokens: 4096,
            timeout_s: 60,
            retries: 3,
            retry_after_max_s: 60,
            command: None,
            json_mode: JsonMode::Schema,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// The native implementations the `llm` stages name; offline.
    #[default]
    Builtin,
    Anthropic,
    Openai,
    ClaudeCode,
}

impl ProviderKind {
    /// The name used in config, messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Builtin => "builtin",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::ClaudeCode => "claude-code",
        }
    }

    /// The model a tier maps to when the config names none.
    fn default_model(self, tier: Tier) -> &'static str {
        match (self, tier) {
            (ProviderKind::Anthropic, Tier::Fast) => "claude-haiku-4-5",
            (ProviderKind::Anthropic, Tier::Default) => "claude-sonnet-4-5",
            (ProviderKind::Openai, Tier::Fast) => "gpt-4.1-mini",
            (ProviderKind::Openai, Tier::Default) => "gpt-4.1",
            (ProviderKind::ClaudeCode, Tier::Fast) => "haiku",
            (ProviderKind::ClaudeCode, Tier::Default) => "sonnet",
            (ProviderKind::Builtin, _) => "builtin",
        }
    }
}

/// Models per tier; unset tiers take the provider's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Models {
    pub fast: Option<String>,
    pub default: Option<String>,
}

/// How the openai provider asks for JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonMode {
    /// `response_format: {type: json_schema, strict: true}` (OpenAI, vLLM, Ollama, llama.cpp).
    #[default]
    Schema,
    /// No `response_format`; the schema is given as instructions and the JSON
    /// is extracted from the text, for servers that reject `response_format`.
    Plain,
}

/// A command with its arguments: `"claude --verbose"` (split on whitespace)
/// or `["C:/Program Files/claude.exe", "--verbose"]` for paths with spaces.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CommandLine {
    Line(String),
    Argv(Vec<String>),
}

impl CommandLine {
    pub fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
            CommandLine::Argv(argv) => argv.clone(),
        }
    }
}

/// The model name of each tier, resolved once.
#[derive(Debug, Clone)]
pub(crate) struct TierModels {
    fast: String,
    default: String,
}

impl TierModels {
    pub(crate) fn get(&self, tier: Tier) -> String {
        match tier {
            Tier::Fast => self.fast.clone(),
            Tier::Default => self.default.clone(),
        }
    }

    /// The model a server says answered (`"model"` of its reply), else the tier's.
    pub(crate) fn answered(&self, reply: &serde_json::Value, tier: Tier) -> String {
        reply["model"].as_str().map_or_else(|| self.get(tier), str::to_owned)
    }
}

impl LlmConfig {
    /// The model each tier maps to, configured or the provider's default.
    pub fn model(&self, tier: Tier) -> String {
        let configured = match tier {
            Tier::Fast => &self.models.fast,
            Tier::Default => &self.models.default,
        };
        configured
            .clone()
            .unwrap_or_else(|| self.provider.default_model(tier).to_owned())
    }

    pub(crate) fn tier_models(&self) -> TierModels {
        TierModels {
            fast: self.model(Tier::Fast),
            default: self.model(Tier::Default),
        }
    }

    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            retries: self.retries,
            timeout: Duration::from_secs(self.timeout_s),
            max_wait: Duration::from_secs(self.retry_after_max_s),
        }
    }

    /// `base_url` without a trailing slash, or `default`.
    pub(crate) fn base_url_or(&self, default: &str) -> String {
        self.base_url
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_owned()
    }

    fn setup_error(&self, message: String) -> LlmError {
        LlmError::Setup {
            provider: self.provider.name().to_owned(),
            message,
        }
    }

    /// Checks the values a provider cannot work with.
    fn validate(&self) -> Result<(), LlmError> {
        if self.timeout_s == 0 {
            return Err(self.setup_error("llm.timeout_s must be at least 1 (seconds)".into()));
        }
        if self.max_tokens == 0 {
            return Err(self.setup_error("llm.max_tokens must be at least 1".into()));
        }
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(self.setup_error(format!("llm.base_url `{url}` must start with http:// or https://")));
            }
        }
        Ok(())
    }
}

/// The provider `config` selects, limited to `parallel` calls at once
/// (`parallel_subagents`) and to answers within the run's `limits`
/// (`limits.http_mb`), or `None` for `builtin`. Keys come from the process
/// environment.
pub fn connect(config: &LlmConfig, parallel: usize, limits: &Limits) -> Result<Option<Arc<dyn Provider>>, LlmError> {
    connect_with_env(config, parallel, limits, |name| std::env::var(name).ok())
}

/// [`connect`] with the environment given as a lookup, for embedders and
/// tests that must not change the process environment.
pub fn connect_with_env(
    config: &LlmConfig,
    parallel: usize,
    limits: &Limits,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn Provider>>, LlmError> {
    config.validate()?;
    if parallel == 0 {
        return Err(config.setup_error("parallel_subagents must be at least 1".into()));
    }
    let provider: Arc<dyn Provider> = match config.provider {
        ProviderKind::Builtin => return Ok(None),
        ProviderKind::Anthropic => {
            let (key_env, key) = key_from(config, "ANTHROPIC_API_KEY", &env);
            let key = key.ok_or_else(|| {
                config.setup_error(format!(
                    "no API key: set the environment variable {key_env} \
                     (or name another one in llm.api_key_env)"
                ))
            })?;
            Arc::new(Anthropic::new(config, limits, key, key_env)?)
        }
        ProviderKind::Openai => {
            let (key_env, key) = key_from(config, "OPENAI_API_KEY", &env);
            if key.is_none() && config.api_key_env.is_some() {
                return Err(config.setup_error(format!(
                    "llm.api_key_env names {key_env}, which is not set; export it, \
                     or remove llm.api_key_env for a server that needs no key"
                )));
            }
            Arc::new(OpenAi::new(config, limits, key, key_env)?)
        }
        ProviderKind::ClaudeCode => Arc::new(ClaudeCode::new(config)?),
    };
    Ok(Some(limit_concurrency(provider, parallel)))
}

/// The key variable's name and the key, if set and not blank.
fn key_from(config: &LlmConfig, default_env: &str, env: &impl Fn(&str) -> Option<String>) -> (String, Option<ApiKey>) {
    let name = config.api_key_env.clone().unwrap_or_else(|| default_env.to_owned());
    let key = env(&name).and_then(ApiKey::new);
    (name, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<LlmConfig, serde_yaml::Error> {
        serde_yaml::from_str(yaml)
    }

    #[test]
    fn an_empty_section_means_builtin_with_documented_defaults() {
        let config = parse("{}").unwrap();
        assert_eq!(config, LlmConfig::default());
        assert_eq!((config.max_tokens, config.timeout_s, config.retries), (4096, 60, 3));
        assert!(connect_with_env(&config, 10, &Limits::default(), |_| None)
            .unwrap()
            .is_none());
    }

    #[test]
    fn unknown_keys_are_rejected_so_a_key_cannot_be_pasted_into_the_file() {
        let error = parse("provider: anthropic\napi_key: sk-123\n").unwrap_err().to_string();
        assert!(error.contains("unknown field `api_key`"), "{error}");
        assert!(parse("models: {fast: a, slow: b}").is_err());
    }

    #[test]
    fn models_default_per_provider_and_tier() {
        let config = parse("provider: claude-code\nmodels: {fast: my-haiku}").unwrap();
        assert_eq!(config.model(Tier::Fast), "my-haiku");
        assert_eq!(config.model(Tier::Default), "sonnet");
        let config = parse("provider: openai").unwrap();
        assert_eq!(config.model(Tier::Fast), "gpt-4.1-mini");
    }

    #[test]
    fn commands_are_a_line_or_an_argv() {
        let config = parse("command: npx claude --verbose").unwrap();
        assert_eq!(config.command.unwrap().argv(), ["npx", "claude", "--verbose"]);
        let config = parse("command: ['C:/Program Files/claude.exe', -x]").unwrap();
        assert_eq!(config.command.unwrap().argv(), ["C:/Program Files/claude.exe", "-x"]);
    }

    #[test]
    fn anthropic_without_a_key_names_the_variable_to_set() {
        let config = parse("provider: anthropic\napi_key_env: TEAM_KEY").unwrap();
        let error = connect_with_env(&config, 10, &Limits::default(), |_| None)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("TEAM_KEY"), "{error}");
        let connected = connect_with_env(&config, 10, &Limits::default(), |name| {
            (name == "TEAM_KEY").then(|| "k".into())
        });
        assert_eq!(connected.unwrap().unwrap().name(), "anthropic");
    }

    #[test]
    fn openai_needs_a_key_only_when_a_variable_is_named() {
        let config = parse("provider: openai\nbase_url: http://127.0.0.1:11434/v1").unwrap();
        assert!(connect_with_env(&config, 1, &Limits::default(), |_| None)
            .unwrap()
            .is_some());
        let config = parse("provider: openai\napi_key_env: VLLM_KEY").unwrap();
        let error = connect_with_env(&config, 1, &Limits::default(), |_| None)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("VLLM_KEY"), "{error}");
    }

    #[test]
    fn unusable_values_are_reported() {
        for (yaml, expected) in [
            ("provider: openai\ntimeout_s: 0", "timeout_s"),
            ("provider: openai\nbase_url: localhost:8080", "http://"),
        ] {
            let error = connect_with_env(&parse(yaml).unwrap(), 1, &Limits::default(), |_| None)
                .err()
                .unwrap();
            assert!(error.to_string().contains(expected), "{error}");
        }
        let error = connect_with_env(&parse("provider: openai").unwrap(), 0, &Limits::default(), |_| None)
            .err()
            .unwrap();
        assert!(error.to_string().contains("parallel_subagents"));
    }
}
