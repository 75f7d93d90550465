//! `write:` — replace a file atomically (temp in the same folder, fsync, rename).

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::io::write_atomic;
use crate::spec::WriteFormat;
use crate::template::Scope;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::WriteSpec;
use crate::template::Tmpl;

/// `write:` — a file, written atomically.
pub struct WriteStage {
    pub path: Tmpl,
    pub value: Tmpl,
    pub format: WriteFormat,
}

pub(super) fn compile(w: &WriteSpec, site: &mut ActionSite) -> WriteStage {
    WriteStage {
        path: site.value(&w.path, "write.path"),
        value: site.value(&w.value, "write.value"),
        format: w.format,
    }
}

pub fn run(cx: &StageCx<'_>, scope: &Scope, write: &WriteStage) -> Result<Flow, StageFailure> {
    let WriteStage { path, value, format } = write;
    let path = cx.write_path(&cx.eval(path, scope)?)?;
    let value = cx.eval(value, scope)?;
    let bytes = encode(&value, *format)?;
    write_atomic(&path, &bytes).map_err(|e| StageFailure::io(format!("cannot write {}", path.display()), e))?;
    Ok(Flow::Value(
        json!({"path": path.display().to_string(), "bytes": bytes.len()}),
    ))
}

/// The bytes of `value` in `format`; JSON is pretty with a final newline.
pub fn encode(value: &Value, format: WriteFormat) -> Result<Vec<u8>, StageFailure> {
    let mut out = match format {
        WriteFormat::Json => serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?,
        WriteFormat::Jsonl => {
            let rows = value.as_array().ok_or("jsonl needs a list of rows")?;
            let mut out = Vec::new();
            for r in rows {
                serde_json::to_writer(&mut out, r).map_err(|e| e.to_string())?;
                out.push(b'\n');
            }
            return Ok(out);
        }
        WriteFormat::Yaml => serde_yaml::to_string(value).map_err(|e| e.to_string())?.into_bytes(),
        WriteFormat::Text => match value {
            Value::String(s) => s.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        },
    };
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    Ok(out)
}
