//! [`connect`]: the `llm:` config (and the run's limits) turned into a ready
//! provider. The only module that knows both the config and the providers,
//! so the config stays plain data and no provider reads it.

use std::sync::Arc;
use std::time::Duration;

use crate::io::Limits;
use crate::Product;

use super::anthropic::Anthropic;
use super::claude_code::ClaudeCode;
use super::config::{LlmConfig, ProviderKind};
use super::limit::limit_concurrency;
use super::openai::OpenAi;
use super::retry::RetryPolicy;
use super::secret::ApiKey;
use super::wire::{ApiSettings, TierModels};
use super::{LlmError, Provider, Tier};

/// The provider `config` selects, limited to `parallel` calls at once
/// (`parallel_subagents`) and to answers within the run's `limits`
/// (`limits.http_mb`), or `None` for `builtin`, speaking for `product`
/// (its user agent, its settings file in messages). Keys come from the
/// process environment.
pub fn connect(
    config: &LlmConfig,
    parallel: usize,
    limits: &Limits,
    product: &Product,
) -> Result<Option<Arc<dyn Provider>>, LlmError> {
    connect_with_env(config, parallel, limits, product, |name| std::env::var(name).ok())
}

/// [`connect`] with the environment given as a lookup, for embedders and
/// tests that must not change the process environment.
pub fn connect_with_env(
    config: &LlmConfig,
    parallel: usize,
    limits: &Limits,
    product: &Product,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn Provider>>, LlmError> {
    validate(config)?;
    if parallel == 0 {
        return Err(setup_error(config, "parallel_subagents must be at least 1".into()));
    }
    let provider: Arc<dyn Provider> = match config.provider {
        ProviderKind::Builtin => return Ok(None),
        ProviderKind::Anthropic => {
            let (key_env, key) = key_from(config, "ANTHROPIC_API_KEY", &env);
            let key = key.ok_or_else(|| {
                setup_error(
                    config,
                    format!(
                        "no API key: set the environment variable {key_env} \
                         (or name another one in llm.api_key_env)"
                    ),
                )
            })?;
            Arc::new(Anthropic::new(api_settings(config, limits, product), key, key_env)?)
        }
        ProviderKind::Openai => {
            let (key_env, key) = key_from(config, "OPENAI_API_KEY", &env);
            if key.is_none() && config.api_key_env.is_some() {
                return Err(setup_error(
                    config,
                    format!(
                        "llm.api_key_env names {key_env}, which is not set; export it, \
                         or remove llm.api_key_env for a server that needs no key"
                    ),
                ));
            }
            Arc::new(OpenAi::new(
                api_settings(config, limits, product),
                config.json_mode,
                key,
                key_env,
            )?)
        }
        ProviderKind::ClaudeCode => Arc::new(ClaudeCode::new(
            config.command.as_ref().map(|c| c.argv()),
            tier_models(config),
            retry_policy(config),
            product,
        )?),
    };
    Ok(Some(limit_concurrency(provider, parallel)))
}

fn api_settings(config: &LlmConfig, limits: &Limits, product: &Product) -> ApiSettings {
    ApiSettings {
        base_url: config
            .base_url
            .as_deref()
            .map(|url| url.trim_end_matches('/').to_owned()),
        models: tier_models(config),
        max_tokens: config.max_tokens,
        policy: retry_policy(config),
        max_answer_bytes: limits.http_bytes,
        product: *product,
    }
}

fn tier_models(config: &LlmConfig) -> TierModels {
    TierModels {
        fast: config.model(Tier::Fast),
        default: config.model(Tier::Default),
    }
}

fn retry_policy(config: &LlmConfig) -> RetryPolicy {
    RetryPolicy {
        retries: config.retries,
        timeout: Duration::from_secs(config.timeout_s),
        max_wait: Duration::from_secs(config.retry_after_max_s),
    }
}

fn setup_error(config: &LlmConfig, message: String) -> LlmError {
    LlmError::Setup {
        provider: config.provider.name().to_owned(),
        message,
    }
}

/// Checks the values a provider cannot work with.
fn validate(config: &LlmConfig) -> Result<(), LlmError> {
    if config.timeout_s == 0 {
        return Err(setup_error(config, "llm.timeout_s must be at least 1 (seconds)".into()));
    }
    if config.max_tokens == 0 {
        return Err(setup_error(config, "llm.max_tokens must be at least 1".into()));
    }
    if let Some(url) = &config.base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(setup_error(
                config,
                format!("llm.base_url `{url}` must start with http:// or https://"),
            ));
        }
    }
    Ok(())
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

    fn parse(yaml: &str) -> LlmConfig {
        serde_yaml::from_str(yaml).expect("test config parses")
    }

    fn connect_without_keys(config: &LlmConfig, parallel: usize) -> Result<Option<Arc<dyn Provider>>, LlmError> {
        connect_with_env(config, parallel, &Limits::default(), &Product::NEUTRAL, |_| None)
    }

    #[test]
    fn builtin_connects_to_no_provider() {
        assert!(connect_without_keys(&parse("{}"), 10).unwrap().is_none());
    }

    #[test]
    fn anthropic_without_a_key_names_the_variable_to_set() {
        let config = parse("provider: anthropic\napi_key_env: TEAM_KEY");
        let error = connect_without_keys(&config, 10).err().unwrap().to_string();
        assert!(error.contains("TEAM_KEY"), "{error}");
        let connected = connect_with_env(&config, 10, &Limits::default(), &Product::NEUTRAL, |name| {
            (name == "TEAM_KEY").then(|| "k".into())
        });
        assert_eq!(connected.unwrap().unwrap().name(), "anthropic");
    }

    #[test]
    fn openai_needs_a_key_only_when_a_variable_is_named() {
        let config = parse("provider: openai\nbase_url: http://127.0.0.1:11434/v1");
        assert!(connect_without_keys(&config, 1).unwrap().is_some());
        let config = parse("provider: openai\napi_key_env: VLLM_KEY");
        let error = connect_without_keys(&config, 1).err().unwrap().to_string();
        assert!(error.contains("VLLM_KEY"), "{error}");
    }

    #[test]
    fn unusable_values_are_reported() {
        for (yaml, expected) in [
            ("provider: openai\ntimeout_s: 0", "timeout_s"),
            ("provider: openai\nmax_tokens: 0", "max_tokens"),
            ("provider: openai\nbase_url: localhost:8080", "http://"),
        ] {
            let error = connect_without_keys(&parse(yaml), 1).err().unwrap();
            assert!(error.to_string().contains(expected), "{error}");
        }
        let error = connect_without_keys(&parse("provider: openai"), 0).err().unwrap();
        assert!(error.to_string().contains("parallel_subagents"));
    }

    #[test]
    fn a_base_url_loses_its_trailing_slash() {
        let settings = api_settings(
            &parse("base_url: http://h:1/v1/"),
            &Limits::default(),
            &Product::NEUTRAL,
        );
        assert_eq!(settings.base_url.as_deref(), Some("http://h:1/v1"));
        assert_eq!(settings.max_answer_bytes, Limits::default().http_bytes);
    }
}
