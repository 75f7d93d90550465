//! The `llm:` section of the product's settings file: plain data, which
//! [`connect`](super::connect) turns into a ready provider.
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

use serde::{Deserialize, Serialize};

use super::Tier;

/// The `llm:` section: which provider, where, with which models and limits.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Which provider answers `llm` stages.
    pub provider: ProviderKind,
    /// The API root; each provider has its vendor's as default.
    pub base_url: Option<String>,
    /// The environment variable holding the key (default per provider).
    pub api_key_env: Option<String>,
    /// The model each tier maps to.
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
    /// How the openai provider asks for JSON.
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

/// The providers the `provider:` key can name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// The native implementations the `llm` stages name; offline.
    #[default]
    Builtin,
    /// The Anthropic Messages API.
    Anthropic,
    /// The OpenAI Chat Completions API, or a server that speaks it.
    Openai,
    /// The `claude` command line (Claude Code), run once per call.
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
    /// The model for `tier: fast`.
    pub fast: Option<String>,
    /// The model for the default tier.
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
    /// One string, split on whitespace.
    Line(String),
    /// The program and its arguments, one item each.
    Argv(Vec<String>),
}

impl CommandLine {
    /// The program and its arguments.
    pub fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
            CommandLine::Argv(argv) => argv.clone(),
        }
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
}
