//! `providers check`: the provider, its model and latency, and whether it
//! accepts every schema the project's `llm` stages gate their answers with.

use crate::exit::Outcome;
use crate::project::Project;

/// `providers check`: one tiny call, with the provider, model and latency,
/// then one call per schema an `llm` stage gates its answer with.
pub async fn providers_check(project: &Project) -> Outcome {
    let config = &project.config;
    let provider = match crate::doctor::provider::connect(&config.llm, config.parallel_subagents, &config.limits) {
        Ok(Some(p)) => p,
        Ok(None) => {
            crate::outln!("provider: builtin (offline; no model is called)");
            return Outcome::ok();
        }
        Err(failed) => return Outcome::failed(failed.line()),
    };
    let schemas = match stage_schemas(project) {
        Ok(s) => s,
        Err(d) => return Outcome::invalid(d),
    };
    let r = engine::llm::check(provider.as_ref(), &schemas).await;
    crate::outln!(
        "provider: {}\nmodel:    {}\nlatency:  {} ms",
        r.provider,
        r.model,
        r.latency_ms
    );
    if let Some(e) = r.error {
        return Outcome::failed(format!("status:   failed: {e}"));
    }
    let mut failed = 0;
    for (name, error) in &r.schemas {
        match error {
            None => crate::outln!("schema:   {name} accepted"),
            Some(e) => {
                failed += 1;
                crate::outln!("schema:   {name} failed: {e}");
            }
        }
    }
    if failed > 0 {
        return Outcome::failed(format!(
            "status:   failed: {failed} of {} stage schemas were not accepted; the stages using them would fail",
            r.schemas.len()
        ));
    }
    crate::outln!("status:   ok");
    Outcome::ok()
}

/// The schemas `llm` stages gate their answers with, in every pipeline of
/// the project (overrides included), each once.
fn stage_schemas(project: &Project) -> Result<Vec<(String, serde_json::Value)>, engine::diagnostic::Diagnostics> {
    let layers = project.layers(&[])?;
    let mut compiler = project.compiler(&layers);
    let mut out: Vec<(String, serde_json::Value)> = Vec::new();
    for name in compiler.pipeline_names() {
        let pipeline = compiler.compile(&name)?;
        for (gate_file, schema) in pipeline.llm_gates() {
            // Named as the stage names it on the wire (`search-routing`).
            let file = gate_file.rsplit('/').next().unwrap_or(gate_file);
            let stem = file.trim_end_matches(".json").trim_end_matches(".schema").to_owned();
            if !out.iter().any(|(n, _)| *n == stem) {
                out.push((stem, schema.clone()));
            }
        }
    }
    Ok(out)
}
