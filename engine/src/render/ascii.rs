//! A terminal tree: stages in dependency order (every `needs:` points up),
//! each with its facts, and a `run` stage's sub-pipeline indented inside it
//! (at its first use; later uses say where it was drawn).

use std::fmt::Write;

use super::{details, layers, Drawn, Graph};

pub(super) fn render(graph: &Graph) -> String {
    let mut out = String::new();
    draw(graph, "", &mut Drawn::default(), &mut out);
    out
}

/// Draws `graph` with every line starting with `indent`.
fn draw(graph: &Graph, indent: &str, drawn: &mut Drawn, out: &mut String) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{indent}{}", details::title(graph));
    let order: Vec<usize> = layers::layers(graph).concat();
    for (position, &index) in order.iter().enumerate() {
        let node = &graph.nodes[index];
        let (branch, stem) = if position + 1 == order.len() {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let _ = writeln!(out, "{indent}{branch}{}: {}", node.name, details::headline(node));
        let body = format!("{indent}{stem}    ");
        let needs: Vec<&str> = layers::drawable_edges(graph)
            .filter(|&(_, to)| to == index)
            .map(|(from, _)| graph.nodes[from].name.as_str())
            .collect();
        if !needs.is_empty() {
            let _ = writeln!(out, "{body}needs: {}", needs.join(", "));
        }
        for (label, value) in details::facts(node) {
            let _ = writeln!(out, "{body}{label}: {value}");
        }
        if let Some(children) = &node.children {
            match drawn.earlier(children, &node.name) {
                None => draw(children, &body, drawn, out),
                Some(first) => {
                    let _ = writeln!(out, "{body}{} is drawn under `{first}` above", children.pipeline);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn shows_every_stage_in_dependency_order_with_its_facts() {
        let text = render(&sample::graph());
        let position = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("`{needle}` missing from:\n{text}"))
        };
        assert!(position("├── validate: fn query.validate") < position("├── route: llm"));
        assert!(position("├── route: llm") < position("└── answer: emit"));
        assert!(text.contains("needs: validate\n"));
        assert!(text.contains("needs: retrieve, validate\n"));
        assert!(text.contains("when: {{ validate.ok }}\n"));
        assert!(text.contains("gate: search-routing.schema.json\n"));
        assert!(text.contains("params: min_confidence=0.4\n"));
        assert!(text.contains("loop: for_each ≤4\n"));
    }

    #[test]
    fn draws_a_sub_pipeline_indented_inside_its_run_stage() {
        let text = render(&sample::graph());
        let lines: Vec<&str> = text.lines().collect();
        let run = lines
            .iter()
            .position(|line| line.contains("retrieve: for_each(run)"))
            .expect("the run stage is drawn");
        let child_title = lines
            .iter()
            .position(|line| line.contains("search/retrieve — Per sub-intent retrieval"))
            .expect("the sub-pipeline is drawn");
        let rank = lines
            .iter()
            .position(|line| line.contains("rank: map_reduce(llm)"))
            .expect("the sub-pipeline's stages are drawn");
        assert!(run < child_title && child_title < rank);
        let indent = |line: &str| line.chars().take_while(|c| !c.is_alphanumeric()).count();
        assert!(indent(lines[rank]) > indent(lines[run]));
        assert!(lines[rank].starts_with("│   "), "the parent's stem continues");
    }
}
