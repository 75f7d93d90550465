//! `llm:` — render the prompt, ask the provider for JSON, gate it with the
//! stage's schema, and repair: an answer that fails the schema, or holds no
//! usable JSON (prose, cut off), is sent back with what was wrong, up to
//! `repair` times. Any failure left after the provider's transport retries
//! and the repairs goes to `on_invalid`, naming the model as the cause.
//! Answers and final failures are kept per run, so an identical request is
//! never sent twice. With the offline provider the stage's `builtin:` task
//! runs instead.

use std::collections::BTreeMap;

use std::sync::Arc;

use crate::template::{json_view, render_prompt, Prompt};
use serde_json::Value;

use super::{Flow, StageFailure};
use crate::compile::{ActionSite, Gate};
use crate::llm::{LlmRequest, Usage};
use crate::registry::Native;
use crate::spec::LlmSpec;
use crate::template::Scope;

use super::{recover, StageCx};

/// `llm:` — a prompt whose answer is gated by the stage's `output:` schema.
pub struct LlmStage {
    /// The prompt's file name, also its template name in the pipeline's env.
    pub prompt: String,
    pub builtin: Option<(String, Native)>,
    pub tier: crate::llm::Tier,
    pub repair: u32,
    pub max_tokens: Option<u32>,
}

impl LlmStage {
    /// The prompt, and the builtin task that stands in for the model.
    pub fn target(&self) -> String {
        match &self.builtin {
            Some((b, _)) => format!("{} (builtin {b})", self.prompt),
            None => self.prompt.clone(),
        }
    }
}

/// Every `llm` stage needs an `output:` gate, and a `builtin:` when the
/// offline provider runs it; an unknown builtin is reported, not run.
pub(super) fn compile(l: &LlmSpec, site: &mut ActionSite) -> LlmStage {
    let name = site.stage().name.clone();
    let builtin = match &l.builtin {
        Some(b) => match site.registry().get_builtin(b) {
            Some(n) => Some((b.clone(), n.clone())),
            None => {
                site.push(site.unknown("llm.builtin", "builtin task", b, site.registry().builtin_names()));
                None
            }
        },
        None => {
            if site.builtin_provider() {
                site.push(
                    site.error(
                        "llm",
                        format!("llm stage `{name}` has no `builtin:`, so the offline builtin provider cannot run it"),
                    )
                    .help(
                        "name a builtin task, or select a model provider (`--provider anthropic|openai|claude-code`)",
                    ),
                );
            }
            None
        }
    };
    site.prompt(&l.prompt);
    if site.stage().output.is_none() {
        site.push(
            site.error("llm", format!("llm stage `{name}` has no `output:` schema gate"))
                .help("every model answer is checked against a schema: add `output: <file>.schema.json`"),
        );
    }
    LlmStage {
        prompt: l.prompt.clone(),
        builtin,
        tier: l.tier,
        repair: l.repair,
        max_tokens: l.max_tokens,
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, l: &LlmStage) -> Result<Flow, StageFailure> {
    let args = cx.with_args(scope)?;
    let gate = cx.stage.gate.as_ref().ok_or("llm stage without a schema gate")?;
    let Some(provider) = &cx.rt.provider else {
        let (name, native) = l.builtin.as_ref().ok_or("no `builtin:` for the offline provider")?;
        let out = (native.call)(args, cx.call_context())
            .await
            .map_err(StageFailure::Builtin)?;
        cx.stats.call(0, Usage::default());
        return match gate.check(&out) {
            Ok(()) => Ok(Flow::Value(out)),
            Err(errors) => recover(
                cx,
                scope,
                &cx.stage.on_invalid,
                StageFailure::Gate {
                    what: format!("builtin `{name}` output"),
                    file: gate.file.clone(),
                    errors,
                },
            ),
        };
    };
    let Prompt { system, cached, user } = render(cx, scope, l, args.into_value())?;
    let mut request = LlmRequest {
        stage: cx.stage.name.clone(),
        system,
        cached,
        user: user.clone(),
        schema: Some((*gate.schema).clone()),
        schema_name: schema_name(gate),
        tier: l.tier,
        max_tokens: l.max_tokens,
    };
    match cx.rt.replies.get(provider.name(), &request) {
        Some(Ok(answer)) => {
            cx.stats.cache_hit();
            return Ok(Flow::Value(answer));
        }
        Some(Err(why)) => {
            cx.stats.cache_hit();
            return recover(
                cx,
                scope,
                &cx.stage.on_invalid,
                format!("{why} (earlier in this run; not sent again)").into(),
            );
        }
        None => {}
    }
    let asked = request.clone();
    let cause = format!("model `{}` ({})", provider.model(l.tier), provider.name());
    // The loop runs at least once, so a failure is always recorded here.
    let mut last: Option<StageFailure> = None;
    for attempt in 0..=l.repair {
        let feedback = match provider.complete(&request).await {
            Ok(reply) => {
                cx.stats
                    .call_to(&reply.model, provider.name(), reply.retries, reply.usage);
                match gate.check(&reply.value) {
                    Ok(()) => {
                        cx.rt.replies.put(provider.name(), &asked, Ok(&reply.value));
                        return Ok(Flow::Value(reply.value));
                    }
                    Err(errors) => {
                        let feedback = format!(
                            "Your previous answer was:\n{}\n\nIt does not satisfy the required JSON Schema:\n- {}",
                            reply.value,
                            errors.join("\n- ")
                        );
                        last = Some(StageFailure::Gate {
                            what: format!("{cause} answered JSON that"),
                            file: gate.file.clone(),
                            errors,
                        });
                        feedback
                    }
                }
            }
            Err(error) => {
                cx.stats
                    .call_to(&provider.model(l.tier), provider.name(), error.retries(), error.usage());
                // A prose or cut-off answer may come right when told why.
                let feedback = error
                    .unusable_answer()
                    .map(|message| format!("Your previous answer could not be used: {message}"));
                last = Some(StageFailure::Model {
                    context: cause.clone(),
                    source: Box::new(error),
                });
                match feedback {
                    Some(feedback) => feedback,
                    // The transport already retried; asking again would fail the same way.
                    None => break,
                }
            }
        };
        if let Some(failure) = &last {
            tracing::info!(stage = %cx.stage.name, attempt, "{failure}");
        }
        if attempt < l.repair {
            cx.stats.repair();
            request.user = format!("{user}\n\n{feedback}\n\nAnswer again with corrected JSON only.");
        }
    }
    let failure = last.unwrap_or_else(|| StageFailure::Invalid(format!("{cause} was not asked")));
    cx.rt.replies.put(provider.name(), &asked, Err(&failure.to_string()));
    recover(cx, scope, &cx.stage.on_invalid, failure)
}

/// The prompt rendered with the stage's inputs, `inputs` and `params`.
fn render(cx: &StageCx<'_>, scope: &Scope, l: &LlmStage, input: Value) -> Result<Prompt, StageFailure> {
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
    let _entered = cx.rt.cancel.enter();
    let prompt = render_prompt(&cx.pipeline.env, &l.prompt, ctx, &cx.rt.product).map_err(StageFailure::Template);
    if cx.rt.cancel.is_cancelled() {
        return Err(StageFailure::Cancelled);
    }
    prompt
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
