//! `websearch.dedupe` and `websearch.rank`: URL normalisation
//! (`docs/contracts.md#url-dedupe`) and the stable sort by tier then score,
//! per-tier caps and the strategy's limit (`docs/contracts.md#source-tiers`).

use std::collections::{BTreeMap, HashSet};

use reqwest::Url;

use super::result::WebResult;
use super::tiers::{base_host, StrategyRules};

/// The form two URLs share when they are the same page: no scheme, no `www.`
/// or language label, no trailing slash, a lower-case path, no fragment, and
/// no tracking parameter (`tracking`: names, `*` ending a prefix). Other
/// query parameters stay, in order. `None` for what is not a URL.
pub fn normalise(url: &str, tracking: &[String]) -> Option<String> {
    let parsed = Url::parse(url.trim()).ok()?;
    let mut out = base_host(parsed.host_str()?);
    if let Some(port) = parsed.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push_str(parsed.path().trim_end_matches('/').to_lowercase().as_str());
    let kept: Vec<String> = parsed
        .query_pairs()
        .filter(|(k, _)| !is_tracking(k, tracking))
        .map(|(k, v)| {
            if v.is_empty() {
                k.into_owned()
            } else {
                format!("{k}={v}")
            }
        })
        .collect();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    Some(out)
}

fn is_tracking(key: &str, tracking: &[String]) -> bool {
    let key = key.to_lowercase();
    tracking.iter().any(|t| match t.strip_suffix('*') {
        Some(prefix) => key.starts_with(&prefix.to_lowercase()),
        None => key == t.to_lowercase(),
    })
}

/// The first of each set of results whose URLs normalise alike, in order;
/// results whose URL does not parse are dropped too.
pub fn dedupe(results: Vec<WebResult>, tracking: &[String]) -> (Vec<WebResult>, usize) {
    let mut seen = HashSet::new();
    let before = results.len();
    let kept: Vec<WebResult> = results
        .into_iter()
        .filter(|r| normalise(&r.url, tracking).is_some_and(|n| seen.insert(n)))
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

/// Stable sort by tier, then score (highest first), then the order found;
/// then each tier's cap and the strategy's limit.
pub fn rank(mut results: Vec<WebResult>, rules: &StrategyRules) -> Vec<WebResult> {
    results.sort_by(|a, b| a.tier.cmp(&b.tier).then(b.reliability_score.cmp(&a.reliability_score)));
    let mut per_tier: BTreeMap<u8, usize> = BTreeMap::new();
    results
        .into_iter()
        .filter(|r| {
            let n = per_tier.entry(r.tier).or_default();
            *n += 1;
            rules.per_tier.get(&r.tier).is_none_or(|cap| *n <= *cap)
        })
        .take(rules.limit)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracking() -> Vec<String> {
        ["utm_*", "fbclid", "gclid"].map(String::from).to_vec()
    }

    #[test]
    fn scheme_slash_fragment_and_tracking_are_the_same_page() {
        let n = |u: &str| normalise(u, &tracking()).unwrap();
        let same = [
            "https://example.com/page",
            "http://example.com/page",
            "https://example.com/page/",
            "https://example.com/page#section",
            "https://www.example.com/Page?utm_source=x&utm_medium=y",
            "https://example.com/page?fbclid=abc",
        ];
        for u in same {
            assert_eq!(n(u), "example.com/page", "{u}");
        }
        assert_eq!(n("https://www.React.dev/blog/"), "react.dev/blog");
        assert_eq!(n("http://nodejs.org/api/?utm_source=twitter"), "nodejs.org/api");
        assert_eq!(n("https://ko.reactjs.org/docs"), "reactjs.org/docs");
        assert_ne!(n("https://q.com/a?id=1"), n("https://q.com/a?id=2"));
        assert_eq!(n("https://q.com/a?id=1&utm_campaign=z"), "q.com/a?id=1");
        assert_eq!(normalise("not a url", &tracking()), None);
    }

    #[test]
    fn dedupe_keeps_the_first() {
        let r = |url: &str, title: &str| WebResult {
            url: url.into(),
            title: title.into(),
            ..Default::default()
        };
        let (kept, dropped) = dedupe(
            vec![
                r("https://a.com/x", "first"),
                r("http://a.com/x/", "second"),
                r("https://b.com/", "b"),
                r("https://a.com/x#frag", "third"),
                r("::bad::", "bad"),
            ],
            &tracking(),
        );
        assert_eq!(
            kept.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(),
            ["first", "b"]
        );
        assert_eq!(dropped, 3);
    }

    #[test]
    fn rank_is_stable_by_tier_then_score_with_caps_and_limit() {
        let r = |title: &str, tier: u8, score: u32| WebResult {
            title: title.into(),
            url: format!("https://{title}.com"),
            tier,
            reliability_score: score,
            ..Default::default()
        };
        let rules = StrategyRules {
            min_score: 0,
            limit: 4,
            tiers: vec![1, 2, 3, 4],
            ranges: Default::default(),
            per_tier: [(3, 1)].into_iter().collect(),
            min_official: None,
            official_github_tier: None,
            well_known_only_in_tier_4: false,
        };
        let out = rank(
            vec![
                r("c1", 3, 60),
                r("a", 2, 80),
                r("b", 1, 92),
                r("c2", 3, 65),
                r("d", 2, 80),
                r("e", 1, 95),
            ],
            &rules,
        );
        let titles: Vec<&str> = out.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(titles, ["e", "b", "a", "d"]);
        let rules = StrategyRules { limit: 10, ..rules };
        let out = rank(vec![r("c1", 3, 60), r("c2", 3, 65)], &rules);
        assert_eq!(out.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(), ["c2"]);
    }
}
