//! The legend: what each fill, border and mark of the picture means, drawn
//! with the same helpers as the stages so it cannot drift from them.

use std::fmt::Write;

use super::layout::{Point, Rect};
use super::{card, details, escape_xml, gate_mark, number, text_width, CONDITIONAL_DASH, INK, LINK, STROKE, TEXT_SIZE};

const PADDING: f64 = 12.0;
const ROW_HEIGHT: f64 = 22.0;
/// The sample drawn left of each explanation.
const SAMPLE_WIDTH: f64 = 44.0;
const SAMPLE_HEIGHT: f64 = 15.0;
const SAMPLE_GAP: f64 = 10.0;
const HEADING: &str = "Legend";

/// A legend row's sample.
enum Sample {
    Fill(&'static str),
    Conditional,
    Looped,
    Gate,
    Reference,
    Cluster,
    Arrow,
}

fn rows() -> Vec<(Sample, String)> {
    let mut rows: Vec<(Sample, String)> = details::FAMILIES
        .iter()
        .map(|&(label, _, fill)| (Sample::Fill(fill), label.to_string()))
        .collect();
    rows.extend([
        (Sample::Fill(details::OTHER_FILL), "other actions".to_string()),
        (
            Sample::Conditional,
            "dashed: runs only when its condition holds (guards, fallbacks)".to_string(),
        ),
        (
            Sample::Looped,
            "stacked: runs many times (for_each, map_reduce, repeat)".to_string(),
        ),
        (Sample::Gate, "output checked by a schema gate".to_string()),
        (
            Sample::Reference,
            "runs the sub-pipeline drawn once at the side".to_string(),
        ),
        (
            Sample::Cluster,
            "a sub-pipeline, drawn once (named, with who runs it)".to_string(),
        ),
        (Sample::Arrow, "runs after (needs)".to_string()),
    ]);
    rows
}

/// The legend's width and height.
pub(super) fn size() -> (f64, f64) {
    let rows = rows();
    let text = rows
        .iter()
        .map(|(_, label)| text_width(label, TEXT_SIZE))
        .fold(text_width(HEADING, TEXT_SIZE + 1.0), f64::max);
    (
        2.0 * PADDING + SAMPLE_WIDTH + SAMPLE_GAP + text,
        2.0 * PADDING + (rows.len() + 1) as f64 * ROW_HEIGHT,
    )
}

/// Draws the legend with its top-left corner at `(x, y)`.
pub(super) fn draw((x, y): Point, out: &mut String) {
    let (width, height) = size();
    let _ = writeln!(
        out,
        r#"<g id="legend" transform="translate({},{})">"#,
        number(x),
        number(y)
    );
    let _ = writeln!(
        out,
        r##"<rect width="{}" height="{}" rx="8" fill="#ffffff" stroke="{STROKE}"/>"##,
        number(width),
        number(height)
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="{}" font-weight="bold" fill="{INK}">{HEADING}</text>"#,
        number(PADDING),
        number(PADDING + TEXT_SIZE + 2.0),
        number(TEXT_SIZE + 1.0)
    );
    for (index, (sample, label)) in rows().iter().enumerate() {
        let top = PADDING + (index + 1) as f64 * ROW_HEIGHT;
        let rect = Rect {
            x: PADDING,
            y: top + (ROW_HEIGHT - SAMPLE_HEIGHT) / 2.0,
            width: SAMPLE_WIDTH,
            height: SAMPLE_HEIGHT,
        };
        draw_sample(sample, rect, out);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" fill="{INK}">{}</text>"#,
            number(PADDING + SAMPLE_WIDTH + SAMPLE_GAP),
            number(top + ROW_HEIGHT / 2.0 + TEXT_SIZE * 0.35),
            escape_xml(label)
        );
    }
    out.push_str("</g>\n");
}

fn draw_sample(sample: &Sample, rect: Rect, out: &mut String) {
    let plain = details::OTHER_FILL;
    match sample {
        Sample::Fill(fill) => card(rect, fill, "", out),
        Sample::Conditional => card(rect, plain, &format!(r#" stroke-dasharray="{CONDITIONAL_DASH}""#), out),
        Sample::Looped => {
            let face = Rect {
                width: rect.width - 4.0,
                height: rect.height - 4.0,
                ..rect
            };
            card(
                Rect {
                    x: rect.x + 4.0,
                    y: rect.y + 4.0,
                    ..face
                },
                plain,
                "",
                out,
            );
            card(face, plain, "", out);
        }
        Sample::Gate => gate_mark((rect.x + rect.width / 2.0, rect.y + rect.height / 2.0), out),
        Sample::Reference => {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" fill="{LINK}" font-weight="bold">→ name</text>"#,
                number(rect.x - 2.0),
                number(rect.bottom() - 3.0)
            );
        }
        Sample::Cluster => {
            let _ = writeln!(
                out,
                r##"<rect x="{}" y="{}" width="{}" height="{}" rx="4" fill="#fafafa" stroke="{STROKE}" stroke-dasharray="6 4"/>"##,
                number(rect.x),
                number(rect.y),
                number(rect.width),
                number(rect.height)
            );
        }
        Sample::Arrow => {
            let middle = number(rect.y + rect.height / 2.0);
            let _ = writeln!(
                out,
                r#"<path d="M{},{middle} L{},{middle}" stroke="{STROKE}" stroke-width="1.3" marker-end="url(#arrow)"/>"#,
                number(rect.x),
                number(rect.right())
            );
        }
    }
}
