//! `llm:` — render the prompt, ask the provider for JSON, gate it with the
//! stage's schema, and repair: a failing answer is sent back with the
//! validator's errors, up to `repair` times, before `on_invalid` decides.
//! With the offline provider the stage's `builtin:` task runs instead.

use std::collections::BTreeMap;

use std::sync::Arc;

use crate::template::json_view;
use serde_json::Value;

use crate::compile::{Gate, LlmStage};
use crate::llm::{LlmRequest, Usage};
use crate::run::Flow;
use crate::template::Scope;

use super::{recover, StageCx};

const DEFAULT_MAX_TOKENS: u32 = 4096;

pub async fn run(cx: &StageCx<'_>, scope: &Scope, l: &LlmStage) -> Result<Flow, String> {
    let input = cx.with(scope)?;
    let gate = cx.stage.gate.as_ref().ok_or("llm stage without a schema gate")?;
    let Some(provider) = &cx.rt.provider else {
        let (name, native) = l.builtin.as_ref().ok_or("no `builtin:` for the offline provider")?;
        let out = (native.call)(input, cx.call_context())
            .await
            .map_err(|e| format!("builtin `{name}`: {e:#}"))?;
        cx.stats.call(0, Usage::default());
        return match gate.check(&out) {
            Ok(()) => Ok(Flow::Value(out)),
            Err(errors) => recover(
                cx,
                scope,
                &cx.stage.on_invalid,
                format!("builtin `{name}` output fails {}: {}", gate.file, errors.join("; ")),
            ),
        };
    };
    let (system, cached, user) = render(cx, scope, l, input)?;
    let mut request = LlmRequest {
        stage: cx.stage.name.clone(),
        system,
        cached,
        user: user.clone(),
        schema: Some((*gate.schema).clone()),
        schema_name: schema_name(gate),
        tier: l.tier,
        max_tokens: l.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
    };
    let mut why = String::new();
    for attempt in 0..=l.repair {
        let reply = provider.complete(&request).await.map_err(|e| e.to_string())?;
        cx.stats.call(reply.retries, reply.usage);
        match gate.check(&reply.value) {
            Ok(()) => return Ok(Flow::Value(reply.value)),
            Err(errors) => {
                why = format!("answer fails {}: {}", gate.file, errors.join("; "));
                tracing::info!(stage = %cx.stage.name, attempt, "{why}");
                if attempt < l.repair {
                    cx.stats.repair();
                    request.user = format!(
                        "{user}\n\nYour previous answer was:\n{}\n\nIt does not satisfy the required JSON Schema:\n- {}\n\nAnswer again with corrected JSON only.",
                        reply.value,
                        errors.join("\n- ")
                    );
                }
            }
        }
    }
    recover(cx, scope, &cx.stage.on_invalid, why)
}

/// The prompt's `system`, `cached` and `user` parts. A template without
/// blocks is all `user`.
fn render(
    cx: &StageCx<'_>,
    scope: &Scope,
    l: &LlmStage,
    input: Value,
) -> Result<(Option<String>, Option<String>, String), String> {
    let env = &cx.pipeline.env;
    let template = env.get_template(&l.prompt).map_err(|e| e.to_string())?;
    let mut ctx: BTreeMap<String, minijinja::Value> = BTreeMap::new();
    for root in ["inputs", "params"] {
        if let Some(v) = scope.get(root) {
            ctx.insert(root.into(), json_view(Arc::clone(v)));
        }
    }
    if let Value::Object(m) = input {
        for (k, v) in m {
            ctx.insert(k, json_view(Arc::new(v)));
        }
    }
    let mut captured = template
        .render_captured(minijinja::Value::from(ctx))
        .map_err(|e| format!("prompt {}: {e}", l.prompt))?;
    let whole = captured.output().to_owned();
    let mut block = |name: &str| {
        captured
            .with_state_mut(|s| s.render_block(name))
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    };
    let system = block("system");
    let cached = block("cached");
    let user = block("user");
    match user {
        Some(u) => Ok((system, cached, u)),
        None if system.is_none() && cached.is_none() => Ok((None, None, whole.trim().to_owned())),
        None => Err(format!("prompt {} defines blocks but no `user` block", l.prompt)),
    }
}

/// A tool / response_format name from the schema file: `search-routing`.
fn schema_name(gate: &Gate) -> String {
    let stem = gate.file.rsplit('/').next().unwrap_or("output");
    let stem = stem.trim_end_matches(".json").trim_end_matches(".schema");
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
