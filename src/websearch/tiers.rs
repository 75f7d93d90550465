//! `websearch.classify` and `websearch.filter`: source tiers and reliability
//! scores from `data/source-tiers.yml` (the rules are described there).

use std::collections::BTreeMap;

use engine::resources::Resources;
use reqwest::Url;
use serde::Deserialize;

use super::result::WebResult;
use super::strategy::Technology;

pub const SOURCE_TIERS: &str = "data/source-tiers.yml";

#[derive(Debug, Clone, Deserialize)]
pub struct SourceTiers {
    pub tiers: BTreeMap<u8, TierInfo>,
    pub rules: Vec<Rule>,
    pub official_domains: Vec<String>,
    pub official_github_orgs: Vec<String>,
    pub major_platforms: Vec<String>,
    pub community: Vec<String>,
    pub well_known: Vec<String>,
    pub personal: Vec<String>,
    pub bonuses: Bonuses,
    pub tracking_params: Vec<String>,
    pub strategies: BTreeMap<String, StrategyRules>,
}

#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct TierInfo {
    pub label: String,
    pub min: u32,
    pub max: u32,
    pub strength: String,
    pub limit: String,
    #[serde(default)]
    pub caution: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Rule {
    #[serde(rename = "match")]
    pub site: String,
    pub tier: u8,
    pub base: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Bonuses {
    pub org_domain: u32,
    pub docs_subdomain: u32,
    pub official_github: u32,
    pub official_blog: u32,
    pub examples: u32,
    pub major_platform: u32,
    pub well_known: u32,
    pub votes: MetaBonus,
    pub reactions: MetaBonus,
    pub claps: MetaBonus,
    pub recent: BTreeMap<u8, Recent>,
}

/// `min(value / per, max)` points for results from `hosts`.
#[derive(Debug, Clone, Deserialize)]
pub struct MetaBonus {
    pub hosts: Vec<String>,
    pub per: f64,
    pub max: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Recent {
    pub days: i64,
    pub points: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StrategyRules {
    pub min_score: u32,
    pub limit: usize,
    pub tiers: Vec<u8>,
    #[serde(default)]
    pub ranges: BTreeMap<u8, [u32; 2]>,
    #[serde(default)]
    pub per_tier: BTreeMap<u8, usize>,
    #[serde(default)]
    pub min_official: Option<usize>,
    #[serde(default)]
    pub official_github_tier: Option<u8>,
    #[serde(default)]
    pub well_known_only_in_tier_4: bool,
}

impl SourceTiers {
    pub fn load(resources: &Resources) -> anyhow::Result<Self> {
        let res = resources
            .get(SOURCE_TIERS)?
            .ok_or_else(|| anyhow::anyhow!("{SOURCE_TIERS} is missing"))?;
        let tiers: Self = serde_yaml::from_str(&res.text).map_err(|e| anyhow::anyhow!("{}: {e}", res.origin))?;
        for t in 1..=4 {
            anyhow::ensure!(tiers.tiers.contains_key(&t), "{}: tier {t} is missing", res.origin);
        }
        Ok(tiers)
    }

    pub fn strategy(&self, kind: &str) -> anyhow::Result<&StrategyRules> {
        self.strategies
            .get(kind)
            .ok_or_else(|| anyhow::anyhow!("{SOURCE_TIERS} has no `strategies.{kind}`"))
    }

    fn tier(&self, t: u8) -> &TierInfo {
        &self.tiers[&t.clamp(1, 4)]
    }
}

/// A URL's host and path as the rules see them.
struct Place {
    host: String,
    path: String,
}

impl Place {
    fn of(url: &str) -> Option<Self> {
        let url = Url::parse(url).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Self {
            host: base_host(url.host_str()?),
            path: url.path().to_lowercase(),
        })
    }

    /// `site` is a host (matching it and its subdomains) with an optional path prefix.
    fn is(&self, site: &str) -> bool {
        let (host, path) = match site.find('/') {
            Some(i) => (&site[..i], &site[i..]),
            None => (site, ""),
        };
        let host = host.to_lowercase();
        let host_ok = self.host == host || self.host.ends_with(&format!(".{host}"));
        let path = path.to_lowercase();
        host_ok
            && (path.is_empty()
                || self.path == path
                || self.path.starts_with(&format!("{}/", path.trim_end_matches('/'))))
    }

    fn any(&self, sites: &[String]) -> bool {
        sites.iter().any(|s| self.is(s))
    }

    /// The GitHub organisation of a github.com URL.
    fn github_org(&self) -> Option<&str> {
        (self.host == "github.com").then(|| self.path.trim_start_matches('/').split('/').next())?
    }
}

/// Lower-case, without `www.` and without a two-letter language label
/// (`ko.reactjs.org` → `reactjs.org`) while two labels remain.
pub fn base_host(host: &str) -> String {
    let host = host.to_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() >= 3 && labels[0].len() == 2 && labels[0].chars().all(|c| c.is_ascii_lowercase()) {
        labels[1..].join(".")
    } else {
        host
    }
}

/// How a result was placed in its tier.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Why {
    Rule,
    Official,
    OfficialGithub,
    OfficialExamples,
    Docs,
    Blog,
    ProjectOrg,
    Platform,
    Community,
    WellKnown,
    Personal,
    Unknown,
}

pub struct Classifier<'a> {
    pub data: &'a SourceTiers,
    pub strategy: &'a StrategyRules,
    /// Official sites of data/official-domains.yml (all technologies).
    pub tech_sites: Vec<String>,
    pub query: String,
    pub today: time::Date,
}

impl<'a> Classifier<'a> {
    pub fn new(data: &'a SourceTiers, strategy: &'a StrategyRules, techs: &[Technology], query: &str) -> Self {
        Self {
            data,
            strategy,
            tech_sites: techs.iter().flat_map(|t| t.sites.clone()).collect(),
            query: query.to_lowercase(),
            today: time::OffsetDateTime::now_utc().date(),
        }
    }

    fn official(&self, p: &Place) -> bool {
        p.any(&self.data.official_domains) || self.tech_sites.iter().any(|s| !s.starts_with("github.com/") && p.is(s))
    }

    fn official_org(&self, org: &str) -> bool {
        let org = org.to_lowercase();
        self.data.official_github_orgs.iter().any(|o| o.to_lowercase() == org)
            || self
                .tech_sites
                .iter()
                .filter_map(|s| s.strip_prefix("github.com/"))
                .any(|s| s.split('/').next().is_some_and(|o| o.to_lowercase() == org))
    }

    fn place(&self, p: &Place) -> (u8, u32, Why) {
        let min = |t: u8| self.data.tier(t).min;
        if let Some(r) = self.data.rules.iter().find(|r| p.is(&r.site)) {
            return (r.tier, r.base, Why::Rule);
        }
        if self.official(p) {
            return (1, min(1), Why::Official);
        }
        if p.github_org().is_some_and(|o| self.official_org(o)) {
            if p.path.split('/').any(|s| s == "examples") {
                return (2, min(2), Why::OfficialExamples);
            }
            let t = self.strategy.official_github_tier.unwrap_or(1);
            return (t, min(t), Why::OfficialGithub);
        }
        if p.host.starts_with("docs.") {
            return (1, min(1), Why::Docs);
        }
        if p.host.starts_with("blog.") {
            return (2, min(2), Why::Blog);
        }
        if let Some(name) = p.host.strip_suffix(".org").map(|h| h.rsplit('.').next().unwrap_or(h)) {
            if name.len() >= 3 && self.query.contains(name) {
                return (1, min(1), Why::ProjectOrg);
            }
        }
        if p.any(&self.data.major_platforms) {
            return (2, min(2), Why::Platform);
        }
        if p.any(&self.data.community) {
            return (3, min(3), Why::Community);
        }
        if p.any(&self.data.well_known) {
            return (4, min(4), Why::WellKnown);
        }
        if p.any(&self.data.personal) {
            return (4, min(4), Why::Personal);
        }
        (4, min(4), Why::Unknown)
    }

    fn bonus(&self, tier: u8, why: Why, p: &Place, r: &WebResult) -> u32 {
        let b = &self.data.bonuses;
        let meta = |m: &MetaBonus, v: Option<f64>| -> u32 {
            match v {
                Some(v) if p.any(&m.hosts) && v > 0.0 => ((v / m.per).floor() as u32).min(m.max),
                _ => 0,
            }
        };
        let recent = b.recent.get(&tier).map_or(0, |rule| {
            let age = r
                .published_at
                .as_deref()
                .and_then(parse_date)
                .map(|d| (self.today - d).whole_days());
            if age.is_some_and(|a| (0..=rule.days).contains(&a)) {
                rule.points
            } else {
                0
            }
        });
        match tier {
            1 => {
                (if p.host.ends_with(".org") { b.org_domain } else { 0 })
                    + (if p.host.starts_with("docs.") {
                        b.docs_subdomain
                    } else {
                        0
                    })
                    + (if why == Why::OfficialGithub {
                        b.official_github
                    } else {
                        0
                    })
            }
            2 => {
                let blog_of_official = (p.path == "/blog" || p.path.starts_with("/blog/")) && self.official(p)
                    || p.host.strip_prefix("blog.").is_some_and(|rest| {
                        self.official(&Place {
                            host: rest.to_owned(),
                            path: "/".into(),
                        })
                    });
                (if blog_of_official { b.official_blog } else { 0 })
                    + (if p.path.split('/').any(|s| s == "examples") {
                        b.examples
                    } else {
                        0
                    })
                    + (if p.any(&self.data.major_platforms) {
                        b.major_platform
                    } else {
                        0
                    })
            }
            3 => meta(&b.votes, r.votes) + meta(&b.reactions, r.reactions) + recent,
            _ => (if why == Why::WellKnown { b.well_known } else { 0 }) + meta(&b.claps, r.claps) + recent,
        }
    }

    /// The result with its tier, score and source label; `None` for a URL
    /// that is not http(s): such a result is dropped.
    pub fn classify(&self, mut r: WebResult) -> Option<WebResult> {
        let p = Place::of(&r.url)?;
        let (tier, base, why) = self.place(&p);
        let info = self.data.tier(tier);
        let mut score = (base + self.bonus(tier, why, &p, &r)).min(info.max);
        if let (Some([lo, hi]), true) = (self.strategy.ranges.get(&tier), why != Why::Unknown) {
            score = remap(score, info.min, info.max, *lo, *hi);
        }
        r.tier = tier;
        r.reliability_score = score;
        r.source = info.label.clone();
        Some(r)
    }

    /// Whether the strategy keeps a classified result: an allowed tier and at
    /// least its minimum score (`docs/contracts.md#source-tiers`).
    pub fn keeps(&self, r: &WebResult) -> bool {
        let well_known_only = self.strategy.well_known_only_in_tier_4 && r.tier == 4;
        self.strategy.tiers.contains(&r.tier)
            && r.reliability_score >= self.strategy.min_score
            && (!well_known_only || Place::of(&r.url).is_some_and(|p| p.any(&self.data.well_known)))
    }
}

/// `score` of a tier's `[min, max]` placed at the same position in `[lo, hi]`.
fn remap(score: u32, min: u32, max: u32, lo: u32, hi: u32) -> u32 {
    if max <= min {
        return lo;
    }
    let at = f64::from(score.clamp(min, max) - min) / f64::from(max - min);
    lo + (at * f64::from(hi - lo)).round() as u32
}

/// The date of `2024-01-15`, `2024-01-15T10:00:00` or an RFC 3339 timestamp.
fn parse_date(s: &str) -> Option<time::Date> {
    let day = s.get(..10)?;
    time::Date::parse(day, time::macros::format_description!("[year]-[month]-[day]")).ok()
}

#[cfg(test)]
mod tests;
