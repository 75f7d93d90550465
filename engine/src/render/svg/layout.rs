//! Placing one flow's boxes in rows and routing its edges orthogonally.
//!
//! Stages sit in longest-path layers, top to bottom. An edge that skips layers
//! runs down a narrow lane reserved in every row it crosses, and every change
//! of column happens on a horizontal track of its own in the gap between two
//! rows, so no arrow cuts through a box or runs along another arrow.

use super::super::{layers, Graph};

pub(super) type Point = (f64, f64);

/// Between boxes of one row.
const COLUMN_GAP: f64 = 28.0;
/// The least gap between two rows, and the spacing of tracks inside a gap.
const ROW_GAP: f64 = 34.0;
const TRACK_SPACING: f64 = 8.0;
/// Horizontal segments closer than this share no track, so they stay apart.
const TRACK_CLEARANCE: f64 = 6.0;
/// The room a layer-skipping edge takes in each row it passes through.
const LANE_WIDTH: f64 = 12.0;
/// The horizontal distance between arrows leaving or entering one box.
const PORT_SPACING: f64 = 16.0;
/// Ports keep this far from a box's corners.
const PORT_INSET: f64 = 10.0;

/// A box's place; `x`, `y` is its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }
}

/// A flow laid out with its top-left corner at the origin.
pub(super) struct Flow {
    pub width: f64,
    pub height: f64,
    /// One per node, in node order.
    pub boxes: Vec<Rect>,
    /// One orthogonal polyline per drawable edge, from its source's bottom
    /// border to its target's top border.
    pub arrows: Vec<Vec<Point>>,
}

/// A place in a row: a stage, or the lane of an edge passing through.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Stage(usize),
    Lane(usize),
}

/// Lays out `graph` with boxes of `sizes` (width, height), one per node.
pub(super) fn lay_out(graph: &Graph, sizes: &[(f64, f64)]) -> Flow {
    let edges: Vec<(usize, usize)> = layers::drawable_edges(graph).collect();
    let layers = layers::layers(graph);
    let mut row_of = vec![0; graph.nodes.len()];
    for (row, nodes) in layers.iter().enumerate() {
        for &node in nodes {
            row_of[node] = row;
        }
    }
    let rows = order_rows(&layers, &row_of, &edges);

    // Across: each row centred on the widest.
    let slot_width = |slot: &Slot| match *slot {
        Slot::Stage(node) => sizes[node].0,
        Slot::Lane(_) => LANE_WIDTH,
    };
    let row_widths: Vec<f64> = rows
        .iter()
        .map(|row| row.iter().map(slot_width).sum::<f64>() + COLUMN_GAP * row.len().saturating_sub(1) as f64)
        .collect();
    let width = row_widths.iter().copied().fold(0.0, f64::max);
    let mut xs = vec![0.0; graph.nodes.len()];
    // lane_x[edge][row]: where an edge passes a row it crosses.
    let mut lane_x = vec![vec![None; rows.len()]; edges.len()];
    for (row_index, (row, row_width)) in rows.iter().zip(&row_widths).enumerate() {
        let mut x = (width - row_width) / 2.0;
        for slot in row {
            match *slot {
                Slot::Stage(node) => xs[node] = x,
                Slot::Lane(edge) => lane_x[edge][row_index] = Some(x + LANE_WIDTH / 2.0),
            }
            x += slot_width(slot) + COLUMN_GAP;
        }
    }

    // The columns each edge runs down: its start port, its lanes, its end port.
    let columns = ports(&edges, &row_of, &xs, sizes, &lane_x);
    // Horizontal segments per gap (the gap below row `g`), and their tracks.
    let mut segments: Vec<Vec<(f64, f64, usize)>> = vec![Vec::new(); rows.len()];
    for (edge, cols) in columns.iter().enumerate() {
        let top = row_of[edges[edge].0];
        for (step, pair) in cols.windows(2).enumerate() {
            if (pair[0] - pair[1]).abs() > 0.5 {
                segments[top + step].push((pair[0].min(pair[1]), pair[0].max(pair[1]), edge));
            }
        }
    }
    let (track_of, track_counts) = assign_tracks(&segments, edges.len());

    // Down: each row as tall as its tallest box, each gap as tall as its tracks need.
    let row_heights: Vec<f64> = rows
        .iter()
        .map(|row| {
            row.iter()
                .filter_map(|slot| match *slot {
                    Slot::Stage(node) => Some(sizes[node].1),
                    Slot::Lane(_) => None,
                })
                .fold(0.0, f64::max)
        })
        .collect();
    let gap_heights: Vec<f64> = track_counts
        .iter()
        .map(|&tracks| ROW_GAP.max((tracks + 1) as f64 * TRACK_SPACING))
        .collect();
    let mut row_tops = Vec::with_capacity(rows.len());
    let mut y = 0.0;
    for (row, height) in row_heights.iter().enumerate() {
        row_tops.push(y);
        y += height + gap_heights[row];
    }
    let height = if rows.is_empty() {
        0.0
    } else {
        y - gap_heights[rows.len() - 1]
    };
    let boxes: Vec<Rect> = (0..graph.nodes.len())
        .map(|node| Rect {
            x: xs[node],
            y: row_tops[row_of[node]],
            width: sizes[node].0,
            height: sizes[node].1,
        })
        .collect();

    let arrows = edges
        .iter()
        .enumerate()
        .map(|(edge, &(from, to))| {
            let cols = &columns[edge];
            let start = (cols[0], boxes[from].bottom());
            let end = (cols[cols.len() - 1], boxes[to].y);
            let mut points = vec![start];
            for (step, pair) in cols.windows(2).enumerate() {
                let gap = row_of[from] + step;
                if let Some(track) = track_of[edge].get(&gap) {
                    let spacing = gap_heights[gap] / (track_counts[gap] + 1) as f64;
                    let track_y = row_tops[gap] + row_heights[gap] + (track + 1) as f64 * spacing;
                    points.extend([(pair[0], track_y), (pair[1], track_y)]);
                }
            }
            points.push(end);
            simplify(points)
        })
        .collect();
    Flow {
        width,
        height,
        boxes,
        arrows,
    }
}

/// The rows of slots, top first: each layer's stages plus a lane for every
/// edge that passes through it. Each row after the first is ordered by the
/// mean position of what feeds it in the row above, which untangles most
/// crossings; ties keep node order, so the result is deterministic.
fn order_rows(layers: &[Vec<usize>], row_of: &[usize], edges: &[(usize, usize)]) -> Vec<Vec<Slot>> {
    let mut rows: Vec<Vec<Slot>> = layers
        .iter()
        .map(|nodes| nodes.iter().map(|&node| Slot::Stage(node)).collect())
        .collect();
    for (edge, &(from, to)) in edges.iter().enumerate() {
        for row in rows.iter_mut().take(row_of[to]).skip(row_of[from] + 1) {
            row.push(Slot::Lane(edge));
        }
    }
    // What occupies the row above for `edge`, when it reaches `row` from higher up.
    let feeder = |edge: usize, row: usize| {
        let from = edges[edge].0;
        match row_of[from] + 1 {
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

/// Each edge's columns: where it leaves its source, each lane it runs down,
/// and where it enters its target. Several arrows on one side of a box are
/// spread apart, ordered by where they head, so they do not cross at the box.
/// An edge that does not point downwards (only in a cyclic graph, which the
/// compiler rejects) goes straight from port to port.
fn ports(
    edges: &[(usize, usize)],
    row_of: &[usize],
    xs: &[f64],
    sizes: &[(f64, f64)],
    lane_x: &[Vec<Option<f64>>],
) -> Vec<Vec<f64>> {
    let centre = |node: usize| xs[node] + sizes[node].0 / 2.0;
    let lanes = |edge: usize| lane_x[edge].iter().flatten().copied();
    let mut starts = vec![0.0; edges.len()];
    let mut ends = vec![0.0; edges.len()];
    for (node, &(width, _)) in sizes.iter().enumerate() {
        let mut leaving: Vec<(f64, usize)> = (0..edges.len())
            .filter(|&edge| edges[edge].0 == node)
            .map(|edge| (lanes(edge).next().unwrap_or(centre(edges[edge].1)), edge))
            .collect();
        let mut entering: Vec<(f64, usize)> = (0..edges.len())
            .filter(|&edge| edges[edge].1 == node)
            .map(|edge| (lanes(edge).last().unwrap_or(centre(edges[edge].0)), edge))
            .collect();
        for (spread, positions) in [(&mut leaving, &mut starts), (&mut entering, &mut ends)] {
            spread.sort_by(|a, b| a.0.total_cmp(&b.0));
            let count = spread.len() as f64;
            let spacing = PORT_SPACING.min((width - 2.0 * PORT_INSET).max(0.0) / count.max(1.0));
            for (rank, &(_, edge)) in spread.iter().enumerate() {
                positions[edge] = centre(node) + (rank as f64 - (count - 1.0) / 2.0) * spacing;
            }
        }
    }
    edges
        .iter()
        .enumerate()
        .map(|(edge, &(from, to))| {
            if row_of[from] >= row_of[to] {
                return vec![starts[edge], ends[edge]];
            }
            std::iter::once(starts[edge])
                .chain(lanes(edge))
                .chain([ends[edge]])
                .collect()
        })
        .collect()
}

/// Gives every horizontal segment of a gap a track, reusing a track only
/// where segments are well apart (greedy interval colouring: fewest tracks).
/// Returns each edge's track per gap, and each gap's track count.
fn assign_tracks(
    segments: &[Vec<(f64, f64, usize)>],
    edge_count: usize,
) -> (Vec<std::collections::BTreeMap<usize, usize>>, Vec<usize>) {
    let mut track_of = vec![std::collections::BTreeMap::new(); edge_count];
    let mut counts = Vec::with_capacity(segments.len());
    for (gap, gap_segments) in segments.iter().enumerate() {
        let mut sorted = gap_segments.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        // The right end of the last segment on each track.
        let mut track_ends: Vec<f64> = Vec::new();
        for (left, right, edge) in sorted {
            let track = match track_ends.iter().position(|&end| end + TRACK_CLEARANCE < left) {
                Some(track) => track,
                None => {
                    track_ends.push(f64::NEG_INFINITY);
                    track_ends.len() - 1
                }
            };
            track_ends[track] = right;
            track_of[edge].insert(gap, track);
        }
        counts.push(track_ends.len());
    }
    (track_of, counts)
}

/// Drops points that continue a straight run, so each polyline is one point
/// per bend.
fn simplify(points: Vec<Point>) -> Vec<Point> {
    let mut kept: Vec<Point> = Vec::with_capacity(points.len());
    for point in points {
        if let [.., before, last] = kept[..] {
            let straight = ((before.0 - last.0).abs() < 0.05 && (last.0 - point.0).abs() < 0.05)
                || ((before.1 - last.1).abs() < 0.05 && (last.1 - point.1).abs() < 0.05);
            if straight {
                kept.pop();
            }
        }
        kept.push(point);
    }
    kept
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::render::{sample, Node};

    fn node(name: &str) -> Node {
        sample::node(name, "fn", None)
    }

    /// A busy graph: fan-out, fan-in and edges skipping one to four layers.
    fn busy() -> Graph {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        Graph {
            pipeline: "busy".into(),
            summary: String::new(),
            nodes: names.iter().map(|name| node(name)).collect(),
            edges: vec![
                (0, 1),
                (0, 2),
                (1, 3),
                (2, 3),
                (3, 4),
                (4, 5),
                (0, 5),
                (1, 6),
                (5, 6),
                (2, 7),
                (6, 8),
                (0, 8),
                (3, 8),
            ],
        }
    }

    fn sizes(graph: &Graph) -> Vec<(f64, f64)> {
        (0..graph.nodes.len())
            .map(|n| (80.0 + 37.0 * (n % 3) as f64, 40.0 + 23.0 * (n % 2) as f64))
            .collect()
    }

    /// Fails when `flow`'s boxes overlap, an arrow does not start on its
    /// source's bottom border and end on its target's top border, bends
    /// diagonally, or passes through a box's inside.
    pub(in crate::render::svg) fn assert_well_drawn(graph: &Graph, flow: &Flow) {
        let inside = |rect: &Rect, (x, y): Point| {
            x > rect.x + 0.01 && x < rect.right() - 0.01 && y > rect.y + 0.01 && y < rect.bottom() - 0.01
        };
        for (i, a) in flow.boxes.iter().enumerate() {
            for b in &flow.boxes[i + 1..] {
                let apart = a.right() <= b.x || b.right() <= a.x || a.bottom() <= b.y || b.bottom() <= a.y;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
        let edges: Vec<(usize, usize)> = layers::drawable_edges(graph).collect();
        assert_eq!(flow.arrows.len(), edges.len());
        for (arrow, &(from, to)) in flow.arrows.iter().zip(&edges) {
            let (source, target) = (flow.boxes[from], flow.boxes[to]);
            let (start, end) = (arrow[0], arrow[arrow.len() - 1]);
            assert!(
                start.1 == source.bottom() && start.0 >= source.x && start.0 <= source.right(),
                "{start:?} is not on the bottom border of {source:?}"
            );
            assert!(
                end.1 == target.y && end.0 >= target.x && end.0 <= target.right(),
                "{end:?} is not on the top border of {target:?}"
            );
            for pair in arrow.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                assert!(a.0 == b.0 || a.1 == b.1, "{a:?} → {b:?} is not orthogonal");
                for rect in &flow.boxes {
                    for step in 0..=100 {
                        let t = f64::from(step) / 100.0;
                        let point = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                        assert!(!inside(rect, point), "{a:?} → {b:?} cuts through {rect:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn boxes_never_overlap_and_arrows_run_border_to_border_around_boxes() {
        for graph in [sample::graph(), busy()] {
            let flow = lay_out(&graph, &sizes(&graph));
            assert_well_drawn(&graph, &flow);
            for rect in &flow.boxes {
                assert!(rect.x >= 0.0 && rect.right() <= flow.width + 0.01);
                assert!(rect.y >= 0.0 && rect.bottom() <= flow.height + 0.01);
            }
        }
    }

    #[test]
    fn horizontal_runs_in_one_gap_never_share_a_track_where_they_overlap() {
        let graph = busy();
        let flow = lay_out(&graph, &sizes(&graph));
        let mut runs: Vec<(f64, f64, f64)> = Vec::new();
        for arrow in &flow.arrows {
            for pair in arrow.windows(2) {
                if pair[0].1 == pair[1].1 {
                    runs.push((pair[0].1, pair[0].0.min(pair[1].0), pair[0].0.max(pair[1].0)));
                }
            }
        }
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                let overlap = a.1 < b.2 && b.1 < a.2;
                assert!(!(a.0 == b.0 && overlap), "{a:?} runs along {b:?}");
            }
        }
    }

    #[test]
    fn a_layer_skipping_edge_runs_down_a_lane_beside_the_boxes_it_passes() {
        let graph = sample::graph();
        let flow = lay_out(&graph, &sizes(&graph));
        // Edge 3 is validate → answer, passing the rows of route and retrieve.
        let arrow = &flow.arrows[3];
        let lane = arrow
            .iter()
            .map(|p| p.0)
            .find(|&x| flow.boxes[1..3].iter().all(|rect| x < rect.x || x > rect.right()));
        assert!(lane.is_some(), "{arrow:?} never leaves the boxes' columns");
    }

    #[test]
    fn a_cycle_still_lays_out() {
        let mut graph = busy();
        graph.edges.extend([(8, 0), (4, 4)]);
        let flow = lay_out(&graph, &sizes(&graph));
        assert_eq!(flow.boxes.len(), graph.nodes.len());
    }
}
