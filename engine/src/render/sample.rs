//! A hand-built graph the renderer tests share: four stages, a long edge
//! (validate → answer skips two layers), a nested `run` child, and text that
//! needs escaping in every format (quotes, `<`, `&`).

use super::{Graph, Node};

/// A stage of `kind` with nothing else set (`target`: what it runs).
pub(super) fn node(name: &str, kind: &str, target: Option<&str>) -> Node {
    Node {
        name: name.into(),
        kind: kind.into(),
        target: target.map(Into::into),
        condition: None,
        iteration: None,
        gate: None,
        params: Vec::new(),
        children: None,
    }
}

pub(super) fn graph() -> Graph {
    let child = Graph {
        pipeline: "search/retrieve".into(),
        summary: "Per sub-intent retrieval".into(),
        nodes: vec![
            node("packages", "fn", Some("search.packages")),
            Node {
                condition: Some(r#"{{ packages.rows > 2000 && mode == "deep" }}"#.into()),
                iteration: Some("chunks of 500 ≤8".into()),
                gate: Some("search-candidates.schema.json".into()),
                ..node("rank", "map_reduce(llm)", Some("search/rank.j2"))
            },
        ],
        edges: vec![(0, 1)],
    };
    Graph {
        pipeline: "search".into(),
        summary: "Natural-language asset search".into(),
        nodes: vec![
            node("validate", "fn", Some("query.validate")),
            Node {
                condition: Some("{{ validate.ok }}".into()),
                gate: Some("search-routing.schema.json".into()),
                params: vec!["min_confidence=0.4".into()],
                ..node("route", "llm", Some("search/route.j2"))
            },
            Node {
                iteration: Some("for_each ≤4".into()),
                children: Some(Box::new(child)),
                ..node("retrieve", "for_each(run)", Some("search/retrieve"))
            },
            Node {
                condition: Some("{{ retrieve | length < 1 }}".into()),
                ..node("answer", "emit", Some(r#""<none> & done""#))
            },
        ],
        edges: vec![(0, 1), (1, 2), (2, 3), (0, 3)],
    }
}
