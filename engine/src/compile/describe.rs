//! A compiled pipeline as a drawable [`Graph`] (for `graph` and dry runs).

use crate::render::{Graph, Node};

use super::{Pipeline, Stage, StageModifier};
use crate::stages::StageAction;

impl Pipeline {
    /// The pipeline's stages and edges, with `run:` sub-pipelines nested.
    pub fn graph(&self) -> Graph {
        let nodes = self.stages.iter().map(|s| node(self, s)).collect();
        let edges = self
            .stages
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.needs.iter().map(move |&n| (n, i)))
            .collect();
        Graph {
            pipeline: self.name.clone(),
            summary: self.summary.clone(),
            nodes,
            edges,
        }
    }
}

fn node(p: &Pipeline, s: &Stage) -> Node {
    let iteration = s.modifier.as_ref().map(|m| match m {
        StageModifier::ForEach { items, concurrency, .. } => {
            format!("for each of {} (≤{} at once)", source(items), source(concurrency))
        }
        StageModifier::MapReduce {
            items,
            chunk_size,
            concurrency,
            reduce,
            ..
        } => {
            let mut d = format!(
                "chunks of {} over {} (≤{} at once)",
                source(chunk_size),
                source(items),
                source(concurrency)
            );
            if let Some(by) = &reduce.sort_by {
                d.push_str(&format!(", sort by {by}"));
            }
            d
        }
        StageModifier::Repeat { over, times, until, .. } => {
            let bound = match (over, times) {
                (Some(o), _) => format!("over {}", source(o)),
                (None, Some(n)) => format!("{n} times"),
                (None, None) => String::new(),
            };
            match until {
                Some(u) => format!("repeat {bound} until {}", source(u)),
                None => format!("repeat {bound}"),
            }
        }
    });
    let params = s
        .params_read
        .iter()
        .map(|k| {
            let v = super::params::get_path(&p.params, k)
                .map(|v| v.to_string())
                .unwrap_or_default();
            format!("{k}={v}")
        })
        .collect();
    Node {
        name: s.name.clone(),
        kind: s.kind().to_owned(),
        target: s.action.target(),
        condition: s.when.as_ref().map(|(w, _)| w.clone()),
        iteration,
        gate: s
            .gate
            .as_ref()
            .map(|g| g.file.trim_start_matches("schemas/").to_owned()),
        params,
        children: match &s.action {
            StageAction::Run(sub) => Some(Box::new(sub.graph())),
            _ => None,
        },
    }
}

/// A templated value as written, for display.
fn source(t: &crate::template::Tmpl) -> String {
    use crate::template::Tmpl;
    match t {
        Tmpl::Literal(v) => v.to_string(),
        Tmpl::Expr { source, .. } => format!("{{{{ {source} }}}}"),
        Tmpl::Text(s) => s.clone(),
        Tmpl::List(_) | Tmpl::Map(_) => "…".into(),
    }
}
