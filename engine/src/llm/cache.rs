//! Answers already received in this run, by request: a pipeline that asks
//! the same question twice (map-reduce, then the same map-reduce as a
//! fallback) pays for it once. A request the model failed on (after its
//! repairs) is remembered too: asking again would fail again, at full price.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::LlmRequest;

/// Schema-valid answers and final failures of one run, keyed by a digest of everything a
/// provider sends (not the stage's name, which the wire never carries).
#[derive(Debug, Default)]
pub(crate) struct ReplyCache {
    answers: Mutex<HashMap<[u8; 32], Result<Value, String>>>,
}

impl ReplyCache {
    /// The answer (or final failure) an identical request to `provider` already got.
    pub fn get(&self, provider: &str, request: &LlmRequest) -> Option<Result<Value, String>> {
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        answers.get(&key(provider, request)).cloned()
    }

    /// Keep `answer` for later identical requests to `provider`.
    pub fn put(&self, provider: &str, request: &LlmRequest, answer: Result<&Value, &str>) {
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        let answer = answer.cloned().map_err(str::to_owned);
        answers.insert(key(provider, request), answer);
    }
}

fn key(provider: &str, r: &LlmRequest) -> [u8; 32] {
    let mut h = Sha256::new();
    let schema = r.schema.as_ref().map(Value::to_string).unwrap_or_default();
    let tier = format!("{:?}/{:?}", r.tier, r.max_tokens);
    for part in [
        provider,
        &tier,
        r.system.as_deref().unwrap_or(""),
        r.cached.as_deref().unwrap_or(""),
        &r.user,
        &r.schema_name,
        &schema,
    ] {
        // Length-prefixed, so no two different requests join into one text.
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}
