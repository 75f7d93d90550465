//! Anthropic's Messages API.
//!
//! Prompt convention: the template's `system` block is the `system` field;
//! its `cached` block is the first content block of the user message, marked
//! `cache_control: ephemeral` so calls that share it (map-reduce chunks of
//! one stage) read it from the cache; the `user` block follows. Structured
//! output forces one tool whose `input_schema` is the stage's schema, and the
//! answer is that tool call's `input`.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::extract::extract_json;
use super::http::HttpTransport;
use super::secret::ApiKey;
use super::structured::{json_instructions, Dialect, WireSchema};
use super::wire::{cut_off_message, messages_usage, ApiSettings, TierModels};
use super::{excerpt, LlmError, LlmReply, LlmRequest};

const NAME: &str = "anthropic";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

pub(crate) struct Anthropic {
    http: HttpTransport,
    url: String,
    headers: HeaderMap,
    models: TierModels,
    max_tokens: u32,
}

impl Anthropic {
    pub(crate) fn new(settings: ApiSettings, key: ApiKey, key_env: String) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        let key_header = key.header("").map_err(|message| LlmError::Setup {
            provider: NAME.into(),
            message: format!("{message} (from ${key_env})"),
        })?;
        headers.insert(HeaderName::from_static("x-api-key"), key_header);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        Ok(Self {
            http: HttpTransport::new(
                NAME,
                Some(key),
                key_env,
                settings.policy,
                settings.max_answer_bytes,
                &settings.product,
            )?,
            url: format!("{}/v1/messages", settings.base_url_or(DEFAULT_BASE_URL)),
            headers,
            models: settings.models,
            max_tokens: settings.max_tokens,
        })
    }

    fn body(&self, request: &LlmRequest, wire: Option<&WireSchema>, max_tokens: u32) -> Value {
        let mut content = Vec::new();
        if let Some(cached) = &request.cached {
            content.push(json!({"type": "text", "text": cached, "cache_control": {"type": "ephemeral"}}));
        }
        content.push(json!({"type": "text", "text": request.user}));
        if wire.is_none() {
            content.push(json!({"type": "text", "text": json_instructions(None)}));
        }
        let mut body = json!({
            "model": self.models.get(request.tier),
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": content}],
        });
        if let Some(system) = &request.system {
            body["system"] = json!(system);
        }
        if let Some(wire) = wire {
            body["tools"] = json!([{
                "name": wire.name,
                "description": format!("Record the answer of stage `{}`; its input is the answer.", request.stage),
                "input_schema": wire.schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": wire.name});
        }
        body
    }

    async fn call(&self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        let wire = WireSchema::of(request, Dialect::Loose);
        let max_tokens = request.max_tokens_or(self.max_tokens);
        let body = self.body(request, wire.as_ref(), max_tokens);
        let (answer, retries) = self.http.post_json(&self.url, &self.headers, &body).await?;
        let value = answer_value(&answer, wire.as_ref(), max_tokens).map_err(|message| {
            self.http.scrub(LlmError::NoJson {
                provider: NAME.into(),
                message,
                usage: messages_usage(&answer["usage"]),
            })
        })?;
        Ok(LlmReply {
            value,
            usage: messages_usage(&answer["usage"]),
            retries,
            model: self.models.answered(&answer, request.tier),
        })
    }
}

impl_provider!(Anthropic);

/// The forced tool call's input, else JSON found in the text blocks.
fn answer_value(answer: &Value, wire: Option<&WireSchema>, max_tokens: u32) -> Result<Value, String> {
    let blocks = answer["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(wire) = wire {
        let tool_input = blocks
            .iter()
            .find(|b| b["type"] == "tool_use" && b["name"] == wire.name.as_str())
            .map(|b| b["input"].clone());
        if let Some(input) = tool_input {
            return Ok(wire.unwrap(input));
        }
    }
    let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    if let Some(value) = extract_json(&text) {
        return Ok(match wire {
            Some(wire) => wire.unwrap(value),
            None => value,
        });
    }
    if answer["stop_reason"] == "max_tokens" {
        return Err(cut_off_message(max_tokens));
    }
    Err(format!("no tool call and no JSON in the text: {}", excerpt(&text)))
}
