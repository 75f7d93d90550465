//! A Mermaid flowchart (`flowchart TD`). A `run` stage with its sub-pipeline
//! becomes a subgraph holding the child's stages; edges may end on it. A
//! sub-pipeline run again later is a plain stage with a dotted link to it.

use std::fmt::Write;

use super::{details, layers, Drawn, Graph};

pub(super) fn render(graph: &Graph) -> String {
    let mut out = String::new();
    // Front matter gives the diagram a visible title; a JSON string is valid YAML.
    let title = serde_json::Value::from(details::title(graph));
    let _ = writeln!(out, "---\ntitle: {title}\n---\nflowchart TD");
    draw(graph, "n", 1, &mut Drawn::default(), &mut out);
    out
}

/// Draws `graph`'s nodes and edges; ids are `prefix` + index, so nested
/// graphs get unique ids (`n2_0` is the first stage inside stage `n2`).
fn draw(graph: &Graph, prefix: &str, depth: usize, drawn: &mut Drawn, out: &mut String) {
    let pad = "    ".repeat(depth);
    for (index, node) in graph.nodes.iter().enumerate() {
        let id = format!("{prefix}{index}");
        let mut label = format!("<b>{}</b>", escape(&node.name));
        for line in details::lines(node) {
            let _ = write!(label, "<br/>{}", escape(&line));
        }
        let earlier = node.children.as_ref().map(|c| (c, drawn.earlier(c, &id)));
        match earlier {
            Some((children, None)) => {
                let _ = writeln!(out, "{pad}subgraph {id}[\"{label}\"]\n{pad}    direction TD");
                draw(children, &format!("{id}_"), depth + 1, drawn, out);
                let _ = writeln!(out, "{pad}end");
            }
            Some((_, Some(first))) => {
                let _ = writeln!(out, "{pad}{id}[\"{label}\"]\n{pad}{id} -.-> {first}");
            }
            None => {
                let _ = writeln!(out, "{pad}{id}[\"{label}\"]");
            }
        }
        let _ = writeln!(out, "{pad}style {id} fill:{}", details::fill(&node.kind));
    }
    for (from, to) in layers::drawable_edges(graph) {
        let _ = writeln!(out, "{pad}{prefix}{from} --> {prefix}{to}");
    }
}

/// Mermaid's own entity codes (`#quot;`), since a quoted label can hold
/// neither `"` nor raw HTML, and a backtick would start a markdown string.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => escaped.push_str("#quot;"),
            '<' => escaped.push_str("#lt;"),
            '>' => escaped.push_str("#gt;"),
            '&' => escaped.push_str("#amp;"),
            '#' => escaped.push_str("#35;"),
            '`' => escaped.push_str("#96;"),
            '\n' => escaped.push_str("<br/>"),
            _ => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn draws_edges_and_nests_the_sub_pipeline_in_a_subgraph() {
        let text = render(&sample::graph());
        assert!(text.contains("flowchart TD\n"));
        for edge in ["n0 --> n1", "n1 --> n2", "n2 --> n3", "n0 --> n3", "n2_0 --> n2_1"] {
            assert!(text.contains(edge), "edge `{edge}` missing from:\n{text}");
        }
        let open = text.find("subgraph n2[").expect("the run stage is a subgraph");
        let child = text.find("n2_1[").expect("the child stage is drawn");
        let end = text[open..].find("\n    end\n").expect("the subgraph ends") + open;
        assert!(open < child && child < end);
    }

    #[test]
    fn escapes_quotes_angle_brackets_and_ampersands_in_labels() {
        let text = render(&sample::graph());
        assert!(text.contains("emit #quot;#lt;none#gt; #amp; done#quot;"));
        let labels = text
            .lines()
            .filter_map(|line| line.split_once("[\"")?.1.rsplit_once("\"]"))
            .map(|(label, _)| label)
            .collect::<Vec<_>>();
        assert_eq!(labels.len(), 6, "four stages and two nested ones");
        for label in labels {
            let markup_removed = label.replace("<b>", "").replace("</b>", "").replace("<br/>", "");
            assert!(!markup_removed.contains(['"', '<', '>']), "unescaped: {label}");
        }
    }
}
