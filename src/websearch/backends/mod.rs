//! `websearch.backends`: the backend chain
//! (`docs/contracts.md#web-search-backends`). Backends are tried in the
//! configured order; one that is not configured, not installed or fails is
//! skipped with a line naming it and why, and the first that answers wins.
//! Keys come only from the environment and are scrubbed from every message
//! and result a keyed backend lets out.

mod brave;
mod command;
mod searxng;
mod tavily;

use std::time::Duration;

use engine::llm::ApiKey;
use engine::Output;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::{BackendName, WebSearchConfig};
use super::html;
use super::result::WebResult;

/// Longest snippet kept, in characters (`docs/contracts.md#web-search-backends`).
const SNIPPET_CHARS: usize = 200;

#[derive(Debug, Serialize, Deserialize)]
pub struct Failure {
    pub backend: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ChainOut {
    /// A backend answered (possibly with no result).
    pub ok: bool,
    pub backend: Option<String>,
    pub results: Vec<WebResult>,
    /// The backends skipped before one answered (all of them when none did).
    pub failures: Vec<Failure>,
}

/// What a run of the chain needs besides the settings.
pub struct Request<'a> {
    pub queries: &'a [String],
    /// The `command` backend's prompt.
    pub prompt: &'a str,
    pub output: &'a Output,
    /// The bound on one backend answer (`limits.http_mb`).
    pub max_answer_bytes: u64,
}

/// Why an answer was refused for its size.
fn too_large(limit: u64) -> String {
    format!(
        "the answer is larger than {limit} bytes (the limit `{}`; raise it in .claude/unity-assets.yml if the answer is genuine)",
        engine::io::HTTP_KEY
    )
}

pub async fn search(cfg: &WebSearchConfig, req: &Request<'_>) -> ChainOut {
    let mut failures = Vec::new();
    for name in &cfg.backends {
        let outcome = match name {
            BackendName::Command => command::search(cfg, req).await,
            http => search_http(*http, cfg, req).await,
        };
        match outcome {
            Ok(results) => {
                req.output.line(&format!(
                    "[unity-assets:web-search] backend {}: {} result{}",
                    name.as_str(),
                    results.len(),
                    if results.len() == 1 { "" } else { "s" }
                ));
                return ChainOut {
                    ok: true,
                    backend: Some(name.as_str().to_owned()),
                    results,
                    failures,
                };
            }
            Err(reason) => {
                req.output.line(&format!(
                    "[unity-assets:web-search] backend {} skipped: {reason}",
                    name.as_str()
                ));
                failures.push(Failure {
                    backend: name.as_str().to_owned(),
                    reason,
                });
            }
        }
    }
    ChainOut {
        ok: false,
        backend: None,
        results: vec![],
        failures,
    }
}

/// The HTTP backends: every query in turn. The first query failing skips the
/// backend; a later one failing is a line, and the others' results stay.
async fn search_http(name: BackendName, cfg: &WebSearchConfig, req: &Request<'_>) -> Result<Vec<WebResult>, String> {
    let api = Api::for_backend(name, cfg, req.max_answer_bytes)?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(cfg.timeout_s))
        .user_agent(concat!("unity-assets/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())?;
    let mut results = Vec::new();
    for (i, query) in req.queries.iter().enumerate() {
        let found = match name {
            BackendName::Searxng => searxng::search(&client, &api, query, cfg.max_results).await,
            BackendName::Brave => brave::search(&client, &api, query, cfg.max_results).await,
            BackendName::Tavily => tavily::search(&client, &api, query, cfg.max_results).await,
            BackendName::Command => unreachable!("the command backend is not HTTP"),
        };
        match found.map_err(|e| api.scrub(&e)) {
            Ok(found) => results.extend(found.into_iter().map(|r| api.scrub_result(r))),
            Err(e) if i == 0 => return Err(e),
            Err(e) => req.output.line(&format!(
                "[unity-assets:web-search] backend {}: query {} skipped: {e}",
                name.as_str(),
                i + 1
            )),
        }
    }
    Ok(results)
}

/// An HTTP backend's address and key.
pub(crate) struct Api {
    url: String,
    key: Option<ApiKey>,
    timeout_s: u64,
    max_answer_bytes: u64,
}

impl Api {
    fn for_backend(name: BackendName, cfg: &WebSearchConfig, max_answer_bytes: u64) -> Result<Self, String> {
        let endpoint = match name {
            BackendName::Searxng => &cfg.searxng,
            BackendName::Brave => &cfg.brave,
            BackendName::Tavily => &cfg.tavily,
            BackendName::Command => unreachable!("the command backend is not HTTP"),
        };
        let setting = name.as_str();
        let url = endpoint
            .url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| format!("not configured (set web_search.{setting}.url)"))?;
        let key = match &endpoint.api_key_env {
            Some(var) if name != BackendName::Searxng => {
                let key = std::env::var(var).ok().and_then(ApiKey::new);
                Some(key.ok_or_else(|| format!("not configured: {var} is not set"))?)
            }
            _ => None,
        };
        Ok(Self {
            url: url.trim_end_matches('/').to_owned(),
            key,
            timeout_s: cfg.timeout_s,
            max_answer_bytes,
        })
    }

    fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(k) => k.scrub(text),
            None => text.to_owned(),
        }
    }

    fn scrub_result(&self, mut r: WebResult) -> WebResult {
        if self.key.is_some() {
            r.title = self.scrub(&r.title);
            r.url = self.scrub(&r.url);
            r.snippet = self.scrub(&r.snippet);
        }
        r
    }

    /// Send, and read a JSON answer; every failure as one short reason.
    async fn json(&self, request: reqwest::RequestBuilder) -> Result<Value, String> {
        let mut resp = request.send().await.map_err(|e| self.transport(e))?;
        let status = resp.status();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport(e))? {
            if (body.len() + chunk.len()) as u64 > self.max_answer_bytes {
                return Err(too_large(self.max_answer_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        if !status.is_success() {
            let message = serde_json::from_str(&text)
                .ok()
                .and_then(|v| error_message(&v))
                .unwrap_or(text);
            return Err(format!("HTTP {}: {}", status.as_u16(), html::snippet(&message, 200)));
        }
        serde_json::from_str(&text).map_err(|_| format!("the answer is not JSON: {}", html::snippet(&text, 120)))
    }

    fn transport(&self, e: reqwest::Error) -> String {
        if e.is_timeout() {
            format!("no answer within {}s", self.timeout_s)
        } else if e.is_connect() {
            format!("cannot connect to {}", self.url)
        } else {
            e.without_url().to_string()
        }
    }
}

/// The message of a JSON error body, in the places APIs put it (Brave:
/// `error.detail`; Tavily: `detail.error`; others: `message`, `error`).
fn error_message(body: &Value) -> Option<String> {
    [
        "/error/detail",
        "/error/message",
        "/detail/error",
        "/detail",
        "/message",
        "/error",
    ]
    .iter()
    .find_map(|p| body.pointer(p).and_then(Value::as_str))
    .map(str::to_owned)
}

/// A result from the fields a backend names, or `None` without a URL.
fn result(
    title: Option<&Value>,
    url: Option<&Value>,
    snippet: Option<&Value>,
    published: Option<&Value>,
) -> Option<WebResult> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let url = text(url).filter(|u| !u.trim().is_empty())?;
    Some(WebResult {
        title: html::snippet(&text(title).unwrap_or_else(|| url.clone()), SNIPPET_CHARS),
        snippet: html::snippet(&text(snippet).unwrap_or_default(), SNIPPET_CHARS),
        url: url.trim().to_owned(),
        published_at: text(published).filter(|p| !p.is_empty()),
        ..Default::default()
    })
}
