//! YAML text → [`PipelineSpec`], every problem collected with its position.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::kind;
use super::*;
use crate::diagnostic::{Diagnostic, Diagnostics, SourceMap};

/// The keys a pipeline file may have at its top.
const TOP_LEVEL: &[&str] = &[
    "pipeline", "summary", "expose", "mcp", "inputs", "params", "output", "stages",
];

/// Parse one pipeline file. Problems are collected, not fatal: the spec of
/// everything that did parse comes back with them, so the compiler can go
/// on and report its own findings in the same run. `None` when the file is
/// not a YAML mapping at all.
pub fn parse(file: &str, text: &str) -> (Option<PipelineSpec>, Diagnostics) {
    let mut errors = Diagnostics::default();
    let spec = parse_into(file, text, &mut errors);
    (spec, errors)
}

fn parse_into(file: &str, text: &str, errors: &mut Diagnostics) -> Option<PipelineSpec> {
    let source = SourceMap::new(text);
    let doc: serde_yaml::Value = match serde_yaml::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            let at = e.location().map(|l| (l.line(), l.column()));
            errors.push(Diagnostic::new(
                file,
                at,
                format!("invalid YAML: {}", strip_location(&e.to_string())),
            ));
            return None;
        }
    };
    let Some(top) = doc.as_mapping() else {
        errors.push(Diagnostic::about(
            file,
            "a pipeline file must be a mapping with `pipeline:` and `stages:`",
        ));
        return None;
    };
    let mut p = Parser {
        file,
        source: &source,
        errors,
    };
    p.check_keys("", top, TOP_LEVEL);

    let name = p.string(top, "", "pipeline").unwrap_or_default();
    if name.is_empty() {
        p.error("", "missing `pipeline:` (the pipeline's name)");
    }
    let summary = p.string(top, "", "summary").unwrap_or_default();
    let expose = p.expose(top);
    let mcp = match get(top, "mcp") {
        Some(v) => p.typed::<McpTool>("mcp", v).unwrap_or_default(),
        None => McpTool::default(),
    };
    let inputs = match get(top, "inputs") {
        Some(v) => p.typed::<BTreeMap<String, InputSpec>>("inputs", v).unwrap_or_default(),
        None => BTreeMap::new(),
    };
    for (input, spec) in &inputs {
        if !INPUT_TYPES.contains(&spec.kind.as_str()) {
            let at = p.source.value(&format!("inputs.{input}.type"));
            let d = Diagnostic::new(file, at, format!("unknown input type `{}`", spec.kind))
                .suggest_or_list(&spec.kind, INPUT_TYPES);
            p.errors.push(d);
        }
    }
    let params = get(top, "params")
        .map(json)
        .unwrap_or(Value::Object(Default::default()));
    let output = get(top, "output").map(json);
    let mut stages = Vec::new();
    let mut broken = Vec::new();
    match get(top, "stages").map(|v| v.as_mapping()) {
        Some(Some(map)) => {
            for (k, v) in map {
                let Some(stage_name) = k.as_str() else {
                    p.error("stages", "stage names must be strings");
                    continue;
                };
                let before = p.errors.len();
                match p.stage(stage_name, v) {
                    Some(stage) if p.errors.len() == before => stages.push(stage),
                    _ => broken.push(stage_name.to_owned()),
                }
            }
        }
        Some(None) => p.error("stages", "`stages:` must be a mapping of stage name → stage"),
        None => p.error("", "missing `stages:`"),
    }
    Some(PipelineSpec {
        name,
        summary,
        expose,
        mcp,
        inputs,
        params,
        output,
        stages,
        file: file.to_owned(),
        source,
        broken,
    })
}

/// serde_yaml appends " at line X column Y" itself; we print positions our way.
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

fn get<'a>(map: &'a serde_yaml::Mapping, key: &str) -> Option<&'a serde_yaml::Value> {
    map.get(serde_yaml::Value::String(key.to_owned()))
}

/// YAML → JSON; tags are dropped, non-string keys stringified.
pub(crate) fn json(v: &serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => serde_json::to_value(n).unwrap_or(Value::Null),
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(s) => Value::Array(s.iter().map(json).collect()),
        Y::Mapping(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s.clone(),
                        other => serde_yaml::to_string(other).unwrap_or_default().trim().to_owned(),
                    };
                    (key, json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => json(&t.value),
    }
}

struct Parser<'a> {
    file: &'a str,
    source: &'a SourceMap,
    errors: &'a mut Diagnostics,
}

impl Parser<'_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors
            .push(Diagnostic::new(self.file, self.source.key(path), message));
    }

    /// `expose: mcp` or `expose: [mcp]`; each name one of [`SURFACES`].
    fn expose(&mut self, top: &serde_yaml::Mapping) -> Vec<String> {
        let names: Vec<String> = match get(top, "expose") {
            None => return vec![],
            Some(serde_yaml::Value::String(s)) => vec![s.clone()],
            Some(v) => self.typed("expose", v).unwrap_or_default(),
        };
        for n in &names {
            if !SURFACES.contains(&n.as_str()) {
                let d = Diagnostic::new(self.file, self.source.value("expose"), format!("unknown surface `{n}`"))
                    .suggest_or_list(n, SURFACES);
                self.errors.push(d);
            }
        }
        names
    }

    fn check_keys(&mut self, path: &str, map: &serde_yaml::Mapping, allowed: &[&str]) {
        for k in map.keys() {
            let key = k.as_str().unwrap_or("?");
            if !allowed.contains(&key) {
                let at = join(path, key);
                let d = Diagnostic::new(self.file, self.source.key(&at), format!("unknown key `{key}`"))
                    .suggest(key, allowed.iter().copied());
                self.errors.push(d);
            }
        }
    }

    fn string(&mut self, map: &serde_yaml::Mapping, path: &str, key: &str) -> Option<String> {
        let v = get(map, key)?;
        match v.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                self.error(&join(path, key), format!("`{key}` must be a string"));
                None
            }
        }
    }

    /// Deserialize a piece, turning serde's message into a positioned one.
    fn typed<T: serde::de::DeserializeOwned>(&mut self, path: &str, v: &serde_yaml::Value) -> Option<T> {
        match serde_yaml::from_value::<T>(v.clone()) {
            Ok(t) => Some(t),
            Err(e) => {
                let msg = strip_location(&e.to_string());
                // Point unknown fields at the offending key, with a suggestion.
                if let Some(field) = between(&msg, "unknown field `", "`") {
                    let expected: Vec<&str> = msg
                        .split("expected ")
                        .nth(1)
                        .map(|rest| rest.split('`').skip(1).step_by(2).collect())
                        .unwrap_or_default();
                    let at = self.source.key(&join(path, field));
                    self.errors.push(
                        Diagnostic::new(self.file, at, format!("unknown key `{field}` in `{path}`"))
                            .suggest(field, expected.iter().copied()),
                    );
                } else {
                    self.errors.push(Diagnostic::new(
                        self.file,
                        self.source.value(path),
                        format!("`{path}`: {msg}"),
                    ));
                }
                None
            }
        }
    }

    fn stage(&mut self, name: &str, v: &serde_yaml::Value) -> Option<StageSpec> {
        let path = format!("stages.{name}");
        let map = match v.as_mapping() {
            Some(m) => m,
            None => {
                // `name: {emit: "..."}` is the shape; a bare string is a common slip.
                self.error(
                    &path,
                    format!(
                        "stage `{name}` must be a mapping with one action key ({})",
                        kind::keys(ActionKind::ALL, ActionKind::key)
                    ),
                );
                return None;
            }
        };
        if !valid_stage_name(name) {
            self.error(
                &path,
                format!("stage name `{name}` must start with a letter and use only a-z, 0-9, `_` and `-`"),
            );
        }
        let known: Vec<&str> = (ActionKind::ALL.iter().map(|k| k.key()))
            .chain(ModifierKind::ALL.iter().map(|k| k.key()))
            .chain(COMMON.iter().copied())
            .collect();
        for k in map.keys() {
            let key = k.as_str().unwrap_or("?");
            if !known.contains(&key) {
                let d = Diagnostic::new(
                    self.file,
                    self.source.key(&join(&path, key)),
                    format!("unknown stage kind or key `{key}` in stage `{name}`"),
                )
                .suggest(key, known.iter().copied());
                self.errors.push(d);
            }
        }
        let actions: Vec<ActionKind> = ActionKind::ALL
            .iter()
            .copied()
            .filter(|a| get(map, a.key()).is_some())
            .collect();
        let modifiers: Vec<ModifierKind> = ModifierKind::ALL
            .iter()
            .copied()
            .filter(|m| get(map, m.key()).is_some())
            .collect();
        if actions.len() > 1 {
            self.error(
                &path,
                format!(
                    "stage `{name}` has {} actions ({}); give it exactly one",
                    actions.len(),
                    kind::keys(&actions, ActionKind::key)
                ),
            );
        }
        if modifiers.len() > 1 {
            self.error(
                &path,
                format!(
                    "stage `{name}` has {} modifiers ({}); use at most one",
                    modifiers.len(),
                    kind::keys(&modifiers, ModifierKind::key)
                ),
            );
        }
        let Some(&action_kind) = actions.first() else {
            if !map.keys().any(|k| !known.contains(&k.as_str().unwrap_or("?"))) {
                self.error(
                    &path,
                    format!(
                        "stage `{name}` has no action; add one of: {}",
                        kind::keys(ActionKind::ALL, ActionKind::key)
                    ),
                );
            }
            return None;
        };
        let av = get(map, action_kind.key()).expect("present");
        let ap = join(&path, action_kind.key());
        let action = match action_kind {
            ActionKind::Fn => self.typed::<String>(&ap, av).map(Action::Fn),
            ActionKind::Llm => self.typed(&ap, av).map(Action::Llm),
            ActionKind::Run => self.typed::<String>(&ap, av).map(Action::Run),
            ActionKind::Read => self.typed(&ap, av).map(Action::Read),
            ActionKind::Write => self.typed(&ap, av).map(Action::Write),
            ActionKind::Append => self.typed(&ap, av).map(Action::Append),
            ActionKind::Emit => Some(Action::Emit(json(av))),
            ActionKind::Exit => self.typed(&ap, av).map(Action::Exit),
            ActionKind::Ask => self.typed(&ap, av).map(Action::Ask),
            ActionKind::Http => self.typed(&ap, av).map(Action::Http),
            ActionKind::Exec => self.typed(&ap, av).map(Action::Exec),
            ActionKind::Mcp => self.typed(&ap, av).map(Action::Mcp),
        };
        let modifier = match modifiers.first() {
            Some(&m) => {
                let mv = get(map, m.key()).expect("present");
                let mp = join(&path, m.key());
                match m {
                    ModifierKind::ForEach => self.typed(&mp, mv).map(Modifier::ForEach),
                    ModifierKind::MapReduce => self.typed(&mp, mv).map(Modifier::MapReduce),
                    ModifierKind::Repeat => {
                        let r: Option<RepeatSpec> = self.typed(&mp, mv);
                        if let Some(r) = &r {
                            if r.over.is_some() == r.times.is_some() {
                                self.error(
                                    &mp,
                                    "`repeat` needs exactly one of `over: [...]` or `times: N` (its bound)",
                                );
                            }
                        }
                        r.map(Modifier::Repeat)
                    }
                }
            }
            None => None,
        };
        let needs = match get(map, "needs") {
            Some(v) => self
                .typed::<OneOrMany>(&join(&path, "needs"), v)
                .map(|n| n.0)
                .unwrap_or_default(),
            None => vec![],
        };
        let when = self.string(map, &path, "when");
        let output = self.string(map, &path, "output");
        // A stage's `summary:` is for readers of the file: only its shape is checked.
        self.string(map, &path, "summary");
        let with = get(map, "with").map(json);
        let on_invalid =
            get(map, "on_invalid").and_then(|v| self.typed(&join(&path, "on_invalid"), &fallback_value(v)));
        let on_locked = get(map, "on_locked").and_then(|v| self.typed(&join(&path, "on_locked"), &fallback_value(v)));
        Some(StageSpec {
            name: name.to_owned(),
            needs,
            when,
            with,
            output,
            on_invalid,
            on_locked,
            action: action?,
            modifier: match (modifiers.first(), modifier) {
                (Some(_), None) => return None,
                (_, m) => m,
            },
        })
    }
}

/// `on_invalid: fail` and `on_invalid: {output: ...}` share one serde shape.
fn fallback_value(v: &serde_yaml::Value) -> serde_yaml::Value {
    v.clone()
}

/// `needs: a` is accepted as `needs: [a]`.
struct OneOrMany(Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        Ok(OneOrMany(match Raw::deserialize(d)? {
            Raw::One(s) => vec![s],
            Raw::Many(v) => v,
        }))
    }
}

fn valid_stage_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// How a stage is named inside templates: `-` becomes `_`.
pub fn ident(stage: &str) -> String {
    stage.replace('-', "_")
}

fn join(base: &str, part: &str) -> String {
    if base.is_empty() {
        part.to_owned()
    } else {
        format!("{base}.{part}")
    }
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)? + i;
    Some(&s[i..j])
}
