//! What a pipeline file's stages do as written, without compiling it: a
//! file can be reviewed (what it would run, where) before anything it names
//! is trusted, resolved or read.

use serde_json::Value;

use crate::diagnostic::{Pos, SourceMap};
use crate::spec::{self, Action, ActionKind};

/// The stages and params of one pipeline file, as written.
#[derive(Debug, Clone)]
pub struct Outline {
    stages: Vec<StageOutline>,
    params: Value,
    source: SourceMap,
}

/// One stage of an [`Outline`].
#[derive(Debug, Clone)]
pub struct StageOutline {
    name: String,
    action: ActionKind,
    function: Option<String>,
    /// The file a `read`, `write` or `append` stage names, as written.
    path: Option<String>,
    at: Pos,
}

/// Outline a pipeline file's `text` with the engine's own parser, so what
/// is reviewed is what a run would do. Stages with errors of their own are
/// left out (no run gets past them); `None` when `text` is not a YAML
/// mapping at all.
pub fn outline(text: &str) -> Option<Outline> {
    let (spec, _) = spec::parse("", text);
    let spec = spec?;
    let stages = spec
        .stages
        .iter()
        .map(|s| StageOutline {
            name: s.name.clone(),
            action: s.action.kind(),
            function: match &s.action {
                Action::Fn(name) | Action::Run(name) => Some(name.clone()),
                _ => None,
            },
            path: match &s.action {
                Action::Read(read) => read.path.as_ref().map(as_written),
                Action::Write(write) => Some(as_written(&write.path)),
                Action::Append(append) => Some(as_written(&append.path)),
                _ => None,
            },
            at: spec.source.key(&format!("stages.{}.{}", s.name, s.action.key())),
        })
        .collect();
    Some(Outline {
        stages,
        params: spec.params,
        source: spec.source,
    })
}

/// A path value as written: the string itself, or any other YAML value as JSON.
fn as_written(path: &Value) -> String {
    path.as_str().map_or_else(|| path.to_string(), str::to_owned)
}

impl Outline {
    /// The stages, in file order.
    pub fn stages(&self) -> &[StageOutline] {
        &self.stages
    }

    /// The `params:` mapping as written (an empty object when absent).
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// Where the key of param `path` (dotted: `mcp`, `search.top_k`) is
    /// written, else its nearest written ancestor.
    pub fn param_at(&self, path: &str) -> Pos {
        self.source.key(&format!("params.{path}"))
    }
}

impl StageOutline {
    /// Its name under `stages:`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it does.
    pub fn action(&self) -> ActionKind {
        self.action
    }

    /// The native function a `fn:` stage calls (`build.execute`), or the
    /// sub-pipeline a `run:` stage runs.
    pub fn function(&self) -> Option<&str> {
        self.function.as_deref()
    }

    /// The project file a `read:`, `write:` or `append:` stage names in
    /// `path:`, as written (it may be a template, resolved only when the
    /// stage runs); [`action`](Self::action) tells which.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Where its action key (`exec:`, `fn:`, ...) is written.
    pub fn at(&self) -> Pos {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_and_params_as_written() {
        let text =
            "pipeline: p\nparams:\n  mcp: {command: sh}\nstages:\n  a: {fn: f.id}\n  b:\n    exec: {command: [ls]}\n";
        let o = outline(text).unwrap();
        let stages: Vec<(&str, ActionKind, Option<&str>, Pos)> = o
            .stages()
            .iter()
            .map(|s| (s.name(), s.action(), s.function(), s.at()))
            .collect();
        assert_eq!(
            stages,
            [
                ("a", ActionKind::Fn, Some("f.id"), (5, 7)),
                ("b", ActionKind::Exec, None, (7, 5))
            ]
        );
        assert_eq!(o.params()["mcp"]["command"], "sh");
        assert!(o.stages().iter().all(|s| s.path().is_none()));
        assert_eq!(o.param_at("mcp"), (3, 3));
        let files = outline(
            "pipeline: p\nstages:\n  r: {read: {path: data/tool.yml}}\n  s: {run: sub}\n  w: {write: {path: .git/config, value: x}}\n  a: {append: {path: '{{ inputs.f }}', value: x}}\n",
        )
        .unwrap();
        let paths: Vec<_> = files.stages().iter().map(|s| s.path()).collect();
        assert_eq!(
            paths,
            [Some("data/tool.yml"), None, Some(".git/config"), Some("{{ inputs.f }}")]
        );
        assert_eq!(files.stages()[1].function(), Some("sub"));
        assert!(outline("- not a mapping").is_none());
    }
}
