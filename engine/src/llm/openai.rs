//! OpenAI-compatible Chat Completions: OpenAI, Ollama, vLLM, llama.cpp
//! server, LM Studio — any server at `base_url`.
//!
//! Prompt convention: the template's `system` block is the system message;
//! the `cached` block opens the user message, followed by the `user` block,
//! so calls sharing it share a prefix (OpenAI caches long prefixes by
//! itself). In `json_mode: schema` the stage's schema goes as a strict
//! `response_format`; in `plain` it is appended to the user message as
//! instructions. Either way the answer is the JSON in the message content.
//!
//! Usage: `input_tokens` excludes cached prompt tokens, which are counted as
//! `cache_read_tokens`, the same split Anthropic reports.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};

use super::config::JsonMode;
use super::extract::extract_json;
use super::http::HttpTransport;
use super::secret::ApiKey;
use super::structured::{json_instructions, Dialect, WireSchema};
use super::wire::{cut_off_message, ApiSettings, TierModels};
use super::{excerpt, LlmError, LlmReply, LlmRequest, Usage};

const NAME: &str = "openai";
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

pub(crate) struct OpenAi {
    http: HttpTransport,
    url: String,
    headers: HeaderMap,
    models: TierModels,
    max_tokens: u32,
    json_mode: JsonMode,
}

impl OpenAi {
    /// `key` is optional: local servers take none, and then no
    /// `Authorization` header is sent.
    pub(crate) fn new(
        settings: ApiSettings,
        json_mode: JsonMode,
        key: Option<ApiKey>,
        key_env: String,
    ) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &key {
            let bearer = key.header("Bearer ").map_err(|message| LlmError::Setup {
                provider: NAME.into(),
                message: format!("{message} (from ${key_env})"),
            })?;
            headers.insert(AUTHORIZATION, bearer);
        }
        Ok(Self {
            http: HttpTransport::new(
                NAME,
                key,
                key_env,
                settings.policy,
                settings.max_answer_bytes,
                &settings.product,
            )?,
            url: format!("{}/chat/completions", settings.base_url_or(DEFAULT_BASE_URL)),
            headers,
            models: settings.models,
            max_tokens: settings.max_tokens,
            json_mode,
        })
    }

    fn body(&self, request: &LlmRequest, wire: Option<&WireSchema>, max_tokens: u32) -> Value {
        let mut user = String::new();
        if let Some(cached) = &request.cached {
            user.push_str(cached);
            user.push_str("\n\n");
        }
        user.push_str(&request.user);
        let strict_schema = wire.filter(|_| self.json_mode == JsonMode::Schema);
        if strict_schema.is_none() {
            user.push_str("\n\n");
            user.push_str(&json_instructions(request.schema.as_ref()));
        }
        let mut messages = Vec::new();
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": user}));
        let mut body = json!({
            "model": self.models.get(request.tier),
            "max_tokens": max_tokens,
            "messages": messages,
        });
        if let Some(wire) = strict_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": wire.name, "strict": true, "schema": wire.schema},
            });
        }
        body
    }

    async fn call(&self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        let dialect = match self.json_mode {
            JsonMode::Schema => Dialect::Strict,
            JsonMode::Plain => Dialect::Loose,
        };
        let wire = WireSchema::of(request, dialect);
        let max_tokens = request.max_tokens_or(self.max_tokens);
        let body = self.body(request, wire.as_ref(), max_tokens);
        let (answer, retries) = self.http.post_json(&self.url, &self.headers, &body).await?;
        let value = answer_value(&answer, max_tokens).map_err(|message| {
            self.http.scrub(LlmError::NoJson {
                provider: NAME.into(),
                message,
                usage: usage(&answer),
            })
        })?;
        Ok(LlmReply {
            value: match &wire {
                Some(wire) => wire.unwrap(value),
                None => value,
            },
            usage: usage(&answer),
            retries,
            model: self.models.answered(&answer, request.tier),
        })
    }
}

impl_provider!(OpenAi);

/// The JSON in the first choice's message content.
fn answer_value(answer: &Value, max_tokens: u32) -> Result<Value, String> {
    let choice = &answer["choices"][0];
    if let Some(refusal) = choice["message"]["refusal"].as_str() {
        return Err(format!("the model refused: {}", excerpt(refusal)));
    }
    let content = choice["message"]["content"].as_str().unwrap_or_default();
    if let Some(value) = extract_json(content) {
        return Ok(value);
    }
    if choice["finish_reason"] == "length" {
        return Err(cut_off_message(max_tokens));
    }
    if choice.is_null() {
        return Err(format!("the answer has no choices: {}", excerpt(&answer.to_string())));
    }
    Err(format!("no JSON in the message: {}", excerpt(content)))
}

fn usage(answer: &Value) -> Usage {
    let usage = &answer["usage"];
    let cached = usage["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0);
    Usage {
        input_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0).saturating_sub(cached),
        output_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}
