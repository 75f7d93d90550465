//! Drawing a compiled pipeline: ascii, mermaid, dot, json and svg.
//!
//! The compiler turns a pipeline into a [`Graph`] (a plain description, no
//! engine internals), and each format is one module that draws it.

mod ascii;
mod details;
mod dot;
mod json;
mod layers;
mod mermaid;
#[cfg(test)]
mod sample;
mod svg;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// Draws `graph` in `format`; every format is deterministic for a given graph.
pub fn render(graph: &Graph, format: Format) -> String {
    match format {
        Format::Ascii => ascii::render(graph),
        Format::Mermaid => mermaid::render(graph),
        Format::Dot => dot::render(graph),
        Format::Json => json::render(graph),
        Format::Svg => svg::render(graph),
    }
}

/// A pipeline as drawn: its stages, their edges, and nested sub-pipelines.
#[derive(Debug, Clone, Serialize)]
pub struct Graph {
    /// The pipeline's name.
    pub pipeline: String,
    /// What the pipeline does, in one line.
    pub summary: String,
    /// Its stages.
    pub nodes: Vec<Node>,
    /// `(from, to)` indexes into `nodes`: `to` needs `from`.
    pub edges: Vec<(usize, usize)>,
}

/// One stage.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// The stage's name.
    pub name: String,
    /// The action, wrapped by its modifier: `llm`, `fn`, `for_each(run)`, ...
    pub kind: String,
    /// What the stage calls: a function, prompt, sub-pipeline or file.
    pub target: Option<String>,
    /// The `when:` condition, as written.
    pub condition: Option<String>,
    /// Fan-out or loop: `for_each ≤4`, `chunks of 500 ≤8`, `repeat over [5, 8]`.
    pub iteration: Option<String>,
    /// The schema gate (`output:`), a file name.
    pub gate: Option<String>,
    /// Params this stage reads, with their resolved values (`min_confidence=0.4`).
    pub params: Vec<String>,
    /// The sub-pipeline a `run` stage runs, drawn inside it.
    pub children: Option<Box<Graph>>,
}

/// An output format of `graph --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Boxes and arrows in plain text, for terminals.
    Ascii,
    /// A Mermaid flowchart.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// The [`Graph`] itself, as JSON.
    Json,
    /// A standalone SVG image.
    Svg,
}

/// The sub-pipelines a drawing has shown: each is drawn in full at its first
/// use, and later uses point back to it (search runs drill-down twice).
#[derive(Default)]
pub(super) struct Drawn(HashMap<String, String>);

impl Drawn {
    /// `None` the first time `child` is met (the caller draws it now, as
    /// `id`); after that, the id it was drawn as.
    fn earlier(&mut self, child: &Graph, id: &str) -> Option<String> {
        match self.0.get(&child.pipeline) {
            Some(first) => Some(first.clone()),
            None => {
                self.0.insert(child.pipeline.clone(), id.to_owned());
                None
            }
        }
    }
}

impl Format {
    /// Every format, in the order help texts list them.
    pub const ALL: [Format; 5] = [Format::Ascii, Format::Mermaid, Format::Dot, Format::Json, Format::Svg];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Ascii => "ascii",
            Format::Mermaid => "mermaid",
            Format::Dot => "dot",
            Format::Json => "json",
            Format::Svg => "svg",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--format` value that names no format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat {
    /// The value as given.
    pub given: String,
    /// The closest format name, when the value looks like a typo of one.
    pub suggestion: Option<Format>,
}

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
        write!(
            f,
            "unknown graph format `{}`; expected one of {}",
            self.given,
            names.join(", ")
        )?;
        if let Some(suggestion) = self.suggestion {
            write!(f, " (did you mean `{suggestion}`?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses a format name, ignoring case and surrounding spaces.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase();
        if let Some(format) = Format::ALL.into_iter().find(|f| f.name() == wanted) {
            return Ok(format);
        }
        // A typo is about one edit in three letters (`mermiad`, `jsno`); `png` is not `svg`.
        let suggestion = Format::ALL
            .into_iter()
            .map(|f| (strsim::damerau_levenshtein(f.name(), &wanted), f))
            .filter(|&(distance, f)| distance <= (f.name().len() / 3).max(1))
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, f)| f);
        Err(UnknownFormat {
            given: text.to_string(),
            suggestion,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_draws_empty_and_cyclic_graphs_without_panicking() {
        let empty = Graph {
            pipeline: "empty".into(),
            summary: String::new(),
            nodes: Vec::new(),
            edges: Vec::new(),
        };
        // The compiler rejects cycles, but a renderer must still terminate.
        let mut cyclic = sample::graph();
        cyclic.edges.extend([(3, 1), (1, 1), (7, 0)]);
        for format in Format::ALL {
            for graph in [&empty, &cyclic] {
                let drawn = render(graph, format);
                assert!(drawn.contains(&graph.pipeline), "{format} of {}", graph.pipeline);
            }
        }
    }

    /// Search runs drill-down as itself and as a fallback: its stages are
    /// drawn once, and the second use points back to the first.
    #[test]
    fn a_sub_pipeline_run_twice_is_drawn_once_in_every_text_format() {
        let mut graph = sample::graph();
        let again = Node {
            children: graph.nodes[2].children.clone(),
            ..sample::node("fallback", "run", Some("search/retrieve"))
        };
        graph.nodes.push(again);
        graph.edges.push((3, 4));
        for (format, back_link) in [
            (Format::Ascii, "search/retrieve is drawn under `retrieve` above"),
            (Format::Mermaid, "n4 -.-> n2"),
            (Format::Dot, "n4 -> n2 [lhead=cluster_n2, style=dashed];"),
        ] {
            let drawn = render(&graph, format);
            // The child's rank stage is the only one targeting its prompt.
            assert_eq!(drawn.matches("search/rank.j2").count(), 1, "{format}:\n{drawn}");
            assert!(
                drawn.contains(back_link),
                "{format}: `{back_link}` missing from:\n{drawn}"
            );
        }
    }

    #[test]
    fn parses_every_format_name_ignoring_case_and_spaces() {
        for format in Format::ALL {
            assert_eq!(format.name().parse(), Ok(format));
        }
        assert_eq!(" SVG ".parse(), Ok(Format::Svg));
    }

    #[test]
    fn an_unknown_format_lists_the_valid_ones_and_suggests_the_closest() {
        let error = "mermiad".parse::<Format>().expect_err("not a format");
        assert_eq!(
            error.to_string(),
            "unknown graph format `mermiad`; expected one of ascii, mermaid, dot, json, svg \
             (did you mean `mermaid`?)"
        );
        let error = "png".parse::<Format>().expect_err("not a format");
        assert_eq!(error.suggestion, None);
    }
}
