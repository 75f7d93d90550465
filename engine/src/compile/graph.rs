//! Ordering stages and finding cycles, on petgraph.

use std::collections::BTreeSet;

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// A topological order (stable: file order among independent stages), or
/// every cycle, each as the stages on it in file order.
pub fn topological_order(needs: &[Vec<usize>]) -> Result<Vec<usize>, Vec<Vec<usize>>> {
    let mut g = DiGraph::<usize, ()>::new();
    let nodes: Vec<_> = (0..needs.len()).map(|i| g.add_node(i)).collect();
    for (i, ns) in needs.iter().enumerate() {
        for &n in ns {
            g.add_edge(nodes[n], nodes[i], ());
        }
    }
    let cycles: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1 || needs[g[scc[0]]].contains(&g[scc[0]]))
        .map(|scc| {
            let mut c: Vec<usize> = scc.iter().map(|n| g[*n]).collect();
            c.sort();
            c
        })
        .collect();
    if !cycles.is_empty() {
        return Err(cycles);
    }
    // Kahn's algorithm, always taking the lowest ready index for stability.
    let mut indegree: Vec<usize> = needs.iter().map(Vec::len).collect();
    let mut ready: BTreeSet<usize> = (0..needs.len()).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(needs.len());
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for (j, ns) in needs.iter().enumerate() {
            for _ in ns.iter().filter(|&&n| n == i) {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.insert(j);
                }
            }
        }
    }
    Ok(order)
}

/// For each stage, every stage it transitively needs.
pub fn upstream(needs: &[Vec<usize>]) -> Vec<BTreeSet<usize>> {
    (0..needs.len())
        .map(|i| {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<usize> = needs[i].clone();
            while let Some(n) = stack.pop() {
                if n != i && seen.insert(n) {
                    stack.extend(needs[n].iter().copied());
                }
            }
            seen
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_and_finds_cycles() {
        assert_eq!(topological_order(&[vec![1], vec![], vec![0]]).unwrap(), vec![1, 0, 2]);
        let cycles = topological_order(&[vec![2], vec![0], vec![1], vec![]]).unwrap_err();
        assert_eq!(cycles, vec![vec![0, 1, 2]]);
        assert_eq!(upstream(&[vec![], vec![0], vec![1]])[2], BTreeSet::from([0, 1]));
    }
}
