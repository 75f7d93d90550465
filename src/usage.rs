//! What a run's model calls cost: requests and tokens per provider/model
//! (from the run report, failed requests included) priced from the editable
//! table `data/llm-prices.yml`.

use std::collections::BTreeMap;

use engine::resources::Resources;
use engine::RunReport;
use serde::{Deserialize, Serialize};

pub const PRICES: &str = "data/llm-prices.yml";

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    models: BTreeMap<String, Price>,
}

impl Prices {
    /// The project's table (or the embedded one); an unreadable table is an
    /// error naming the file, as costs are not guessed.
    pub fn load(resources: &Resources) -> Result<Self, String> {
        let res = resources
            .get(PRICES)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{PRICES} is missing"))?;
        serde_yaml::from_str(&res.text).map_err(|e| format!("{}: {e}", res.origin))
    }

    /// The price of `model` (as served): the longest listed name it starts with.
    pub fn of(&self, model: &str) -> Option<Price> {
        self.models
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| *p)
    }
}

/// One provider/model's share of a run.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCost {
    /// `provider/model`.
    pub model: String,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// None when the price table does not list the model.
    pub estimated_cost_usd: Option<f64>,
}

pub fn costs(report: &RunReport, prices: &Prices) -> Vec<ModelCost> {
    report
        .usage_by_model()
        .into_iter()
        .map(|(key, u)| {
            let model = key.split_once('/').map_or(key.as_str(), |(_, m)| m);
            let t = u.tokens;
            let estimated_cost_usd = prices.of(model).map(|p| {
                (t.input_tokens as f64 * p.input
                    + t.output_tokens as f64 * p.output
                    + t.cache_read_tokens as f64 * p.cache_read.unwrap_or(p.input)
                    + t.cache_write_tokens as f64 * p.cache_write.unwrap_or(p.input))
                    / 1e6
            });
            ModelCost {
                model: key,
                calls: u.calls,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
                cache_read_tokens: t.cache_read_tokens,
                cache_write_tokens: t.cache_write_tokens,
                estimated_cost_usd,
            }
        })
        .collect()
}

/// The `-v` summary: one clause per model, then the total and the answers
/// reused in the run; `None` when no model was called.
pub fn summary_line(costs: &[ModelCost], reused: u64) -> Option<String> {
    if costs.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = costs
        .iter()
        .map(|c| {
            let cost = c
                .estimated_cost_usd
                .map_or_else(|| format!("no price in {PRICES}"), |usd| format!("≈ ${usd:.4}"));
            format!(
                "{}: {} call{}, {} in / {} out tokens, {} cache reads, {cost}",
                c.model,
                c.calls,
                if c.calls == 1 { "" } else { "s" },
                c.input_tokens,
                c.output_tokens,
                c.cache_read_tokens
            )
        })
        .collect();
    let total: f64 = costs.iter().filter_map(|c| c.estimated_cost_usd).sum();
    parts.push(format!("total ≈ ${total:.4}"));
    if reused > 0 {
        parts.push(format!("{reused} answers reused, not sent again"));
    }
    Some(format!("[unity-assets] llm usage — {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_models_take_the_longest_listed_prefix_and_unlisted_ones_no_price() {
        let prices: Prices =
            serde_yaml::from_str("models: {gpt-4.1: {input: 2, output: 8}, gpt-4.1-mini: {input: 0.4, output: 1.6}}")
                .unwrap();
        assert_eq!(prices.of("gpt-4.1-mini-2025-04-14").unwrap().input, 0.4);
        assert_eq!(prices.of("gpt-4.1-2025-04-14").unwrap().input, 2.0);
        assert!(prices.of("llama3").is_none());
    }

    #[test]
    fn the_embedded_table_parses() {
        let prices = Prices::load(&crate::project::resources(None)).unwrap();
        assert!(prices.of("claude-sonnet-4-5").is_some() && prices.of("gpt-4.1").is_some());
    }
}
