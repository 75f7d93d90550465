//! Params layering: the pipeline file's values < config file < `--set key=value`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceMap};

/// The config file's values (a nested map) and where they sit.
#[derive(Debug, Clone, Default)]
pub struct ConfigLayer {
    /// The config file's path, for positions in messages.
    pub file: String,
    /// The values, nested as written.
    pub values: Value,
    /// Where each key sits in the file.
    pub source: SourceMap,
}

/// Everything above the pipeline's own defaults.
#[derive(Debug, Clone, Default)]
pub struct ParamLayers {
    /// The project's config file, when there is one.
    pub config: Option<ConfigLayer>,
    /// `--set` pairs in command-line order (later wins), values parsed as YAML scalars.
    pub sets: Vec<(String, Value)>,
}

/// One resolved leaf param, for `--dry-run`.
#[derive(Debug, Clone)]
pub struct ResolvedParam {
    /// Its dotted path (`search.asset_top_k`).
    pub key: String,
    /// Its value after layering.
    pub value: Value,
    /// The layer it came from.
    pub source: ParamSource,
}

/// Where a resolved param's value was written. Shown as `pipeline
/// (<file>:<line>:<col>)` — the embedded pipeline or the override that
/// replaced it —, `config (<file>:<line>:<col>)` or `--set`; the position is
/// looked up only when shown.
#[derive(Debug, Clone)]
pub enum ParamSource {
    /// The pipeline file's own value.
    Pipeline(WrittenAt),
    /// The project's config file.
    Config(WrittenAt),
    /// A `--set key=value` argument.
    Set,
}

/// A param's place in a file, by its dotted path there.
#[derive(Debug, Clone)]
pub struct WrittenAt {
    file: String,
    source: SourceMap,
    path: String,
}

impl std::fmt::Display for ParamSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (layer, at) = match self {
            Self::Pipeline(at) => ("pipeline", at),
            Self::Config(at) => ("config", at),
            Self::Set => return f.write_str("--set"),
        };
        let (line, col) = at.source.value(&at.path);
        write!(f, "{layer} ({}:{line}:{col})", at.file)
    }
}

impl ParamLayers {
    /// Parse `key=value` (the value as a YAML scalar: numbers, booleans, strings).
    pub fn parse_set(arg: &str) -> Result<(String, Value), String> {
        let (k, v) = arg.split_once('=').ok_or_else(|| "expected key=value".to_owned())?;
        let value: serde_yaml::Value = serde_yaml::from_str(v).unwrap_or(serde_yaml::Value::String(v.to_owned()));
        Ok((k.trim().to_owned(), crate::spec::json(&value)))
    }

    /// Resolve a pipeline's params: each leaf from the highest layer that
    /// has it. Config keys a pipeline does not use are left for other
    /// pipelines (the product validates the config file itself).
    /// `file` and `source`: the pipeline file the defaults were read from.
    pub fn resolve(&self, defaults: &Value, file: &str, source: &SourceMap) -> (Value, Vec<ResolvedParam>) {
        let mut resolved = defaults.clone();
        let mut leaves = Vec::new();
        flatten(defaults, "", &mut leaves);
        let mut report = Vec::new();
        for key in leaves {
            let mut value = get_path(defaults, &key).cloned().unwrap_or(Value::Null);
            let mut from = ParamSource::Pipeline(WrittenAt {
                file: file.to_owned(),
                source: source.clone(),
                path: format!("params.{key}"),
            });
            if let Some(cfg) = &self.config {
                if let Some(v) = get_path(&cfg.values, &key) {
                    value = v.clone();
                    from = ParamSource::Config(WrittenAt {
                        file: cfg.file.clone(),
                        source: cfg.source.clone(),
                        path: key.clone(),
                    });
                }
            }
            if let Some((_, v)) = self.sets.iter().rev().find(|(k, _)| *k == key) {
                value = v.clone();
                from = ParamSource::Set;
            }
            set_path(&mut resolved, &key, value.clone());
            report.push(ResolvedParam {
                key,
                value,
                source: from,
            });
        }
        (resolved, report)
    }

    /// `--set` keys must name a param of the pipeline run or of one of its
    /// sub-pipelines (`known`: every param leaf of them all).
    pub fn check_sets(&self, known: &BTreeSet<String>, pipeline: &str) -> Result<(), Diagnostics> {
        let mut errors = Diagnostics::default();
        for (key, _) in &self.sets {
            if !known.iter().any(|l| l == key || l.starts_with(&format!("{key}."))) {
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                errors.push(
                    Diagnostic::about(
                        format!("--set {key}"),
                        format!("`{key}` is not a param of `{pipeline}` or its sub-pipelines"),
                    )
                    .suggest(key, names.iter().copied())
                    .help_if_none(format!("params: {}", names.join(", "))),
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Dotted paths of every non-map value (lists are leaves).
pub fn flatten(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(v, &key, out);
            }
        }
        _ if !prefix.is_empty() => out.push(prefix.to_owned()),
        _ => {}
    }
}

pub fn get_path<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(v, |v, seg| v.as_object()?.get(seg))
}

fn set_path(v: &mut Value, key: &str, value: Value) {
    let mut cur = v;
    let segs: Vec<&str> = key.split('.').collect();
    for seg in &segs[..segs.len() - 1] {
        if !cur.is_object() {
            *cur = Value::Object(Default::default());
        }
        cur = cur
            .as_object_mut()
            .expect("object")
            .entry(seg.to_string())
            .or_insert(Value::Object(Default::default()));
    }
    if let Some(m) = cur.as_object_mut() {
        m.insert(segs[segs.len() - 1].to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layers_in_order() {
        let text = "confidence_threshold:\n  auto: 0.8\n";
        let layers = ParamLayers {
            config: Some(ConfigLayer {
                file: "cfg.yml".into(),
                values: json!({"confidence_threshold": {"auto": 0.8}, "other": 1}),
                source: SourceMap::new(text),
            }),
            sets: vec![ParamLayers::parse_set("k=5").unwrap()],
        };
        let defaults = json!({"k": 3, "confidence_threshold": {"auto": 0.7, "confirm": 0.4}});
        let pipeline = "params:\n  k: 3\n  confidence_threshold: {auto: 0.7, confirm: 0.4}\n";
        let (v, report) = layers.resolve(&defaults, "my.yaml", &SourceMap::new(pipeline));
        assert_eq!(
            v,
            json!({"k": 5, "confidence_threshold": {"auto": 0.8, "confirm": 0.4}})
        );
        let src: Vec<_> = report.iter().map(|r| r.source.to_string()).collect();
        // Leaves come in the defaults' own order: k, confidence_threshold.auto, .confirm.
        // A value from the pipeline file names the file: an ejected copy is not "the default".
        assert_eq!(src, vec!["--set", "config (cfg.yml:2:9)", "pipeline (my.yaml:3:46)"]);
    }

    #[test]
    fn unknown_set_key_is_an_error_with_suggestion() {
        let layers = ParamLayers {
            config: None,
            sets: vec![ParamLayers::parse_set("confidence_treshold.auto=1").unwrap()],
        };
        let known = BTreeSet::from(["confidence_threshold.auto".to_owned()]);
        let err = layers.check_sets(&known, "p").unwrap_err();
        assert!(
            err.to_string().contains("did you mean `confidence_threshold.auto`"),
            "{err}"
        );
    }
}
