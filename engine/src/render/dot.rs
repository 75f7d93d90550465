//! A Graphviz digraph. A `run` stage with its sub-pipeline becomes a cluster
//! holding the child's stages; edges to and from it end on the cluster's
//! border (`compound=true` with `lhead`/`ltail` on an invisible anchor). A
//! sub-pipeline run again later is a plain stage with a dashed edge to it.

use std::fmt::Write;

use super::{details, layers, svg::escape_xml, Drawn, Graph};

pub(super) fn render(graph: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "digraph {} {{\n    graph [compound=true, rankdir=TB, labelloc=t, fontname=\"Helvetica\", label=<<b>{}</b>>];\n    node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n    edge [color=\"#5c6b7a\"];",
        quote(&graph.pipeline),
        escape_xml(&details::title(graph)),
    );
    draw(graph, "n", 1, &mut Drawn::default(), &mut out);
    out.push_str("}\n");
    out
}

/// Draws `graph`'s nodes and edges with ids `prefix` + index, so nested
/// graphs get unique ids (`n2_0` is the first stage inside stage `n2`).
fn draw(graph: &Graph, prefix: &str, depth: usize, drawn: &mut Drawn, out: &mut String) {
    let pad = "    ".repeat(depth);
    // The stages drawn as clusters here, which edges enter and leave at the border.
    let mut clusters = Vec::new();
    for (index, node) in graph.nodes.iter().enumerate() {
        let id = format!("{prefix}{index}");
        let fill = details::fill(&node.kind);
        let earlier = node.children.as_ref().map(|c| (c, drawn.earlier(c, &id)));
        match earlier {
            Some((children, None)) => {
                clusters.push(index);
                let _ = writeln!(
                    out,
                    "{pad}subgraph cluster_{id} {{\n{pad}    label=<{}>;\n{pad}    style=\"rounded,filled\"; fillcolor=\"{fill}\"; fontsize=11;\n{pad}    {id} [shape=point, style=invis, width=0, height=0, label=\"\"];",
                    label(node),
                );
                draw(children, &format!("{id}_"), depth + 1, drawn, out);
                // Keeps the anchor above the child's stages, so arrows enter at the top.
                for root in roots(children) {
                    let _ = writeln!(out, "{pad}    {id} -> {id}_{root} [style=invis];");
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Some((_, Some(first))) => {
                let _ = writeln!(
                    out,
                    "{pad}{id} [label=<{}>, fillcolor=\"{fill}\"];\n{pad}{id} -> {first} [lhead=cluster_{first}, style=dashed];",
                    label(node),
                );
            }
            None => {
                let _ = writeln!(out, "{pad}{id} [label=<{}>, fillcolor=\"{fill}\"];", label(node));
            }
        }
    }
    for (from, to) in layers::drawable_edges(graph) {
        let mut attributes = Vec::new();
        if clusters.contains(&from) {
            attributes.push(format!("ltail=cluster_{prefix}{from}"));
        }
        if clusters.contains(&to) {
            attributes.push(format!("lhead=cluster_{prefix}{to}"));
        }
        let attributes = if attributes.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attributes.join(", "))
        };
        let _ = writeln!(out, "{pad}{prefix}{from} -> {prefix}{to}{attributes};");
    }
}

/// An HTML-like label: the name in bold, then one line per fact.
fn label(node: &super::Node) -> String {
    let mut label = format!("<b>{}</b>", escape_xml(&node.name));
    for line in details::lines(node) {
        let _ = write!(label, "<br/>{}", escape_xml(&line));
    }
    label
}

/// The stages nothing points to, where a sub-pipeline starts.
fn roots(graph: &Graph) -> Vec<usize> {
    (0..graph.nodes.len())
        .filter(|&node| !layers::drawable_edges(graph).any(|(_, to)| to == node))
        .collect()
}

/// A DOT double-quoted string: only `"` and `\` need a backslash.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn draws_edges_and_nests_the_sub_pipeline_in_a_cluster() {
        let text = render(&sample::graph());
        assert!(text.starts_with("digraph \"search\" {"));
        assert!(text.ends_with("}\n"));
        for edge in [
            "n0 -> n1;",
            "n1 -> n2 [lhead=cluster_n2];",
            "n2 -> n3 [ltail=cluster_n2];",
            "n0 -> n3;",
            "n2_0 -> n2_1;",
        ] {
            assert!(text.contains(edge), "edge `{edge}` missing from:\n{text}");
        }
        let open = text.find("subgraph cluster_n2 {").expect("the run stage is a cluster");
        let child = text.find("n2_1 [label=").expect("the child stage is drawn");
        assert!(open < child);
    }

    #[test]
    fn escapes_quotes_angle_brackets_and_ampersands_in_labels() {
        let text = render(&sample::graph());
        assert!(text.contains("emit &quot;&lt;none&gt; &amp; done&quot;"));
        assert!(text.contains("packages.rows &gt; 2000 &amp;&amp; mode == &quot;deep&quot;"));
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
