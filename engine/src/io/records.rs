//! Reading JSON, JSONL and YAML files as records, tolerating bad rows.

use std::path::Path;

use serde_json::Value;

/// How a records file is written: one document, or one JSON value a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One JSON document.
    Json,
    /// One JSON value a line (JSON Lines).
    Jsonl,
    /// One YAML document.
    Yaml,
}

impl Format {
    /// The format a file name implies, if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "json" => Some(Self::Json),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            "yaml" | "yml" => Some(Self::Yaml),
            _ => None,
        }
    }
}

/// A JSONL row that was skipped, with its 1-based line number and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BadRow {
    /// The 1-based line number.
    pub line: usize,
    /// Why the row was skipped.
    pub reason: String,
}

/// What [`read_records`] found: the value (an array for JSONL) and skipped rows.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Records {
    /// The parsed document; for JSONL, an array of the good rows.
    pub value: Value,
    /// Rows skipped instead of failing the read (JSONL only).
    pub bad_rows: Vec<BadRow>,
}

/// Parse `text` in `format`. For JSONL each non-blank line is a row; rows
/// that fail to parse or that `check` rejects are collected in `bad_rows`
/// instead of failing the read. JSON and YAML documents are all-or-nothing.
pub fn read_records(
    text: &str,
    format: Format,
    check: &dyn Fn(&Value) -> Result<(), String>,
) -> Result<Records, String> {
    match format {
        Format::Json => serde_json::from_str(text)
            .map(|value| Records {
                value,
                bad_rows: vec![],
            })
            .map_err(|e| format!("invalid JSON at line {} column {}: {e}", e.line(), e.column())),
        Format::Yaml => serde_yaml::from_str(text)
            .map(|value| Records {
                value,
                bad_rows: vec![],
            })
            .map_err(|e| match e.location() {
                Some(l) => format!("invalid YAML at line {} column {}: {e}", l.line(), l.column()),
                None => format!("invalid YAML: {e}"),
            }),
        Format::Jsonl => Ok(jsonl_records(
            text.lines().enumerate().map(|(i, line)| (i + 1, Ok(line))),
            check,
        )),
    }
}

/// JSONL rows from numbered lines (a line may already be unreadable, see
/// [`super::RowLines`]): each non-blank line is a row; lines that are
/// unreadable, fail to parse or that `check` rejects go to `bad_rows`.
pub fn jsonl_records<'a>(
    lines: impl Iterator<Item = (usize, Result<&'a str, String>)>,
    check: &dyn Fn(&Value) -> Result<(), String>,
) -> Records {
    let mut rows = Vec::new();
    let mut bad_rows = Vec::new();
    for (line, text) in lines {
        let parsed = text.and_then(|text| {
            let text = text.trim_start_matches('\u{feff}').trim();
            if text.is_empty() {
                return Ok(None);
            }
            serde_json::from_str::<Value>(text)
                .map_err(|e| e.to_string())
                .and_then(|v| check(&v).map(|()| Some(v)))
        });
        match parsed {
            Ok(Some(v)) => rows.push(v),
            Ok(None) => {}
            Err(reason) => bad_rows.push(BadRow { line, reason }),
        }
    }
    Records {
        value: Value::Array(rows),
        bad_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_skips_bad_rows_with_line_numbers() {
        let text = "{\"a\":1}\nnot json\n\n{\"b\":2}\n[1]\n";
        let only_objects = |v: &Value| {
            if v.is_object() {
                Ok(())
            } else {
                Err("not an object".into())
            }
        };
        let r = read_records(text, Format::Jsonl, &only_objects).unwrap();
        assert_eq!(r.value.as_array().unwrap().len(), 2);
        let lines: Vec<_> = r.bad_rows.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![2, 5]);
    }
}
