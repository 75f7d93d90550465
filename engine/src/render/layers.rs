//! Longest-path layering: a stage sits one layer below its deepest need, so
//! every edge points downwards. The text and picture formats order by it.

use super::Graph;

/// The graph's edges that can be drawn: both ends exist and differ.
pub(super) fn drawable_edges(graph: &Graph) -> impl Iterator<Item = (usize, usize)> + '_ {
    let count = graph.nodes.len();
    graph
        .edges
        .iter()
        .copied()
        .filter(move |&(from, to)| from < count && to < count && from != to)
}

/// The nodes of each layer, top first, each layer in node order.
///
/// The compiler rejects cycles, but a renderer must never hang: nodes left on
/// a cycle are put in one last layer.
pub(super) fn layers(graph: &Graph) -> Vec<Vec<usize>> {
    let count = graph.nodes.len();
    let mut unmet_needs = vec![0usize; count];
    for (_, to) in drawable_edges(graph) {
        unmet_needs[to] += 1;
    }
    let mut layer_of: Vec<Option<usize>> = vec![None; count];
    let mut depth = vec![0usize; count];
    let mut ready: Vec<usize> = (0..count).filter(|&n| unmet_needs[n] == 0).collect();
    while let Some(node) = ready.pop() {
        layer_of[node] = Some(depth[node]);
        for (from, to) in drawable_edges(graph) {
            if from == node {
                depth[to] = depth[to].max(depth[node] + 1);
                unmet_needs[to] -= 1;
                if unmet_needs[to] == 0 {
                    ready.push(to);
                }
            }
        }
    }
    let cycle_layer = layer_of.iter().flatten().max().map_or(0, |deepest| deepest + 1);
    let mut layers: Vec<Vec<usize>> = Vec::new();
    for (node, layer) in layer_of.iter().enumerate() {
        let layer = layer.unwrap_or(cycle_layer);
        if layers.len() <= layer {
            layers.resize(layer + 1, Vec::new());
        }
        layers[layer].push(node);
    }
    layers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    fn graph(names: &[&str], edges: &[(usize, usize)]) -> Graph {
        Graph {
            pipeline: "p".into(),
            summary: String::new(),
            nodes: names.iter().map(|name| sample::node(name, "fn", None)).collect(),
            edges: edges.to_vec(),
        }
    }

    #[test]
    fn a_stage_sits_below_its_deepest_need() {
        // a → b → c and a → c: c is two layers down, not one.
        let layers = layers(&graph(&["a", "b", "c", "d"], &[(0, 1), (1, 2), (0, 2)]));
        assert_eq!(layers, vec![vec![0, 3], vec![1], vec![2]]);
    }

    #[test]
    fn a_cycle_or_a_bad_edge_does_not_hang_or_panic() {
        let layers = layers(&graph(&["a", "b", "c"], &[(1, 2), (2, 1), (0, 9), (0, 0)]));
        assert_eq!(layers, vec![vec![0], vec![1, 2]]);
    }
}
