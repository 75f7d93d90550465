//! `read:` — a JSON, JSONL or YAML file of the project, or a pipeline
//! resource; JSONL rows may be checked one by one.

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::compile::ReadSource;
use crate::io::{jsonl_records, read_records, read_row_lines, read_text_limited, Format, FILE_KEY};
use crate::spec::{BadRows, Missing};
use crate::template::Scope;

use super::StageCx;
use crate::compile::ReadStage;

pub fn run(cx: &StageCx<'_>, scope: &Scope, read: &ReadStage) -> Result<Flow, StageFailure> {
    let ReadStage {
        source,
        format,
        rows,
        bad_rows,
        missing,
    } = read;
    let check = |v: &Value| match rows {
        Some(g) => g.check(v).map_err(|e| e.join("; ")),
        None => Ok(()),
    };
    let format_of = |path: &std::path::Path| {
        format
            .or_else(|| Format::from_path(path))
            .ok_or_else(|| format!("cannot tell the format of {}; set `read.format`", path.display()))
    };
    let (path, records) = match source {
        ReadSource::Resource(rel) => {
            let res = cx
                .rt
                .resources
                .get(rel)
                .map_err(|e| StageFailure::io(format!("cannot read resource `{rel}`"), e))?
                .ok_or_else(|| format!("resource `{rel}` not found"))?;
            let path = std::path::PathBuf::from(rel);
            let records = read_records(&res.text, format_of(&path)?, &check);
            (path, records)
        }
        ReadSource::Path(t) => {
            let path = cx.path(&cx.eval(t, scope)?)?;
            let format = format_of(&path)?;
            // JSONL is read line by line within `limits.line_kb`: an over-long
            // or non-UTF-8 line is one bad row, not a failed read.
            let read = match format {
                Format::Jsonl => read_row_lines(&path, &cx.rt.limits, &cx.rt.product)
                    .map(|lines| Ok(jsonl_records(lines.iter(), &check))),
                _ => read_text_limited(&path, cx.rt.limits.file_bytes, FILE_KEY, &cx.rt.product)
                    .map(|text| read_records(&text, format, &check)),
            };
            match read {
                Ok(records) => (path, records),
                Err(e) if e.is_not_found() && *missing == Missing::Null => {
                    return Ok(Flow::Value(json!({"value": null, "bad_rows": []})));
                }
                Err(e) => return Err(StageFailure::io(format!("cannot read {}", path.display()), e)),
            }
        }
    };
    let records = records.map_err(|e| format!("{}: {e}", path.display()))?;
    if *bad_rows == BadRows::Fail {
        if let Some(b) = records.bad_rows.first() {
            return Err(format!("{}:{}: bad row: {}", path.display(), b.line, b.reason).into());
        }
    }
    serde_json::to_value(records)
        .map(Flow::Value)
        .map_err(|e| e.to_string().into())
}
