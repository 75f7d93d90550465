//! `websearch.strategy`: the strategy file of the search type renders the
//! queries to send (`docs/contracts.md#web-search-strategy`). Which
//! technologies a query names, and their official sites, come from
//! `data/official-domains.yml`.

use std::sync::Arc;

use engine::resources::Resources;
use engine::template::json_view;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const TECHNOLOGIES: &str = "data/official-domains.yml";
/// The prompt the `command` backend receives as `{prompt}`.
pub const COMMAND_PROMPT: &str = "prompts/web-search/command.j2";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Technology {
    pub name: String,
    pub names: Vec<String>,
    pub sites: Vec<String>,
}

#[derive(Deserialize)]
struct TechnologyTable {
    technologies: Vec<Technology>,
}

/// The technology table (empty when the file is missing; a broken file is an error).
pub fn technologies(resources: &Resources) -> anyhow::Result<Vec<Technology>> {
    let Some(res) = resources.get(TECHNOLOGIES)? else {
        return Ok(vec![]);
    };
    let table: TechnologyTable = serde_yaml::from_str(&res.text).map_err(|e| anyhow::anyhow!("{}: {e}", res.origin))?;
    Ok(table.technologies)
}

/// The technologies `query` names: a Latin name as a whole word, a Hangul
/// name anywhere (Korean particles attach to it).
pub fn recognise<'a>(query: &str, table: &'a [Technology]) -> Vec<&'a Technology> {
    let q = query.to_lowercase();
    table
        .iter()
        .filter(|t| t.names.iter().any(|n| mentions(&q, &n.to_lowercase())))
        .collect()
}

fn mentions(query: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    if !name.is_ascii() {
        return query.contains(name);
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    query
        .match_indices(name)
        .any(|(at, _)| !word(query[..at].chars().next_back()) && !word(query[at + name.len()..].chars().next()))
}

/// Whether the query names a version ("React 18", "python3.12", "v2") or asks
/// for the latest itself: then the official strategy adds no "latest".
pub fn names_version(query: &str) -> bool {
    let q = query.to_lowercase();
    q.chars().any(|c| c.is_ascii_digit()) || q.split_whitespace().any(|w| w == "latest" || w.contains("최신"))
}

#[derive(Debug, Serialize)]
pub struct Strategy {
    pub ok: bool,
    /// The strategy file (its override's path when a project edited it).
    pub file: String,
    /// The "strategy could not be loaded" block (naming the file) when the
    /// file cannot be loaded.
    pub message: Option<String>,
    /// The queries to send, in order; the first is the one shown.
    pub queries: Vec<String>,
    pub rewritten_query: String,
    /// The `command` backend's prompt.
    pub prompt: String,
    pub technologies: Vec<String>,
}

/// Render the strategy of `kind` for `query`.
pub fn render(query: &str, kind: &str, max_results: usize, resources: &Resources) -> anyhow::Result<Strategy> {
    let table = technologies(resources)?;
    let techs = recognise(query, &table);
    let sites: Vec<&str> = techs.iter().flat_map(|t| t.sites.iter().map(String::as_str)).collect();
    let github: Vec<&str> = sites.iter().copied().filter(|s| s.starts_with("github.com/")).collect();
    let sites_or = sites
        .iter()
        .map(|s| format!("site:{s}"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let scope = json!({
        "query": query,
        "version": names_version(query),
        "technologies": techs,
        "sites": sites,
        "sites_or": sites_or,
        "github": github,
    });
    let rel = format!("prompts/web-search/{kind}.j2");
    let failed = |file: String, cause: String| Strategy {
        ok: false,
        message: Some(format!(
            "검색 전략을 로드할 수 없습니다.\n전략 파일: {file}\n관리자에게 문의하세요.\n(원인: {cause})"
        )),
        file,
        queries: vec![],
        rewritten_query: String::new(),
        prompt: String::new(),
        technologies: vec![],
    };
    let env = engine::template::environment();
    let res = match resources.get(&rel) {
        Ok(Some(res)) => res,
        Ok(None) => return Ok(failed(rel, "the file is missing".into())),
        Err(e) => return Ok(failed(rel, e.to_string())),
    };
    let queries: Vec<String> = match env.render_str(&res.text, json_view(Arc::new(scope))) {
        Ok(text) => text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect(),
        Err(e) => return Ok(failed(res.origin, e.to_string())),
    };
    if queries.is_empty() {
        return Ok(failed(res.origin, "it renders no query".into()));
    }
    let prompt_res = match resources.get(COMMAND_PROMPT) {
        Ok(Some(res)) => res,
        Ok(None) => return Ok(failed(COMMAND_PROMPT.into(), "the file is missing".into())),
        Err(e) => return Ok(failed(COMMAND_PROMPT.into(), e.to_string())),
    };
    let prompt_scope = json!({"query": queries[0], "queries": queries, "type": kind, "max_results": max_results});
    let prompt = match env.render_str(&prompt_res.text, json_view(Arc::new(prompt_scope))) {
        Ok(p) => p.trim().to_owned(),
        Err(e) => return Ok(failed(prompt_res.origin, e.to_string())),
    };
    Ok(Strategy {
        ok: true,
        file: res.origin,
        message: None,
        rewritten_query: queries[0].clone(),
        queries,
        prompt,
        technologies: techs.iter().map(|t| t.name.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources() -> Resources {
        crate::project::resources(None)
    }

    #[test]
    fn official_adds_sites_and_latest() {
        let s = render("React hooks", "official", 10, &resources()).unwrap();
        assert_eq!(
            s.queries,
            ["React hooks latest site:react.dev OR site:github.com/facebook/react"]
        );
        let s = render("리액트의 훅 18", "official", 10, &resources()).unwrap();
        assert_eq!(
            s.rewritten_query,
            "리액트의 훅 18 site:react.dev OR site:github.com/facebook/react"
        );
        let s = render("Unity 6 lighting", "official", 10, &resources()).unwrap();
        assert_eq!(s.rewritten_query, "Unity 6 lighting site:docs.unity3d.com");
        let s = render("obscure thing", "official", 10, &resources()).unwrap();
        assert_eq!(s.rewritten_query, "obscure thing latest");
        assert!(s.prompt.contains("'obscure thing latest'"), "{}", s.prompt);
    }

    #[test]
    fn comprehensive_and_best_practice_layers() {
        let s = render("next.js routing", "comprehensive", 20, &resources()).unwrap();
        assert_eq!(
            s.queries,
            [
                "next.js routing",
                "next.js routing site:nextjs.org OR site:github.com/vercel/next.js",
                "next.js routing site:stackoverflow.com OR site:developer.mozilla.org",
                "next.js routing tutorial OR guide OR example",
            ]
        );
        let s = render("zombie ai", "comprehensive", 20, &resources()).unwrap();
        assert_eq!(s.queries.len(), 3);
        let s = render("react forms", "best-practice", 10, &resources()).unwrap();
        assert_eq!(
            s.queries,
            [
                "react forms example OR tutorial OR \"best practice\"",
                "react forms official example site:github.com/facebook/react",
            ]
        );
    }

    #[test]
    fn whole_words_only_for_latin_names() {
        let table = technologies(&resources()).unwrap();
        let names = |q: &str| recognise(q, &table).iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        assert_eq!(names("reactive streams"), Vec::<String>::new());
        assert_eq!(names("React, Next.js"), ["React", "Next.js"]);
        assert!(!names_version("react hooks"));
        assert!(names_version("react 18 hooks"));
    }

    #[test]
    fn a_missing_or_broken_strategy_file_gives_the_seeds_block() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("prompts/web-search/official.j2");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{{ query ").unwrap();
        let s = render(
            "react hooks",
            "official",
            10,
            &crate::project::resources(Some(dir.path().into())),
        )
        .unwrap();
        assert!(!s.ok);
        let msg = s.message.unwrap();
        assert!(
            msg.starts_with(&format!(
                "검색 전략을 로드할 수 없습니다.\n전략 파일: {}\n관리자에게 문의하세요.",
                file.display()
            )),
            "{msg}"
        );
        let s = render("react hooks", "nonexistent", 10, &resources()).unwrap();
        assert!(s
            .message
            .unwrap()
            .contains("전략 파일: prompts/web-search/nonexistent.j2"));
    }
}
