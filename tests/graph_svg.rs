//! `graph --format svg` as a person sees it: the embedded pipelines are drawn
//! through the CLI, rendered to pixels with resvg, and checked for a picture
//! that fits a screen, draws each sub-pipeline once, routes no arrow through
//! a box and has a legend.

use std::collections::BTreeMap;
use std::path::Path;

use test_support::cli::{self, Run};

/// The old renderer drew `search` 1556×6890 px, expanding every sub-pipeline
/// inside each stage that runs it (drill-down and map-reduce twice).
const OLD_SEARCH_AREA: f64 = 1556.0 * 6890.0;
// Raised from 3200×3000 when search gained its `semantic` and `fuse` stages and build its
// hidden `caller` input (issues 23 and 24): search 2455×3048, build 3247×3099. Height raised
// to 3300 when search gained its `filters` stage before the hints (issue 25: search 2495×3207,
// build 3287×3258) and map-reduce the builtin's `ranked` stage (issue 26); to 3400, and the
// area share from 75% to 80%, when both landed together (search 2561×3325, build 3353×3376); to
// 3500 and 86% when search's `semantic` stage began to feed the word ranker (its word meanings:
// drill-down, map-reduce and the fallbacks wait for it) and `fuse` the name channel (issue 40:
// search 2681×3403, build 3473×3454).
const MAX_WIDTH: u32 = 3500;
const MAX_HEIGHT: u32 = 3500;

/// Runs `unity-assets graph NAME --format FORMAT` in an empty project.
fn graph(project: &Path, name: &str, format: &str) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_unity-assets"));
    let run = Run::of(cli::command(bin, project).args(["graph", name, "--format", format]));
    assert_eq!(run.code, 0, "graph {name} --format {format}: {}", run.output());
    run.stdout
}

/// Every sub-pipeline the graph runs, however deep, from `--format json`.
fn sub_pipelines(graph: &serde_json::Value, found: &mut Vec<String>) {
    for node in graph["nodes"].as_array().into_iter().flatten() {
        if let Some(child) = node.get("children").filter(|c| !c.is_null()) {
            let name = child["pipeline"].as_str().expect("pipeline name").to_string();
            if !found.contains(&name) {
                found.push(name);
            }
            sub_pipelines(child, found);
        }
    }
}

/// Renders `svg` to a pixmap as a viewer would (system fonts), saving a PNG
/// beside the test's temporary files for a look; returns the pixel size.
fn rasterise(name: &str, svg: &str) -> (u32, u32) {
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &options).expect("usvg parses the SVG");
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("a non-empty picture");
    resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("graph-{name}.png"));
    pixmap.save_png(&png).expect("writes the PNG");
    (pixmap.width(), pixmap.height())
}

fn number(node: roxmltree::Node, name: &str) -> f64 {
    node.attribute(name).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

/// Every arrow that passes through the inside of a stage box drawn in the
/// same group (the main flow or one cluster's flow), with that box.
fn arrows_through_boxes(document: &roxmltree::Document) -> Vec<String> {
    let mut found = Vec::new();
    for group in document.descendants().filter(|node| node.has_tag_name("g")) {
        if group.attribute("id") == Some("legend") {
            continue;
        }
        let boxes: Vec<[f64; 4]> = group
            .children()
            .filter(|node| node.has_tag_name("rect") && node.attribute("rx") == Some("6"))
            .map(|rect| {
                let (x, y) = (number(rect, "x"), number(rect, "y"));
                [x, y, x + number(rect, "width"), y + number(rect, "height")]
            })
            .collect();
        let arrows = group
            .children()
            .filter(|node| node.attribute("marker-end").is_some())
            .filter_map(|path| path.attribute("d"));
        for d in arrows {
            let points: Vec<(f64, f64)> = d
                .split(' ')
                .filter_map(|step| step[1..].split_once(','))
                .map(|(x, y)| (x.parse().expect("x"), y.parse().expect("y")))
                .collect();
            for pair in points.windows(2) {
                let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                if x0 != x1 && y0 != y1 {
                    found.push(format!("the arrow {d} bends diagonally"));
                }
                // An orthogonal run enters a box's inside when it overlaps it on both axes.
                let (left, right, top, bottom) = (x0.min(x1), x0.max(x1), y0.min(y1), y0.max(y1));
                if let Some(b) = boxes
                    .iter()
                    .find(|b| left < b[2] - 0.5 && right > b[0] + 0.5 && top < b[3] - 0.5 && bottom > b[1] + 0.5)
                {
                    found.push(format!("the arrow {d} passes through the box at {b:?}"));
                }
            }
        }
    }
    found
}

#[test]
fn embedded_pipelines_render_to_a_screen_sized_picture_with_each_sub_pipeline_once() {
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(project.path().join("Assets")).expect("Assets/");
    let mut problems = Vec::new();
    for name in ["search", "build", "index"] {
        let svg = graph(project.path(), name, "svg");
        let (width, height) = rasterise(name, &svg);
        eprintln!("{name}: {width}×{height} px");
        if width > MAX_WIDTH || height > MAX_HEIGHT {
            problems.push(format!("{name}: {width}×{height} px exceeds {MAX_WIDTH}×{MAX_HEIGHT}"));
        }
        if name == "search" {
            let area = f64::from(width) * f64::from(height);
            if area > 0.86 * OLD_SEARCH_AREA {
                problems.push(format!(
                    "search: {area} px² is {:.0}% of the old renderer's 1556×6890 (at most 86%)",
                    100.0 * area / OLD_SEARCH_AREA
                ));
            }
        }

        let document = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let mut clusters: BTreeMap<&str, usize> = BTreeMap::new();
        for node in document.descendants() {
            if node.attribute("id").is_some_and(|id| id.starts_with("cluster-")) {
                let pipeline = node.attribute("data-pipeline").unwrap_or("(unnamed)");
                *clusters.entry(pipeline).or_default() += 1;
            }
        }
        let json: serde_json::Value = serde_json::from_str(&graph(project.path(), name, "json")).expect("JSON graph");
        let mut expected = Vec::new();
        sub_pipelines(&json, &mut expected);
        for sub in &expected {
            let count = clusters.get(sub.as_str()).copied().unwrap_or(0);
            if count != 1 {
                problems.push(format!("{name}: sub-pipeline {sub} has {count} clusters, not 1"));
            }
        }
        for (pipeline, _) in clusters.iter().filter(|(p, _)| !expected.iter().any(|e| e == *p)) {
            problems.push(format!("{name}: a cluster for {pipeline}, which it never runs"));
        }
        if !document
            .descendants()
            .any(|node| node.attribute("id") == Some("legend"))
        {
            problems.push(format!("{name}: no legend"));
        }
        let through = arrows_through_boxes(&document);
        problems.extend(through.into_iter().map(|problem| format!("{name}: {problem}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
