//! `providers check`: one tiny call that proves the provider, its key and its
//! model work, and says exactly what failed when they do not; then one call
//! per stage schema given, sent the way the stage sends it, so an endpoint
//! that rejects a stage's schema (strict mode) fails here, not mid-run.

use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};

use super::{LlmRequest, Provider, Tier};

/// What one check call found. `error` is the provider's own message (keys
/// already scrubbed), or why the answer did not match the tiny schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The provider's name.
    pub provider: String,
    /// The model that answered, or the one asked when none did.
    pub model: String,
    /// How long the check call took, in milliseconds.
    pub latency_ms: u64,
    /// Why the check failed; `None` when it passed.
    pub error: Option<String>,
    /// Per stage schema checked: its name and the failure, if any.
    pub schemas: Vec<(String, Option<String>)>,
}

/// Asks `provider` (default tier, the one most stages use) for `{"ok": true}`,
/// then, if that worked, for a minimal answer to each of `schemas` (name, schema).
pub async fn check(provider: &dyn Provider, schemas: &[(String, Value)]) -> CheckReport {
    let request = LlmRequest {
        stage: "providers-check".into(),
        system: None,
        cached: None,
        user: "Connectivity check: answer with ok set to true.".into(),
        schema: Some(json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": false,
        })),
        schema_name: "check".into(),
        tier: Tier::Default,
        max_tokens: Some(64),
    };
    let started = Instant::now();
    let outcome = provider.complete(&request).await;
    let latency_ms = started.elapsed().as_millis() as u64;
    let (model, error) = match outcome {
        Ok(reply) if reply.value.get("ok").is_some_and(Value::is_boolean) => (reply.model, None),
        Ok(reply) => {
            let error = format!("the answer does not match {{ok: boolean}}: {}", reply.value);
            (reply.model, Some(error))
        }
        Err(error) => (provider.model(Tier::Default), Some(error.to_string())),
    };
    let mut checked = Vec::new();
    if error.is_none() {
        for (name, schema) in schemas {
            let request = LlmRequest {
                stage: "providers-check".into(),
                system: None,
                cached: None,
                user:
                    "Schema check: answer with the smallest valid example of this output (empty lists where allowed)."
                        .into(),
                schema: Some(schema.clone()),
                schema_name: name.clone(),
                tier: Tier::Default,
                max_tokens: Some(1024),
            };
            let failure = provider.complete(&request).await.err().map(|e| e.to_string());
            checked.push((name.clone(), failure));
        }
    }
    CheckReport {
        provider: provider.name().to_owned(),
        model,
        latency_ms,
        error,
        schemas: checked,
    }
}
