//! API keys that cannot leak.
//!
//! A key lives only inside [`ApiKey`]: its `Debug` prints a placeholder, and
//! every message a provider lets out passes through [`ApiKey::scrub`] first,
//! because servers do echo keys back in their error bodies. Products reuse
//! it for their own keyed services (web search backends).

use reqwest::header::HeaderValue;

use super::LlmError;

/// What a key is replaced with wherever it would appear.
const REDACTED: &str = "[redacted]";

/// A key read from the environment.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; `None` for a blank value, which servers would reject anyway.
    pub fn new(key: String) -> Option<Self> {
        let key = key.trim();
        (!key.is_empty()).then(|| Self(key.to_owned()))
    }

    /// A header value marked sensitive, so `http`'s and `reqwest`'s `Debug`
    /// output hides it.
    pub fn header(&self, prefix: &str) -> Result<HeaderValue, String> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0))
            .map_err(|_| "the API key holds characters not allowed in an HTTP header".to_owned())?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// `text` with every occurrence of the key replaced.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, REDACTED)
    }

    /// `error` with the key scrubbed from every message it carries.
    pub(crate) fn scrub_error(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::Timeout { provider, after } => LlmError::Timeout { provider, after },
            LlmError::Transport { provider, message } => LlmError::Transport {
                provider,
                message: self.scrub(&message),
            },
            LlmError::Http {
                provider,
                status,
                message,
            } => LlmError::Http {
                provider,
                status,
                message: self.scrub(&message),
            },
            LlmError::NoJson {
                provider,
                message,
                usage,
            } => LlmError::NoJson {
                provider,
                message: self.scrub(&message),
                usage,
            },
            LlmError::Setup { provider, message } => LlmError::Setup {
                provider,
                message: self.scrub(&message),
            },
            LlmError::GaveUp { retries, last } => LlmError::GaveUp {
                retries,
                last: Box::new(self.scrub_error(*last)),
            },
        }
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_every_occurrence_and_debug_hides_the_key() {
        let key = ApiKey::new(" sk-test-123 ".into()).expect("non-blank key");
        assert_eq!(
            key.scrub("bad key sk-test-123, sk-test-123"),
            "bad key [redacted], [redacted]"
        );
        assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
        assert!(!format!("{:?}", key.header("Bearer ").unwrap()).contains("sk-test"));
        assert!(ApiKey::new("  ".into()).is_none());
    }

    #[test]
    fn scrub_error_reaches_nested_errors() {
        let key = ApiKey::new("sk-test-123".into()).unwrap();
        let error = LlmError::GaveUp {
            retries: 2,
            last: Box::new(LlmError::Http {
                provider: "openai".into(),
                status: 500,
                message: "echo sk-test-123".into(),
            }),
        };
        let scrubbed = key.scrub_error(error);
        assert!(!scrubbed.to_string().contains("sk-test-123"));
        assert!(!format!("{scrubbed:?}").contains("sk-test-123"));
    }
}
