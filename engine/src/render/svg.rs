//! An SVG picture drawn in-process, with no external program.
//!
//! The pipeline's own stages form the main flow on the left. Each sub-pipeline
//! is laid out once, as a labelled cluster in the columns beside it, and every
//! stage that runs one shows a link to its cluster instead of a second copy:
//! nested copies made the picture of `search` 6890 px tall. A legend explains
//! the fills and shapes. Text is monospace, so its width is known without a
//! font engine.

mod clusters;
mod layout;
mod legend;

use std::fmt::Write;

use unicode_width::UnicodeWidthStr;

use self::layout::{Flow, Point, Rect};
use super::{details, Graph, Node};

/// Monospace first; CJK fallbacks keep Korean summaries legible.
const FONT_FAMILY: &str = "DejaVu Sans Mono, Menlo, Consolas, D2Coding, Noto Sans Mono CJK KR, monospace";
const TEXT_SIZE: f64 = 12.0;
const NAME_SIZE: f64 = 13.0;
const TITLE_SIZE: f64 = 15.0;
/// A monospace column is this fraction of the font size wide; a wide
/// (CJK) character takes two columns.
const COLUMN: f64 = 0.6;
/// Longer facts wrap onto continuation lines, keeping boxes narrow.
const WRAP_COLUMNS: usize = 44;
const TITLE_WRAP_COLUMNS: usize = 64;
/// Continuation lines are indented by this many columns.
const CONTINUATION_INDENT: usize = 2;
const LINE_HEIGHT: f64 = 16.0;
const NAME_HEIGHT: f64 = 19.0;
/// Inside a stage box, around its text.
const PADDING: f64 = 10.0;
/// Around the whole picture.
const MARGIN: f64 = 14.0;
/// How far the card behind a looping stage peeks out.
const STACK: f64 = 4.0;
/// The room the gate diamond takes beside a stage's name.
const GATE_ROOM: f64 = 16.0;
const INK: &str = "#263238";
const MUTED: &str = "#607d8b";
const STROKE: &str = "#5c6b7a";
const LINK: &str = "#2e7d32";
const GATE: &str = "#00796b";
/// A conditional stage's border: it may not run (guards, fallbacks).
const CONDITIONAL_DASH: &str = "5 3";

pub(super) fn render(graph: &Graph) -> String {
    let title = wrap(&details::title(graph), TITLE_WRAP_COLUMNS);
    let main = Diagram::new(graph, title, TITLE_SIZE);
    let clusters = clusters::collect(graph);
    // The main flow leads the first column; the legend goes below it when it
    // fits, and the clusters fill the columns after it.
    let sizes: Vec<(f64, f64)> = [(main.width, main.height), legend::size()]
        .into_iter()
        .chain(clusters.iter().map(|cluster| cluster.size()))
        .collect();
    let limit = sizes.iter().map(|size| size.1).fold(0.0, f64::max);
    let (places, content_width, content_height) = clusters::pack(&sizes, limit);
    let width = content_width + 2.0 * MARGIN;
    let height = content_height + 2.0 * MARGIN;
    let at = |(x, y): Point| (MARGIN + x, MARGIN + y);

    let (width, height) = (number(width), number(height));
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FONT_FAMILY}" font-size="{TEXT_SIZE}">"#
    );
    let _ = writeln!(
        out,
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{STROKE}"/></marker></defs>"#
    );
    let _ = writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        out,
        r#"<g id="main" transform="translate({},{})">"#,
        number(at(places[0]).0),
        number(at(places[0]).1)
    );
    main.draw(&mut out);
    out.push_str("</g>\n");
    legend::draw(at(places[1]), &mut out);
    for (cluster, &place) in clusters.iter().zip(&places[2..]) {
        cluster.draw(at(place), &mut out);
    }
    out.push_str("</svg>\n");
    out
}

/// XML text and attribute escaping; characters XML 1.0 forbids are dropped.
pub(super) fn escape_xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            c if c.is_control() => {}
            c => escaped.push(c),
        }
    }
    escaped
}

/// A titled flow of stage boxes: the main pipeline or one cluster's.
struct Diagram {
    width: f64,
    height: f64,
    title: Vec<String>,
    title_size: f64,
    stages: Vec<Stage>,
    flow: Flow,
}

impl Diagram {
    fn new(graph: &Graph, title: Vec<String>, title_size: f64) -> Self {
        let stages: Vec<Stage> = graph.nodes.iter().map(Stage::new).collect();
        let sizes: Vec<(f64, f64)> = stages.iter().map(|stage| (stage.width, stage.height)).collect();
        let flow = layout::lay_out(graph, &sizes);
        let title_width = title.iter().map(|line| line.width()).max().unwrap_or(0) as f64 * title_size * COLUMN;
        Diagram {
            width: title_width.max(flow.width),
            height: title_height(&title, title_size) + flow.height,
            title,
            title_size,
            stages,
            flow,
        }
    }

    /// Draws the title, then the flow below it.
    fn draw(&self, out: &mut String) {
        self.draw_title(out);
        self.draw_flow(out);
    }

    fn draw_title(&self, out: &mut String) {
        for (index, line) in self.title.iter().enumerate() {
            let baseline = self.title_size + index as f64 * (self.title_size + 5.0);
            let _ = writeln!(
                out,
                r#"<text x="0" y="{}" font-size="{}" font-weight="bold" fill="{INK}">{}</text>"#,
                number(baseline),
                number(self.title_size),
                escape_xml(line)
            );
        }
    }

    /// Draws the flow below the title's room, centred under it.
    fn draw_flow(&self, out: &mut String) {
        let offset = (
            (self.width - self.flow.width) / 2.0,
            title_height(&self.title, self.title_size),
        );
        for (stage, rect) in self.stages.iter().zip(&self.flow.boxes) {
            let rect = Rect {
                x: rect.x + offset.0,
                y: rect.y + offset.1,
                ..*rect
            };
            stage.draw(rect, out);
        }
        for arrow in &self.flow.arrows {
            let points: Vec<Point> = arrow.iter().map(|p| (p.0 + offset.0, p.1 + offset.1)).collect();
            let _ = writeln!(
                out,
                r#"<path d="{}" fill="none" stroke="{STROKE}" stroke-width="1.3" marker-end="url(#arrow)"/>"#,
                path(&points)
            );
        }
    }
}

/// The room a title takes above what it names.
fn title_height(title: &[String], size: f64) -> f64 {
    title.len() as f64 * (size + 5.0) + 10.0
}

/// One stage's box: its text, and the marks the legend explains.
struct Stage {
    width: f64,
    height: f64,
    name: String,
    lines: Vec<Line>,
    fill: &'static str,
    /// Has a `when:`: drawn dashed.
    conditional: bool,
    /// Loops or fans out: drawn as a stack of cards.
    looped: bool,
    /// Has a schema gate: marked with a diamond.
    gated: bool,
}

/// One line of text under a stage's name.
enum Line {
    Headline(String),
    Fact {
        label: &'static str,
        value: String,
    },
    Continued(String),
    /// A link to the cluster of the sub-pipeline this stage runs.
    Reference(String),
}

impl Line {
    fn columns(&self) -> usize {
        match self {
            Line::Headline(text) => text.width(),
            Line::Fact { label, value } => label.width() + 2 + value.width(),
            Line::Continued(text) => CONTINUATION_INDENT + text.width(),
            Line::Reference(pipeline) => reference(pipeline).width(),
        }
    }
}

/// The text of a link to a sub-pipeline's cluster.
fn reference(pipeline: &str) -> String {
    format!("→ sub-pipeline {pipeline}")
}

impl Stage {
    /// Sizes a stage's box around its wrapped text.
    fn new(node: &Node) -> Self {
        let mut lines = Vec::new();
        let mut headline = wrap(&details::headline(node), WRAP_COLUMNS).into_iter();
        lines.extend(headline.next().map(Line::Headline));
        lines.extend(headline.map(Line::Continued));
        for (label, value) in details::facts(node) {
            // Wrapped with its label, so the first line's width counts it.
            let mut wrapped = wrap(&format!("{label}: {value}"), WRAP_COLUMNS).into_iter();
            let first = wrapped.next().unwrap_or_default();
            lines.push(Line::Fact {
                label,
                value: first.split_once(' ').map_or("", |(_, value)| value).to_string(),
            });
            lines.extend(wrapped.map(Line::Continued));
        }
        if let Some(child) = &node.children {
            lines.push(Line::Reference(child.pipeline.clone()));
        }
        let (looped, gated) = (node.iteration.is_some(), node.gate.is_some());
        let name_width = node.name.width() as f64 * NAME_SIZE * COLUMN + if gated { GATE_ROOM } else { 0.0 };
        let text_width = lines
            .iter()
            .map(|line| line.columns() as f64 * TEXT_SIZE * COLUMN)
            .fold(name_width, f64::max);
        let stack = if looped { STACK } else { 0.0 };
        Stage {
            width: text_width + 2.0 * PADDING + stack,
            height: 2.0 * PADDING + NAME_HEIGHT + lines.len() as f64 * LINE_HEIGHT + stack,
            name: node.name.clone(),
            lines,
            fill: details::fill(&node.kind),
            conditional: node.condition.is_some(),
            looped,
            gated,
        }
    }

    /// Draws the box in `rect`; a looping stage's card peeks out of its
    /// bottom-right, inside `rect`, so arrows still meet its border.
    fn draw(&self, rect: Rect, out: &mut String) {
        let stack = if self.looped { STACK } else { 0.0 };
        let face = Rect {
            width: rect.width - stack,
            height: rect.height - stack,
            ..rect
        };
        let dash = if self.conditional {
            format!(r#" stroke-dasharray="{CONDITIONAL_DASH}""#)
        } else {
            String::new()
        };
        if self.looped {
            card(
                Rect {
                    x: rect.x + STACK,
                    y: rect.y + STACK,
                    ..face
                },
                self.fill,
                &dash,
                out,
            );
        }
        card(face, self.fill, &dash, out);
        if self.gated {
            gate_mark((face.right() - PADDING - 4.0, face.y + PADDING + 7.0), out);
        }
        let left = face.x + PADDING;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="{NAME_SIZE}" font-weight="bold" fill="{INK}">{}</text>"#,
            number(left),
            number(face.y + PADDING + NAME_SIZE),
            escape_xml(&self.name)
        );
        for (index, line) in self.lines.iter().enumerate() {
            let baseline = number(face.y + PADDING + NAME_HEIGHT + index as f64 * LINE_HEIGHT + TEXT_SIZE);
            let _ = match line {
                Line::Headline(text) => writeln!(
                    out,
                    r#"<text x="{}" y="{baseline}" fill="{MUTED}" xml:space="preserve">{}</text>"#,
                    number(left),
                    escape_xml(text)
                ),
                Line::Fact { label, value } => writeln!(
                    out,
                    r#"<text x="{}" y="{baseline}" fill="{INK}" xml:space="preserve"><tspan fill="{MUTED}">{label}:</tspan> {}</text>"#,
                    number(left),
                    escape_xml(value)
                ),
                Line::Continued(text) => writeln!(
                    out,
                    r#"<text x="{}" y="{baseline}" fill="{INK}" xml:space="preserve">{}</text>"#,
                    number(left + CONTINUATION_INDENT as f64 * TEXT_SIZE * COLUMN),
                    escape_xml(text)
                ),
                Line::Reference(pipeline) => writeln!(
                    out,
                    r##"<a href="#{}"><text x="{}" y="{baseline}" fill="{LINK}" font-weight="bold">{}</text></a>"##,
                    clusters::id(pipeline),
                    number(left),
                    escape_xml(&reference(pipeline))
                ),
            };
        }
    }
}

/// A rounded stage card; `dash` is empty or a dasharray attribute.
fn card(rect: Rect, fill: &str, dash: &str, out: &mut String) {
    let _ = writeln!(
        out,
        r#"<rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{fill}" stroke="{STROKE}" stroke-width="1.2"{dash}/>"#,
        number(rect.x),
        number(rect.y),
        number(rect.width),
        number(rect.height)
    );
}

/// The diamond that marks a schema-gated stage, centred on `centre`.
fn gate_mark((x, y): Point, out: &mut String) {
    let _ = writeln!(
        out,
        r#"<path d="M{},{} L{},{} L{},{} L{},{} z" fill="{GATE}"/>"#,
        number(x),
        number(y - 6.0),
        number(x + 5.0),
        number(y),
        number(x),
        number(y + 6.0),
        number(x - 5.0),
        number(y)
    );
}

/// An SVG path through `points`, which are joined by straight runs.
fn path(points: &[Point]) -> String {
    let mut path = String::new();
    for (index, &(x, y)) in points.iter().enumerate() {
        let command = if index == 0 { 'M' } else { 'L' };
        let separator = if index == 0 { "" } else { " " };
        let _ = write!(path, "{separator}{command}{},{}", number(x), number(y));
    }
    path
}

/// The width of `text` in pixels at font `size`.
fn text_width(text: &str, size: f64) -> f64 {
    text.width() as f64 * size * COLUMN
}

/// Splits `text` into lines of at most `columns` display columns, at spaces
/// where it can and inside a word only when the word alone is too long.
fn wrap(text: &str, columns: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        for piece in split_long_word(word, columns) {
            if current.is_empty() {
                current = piece;
            } else if current.width() + 1 + piece.width() <= columns {
                current.push(' ');
                current.push_str(&piece);
            } else {
                lines.push(std::mem::replace(&mut current, piece));
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

fn split_long_word(word: &str, columns: usize) -> Vec<String> {
    let mut pieces = vec![String::new()];
    for c in word.chars() {
        let piece = pieces.last_mut().expect("starts with one piece");
        if !piece.is_empty() && piece.width() + c.to_string().width() > columns {
            pieces.push(c.to_string());
        } else {
            piece.push(c);
        }
    }
    pieces
}

/// A coordinate with at most one decimal, so output is stable and compact.
fn number(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn is_well_formed_xml_with_escaped_text() {
        let text = render(&sample::graph());
        let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let all: String = root
            .descendants()
            .filter(|node| node.is_text())
            .filter_map(|node| node.text())
            .collect();
        assert!(
            all.contains(r#"emit "<none> & done""#),
            "the parser reads back the raw text"
        );
        assert!(all.contains(r#""deep" }}"#));
        assert!(text.contains("&lt;none&gt; &amp; done"));
    }

    #[test]
    fn draws_the_sub_pipeline_once_as_a_cluster_the_running_stage_links_to() {
        let mut graph = sample::graph();
        // A second stage running the same sub-pipeline adds a link, not a copy.
        let mut again = graph.nodes[2].clone();
        again.name = "retrieve-again".into();
        graph.nodes.push(again);
        graph.edges.push((2, 4));
        let text = render(&graph);
        let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let clusters: Vec<_> = document
            .descendants()
            .filter(|node| node.attribute("id") == Some("cluster-search-retrieve"))
            .collect();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].attribute("data-pipeline"), Some("search/retrieve"));
        let names: Vec<&str> = clusters[0].descendants().filter_map(|node| node.text()).collect();
        assert!(names.contains(&"packages") && names.contains(&"rank"));
        assert!(!names.contains(&"validate"));
        let links = document
            .descendants()
            .filter(|node| node.attribute("href") == Some("#cluster-search-retrieve"))
            .count();
        assert_eq!(links, 2, "retrieve and retrieve-again link to it");
        let arrows = document
            .descendants()
            .filter(|node| node.attribute("marker-end") == Some("url(#arrow)"))
            .count();
        assert_eq!(
            arrows,
            5 + 1 + 1,
            "five edges in the main flow, one in the cluster, the legend's"
        );
        assert_eq!(text.matches(">packages<").count(), 1, "drawn once");
    }

    #[test]
    fn has_a_legend_beside_the_flow() {
        let text = render(&sample::graph());
        let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let legend = document
            .descendants()
            .find(|node| node.attribute("id") == Some("legend"))
            .expect("a legend");
        let words: String = legend.descendants().filter_map(|node| node.text()).collect();
        for (label, _, _) in details::FAMILIES {
            assert!(words.contains(label), "{label} is explained");
        }
        assert!(words.contains("schema gate") && words.contains("drawn once"));
    }

    #[test]
    fn the_main_flow_is_well_drawn() {
        let graph = sample::graph();
        let diagram = Diagram::new(&graph, vec!["search".into()], TITLE_SIZE);
        layout::tests::assert_well_drawn(&graph, &diagram.flow);
        for (stage, rect) in diagram.stages.iter().zip(&diagram.flow.boxes) {
            assert_eq!((stage.width, stage.height), (rect.width, rect.height));
        }
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render(&sample::graph()), render(&sample::graph()));
    }

    #[test]
    fn wraps_at_spaces_and_splits_only_overlong_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(wrap("", 3), [""]);
        assert_eq!(
            wrap("탑다운 좀비", 6),
            ["탑다운", "좀비"],
            "a Hangul syllable is two columns"
        );
    }

    #[test]
    fn escape_xml_drops_characters_xml_forbids() {
        assert_eq!(escape_xml("a<b>&'\"\u{1}"), "a&lt;b&gt;&amp;&apos;&quot;");
    }
}
