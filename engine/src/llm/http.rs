//! The HTTP transport the API providers share: one POST of a JSON body,
//! retried per [`RetryPolicy`], with every message scrubbed of the key before
//! it is logged or returned.

use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use serde_json::Value;

use super::excerpt;
use super::retry::{parse_retry_after, with_retries, Failure, Retry, RetryPolicy};
use super::secret::ApiKey;
use super::LlmError;
use crate::io::HTTP_KEY;

#[derive(Debug)]
pub(crate) struct HttpTransport {
    provider: &'static str,
    client: reqwest::Client,
    policy: RetryPolicy,
    key: Option<ApiKey>,
    /// The variable the key came from, named in authentication errors.
    key_env: String,
    /// The run's `limits.http_mb`: one model answer is a few KiB, far more is
    /// a broken or hostile server, refused before it fills memory.
    max_answer_bytes: u64,
    /// Who the requests are for: the user agent, where the limit is raised.
    product: crate::Product,
}

impl HttpTransport {
    pub(crate) fn new(
        provider: &'static str,
        key: Option<ApiKey>,
        key_env: String,
        policy: RetryPolicy,
        max_answer_bytes: u64,
        product: &crate::Product,
    ) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .user_agent(product.user_agent())
            .build()
            .map_err(|e| LlmError::Setup {
                provider: provider.to_owned(),
                message: format!("cannot start the HTTP client: {}", describe(&e)),
            })?;
        Ok(Self {
            provider,
            client,
            policy,
            key,
            key_env,
            max_answer_bytes,
            product: *product,
        })
    }

    /// POSTs `body` to `url` and returns the JSON answer with the retries spent.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<(Value, u32), LlmError> {
        with_retries(self.provider, self.policy, || async {
            self.attempt(url, headers, body).await.map_err(|failure| Failure {
                error: self.scrub(failure.error),
                retry: failure.retry,
            })
        })
        .await
    }

    /// `error` with the key scrubbed out, when there is a key.
    pub(crate) fn scrub(&self, error: LlmError) -> LlmError {
        match &self.key {
            Some(key) => key.scrub_error(error),
            None => error,
        }
    }

    async fn attempt(&self, url: &str, headers: &HeaderMap, body: &Value) -> Result<Value, Failure> {
        let response = self
            .client
            .post(url)
            .headers(headers.clone())
            .json(body)
            .send()
            .await
            .map_err(|e| Failure::transient(self.transport_error(&format!("cannot reach {url}"), &e)))?;
        let status = response.status();
        let retry_after = header_text(response.headers(), RETRY_AFTER).and_then(|v| parse_retry_after(&v));
        let content_type = header_text(response.headers(), CONTENT_TYPE).unwrap_or_else(|| "none".into());
        if response.content_length().is_some_and(|n| n > self.max_answer_bytes) {
            return Err(self.too_large());
        }
        let mut response = response;
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failure::transient(self.transport_error("the answer broke off", &e)))?
        {
            if (bytes.len() + chunk.len()) as u64 > self.max_answer_bytes {
                return Err(self.too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        // A server may echo the request (and its key) back, also in a 200:
        // scrubbed here, nothing downstream (replies, schema messages) sees it.
        let text = String::from_utf8_lossy(&bytes);
        let text = match &self.key {
            Some(key) => key.scrub(&text),
            None => text.into_owned(),
        };
        if !status.is_success() {
            return Err(self.status_failure(status, &text, retry_after));
        }
        serde_json::from_str(&text).map_err(|e| {
            Failure::fatal(LlmError::Transport {
                provider: self.provider.to_owned(),
                message: format!(
                    "the answer is not JSON (content-type: {content_type}; {e}); it begins: {}",
                    excerpt(&text)
                ),
            })
        })
    }

    /// An answer over the limit: not retried, the same server would send it again.
    fn too_large(&self) -> Failure {
        Failure::fatal(LlmError::Transport {
            provider: self.provider.to_owned(),
            message: format!(
                "the answer is larger than {} bytes ({})",
                self.max_answer_bytes,
                self.product.raise_limit(HTTP_KEY, "answer")
            ),
        })
    }

    fn status_failure(&self, status: StatusCode, body: &str, retry_after: Option<std::time::Duration>) -> Failure {
        let mut message = vendor_message(body);
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            message.push_str(&format!("; check the key in ${}", self.key_env));
        }
        let error = LlmError::Http {
            provider: self.provider.to_owned(),
            status: status.as_u16(),
            message,
        };
        let retry = match retry_after {
            _ if !(status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) => Retry::Never,
            Some(delay) => Retry::After(delay),
            None => Retry::Backoff,
        };
        Failure { error, retry }
    }

    fn transport_error(&self, what: &str, error: &reqwest::Error) -> LlmError {
        LlmError::Transport {
            provider: self.provider.to_owned(),
            message: format!("{what}: {}", describe(error)),
        }
    }
}

fn header_text(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}

/// The vendor's own error text (`{"error": {"message": …}}`, the shape both
/// Anthropic and OpenAI-compatible servers use), else the start of the body.
fn vendor_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| excerpt(body))
}

/// An error with its causes: reqwest's own message alone ("error sending
/// request") hides the reason (refused, reset, TLS, …).
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
