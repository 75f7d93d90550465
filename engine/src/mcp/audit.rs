//! One JSONL line per MCP call decision, appended under the shared lock.
//!
//! A line is `{ts, sub_intent, tool, action, args_digest, verdict}`; the
//! digest is `sha256:` + hex of the arguments' canonical JSON (object keys
//! sorted, no whitespace), so identical calls audit identically whatever
//! order their keys were written in.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::io::{append_line_locked, AppendError};

/// Whether the guard let the call go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditVerdict {
    /// The call was sent.
    Allowed,
    /// The guard refused it; nothing was sent.
    Denied,
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    /// UTC, RFC 3339 to the second (`2026-05-23T10:11:12Z`).
    pub ts: String,
    /// What the call is for, as the stage's `sub_intent:` says (empty when unset).
    pub sub_intent: String,
    /// The MCP tool called.
    pub tool: String,
    /// The action the guard names for the call (most tools' `action` argument).
    pub action: Option<String>,
    /// `sha256:` + hex of the arguments' canonical JSON (see [`args_digest`]).
    pub args_digest: String,
    /// Whether the call went out.
    pub verdict: AuditVerdict,
}

impl AuditRow {
    /// A row stamped with the current time.
    pub fn now(sub_intent: &str, tool: &str, action: Option<String>, args: &Value, verdict: AuditVerdict) -> Self {
        Self {
            ts: utc_now_rfc3339(),
            sub_intent: sub_intent.to_owned(),
            tool: tool.to_owned(),
            action,
            args_digest: args_digest(args),
            verdict,
        }
    }

    /// Append this row to `path` as one JSON line.
    pub fn append_to(&self, path: &Path) -> Result<(), AppendError> {
        let line = serde_json::to_string(self).expect("an audit row always serialises");
        append_line_locked(path, &line)
    }
}

/// `sha256:<hex>` of the canonical JSON of `args`.
pub fn args_digest(args: &Value) -> String {
    let hash = Sha256::digest(canonical_json(args).as_bytes());
    format!("sha256:{}", crate::digest::hex(&hash))
}

/// JSON with object keys sorted at every depth and no whitespace.
fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn utc_now_rfc3339() -> String {
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(&format)
        .expect("a UTC timestamp always formats")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": "x y"}], "x": null}});
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"c":"x y","d":2}]},"b":1}"#
        );
    }

    #[test]
    fn digest_ignores_key_order_but_not_values() {
        let one = args_digest(&json!({"action": "create", "name": "Zombie"}));
        let same = args_digest(&json!({"name": "Zombie", "action": "create"}));
        let other = args_digest(&json!({"name": "Zombie2", "action": "create"}));
        assert_eq!(one, same);
        assert_ne!(one, other);
        assert!(one.starts_with("sha256:") && one.len() == 7 + 64, "{one}");
    }

    #[test]
    fn digest_matches_a_known_sha256() {
        // sha256 of the two bytes `{}`.
        assert_eq!(
            args_digest(&json!({})),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn rows_append_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        AuditRow::now(
            "enemy",
            "manage_scene",
            Some("save".into()),
            &json!({"action": "save"}),
            AuditVerdict::Allowed,
        )
        .append_to(&path)
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let row: AuditRow = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(row.verdict, AuditVerdict::Allowed);
        assert_eq!(row.ts.len(), "2026-05-23T10:11:12Z".len());
        assert!(text.contains(r#""verdict":"allowed""#), "{text}");
    }
}
