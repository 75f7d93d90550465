//! Sub-pipelines drawn once each, as labelled clusters beside the main flow.
//!
//! A sub-pipeline may be run by several stages (search's drill-down runs as
//! itself and as fallback stage 1) and at any depth; each gets one cluster,
//! named after it and listing the stages that run it. The clusters, with the
//! main flow and the legend, are packed into columns no taller than the
//! tallest of them, which keeps the picture about as wide as it is tall.

use std::fmt::Write;

use super::layout::Point;
use super::{details, escape_xml, number, text_width, wrap, Diagram, MUTED, STROKE, TEXT_SIZE};
use crate::render::Graph;

/// Cluster titles wrap narrower than the main title, keeping columns slim.
const TITLE_WRAP_COLUMNS: usize = 52;
/// Inside a cluster's frame.
const PADDING: f64 = 12.0;
/// Between the parts of a column, and between columns.
const GAP: f64 = 32.0;
const LINE_HEIGHT: f64 = 15.0;

/// One sub-pipeline, laid out.
pub(super) struct Cluster {
    pipeline: String,
    /// The stages that run it, as `pipeline › stage`.
    users: Vec<String>,
    diagram: Diagram,
}

/// The id of `pipeline`'s cluster, which the stages that run it link to.
pub(super) fn id(pipeline: &str) -> String {
    let slug: String = pipeline
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("cluster-{slug}")
}

/// Every sub-pipeline `graph` runs, however deep, once each, in the order a
/// reader first meets them (each before the ones it runs).
pub(super) fn collect(graph: &Graph) -> Vec<Cluster> {
    let mut found: Vec<(&Graph, Vec<String>)> = Vec::new();
    visit(graph, &mut found);
    found
        .into_iter()
        .map(|(child, users)| {
            let title = wrap(&details::title(child), TITLE_WRAP_COLUMNS);
            Cluster {
                pipeline: child.pipeline.clone(),
                users,
                diagram: Diagram::new(child, title, TEXT_SIZE + 1.0),
            }
        })
        .collect()
}

fn visit<'g>(graph: &'g Graph, found: &mut Vec<(&'g Graph, Vec<String>)>) {
    for node in &graph.nodes {
        let Some(child) = node.children.as_deref() else {
            continue;
        };
        let user = format!("{} › {}", graph.pipeline, node.name);
        match found.iter_mut().find(|(seen, _)| seen.pipeline == child.pipeline) {
            Some((_, users)) => users.push(user),
            None => {
                found.push((child, vec![user]));
                visit(child, found);
            }
        }
    }
}

impl Cluster {
    /// The "run by" line, wrapped like the title.
    fn users_lines(&self) -> Vec<String> {
        wrap(&format!("run by {}", self.users.join(", ")), TITLE_WRAP_COLUMNS)
    }

    /// Its frame's width and height.
    pub(super) fn size(&self) -> (f64, f64) {
        let users = self.users_lines();
        let users_width = users.iter().map(|line| text_width(line, TEXT_SIZE)).fold(0.0, f64::max);
        (
            self.diagram.width.max(users_width) + 2.0 * PADDING,
            self.diagram.height + users.len() as f64 * LINE_HEIGHT + 2.0 * PADDING,
        )
    }

    /// Draws the frame with its top-left corner at `(x, y)`: the diagram's
    /// title, who runs it, then its flow.
    pub(super) fn draw(&self, (x, y): Point, out: &mut String) {
        let (width, height) = self.size();
        let _ = writeln!(
            out,
            r##"<g id="{}" class="cluster" data-pipeline="{}" transform="translate({},{})">"##,
            id(&self.pipeline),
            escape_xml(&self.pipeline),
            number(x),
            number(y)
        );
        let _ = writeln!(
            out,
            r##"<rect width="{}" height="{}" rx="8" fill="#fafafa" stroke="{STROKE}" stroke-dasharray="6 4"/>"##,
            number(width),
            number(height)
        );
        let users = self.users_lines();
        let title_bottom = self.diagram.title.len() as f64 * (self.diagram.title_size + 5.0);
        for (index, line) in users.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" fill="{MUTED}">{}</text>"#,
                number(PADDING),
                number(PADDING + title_bottom + (index + 1) as f64 * LINE_HEIGHT - 2.0),
                escape_xml(line)
            );
        }
        // The diagram's title sits above the "run by" lines; its flow below them.
        let _ = writeln!(
            out,
            r#"<g transform="translate({},{})">"#,
            number(PADDING),
            number(PADDING)
        );
        self.diagram.draw_title(out);
        let _ = writeln!(
            out,
            r#"<g transform="translate(0,{})">"#,
            number(users.len() as f64 * LINE_HEIGHT)
        );
        self.diagram.draw_flow(out);
        out.push_str("</g></g></g>\n");
    }
}

/// Places boxes of `sizes` (the main flow, the legend, the clusters) in columns left to right, each filled top down
/// up to `limit` (a box taller than it gets a column of its own). Returns
/// each box's top-left corner and the width and height of all columns.
pub(super) fn pack(sizes: &[(f64, f64)], limit: f64) -> (Vec<Point>, f64, f64) {
    let mut places = Vec::with_capacity(sizes.len());
    let (mut column_left, mut column_width, mut y, mut height) = (0.0, 0.0_f64, 0.0, 0.0_f64);
    for &(width, box_height) in sizes {
        if y > 0.0 && y + box_height > limit {
            column_left += column_width + GAP;
            column_width = 0.0;
            y = 0.0;
        }
        places.push((column_left, y));
        column_width = column_width.max(width);
        height = height.max(y + box_height);
        y += box_height + GAP;
    }
    (places, column_left + column_width, height)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn a_sub_pipeline_run_twice_and_nested_is_one_cluster_naming_both_users() {
        let mut graph = sample::graph();
        let mut again = graph.nodes[2].clone();
        again.name = "again".into();
        // The same sub-pipeline, also nested inside another one.
        let mut wrapper = graph.nodes[2].clone();
        wrapper.name = "outer".into();
        let mut inner = sample::graph();
        inner.pipeline = "wrapper".into();
        inner.nodes.truncate(3);
        inner.edges.retain(|&(from, to)| from < 3 && to < 3);
        wrapper.children = Some(Box::new(inner));
        graph.nodes.extend([again, wrapper]);
        let clusters = collect(&graph);
        let names: Vec<&str> = clusters.iter().map(|c| c.pipeline.as_str()).collect();
        assert_eq!(names, ["search/retrieve", "wrapper"]);
        assert_eq!(
            clusters[0].users,
            ["search › retrieve", "search › again", "wrapper › retrieve"]
        );
    }

    #[test]
    fn packing_fills_columns_up_to_the_limit_without_overlap() {
        let sizes = [(100.0, 50.0), (80.0, 60.0), (120.0, 70.0), (60.0, 300.0)];
        let (places, width, height) = pack(&sizes, 150.0);
        assert_eq!(places[..3], [(0.0, 0.0), (0.0, 82.0), (132.0, 0.0)]);
        assert_eq!(places[3], (284.0, 0.0), "taller than the limit: a column of its own");
        assert_eq!((width, height), (344.0, 300.0));
    }

    #[test]
    fn ids_are_valid_xml_names() {
        assert_eq!(id("search/drill-down"), "cluster-search-drill-down");
    }
}
