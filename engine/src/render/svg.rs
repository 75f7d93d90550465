//! An SVG picture drawn in-process, with no external program.
//!
//! Stages sit in longest-path layers, top to bottom; each is a box with its
//! name in bold, its kind and target, and its facts. An edge that skips layers
//! runs through a narrow lane reserved in every row it crosses, so arrows never
//! cut through boxes. A `run` stage's sub-pipeline is laid out the same way
//! and drawn inside its box (recursively), so one picture shows the whole flow.
//! Text is monospace, so its width is known without a font engine.

use std::fmt::Write;

use unicode_width::UnicodeWidthStr;

use super::{details, layers, Graph, Node};

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
/// Inside a stage box, around its text and its sub-pipeline.
const PADDING: f64 = 10.0;
/// Around a whole graph.
const MARGIN: f64 = 14.0;
const COLUMN_GAP: f64 = 28.0;
const ROW_GAP: f64 = 42.0;
/// The room a layer-skipping edge takes in each row it passes through.
const LANE_WIDTH: f64 = 12.0;
/// The horizontal distance between arrows leaving or entering one box.
const PORT_SPACING: f64 = 18.0;
const INK: &str = "#263238";
const MUTED: &str = "#607d8b";
const STROKE: &str = "#5c6b7a";

pub(super) fn render(graph: &Graph) -> String {
    let layout = lay_out(graph, false);
    let (width, height) = (number(layout.width), number(layout.height));
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
    draw(&layout, &mut out);
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

type Point = (f64, f64);

/// A graph laid out with its top-left corner at the origin.
struct Layout {
    width: f64,
    height: f64,
    title: Vec<String>,
    /// Nested graphs have a smaller, plain title.
    nested: bool,
    /// One per node, in node order.
    boxes: Vec<StageBox>,
    /// One polyline per edge, from a box's bottom to a box's top.
    arrows: Vec<Vec<Point>>,
}

struct StageBox {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    name: String,
    lines: Vec<Line>,
    fill: &'static str,
    child: Option<Layout>,
}

/// One line of text under a stage's name.
enum Line {
    Headline(String),
    Fact { label: &'static str, value: String },
    Continued(String),
}

impl Line {
    fn columns(&self) -> usize {
        match self {
            Line::Headline(text) => text.width(),
            Line::Fact { label, value } => label.width() + 2 + value.width(),
            Line::Continued(text) => CONTINUATION_INDENT + text.width(),
        }
    }
}

/// A place in a row: a stage, or the lane of an edge passing through.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Stage(usize),
    Lane(usize),
}

/// Lays out `graph`; a `nested` one is a sub-pipeline inside a stage box.
fn lay_out(graph: &Graph, nested: bool) -> Layout {
    let title = wrap(&details::title(graph), TITLE_WRAP_COLUMNS);
    let title_size = if nested { TEXT_SIZE } else { TITLE_SIZE };
    let title_width = title.iter().map(|line| line.width()).max().unwrap_or(0) as f64 * title_size * COLUMN;
    let title_height = title.len() as f64 * (title_size + 5.0) + 6.0;

    let mut boxes: Vec<StageBox> = graph.nodes.iter().map(size_box).collect();
    let edges: Vec<(usize, usize)> = layers::drawable_edges(graph).collect();
    let rows = order_rows(graph, &edges);
    let slot_width = |slot: &Slot, boxes: &[StageBox]| match *slot {
        Slot::Stage(node) => boxes[node].width,
        Slot::Lane(_) => LANE_WIDTH,
    };
    let row_widths: Vec<f64> = rows
        .iter()
        .map(|row| {
            row.iter().map(|slot| slot_width(slot, &boxes)).sum::<f64>()
                + COLUMN_GAP * row.len().saturating_sub(1) as f64
        })
        .collect();
    let content_width = row_widths.iter().copied().fold(title_width, f64::max);

    let mut lanes: Vec<Vec<Point>> = vec![Vec::new(); edges.len()];
    let mut y = MARGIN + title_height;
    for (row, row_width) in rows.iter().zip(&row_widths) {
        let row_height = row
            .iter()
            .filter_map(|slot| match *slot {
                Slot::Stage(node) => Some(boxes[node].height),
                Slot::Lane(_) => None,
            })
            .fold(LINE_HEIGHT, f64::max);
        let mut x = MARGIN + (content_width - row_width) / 2.0;
        for slot in row {
            match *slot {
                Slot::Stage(node) => {
                    boxes[node].x = x;
                    boxes[node].y = y;
                }
                Slot::Lane(edge) => {
                    let middle = x + LANE_WIDTH / 2.0;
                    lanes[edge].extend([(middle, y), (middle, y + row_height)]);
                }
            }
            x += slot_width(slot, &boxes) + COLUMN_GAP;
        }
        y += row_height + ROW_GAP;
    }
    let height = if rows.is_empty() { y } else { y - ROW_GAP } + MARGIN;
    let arrows = route(&boxes, &edges, lanes);
    Layout {
        width: content_width + 2.0 * MARGIN,
        height,
        title,
        nested,
        boxes,
        arrows,
    }
}

/// Sizes a stage's box around its wrapped text and its laid-out sub-pipeline.
fn size_box(node: &Node) -> StageBox {
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
    let child = node.children.as_ref().map(|graph| lay_out(graph, true));
    let text_width = lines
        .iter()
        .map(|line| line.columns() as f64 * TEXT_SIZE * COLUMN)
        .fold(node.name.width() as f64 * NAME_SIZE * COLUMN, f64::max);
    let child_width = child.as_ref().map_or(0.0, |child| child.width);
    let child_height = child.as_ref().map_or(0.0, |child| child.height + PADDING);
    StageBox {
        x: 0.0,
        y: 0.0,
        width: text_width.max(child_width) + 2.0 * PADDING,
        height: 2.0 * PADDING + NAME_HEIGHT + lines.len() as f64 * LINE_HEIGHT + child_height,
        name: node.name.clone(),
        lines,
        fill: details::fill(&node.kind),
        child,
    }
}

/// The rows of slots, top first: each layer's stages plus a lane for every
/// edge that passes through it. Each row after the first is ordered by the
/// mean position of what feeds it in the row above, which untangles most
/// crossings; ties keep node order, so the result is deterministic.
fn order_rows(graph: &Graph, edges: &[(usize, usize)]) -> Vec<Vec<Slot>> {
    let layers = layers::layers(graph);
    let mut layer_of = vec![0; graph.nodes.len()];
    for (layer, nodes) in layers.iter().enumerate() {
        for &node in nodes {
            layer_of[node] = layer;
        }
    }
    let mut rows: Vec<Vec<Slot>> = layers
        .iter()
        .map(|nodes| nodes.iter().map(|&node| Slot::Stage(node)).collect())
        .collect();
    for (edge, &(from, to)) in edges.iter().enumerate() {
        let crossed = rows.iter_mut().take(layer_of[to]).skip(layer_of[from] + 1);
        for row in crossed {
            row.push(Slot::Lane(edge));
        }
    }
    // What occupies the row above for `edge`, when it reaches `row` from higher up.
    let feeder = |edge: usize, row: usize| {
        let from = edges[edge].0;
        match layer_of[from] + 1 {
            above if above == row => Some(Slot::Stage(from)),
            above if above < row => Some(Slot::Lane(edge)),
            _ => None,
        }
    };
    for row in 1..rows.len() {
        let previous = rows[row - 1].clone();
        let mut keyed: Vec<(f64, Slot)> = rows[row]
            .iter()
            .enumerate()
            .map(|(own_position, &slot)| {
                let feeders: Vec<Slot> = match slot {
                    Slot::Lane(edge) => feeder(edge, row).into_iter().collect(),
                    Slot::Stage(node) => (0..edges.len())
                        .filter(|&edge| edges[edge].1 == node)
                        .filter_map(|edge| feeder(edge, row))
                        .collect(),
                };
                let positions: Vec<f64> = feeders
                    .iter()
                    .filter_map(|feeder| previous.iter().position(|slot| slot == feeder))
                    .map(|position| position as f64)
                    .collect();
                let key = if positions.is_empty() {
                    own_position as f64
                } else {
                    positions.iter().sum::<f64>() / positions.len() as f64
                };
                (key, slot)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        rows[row] = keyed.into_iter().map(|(_, slot)| slot).collect();
    }
    rows
}

/// Each edge's polyline: out of its source's bottom, through its lanes, into
/// its target's top. Several arrows on one side of a box are spread apart,
/// ordered by where they head, so they neither overlap nor cross at the box.
fn route(boxes: &[StageBox], edges: &[(usize, usize)], lanes: Vec<Vec<Point>>) -> Vec<Vec<Point>> {
    let centre = |node: usize| boxes[node].x + boxes[node].width / 2.0;
    let mut starts = vec![0.0; edges.len()];
    let mut ends = vec![0.0; edges.len()];
    for (node, stage) in boxes.iter().enumerate() {
        let mut leaving: Vec<(f64, usize)> = (0..edges.len())
            .filter(|&edge| edges[edge].0 == node)
            .map(|edge| (lanes[edge].first().map_or(centre(edges[edge].1), |p| p.0), edge))
            .collect();
        let mut entering: Vec<(f64, usize)> = (0..edges.len())
            .filter(|&edge| edges[edge].1 == node)
            .map(|edge| (lanes[edge].last().map_or(centre(edges[edge].0), |p| p.0), edge))
            .collect();
        for (ports, positions) in [(&mut leaving, &mut starts), (&mut entering, &mut ends)] {
            ports.sort_by(|a, b| a.0.total_cmp(&b.0));
            let count = ports.len() as f64;
            let spacing = PORT_SPACING.min((stage.width - 2.0 * PADDING) / count.max(1.0));
            for (rank, &(_, edge)) in ports.iter().enumerate() {
                positions[edge] = centre(node) + (rank as f64 - (count - 1.0) / 2.0) * spacing;
            }
        }
    }
    edges
        .iter()
        .zip(lanes)
        .enumerate()
        .map(|(edge, (&(from, to), lane))| {
            let source = &boxes[from];
            let start = (starts[edge], source.y + source.height);
            let end = (ends[edge], boxes[to].y);
            std::iter::once(start).chain(lane).chain([end]).collect()
        })
        .collect()
}

/// Draws a laid-out graph at the origin of the current coordinate system.
fn draw(layout: &Layout, out: &mut String) {
    let (size, weight, colour) = if layout.nested {
        (TEXT_SIZE, "normal", MUTED)
    } else {
        (TITLE_SIZE, "bold", INK)
    };
    for (index, line) in layout.title.iter().enumerate() {
        let baseline = MARGIN + size + index as f64 * (size + 5.0);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="{size}" font-weight="{weight}" fill="{colour}">{}</text>"#,
            number(MARGIN),
            number(baseline),
            escape_xml(line)
        );
    }
    for arrow in &layout.arrows {
        let _ = writeln!(
            out,
            r#"<path d="{}" fill="none" stroke="{STROKE}" stroke-width="1.3" marker-end="url(#arrow)"/>"#,
            path(arrow)
        );
    }
    for stage in &layout.boxes {
        draw_box(stage, out);
    }
}

fn draw_box(stage: &StageBox, out: &mut String) {
    let _ = writeln!(
        out,
        r#"<rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{}" stroke="{STROKE}" stroke-width="1.2"/>"#,
        number(stage.x),
        number(stage.y),
        number(stage.width),
        number(stage.height),
        stage.fill
    );
    let left = stage.x + PADDING;
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="{NAME_SIZE}" font-weight="bold" fill="{INK}">{}</text>"#,
        number(left),
        number(stage.y + PADDING + NAME_SIZE),
        escape_xml(&stage.name)
    );
    for (index, line) in stage.lines.iter().enumerate() {
        let baseline = stage.y + PADDING + NAME_HEIGHT + index as f64 * LINE_HEIGHT + TEXT_SIZE;
        let (x, content) = match line {
            Line::Headline(text) => (left, format!(r#"<tspan fill="{MUTED}">{}</tspan>"#, escape_xml(text))),
            Line::Fact { label, value } => (
                left,
                format!(r#"<tspan fill="{MUTED}">{label}:</tspan> {}"#, escape_xml(value)),
            ),
            Line::Continued(text) => (left + CONTINUATION_INDENT as f64 * TEXT_SIZE * COLUMN, escape_xml(text)),
        };
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" fill="{INK}" xml:space="preserve">{content}</text>"#,
            number(x),
            number(baseline)
        );
    }
    if let Some(child) = &stage.child {
        let x = stage.x + (stage.width - child.width) / 2.0;
        let y = stage.y + stage.height - PADDING - child.height;
        let _ = writeln!(
            out,
            r##"<g transform="translate({},{})"><rect width="{}" height="{}" rx="6" fill="#ffffff" fill-opacity="0.85" stroke="{STROKE}" stroke-dasharray="4 3"/>"##,
            number(x),
            number(y),
            number(child.width),
            number(child.height)
        );
        draw(child, out);
        out.push_str("</g>\n");
    }
}

/// An SVG path through `points`: straight where vertical, an S-curve
/// otherwise, so every arrow leaves and arrives vertically.
fn path(points: &[Point]) -> String {
    let mut path = String::new();
    for (index, &(x, y)) in points.iter().enumerate() {
        if index == 0 {
            let _ = write!(path, "M{},{}", number(x), number(y));
            continue;
        }
        let (px, py) = points[index - 1];
        if (px - x).abs() < 0.05 {
            let _ = write!(path, " L{},{}", number(x), number(y));
        } else {
            let middle = number((py + y) / 2.0);
            let _ = write!(
                path,
                " C{},{middle} {},{middle} {},{}",
                number(px),
                number(x),
                number(x),
                number(y)
            );
        }
    }
    path
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

    /// Every box of `layout`, with its absolute rectangle, depth first.
    fn rectangles(layout: &Layout, (dx, dy): Point, out: &mut Vec<(String, [f64; 4])>) {
        for stage in &layout.boxes {
            let (x, y) = (stage.x + dx, stage.y + dy);
            out.push((stage.name.clone(), [x, y, x + stage.width, y + stage.height]));
            if let Some(child) = &stage.child {
                let origin = (
                    x + (stage.width - child.width) / 2.0,
                    y + stage.height - PADDING - child.height,
                );
                rectangles(child, origin, out);
            }
        }
    }

    fn inside(inner: [f64; 4], outer: [f64; 4]) -> bool {
        inner[0] >= outer[0] && inner[1] >= outer[1] && inner[2] <= outer[2] && inner[3] <= outer[3]
    }

    #[test]
    fn is_well_formed_xml_with_escaped_text() {
        let text = render(&sample::graph());
        let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let texts: Vec<String> = root
            .descendants()
            .filter(|node| node.is_text())
            .filter_map(|node| node.text())
            .map(str::to_string)
            .collect();
        let all = texts.concat();
        assert!(
            all.contains(r#"emit "<none> & done""#),
            "the parser reads back the raw text"
        );
        assert!(all.contains(r#""deep" }}"#));
        assert!(text.contains("&lt;none&gt; &amp; done"));
    }

    #[test]
    fn draws_an_arrow_per_edge_and_the_sub_pipeline_inside_its_stage() {
        let text = render(&sample::graph());
        let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let arrows = document
            .descendants()
            .filter(|node| node.attribute("marker-end") == Some("url(#arrow)"))
            .count();
        assert_eq!(arrows, 4 + 1, "four edges outside, one inside the sub-pipeline");
        let group = document
            .descendants()
            .find(|node| node.has_tag_name("g"))
            .expect("the sub-pipeline is a group");
        let names: Vec<&str> = group.descendants().filter_map(|node| node.text()).collect();
        assert!(names.contains(&"packages") && names.contains(&"rank"));
        assert!(!names.contains(&"validate"));
    }

    #[test]
    fn nested_boxes_sit_inside_their_parent_and_siblings_never_overlap() {
        let layout = lay_out(&sample::graph(), false);
        let mut boxes = Vec::new();
        rectangles(&layout, (0.0, 0.0), &mut boxes);
        let find = |name: &str| boxes.iter().find(|(n, _)| n == name).map(|(_, r)| *r).expect(name);
        assert!(inside(find("packages"), find("retrieve")));
        assert!(inside(find("rank"), find("retrieve")));
        for (name, rectangle) in &boxes {
            assert!(
                inside(*rectangle, [0.0, 0.0, layout.width, layout.height]),
                "{name} is cut off"
            );
        }
        let top: Vec<[f64; 4]> = layout
            .boxes
            .iter()
            .map(|b| [b.x, b.y, b.x + b.width, b.y + b.height])
            .collect();
        for (i, a) in top.iter().enumerate() {
            for b in &top[i + 1..] {
                let apart = a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1];
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
    }

    #[test]
    fn a_layer_skipping_edge_runs_through_a_lane_beside_the_boxes_it_passes() {
        let layout = lay_out(&sample::graph(), false);
        // Edge 3 is validate → answer, passing the rows of route and retrieve.
        let arrow = &layout.arrows[3];
        assert_eq!(arrow.len(), 2 + 4, "start, two points per crossed row, end");
        for &(x, y) in &arrow[1..arrow.len() - 1] {
            for stage in &layout.boxes {
                let through = x > stage.x && x < stage.x + stage.width && y > stage.y && y < stage.y + stage.height;
                assert!(!through, "the lane at ({x}, {y}) cuts through {}", stage.name);
            }
        }
        let (validate, answer) = (&layout.boxes[0], &layout.boxes[3]);
        assert_eq!(arrow[0].1, validate.y + validate.height);
        assert_eq!(arrow[arrow.len() - 1].1, answer.y);
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
