//! The LLM provider: configured (key, command) and, unless offline, answering.

use std::sync::Arc;
use std::time::Duration;

use engine::io::Limits;
use engine::llm::{LlmConfig, Provider};

use super::Check;

const NAME: &str = "provider";

/// The configured provider (`None`: builtin), or the failed check saying
/// why it cannot be used. `providers check` starts with the same step.
pub fn connect(llm: &LlmConfig, concurrency: usize, limits: &Limits) -> Result<Option<Arc<dyn Provider>>, Check> {
    engine::llm::connect(llm, concurrency, limits, &crate::PRODUCT).map_err(|e| {
        Check::fail(
            NAME,
            e.to_string(),
            "set the key variable or llm.provider in .claude/unity-assets.yml",
        )
    })
}

pub async fn check(llm: &LlmConfig, limits: &Limits, offline: bool) -> Check {
    let provider = match connect(llm, 1, limits) {
        Ok(Some(p)) => p,
        Ok(None) => return Check::pass(NAME, "builtin (offline, no key needed)"),
        Err(failed) => return failed,
    };
    if offline {
        return Check::pass(
            NAME,
            format!(
                "{} configured (reachability not checked: --offline)",
                llm.provider.name()
            ),
        );
    }
    let report = tokio::time::timeout(
        Duration::from_secs(llm.timeout_s + 5),
        engine::llm::check(provider.as_ref(), &[]),
    )
    .await;
    match report {
        Ok(r) => match r.error {
            None => Check::pass(
                NAME,
                format!("{} {} answered in {} ms", r.provider, r.model, r.latency_ms),
            ),
            Some(e) => Check::fail(
                NAME,
                format!("{} {}: {e}", r.provider, r.model),
                "run `unity-assets providers check` for details",
            ),
        },
        Err(_) => Check::fail(NAME, "no answer in time", "check llm.base_url and the network"),
    }
}
