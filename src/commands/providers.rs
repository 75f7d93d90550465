//! `providers check`, and the `doctor.provider` check that doctor runs.

use std::time::Duration;

use engine::llm::{LlmConfig, ProviderKind};
use engine::Registry;
use serde::{Deserialize, Serialize};

use crate::commands::Outcome;
use crate::project::Project;

/// One doctor line: a check, whether it passed, what was seen, how to fix it.
#[derive(Debug, Serialize)]
pub struct ProviderCheck {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
    /// What to do when it failed (empty when ok).
    pub fix: String,
}

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    offline: bool,
}

/// Register `doctor.provider`: configured, and (unless offline) reachable.
pub fn register(registry: &mut Registry, llm: LlmConfig) {
    registry.async_function(
        "doctor.provider",
        "is the LLM provider configured and reachable?",
        move |a: Args, ctx| {
            let llm = llm.clone();
            async move { Ok(check(&llm, &ctx.limits, a.offline).await) }
        },
    );
}

async fn check(llm: &LlmConfig, limits: &engine::io::Limits, offline: bool) -> ProviderCheck {
    let name = "provider";
    if llm.provider == ProviderKind::Builtin {
        return ProviderCheck {
            name,
            ok: true,
            detail: "builtin (offline, no key needed)".into(),
            fix: String::new(),
        };
    }
    let provider = match engine::llm::connect(llm, 1, limits) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return ProviderCheck {
                name,
                ok: true,
                detail: "builtin".into(),
                fix: String::new(),
            }
        }
        Err(e) => {
            return ProviderCheck {
                name,
                ok: false,
                detail: e.to_string(),
                fix: "set the key variable or llm.provider in .claude/unity-assets.yml".into(),
            }
        }
    };
    if offline {
        return ProviderCheck {
            name,
            ok: true,
            detail: format!(
                "{} configured (reachability not checked: --offline)",
                llm.provider.name()
            ),
            fix: String::new(),
        };
    }
    let report = tokio::time::timeout(
        Duration::from_secs(llm.timeout_s + 5),
        engine::llm::check(provider.as_ref(), &[]),
    )
    .await;
    match report {
        Ok(r) if r.error.is_none() => ProviderCheck {
            name,
            ok: true,
            detail: format!("{} {} answered in {} ms", r.provider, r.model, r.latency_ms),
            fix: String::new(),
        },
        Ok(r) => ProviderCheck {
            name,
            ok: false,
            detail: format!("{} {}: {}", r.provider, r.model, r.error.unwrap_or_default()),
            fix: "run `unity-assets providers check` for details".into(),
        },
        Err(_) => ProviderCheck {
            name,
            ok: false,
            detail: "no answer in time".into(),
            fix: "check llm.base_url and the network".into(),
        },
    }
}

/// `providers check`: one tiny call, with the provider, model and latency,
/// then one call per schema an `llm` stage gates its answer with.
pub async fn providers_check(project: &Project) -> Outcome {
    let provider = match project.provider() {
        Ok(Some(p)) => p,
        Ok(None) => {
            println!("provider: builtin (offline; no model is called)");
            return Outcome::ok();
        }
        Err(e) => return Outcome::failed(e),
    };
    let schemas = match stage_schemas(project) {
        Ok(s) => s,
        Err(d) => return Outcome::invalid(d),
    };
    let r = engine::llm::check(provider.as_ref(), &schemas).await;
    println!(
        "provider: {}\nmodel:    {}\nlatency:  {} ms",
        r.provider, r.model, r.latency_ms
    );
    if let Some(e) = r.error {
        return Outcome::failed(format!("status:   failed: {e}"));
    }
    let mut failed = 0;
    for (name, error) in &r.schemas {
        match error {
            None => println!("schema:   {name} accepted"),
            Some(e) => {
                failed += 1;
                println!("schema:   {name} failed: {e}");
            }
        }
    }
    if failed > 0 {
        return Outcome::failed(format!(
            "status:   failed: {failed} of {} stage schemas were not accepted; the stages using them would fail",
            r.schemas.len()
        ));
    }
    println!("status:   ok");
    Outcome::ok()
}

/// The schemas `llm` stages gate their answers with, in every pipeline of
/// the project (overrides included), each once.
fn stage_schemas(project: &Project) -> Result<Vec<(String, serde_json::Value)>, engine::diagnostic::Diagnostics> {
    let layers = project.layers(&[])?;
    let mut compiler =
        engine::compile::Compiler::new(&project.resources, &project.registry, &layers, project.is_offline());
    let mut out: Vec<(String, serde_json::Value)> = Vec::new();
    for name in compiler.pipeline_names() {
        let pipeline = compiler.compile(&name)?;
        for stage in &pipeline.stages {
            let (engine::compile::StageAction::Llm(_), Some(gate)) = (&stage.action, &stage.gate) else {
                continue;
            };
            // Named as the stage names it on the wire (`search-routing`).
            let file = gate.file.rsplit('/').next().unwrap_or(&gate.file);
            let stem = file.trim_end_matches(".json").trim_end_matches(".schema").to_owned();
            if !out.iter().any(|(n, _)| *n == stem) {
                out.push((stem, (*gate.schema).clone()));
            }
        }
    }
    Ok(out)
}
