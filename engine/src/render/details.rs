//! The text every format shows for a stage, so all formats say the same thing.

use super::{Graph, Node};

/// A pipeline's caption: its name, and its summary when it has one.
pub(super) fn title(graph: &Graph) -> String {
    if graph.summary.is_empty() {
        graph.pipeline.clone()
    } else {
        format!("{} — {}", graph.pipeline, graph.summary)
    }
}

/// The headline under a stage's name: its kind and what it calls (`llm search/route.j2`).
pub(super) fn headline(node: &Node) -> String {
    match &node.target {
        Some(target) => format!("{} {target}", node.kind),
        None => node.kind.clone(),
    }
}

/// The labelled facts below the headline, in a fixed order: condition, loop, gate, params.
pub(super) fn facts(node: &Node) -> Vec<(&'static str, String)> {
    let mut facts = Vec::new();
    if let Some(condition) = &node.condition {
        facts.push(("when", condition.clone()));
    }
    if let Some(iteration) = &node.iteration {
        facts.push(("loop", iteration.clone()));
    }
    if let Some(gate) = &node.gate {
        facts.push(("gate", gate.clone()));
    }
    if !node.params.is_empty() {
        facts.push(("params", node.params.join(", ")));
    }
    facts
}

/// The headline then every fact as `label: value`, one per line.
pub(super) fn lines(node: &Node) -> Vec<String> {
    std::iter::once(headline(node))
        .chain(
            facts(node)
                .into_iter()
                .map(|(label, value)| format!("{label}: {value}")),
        )
        .collect()
}

/// The action a kind wraps, which decides a stage's colour: `for_each(run)` → `run`.
pub(super) fn action(kind: &str) -> &str {
    match (kind.find('('), kind.rfind(')')) {
        (Some(open), Some(close)) if open < close => &kind[open + 1..close],
        _ => kind,
    }
}

/// The families of actions, each with a soft fill, so a picture reads at a
/// glance; the SVG legend lists them by their label.
pub(super) const FAMILIES: [(&str, &[&str], &str); 6] = [
    ("llm", &["llm"], "#ede7f6"),
    ("fn", &["fn"], "#e3f2fd"),
    ("run (sub-pipeline)", &["run"], "#e8f5e9"),
    ("read, write, append", &["read", "write", "append"], "#fff8e1"),
    ("emit, exit, ask", &["emit", "exit", "ask"], "#fce4ec"),
    ("http, exec, mcp", &["http", "exec", "mcp"], "#e0f7fa"),
];

/// The fill of any other action.
pub(super) const OTHER_FILL: &str = "#f5f5f5";

/// A stage's fill, by the family of its action.
pub(super) fn fill(kind: &str) -> &'static str {
    let action = action(kind);
    FAMILIES
        .iter()
        .find(|(_, actions, _)| actions.contains(&action))
        .map_or(OTHER_FILL, |&(_, _, fill)| fill)
}
