//! `read:` — a JSON, JSONL or YAML file of the project, or a pipeline
//! resource; JSONL rows may be checked one by one.

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::compile::{resource_error, ActionSite, Gate};
use crate::io::{jsonl_records, read_records, read_row_lines, read_text_limited, Format, FILE_KEY};
use crate::spec::{BadRows, Missing};
use crate::template::Scope;

use super::StageCx;
use crate::spec::ReadSpec;
use crate::template::Tmpl;

/// `read:` — a file or a resource, decoded.
pub struct ReadStage {
    pub source: ReadSource,
    pub format: Option<Format>,
    pub rows: Option<Gate>,
    pub bad_rows: BadRows,
    pub missing: Missing,
}

/// Where a `read` stage reads from.
pub enum ReadSource {
    Path(Tmpl),
    Resource(String),
}

/// `None` unless exactly one of `path:` and `resource:` is given.
pub(super) fn compile(r: &ReadSpec, site: &mut ActionSite) -> Option<ReadStage> {
    let rows = r.schema.as_ref().and_then(|f| site.gate(f, "read.schema"));
    let source = match (&r.path, &r.resource) {
        (Some(p), None) => ReadSource::Path(site.value(p, "read.path")),
        (None, Some(rel)) => {
            let found = site.resources().get(rel);
            if let Err(e) = &found {
                site.push(resource_error(e.clone()));
            } else if found.is_ok_and(|r| r.is_none()) {
                let known = site.resources().list(rel.split('/').next().unwrap_or_default());
                site.push(
                    site.error("read.resource", format!("resource `{rel}` not found"))
                        .suggest(rel, known.iter().map(String::as_str)),
                );
            }
            ReadSource::Resource(rel.clone())
        }
        _ => {
            site.push(site.error(
                "read",
                "`read` needs exactly one of `path:` (a file of the project) or `resource:` (data/…, schemas/…)",
            ));
            return None;
        }
    };
    Some(ReadStage {
        source,
        format: r.format,
        rows,
        bad_rows: r.bad_rows,
        missing: r.missing,
    })
}

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
