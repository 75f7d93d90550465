//! Web search: the native pieces `pipelines/web-search.yaml` calls (rules in
//! `docs/contracts.md`, sections `web-search-*`, `source-tiers`, `url-dedupe`).
//!
//! One idea per module: [`validate`] the input, [`strategy`] renders the
//! queries of the search type, [`backends`] runs the backend chain, [`tiers`]
//! classifies and scores sources, [`rank`] normalises, de-duplicates, sorts
//! and limits, [`fetch`] and [`summarise`] read pages for `detailed`, and
//! [`mod@format`] renders the answer. The pipeline owns the flow; thresholds,
//! limits, domain lists, strategies and layouts live in data and prompt files.

pub(crate) mod backends;
pub(crate) mod config;
pub(crate) mod fetch;
pub(crate) mod format;
pub(crate) mod html;
pub(crate) mod rank;
pub(crate) mod result;
pub(crate) mod strategy;
pub(crate) mod summarise;
pub(crate) mod tiers;
pub(crate) mod validate;

use std::time::Duration;

use engine::{CallContext, Reach, Registry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use config::WebSearchConfig;
use result::WebResult;
use tiers::{Classifier, SourceTiers};

#[derive(Deserialize)]
struct ValidateArgs {
    query: String,
    #[serde(rename = "type")]
    kind: String,
    format: String,
}

#[derive(Deserialize)]
struct StrategyArgs {
    query: String,
    #[serde(rename = "type")]
    kind: String,
    max_results: usize,
}

#[derive(Deserialize)]
struct BackendsArgs {
    /// `params.web_search`: the one place backends are configured.
    settings: Value,
    queries: Vec<String>,
    prompt: String,
}

#[derive(Deserialize)]
struct ResultsArgs {
    #[serde(default)]
    query: String,
    #[serde(rename = "type")]
    kind: String,
    results: Vec<WebResult>,
}

#[derive(Serialize)]
struct ResultsOut {
    results: Vec<WebResult>,
    /// How many this step removed.
    removed: usize,
    /// A line for the user, if the step has one.
    line: Option<String>,
}

#[derive(Deserialize)]
struct FetchArgs {
    url: String,
    #[serde(default)]
    title: String,
    max_bytes: u64,
    timeout_s: u64,
    /// `web_search.allow_private_addresses` (absent in an older copy of the pipeline: off).
    #[serde(default)]
    allow_private_addresses: bool,
}

/// The tier data and the strategy's rules for one call.
fn classifier_parts(ctx: &CallContext) -> anyhow::Result<(SourceTiers, Vec<strategy::Technology>)> {
    Ok((
        SourceTiers::load(&ctx.resources)?,
        strategy::technologies(&ctx.resources)?,
    ))
}

/// Register the web search functions and the `summarise` builtin.
pub fn register(registry: &mut Registry) {
    registry
        .function(
            "websearch.validate",
            Reach::NONE,
            "query of 3+ characters, a known type and format",
            |a: ValidateArgs, _| Ok(validate::validate(&a.query, &a.kind, &a.format)),
        )
        .function(
            "websearch.strategy",
            Reach::NONE,
            "the type's strategy file renders the queries; official adds site: and latest",
            |a: StrategyArgs, ctx| Ok(strategy::render(&a.query, &a.kind, a.max_results, &ctx.resources)?),
        )
        .async_function(
            "websearch.backends",
            Reach::ALL,
            "searxng / brave / tavily / command in the configured order until one answers",
            |a: BackendsArgs, ctx| async move {
                let cfg = WebSearchConfig::from_params(a.settings)?;
                let request = backends::Request {
                    queries: &a.queries,
                    prompt: &a.prompt,
                    output: &ctx.output,
                    max_answer_bytes: ctx.limits.http_bytes,
                };
                Ok(backends::search(&cfg, &request).await)
            },
        )
        .function(
            "websearch.classify",
            Reach::NONE,
            "tier 1-4 and a 0-100 reliability score per result (data/source-tiers.yml)",
            |a: ResultsArgs, ctx| {
                let (data, techs) = classifier_parts(ctx)?;
                let c = Classifier::new(&data, data.strategy(&a.kind)?, &techs, &a.query);
                let before = a.results.len();
                let results: Vec<WebResult> = a.results.into_iter().filter_map(|r| c.classify(r)).collect();
                let removed = before - results.len();
                Ok(ResultsOut {
                    line: (removed > 0).then(|| {
                        format!("[unity-assets:web-search] {removed} result(s) without a valid http(s) URL dropped")
                    }),
                    results,
                    removed,
                })
            },
        )
        .function(
            "websearch.filter",
            Reach::NONE,
            "drop tiers the strategy excludes and scores under its minimum (90/60/30)",
            |a: ResultsArgs, ctx| {
                let (data, techs) = classifier_parts(ctx)?;
                let c = Classifier::new(&data, data.strategy(&a.kind)?, &techs, &a.query);
                let before = a.results.len();
                let results: Vec<WebResult> = a.results.into_iter().filter(|r| c.keeps(r)).collect();
                Ok(ResultsOut {
                    removed: before - results.len(),
                    results,
                    line: None,
                })
            },
        )
        .function(
            "websearch.dedupe",
            Reach::NONE,
            "normalise URLs (scheme, www, slash, fragment, tracking parameters); keep the first",
            |a: ResultsArgs, ctx| {
                let data = SourceTiers::load(&ctx.resources)?;
                let (results, removed) = rank::dedupe(a.results, &data.tracking_params);
                Ok(ResultsOut {
                    results,
                    removed,
                    line: None,
                })
            },
        )
        .function(
            "websearch.rank",
            Reach::NONE,
            "stable sort by tier, score, order found; per-tier caps; limit 10/20/10",
            |a: ResultsArgs, ctx| {
                let data = SourceTiers::load(&ctx.resources)?;
                let rules = data.strategy(&a.kind)?;
                let before = a.results.len();
                let results = rank::rank(a.results, rules);
                let official = |t: u8| results.iter().filter(|r| r.tier == t).count();
                let line = rules
                    .min_official
                    .filter(|&n| !results.is_empty() && (official(1) < n || official(2) < n))
                    .map(|_| "[unity-assets:web-search] 공식 출처 부족 - 추가 검색 필요".to_owned());
                Ok(ResultsOut {
                    removed: before - results.len(),
                    results,
                    line,
                })
            },
        )
        .async_function(
            "websearch.fetch",
            Reach::NETWORK,
            "one page over HTTP within size and time limits, as text (detailed)",
            |a: FetchArgs, ctx| async move {
                let limits = fetch::Limits {
                    max_bytes: a.max_bytes,
                    timeout: Duration::from_secs(a.timeout_s),
                    allow_private_addresses: a.allow_private_addresses,
                };
                let page = fetch::fetch(&a.url, &a.title, &limits).await;
                if let Some(e) = &page.error {
                    ctx.output.line(&format!(
                        "[unity-assets:web-search] page not summarised: {} — {e}",
                        a.url
                    ));
                }
                Ok(page)
            },
        )
        .builtin(
            "websearch.summarise",
            "extractive summary: the text's most query-relevant sentences",
            |a: summarise::SummariseArgs, _| Ok(summarise::summarise(&a)),
        )
        .function(
            "websearch.format",
            Reach::NONE,
            "the answer in the chosen layout (prompts/web-search/formats/) and the result document",
            |a: format::FormatArgs, ctx| Ok(format::format(a, &ctx.resources)?),
        );
}
