//! `web_search:` of `.claude/unity-assets.yml`: the backends, their addresses,
//! the environment variables holding their keys and the command to run.
//!
//! Read in this one place (the pipeline passes `params.web_search` here, and
//! the trust gate reads the project's file) because every item in it runs a
//! program, reaches the network or picks a credential: the trust gate
//! inspects exactly [`WebSearchConfig::trust_items`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendName {
    Searxng,
    Brave,
    Tavily,
    Command,
}

impl BackendName {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Searxng => "searxng",
            Self::Brave => "brave",
            Self::Tavily => "tavily",
            Self::Command => "command",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Endpoint {
    /// The API's address; none for searxng means "not configured".
    pub url: Option<String>,
    /// The environment variable holding the key (brave, tavily).
    pub api_key_env: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandBackend {
    /// The program and its arguments; `{prompt}` in any argument is replaced.
    pub argv: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchConfig {
    /// Tried in this order until one answers.
    pub backends: Vec<BackendName>,
    #[serde(default)]
    pub searxng: Endpoint,
    #[serde(default)]
    pub brave: Endpoint,
    #[serde(default)]
    pub tavily: Endpoint,
    #[serde(default)]
    pub command: CommandBackend,
    /// Per backend request (and per command run).
    pub timeout_s: u64,
    /// Results asked of a backend per query.
    pub max_results: usize,
    /// `detailed`: how many pages to fetch and their limits.
    pub fetch: FetchLimits,
    /// Fetch result pages on loopback, link-local and private networks
    /// (an intranet searched on purpose); off, they are refused.
    #[serde(default)]
    pub allow_private_addresses: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchLimits {
    pub pages: usize,
    pub max_bytes: u64,
    pub timeout_s: u64,
    pub concurrency: usize,
}

/// One thing the trust gate must approve before a project may use it.
#[derive(Debug, Clone, PartialEq)]
pub enum TrustItem {
    /// A program and arguments the `command` backend runs.
    Program(Vec<String>),
    /// An address a backend sends queries (and keys) to.
    Url { backend: &'static str, url: String },
    /// An environment variable a backend reads a key from.
    KeyEnv { backend: &'static str, var: String },
    /// `allow_private_addresses: true`: pages on this machine or the private network are fetched.
    PrivateAddresses,
}

impl WebSearchConfig {
    /// The effective settings: `params.web_search` of the pipeline (defaults
    /// < config file < `--set`), as the search stage receives them.
    pub fn from_params(value: Value) -> anyhow::Result<Self> {
        serde_json::from_value(value).map_err(|e| anyhow::anyhow!("`web_search` settings: {e}"))
    }

    /// Every item of `web_search` (a config value, possibly partial) that runs
    /// a program, reaches the network or picks a credential.
    pub fn trust_items(web_search: &Value) -> Vec<TrustItem> {
        let mut items = Vec::new();
        let text = |path: &[&str]| {
            path.iter()
                .try_fold(web_search, |v, k| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if let Some(argv) = web_search.pointer("/command/argv").and_then(Value::as_array) {
            items.push(TrustItem::Program(
                argv.iter().map(|a| a.as_str().unwrap_or_default().to_owned()).collect(),
            ));
        }
        if web_search["allow_private_addresses"] == Value::Bool(true) {
            items.push(TrustItem::PrivateAddresses);
        }
        for backend in ["searxng", "brave", "tavily"] {
            if let Some(url) = text(&[backend, "url"]) {
                items.push(TrustItem::Url { backend, url });
            }
            if let Some(var) = text(&[backend, "api_key_env"]) {
                items.push(TrustItem::KeyEnv { backend, var });
            }
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trust_items_name_programs_urls_and_key_variables() {
        let ws = json!({
            "command": {"argv": ["gemini", "-p", "{prompt}"]},
            "searxng": {"url": "http://127.0.0.1:8888"},
            "brave": {"api_key_env": "MY_BRAVE"},
        });
        assert_eq!(
            WebSearchConfig::trust_items(&ws),
            vec![
                TrustItem::Program(vec!["gemini".into(), "-p".into(), "{prompt}".into()]),
                TrustItem::Url {
                    backend: "searxng",
                    url: "http://127.0.0.1:8888".into()
                },
                TrustItem::KeyEnv {
                    backend: "brave",
                    var: "MY_BRAVE".into()
                },
            ]
        );
        assert!(WebSearchConfig::trust_items(&json!({"timeout_s": 3})).is_empty());
    }
}
