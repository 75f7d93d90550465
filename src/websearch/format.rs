//! `websearch.format`: the answer in one of the layouts (summary,
//! detailed, progressive, and the no-results and failed blocks), rendered
//! from `prompts/web-search/formats/<layout>.j2`, with the result document.

use engine::resources::Resources;
use serde::Deserialize;
use serde_json::{json, Value};

use super::backends::Failure;
use super::result::WebResult;
use super::tiers::SourceTiers;

/// Results the summary and progressive formats show first ("Top 5").
const TOP: usize = 5;
/// The summary's answer is at most this many words
/// (`docs/contracts.md#web-search-formats`).
const ANSWER_WORDS: usize = 50;

/// A page the `fetch` stage read (or failed to).
#[derive(Debug, Deserialize)]
pub struct Fetched {
    pub url: String,
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
}

/// What the `summarise` stage made of one page.
#[derive(Debug, Clone, Deserialize)]
pub struct PageSummary {
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub points: Vec<String>,
}

/// A fetched page with its summary.
struct Page<'a> {
    fetched: &'a Fetched,
    summary: Option<&'a PageSummary>,
}

#[derive(Debug, Deserialize)]
pub struct FormatArgs {
    /// summary | detailed | progressive | no-results | failed
    pub layout: String,
    pub query: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub format: String,
    #[serde(default)]
    pub rewritten_query: Option<String>,
    #[serde(default)]
    pub queries: Vec<String>,
    #[serde(default)]
    pub backend: Option<String>,
    #[serde(default)]
    pub results: Vec<WebResult>,
    /// `detailed`: the fetched pages, and the summaries of those that were read, in order.
    #[serde(default)]
    pub pages: Vec<Fetched>,
    #[serde(default)]
    pub summaries: Vec<Option<PageSummary>>,
    /// The summary format's answer (the `digest` stage).
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub failures: Vec<Failure>,
}

/// The result document (`--json` prints it; schemas/web-search-result.schema.json),
/// its `answer` the rendered layout.
pub fn format(a: FormatArgs, resources: &Resources) -> anyhow::Result<Value> {
    let data = SourceTiers::load(resources)?;
    let rel = format!("prompts/web-search/formats/{}.j2", a.layout);
    let template = resources
        .get(&rel)?
        .ok_or_else(|| anyhow::anyhow!("the format template {rel} is missing"))?;
    let pages = pages(&a);
    let scope = scope(&a, &pages, &data);
    let answer = engine::template::environment()
        .render_str(&template.text, engine::template::json_view(std::sync::Arc::new(scope)))
        .map_err(|e| anyhow::anyhow!("{}: {e:#}", template.origin))?;
    let status = match a.layout.as_str() {
        "no-results" => "no_results",
        "failed" => "failed",
        _ => "ok",
    };
    let pages: Vec<Value> = pages
        .iter()
        .map(|p| {
            let s = p.summary;
            json!({"url": p.fetched.url, "ok": p.fetched.ok, "error": p.fetched.error,
                   "summary": s.map(|s| &s.summary), "points": s.map(|s| &s.points)})
        })
        .collect();
    Ok(json!({
            "query": a.query,
            "rewritten_query": a.rewritten_query,
            "queries": a.queries,
            "type": a.kind,
            "format": a.format,
            "status": status,
            "backend": a.backend,
            "results": a.results,
            "pages": pages,
            "skipped_backends": a.failures,
            "answer": answer.trim_end(),
    }))
}

/// Each fetched page with its summary: `summaries` follow the pages read, in order.
fn pages(a: &FormatArgs) -> Vec<Page<'_>> {
    let mut summaries = a.summaries.iter();
    a.pages
        .iter()
        .map(|fetched| Page {
            fetched,
            summary: if fetched.ok {
                summaries.next().and_then(Option::as_ref)
            } else {
                None
            },
        })
        .collect()
}

fn scope(a: &FormatArgs, pages: &[Page<'_>], data: &SourceTiers) -> Value {
    let page = |url: &str| pages.iter().find(|p| p.fetched.url == url);
    let shown: Vec<Value> = a
        .results
        .iter()
        .map(|r| {
            let p = page(&r.url);
            let summary = p.and_then(|p| p.summary).filter(|s| !s.summary.is_empty());
            let info = &data.tiers[&r.tier.clamp(1, 4)];
            json!({
                "title": link_text(&r.title),
                "url": link_url(&r.url),
                "snippet": r.snippet,
                "line": first_sentence(&r.snippet),
                "tier": r.tier,
                "reliability_score": r.reliability_score,
                "source": r.source,
                "caution": info.caution,
                "summary": summary.map_or(&r.snippet, |s| &s.summary),
                "points": summary.map(|s| s.points.clone()).unwrap_or_default(),
                "page_error": p.and_then(|p| p.fetched.error.clone()),
            })
        })
        .collect();
    let mut tiers = Vec::new();
    let mut tier_counts = [0usize; 4];
    for (t, info) in &data.tiers {
        let members: Vec<Value> = shown.iter().filter(|r| r["tier"] == json!(t)).cloned().collect();
        if let Some(n) = tier_counts.get_mut(usize::from(*t).wrapping_sub(1)) {
            *n = members.len();
        }
        if !members.is_empty() {
            tiers.push(json!({
                "tier": t, "label": info.label, "count": members.len(), "strength": info.strength,
                "limit": info.limit, "caution": info.caution, "results": members,
            }));
        }
    }
    let counts_line = tiers
        .iter()
        .map(|g| format!("Tier {}: {}개", g["tier"], g["count"]))
        .collect::<Vec<_>>()
        .join(", ");
    let top: Vec<Value> = shown.iter().take(TOP).cloned().collect();
    let quoted = a.query.replace('"', "\\\"");
    let command =
        |kind: &str, format: &str| format!("unity-assets web-search \"{quoted}\" --type {kind} --format {format}");
    json!({
        "query": a.query,
        "type": a.kind,
        "format": a.format,
        "rewritten_query": a.rewritten_query,
        "backend": a.backend,
        "digest": digest(a),
        "results": shown,
        "top": top,
        "tiers": tiers,
        "tier_counts": tier_counts,
        "total": a.results.len(),
        "counts_line": counts_line,
        "cautioned": top.iter().any(|r| r["caution"] == json!(true)),
        "overview": overview(a, data),
        "failures": a.failures,
        "commands": {
            "official": command("official", "detailed"),
            "examples": command("best-practice", "summary"),
            "community": command("comprehensive", "detailed"),
        },
    })
}

/// The summary's answer: the digest, at most 50 words.
fn digest(a: &FormatArgs) -> String {
    let text = a.digest.clone().filter(|d| !d.trim().is_empty()).unwrap_or_else(|| {
        a.results
            .first()
            .map(|r| first_sentence(&r.snippet))
            .unwrap_or_default()
    });
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= ANSWER_WORDS {
        words.join(" ")
    } else {
        format!("{}…", words[..ANSWER_WORDS].join(" "))
    }
}

/// The detailed format's overview: what was found, and what to read first.
fn overview(a: &FormatArgs, data: &SourceTiers) -> String {
    let Some(best) = a.results.first() else {
        return String::new();
    };
    let counts: Vec<String> = data
        .tiers
        .iter()
        .filter_map(|(t, info)| {
            let n = a.results.iter().filter(|r| r.tier == *t).count();
            (n > 0).then(|| format!("{} {n}개", info.label))
        })
        .collect();
    let mut text = format!(
        "{}개 출처({})를 찾았습니다. 신뢰도가 가장 높은 「{}」({}/100)부터 읽으세요.",
        a.results.len(),
        counts.join(", "),
        best.title,
        best.reliability_score
    );
    if a.results.iter().any(|r| data.tiers[&r.tier.clamp(1, 4)].caution) {
        text.push_str(" tier 3 이하 자료는 공식 문서와 교차 검증한 뒤 참고하세요.");
    }
    text
}

fn first_sentence(text: &str) -> String {
    let end = text
        .char_indices()
        .find(|(i, c)| matches!(c, '.' | '!' | '?' | '。') && text[i + c.len_utf8()..].starts_with(' '))
        .map(|(i, c)| i + c.len_utf8());
    text[..end.unwrap_or(text.len())].trim().to_owned()
}

/// A title safe inside `[…]` of a markdown link.
fn link_text(title: &str) -> String {
    title.replace('[', "(").replace(']', ")")
}

/// A URL safe inside `(…)` of a markdown link.
fn link_url(url: &str) -> String {
    url.replace(' ', "%20").replace('(', "%28").replace(')', "%29")
}
