//! Every tier, bonus, cap, strategy range and threshold, on the embedded
//! data/source-tiers.yml and data/official-domains.yml.

use super::*;
use crate::websearch::strategy::technologies;

fn data() -> (SourceTiers, Vec<Technology>) {
    let resources = crate::project::resources(None);
    (
        SourceTiers::load(&resources).unwrap(),
        technologies(&resources).unwrap(),
    )
}

fn result(url: &str) -> WebResult {
    WebResult {
        title: "t".into(),
        url: url.into(),
        ..Default::default()
    }
}

/// (tier, score) of `r` under strategy `kind` for `query`.
fn score(kind: &str, query: &str, r: WebResult) -> Option<(u8, u32)> {
    let (data, techs) = data();
    let c = Classifier::new(&data, data.strategy(kind).unwrap(), &techs, query);
    c.classify(r).map(|r| (r.tier, r.reliability_score))
}

fn days_ago(n: i64) -> String {
    (time::OffsetDateTime::now_utc().date() - time::Duration::days(n)).to_string()
}

/// best-practice states no ranges: these are source-filters.md's own scores.
#[test]
fn source_filters_tiers_bases_bonuses_and_caps() {
    let s = |url: &str| score("best-practice", "react hooks", result(url)).unwrap();
    // Tier 1: rules, official domains, docs.*, .org (+5), docs. (+3), official GitHub (+2), cap 100.
    assert_eq!(s("https://docs.python.org/3/library/asyncio.html"), (1, 100));
    assert_eq!(s("https://react.dev/learn"), (1, 95));
    assert_eq!(s("https://ko.reactjs.org/docs/hooks-intro.html"), (1, 100));
    assert_eq!(s("https://kubernetes.io/docs/concepts/"), (1, 90));
    assert_eq!(s("https://www.python.org/about/"), (1, 95));
    assert_eq!(s("https://docs.rs/serde"), (1, 93));
    assert_eq!(s("https://docs.unity3d.com/Manual/index.html"), (1, 93));
    assert_eq!(s("https://github.com/facebook/react/issues"), (1, 92));
    // Tier 2: official examples (+8), blog of an official domain (+10), platforms (+5), cap 89.
    assert_eq!(
        s("https://github.com/vercel/next.js/tree/canary/examples/blog"),
        (2, 78)
    );
    assert_eq!(s("https://blog.reactjs.org/2020/01/x.html"), (2, 89));
    assert_eq!(s("https://nodejs.org/blog/release/v20.0.0"), (2, 80));
    assert_eq!(s("https://vercel.com/guides/nextjs"), (2, 89));
    assert_eq!(s("https://www.netlify.com/blog/"), (2, 75));
    assert_eq!(s("https://blog.cloudflare.com/post"), (2, 70));
    // Tier 3: rule bases, plain community hosts.
    assert_eq!(s("https://stackoverflow.com/questions/1"), (3, 65));
    assert_eq!(s("https://dev.to/someone/post"), (3, 60));
    assert_eq!(s("https://www.reddit.com/r/reactjs/"), (3, 50));
    // Tier 4: well-known (+15), platforms, anything else.
    assert_eq!(s("https://overreacted.io/a-complete-guide-to-useeffect/"), (4, 45));
    assert_eq!(s("https://medium.com/@a/hooks"), (4, 40));
    assert_eq!(s("https://velog.io/@a/hooks"), (4, 30));
    assert_eq!(s("https://someone.example.com/hooks"), (4, 30));
    assert_eq!(s("https://github.com/someone/react"), (4, 30));
}

#[test]
fn metadata_feeds_bonuses_and_absent_metadata_gives_none() {
    let with = |url: &str, f: &dyn Fn(&mut WebResult)| {
        let mut r = result(url);
        f(&mut r);
        score("best-practice", "q", r).unwrap()
    };
    let so = "https://stackoverflow.com/questions/1";
    assert_eq!(with(so, &|r| r.votes = Some(39.0)), (3, 68));
    assert_eq!(with(so, &|r| r.votes = Some(1000.0)), (3, 69)); // +15 at most, cap 69
    assert_eq!(with("https://dev.to/a/b", &|r| r.reactions = Some(249.0)), (3, 64));
    assert_eq!(with("https://dev.to/a/b", &|r| r.reactions = Some(5000.0)), (3, 69)); // +10 at most
    let reddit = "https://reddit.com/r/x";
    assert_eq!(with(reddit, &|r| r.published_at = Some(days_ago(10))), (3, 55));
    assert_eq!(with(reddit, &|r| r.published_at = Some(days_ago(400))), (3, 50));
    assert_eq!(
        with(reddit, &|r| r.published_at =
            Some(format!("{}T10:00:00Z", days_ago(365)))),
        (3, 55)
    );
    assert_eq!(with("https://medium.com/@a/b", &|r| r.claps = Some(550.0)), (4, 45));
    assert_eq!(
        with("https://medium.com/@a/b", &|r| {
            r.claps = Some(5000.0);
            r.published_at = Some(days_ago(1));
        }),
        (4, 49)
    );
    // 180 days for tier 4; votes only count on their host.
    assert_eq!(
        with("https://velog.io/@a/b", &|r| r.published_at = Some(days_ago(200))),
        (4, 30)
    );
    assert_eq!(with("https://velog.io/@a/b", &|r| r.votes = Some(500.0)), (4, 30));
    assert_eq!(
        with("https://velog.io/@a/b", &|r| r.published_at = Some("garbage".into())),
        (4, 30)
    );
}

#[test]
fn an_org_domain_named_in_the_query_is_official() {
    let url = "https://godotengine.org/article/x";
    assert_eq!(
        score("best-practice", "godotengine physics", result(url)),
        Some((1, 95))
    );
    assert_eq!(score("best-practice", "physics", result(url)), Some((4, 30)));
}

#[test]
fn invalid_urls_are_dropped() {
    assert_eq!(score("comprehensive", "q", result("ftp://example.com/x")), None);
    assert_eq!(score("comprehensive", "q", result("not a url")), None);
}

#[test]
fn strategy_ranges_rule_for_their_strategy() {
    let s = |kind: &str, url: &str| score(kind, "react hooks", result(url)).unwrap();
    // official: tier 1 95-100, tier 2 90-94, official GitHub repositories tier 2.
    assert_eq!(s("official", "https://kubernetes.io/docs/"), (1, 95));
    assert_eq!(s("official", "https://docs.python.org/3/"), (1, 100));
    assert_eq!(s("official", "https://github.com/facebook/react"), (2, 90));
    assert_eq!(s("official", "https://blog.reactjs.org/x"), (2, 94));
    // comprehensive: 95-100 / 90-94 / 70-79 / 60-69; unrecognised hosts keep their score.
    assert_eq!(s("comprehensive", "https://react.dev/learn"), (1, 98));
    assert_eq!(s("comprehensive", "https://stackoverflow.com/q/1"), (3, 77));
    assert_eq!(s("comprehensive", "https://www.reddit.com/r/x"), (3, 70));
    assert_eq!(s("comprehensive", "https://medium.com/@a/x"), (4, 65));
    assert_eq!(s("comprehensive", "https://velog.io/@a/x"), (4, 60));
    assert_eq!(s("comprehensive", "https://someone.example.com/x"), (4, 30));
}

/// Each strategy's minimum, on each side: classified results, then the exact boundary.
#[test]
fn thresholds_keep_and_drop_on_each_side() {
    let (data, techs) = data();
    let keeps = |kind: &str, r: &WebResult| {
        Classifier::new(&data, data.strategy(kind).unwrap(), &techs, "react hooks").keeps(r)
    };
    let classified = |kind: &str, url: &str| {
        Classifier::new(&data, data.strategy(kind).unwrap(), &techs, "react hooks")
            .classify(result(url))
            .unwrap()
    };
    let at = |tier: u8, score: u32| WebResult {
        tier,
        reliability_score: score,
        url: "https://velog.io/x".into(),
        ..Default::default()
    };
    // official (90, tiers 1-2).
    assert!(keeps(
        "official",
        &classified("official", "https://github.com/facebook/react")
    ));
    assert!(!keeps(
        "official",
        &classified("official", "https://stackoverflow.com/q/1")
    ));
    assert!(keeps("official", &at(2, 90)));
    assert!(!keeps("official", &at(2, 89)));
    assert!(!keeps("official", &at(3, 95)));
    // comprehensive (60).
    assert!(keeps(
        "comprehensive",
        &classified("comprehensive", "https://velog.io/@a/x")
    ));
    assert!(!keeps(
        "comprehensive",
        &classified("comprehensive", "https://someone.example.com/x")
    ));
    assert!(keeps("comprehensive", &at(3, 60)));
    assert!(!keeps("comprehensive", &at(3, 59)));
    // best-practice (30; tier 4 only from well-known developers).
    assert!(keeps(
        "best-practice",
        &classified("best-practice", "https://overreacted.io/x")
    ));
    assert!(!keeps(
        "best-practice",
        &classified("best-practice", "https://velog.io/@a/x")
    ));
    assert!(keeps("best-practice", &at(3, 30)));
    assert!(!keeps("best-practice", &at(3, 29)));
}
