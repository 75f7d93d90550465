//! `read:` — a JSON, JSONL or YAML file of the project, or a pipeline
//! resource; JSONL rows may be checked one by one.

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::compile::ReadSource;
use crate::io::{read_records, read_text_limited, Format, FILE_KEY};
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
    let (path, text) = match source {
        ReadSource::Resource(rel) => {
            let res = cx
                .rt
                .resources
                .get(rel)
                .map_err(|e| StageFailure::io(format!("cannot read resource `{rel}`"), e))?
                .ok_or_else(|| format!("resource `{rel}` not found"))?;
            (std::path::PathBuf::from(rel), res.text.into_owned())
        }
        ReadSource::Path(t) => {
            let path = cx.path(&cx.eval(t, scope)?)?;
            match read_text_limited(&path, cx.rt.limits.file_bytes, FILE_KEY) {
                Ok(text) => (path, text),
                Err(e) if e.is_not_found() && *missing == Missing::Null => {
                    return Ok(Flow::Value(json!({"value": null, "bad_rows": []})));
                }
                Err(e) => return Err(StageFailure::io(format!("cannot read {}", path.display()), e)),
            }
        }
    };
    let format = format
        .or_else(|| Format::from_path(&path))
        .ok_or_else(|| format!("cannot tell the format of {}; set `read.format`", path.display()))?;
    let check = |v: &Value| match rows {
        Some(g) => g.check(v).map_err(|e| e.join("; ")),
        None => Ok(()),
    };
    let records = read_records(&text, format, &check).map_err(|e| format!("{}: {e}", path.display()))?;
    if *bad_rows == BadRows::Fail {
        if let Some(b) = records.bad_rows.first() {
            return Err(format!("{}:{}: bad row: {}", path.display(), b.line, b.reason).into());
        }
    }
    serde_json::to_value(records)
        .map(Flow::Value)
        .map_err(|e| e.to_string().into())
}
