//! The `command` backend: any program that prints result JSON (such as the
//! `gemini` CLI; none is configured by default). `{prompt}` in its arguments
//! becomes the strategy's prompt; no shell is involved. The program runs in
//! an empty folder of its own: an agentic CLI started in the project would
//! read the project's instructions and settings as its own.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use tokio::io::AsyncReadExt;

use super::{result, too_large, Request};
use crate::websearch::config::WebSearchConfig;
use crate::websearch::result::WebResult;

/// Enough of stderr to quote its first line.
const STDERR_BYTES: u64 = 64 * 1024;

pub(super) async fn search(cfg: &WebSearchConfig, req: &Request<'_>) -> Result<Vec<WebResult>, String> {
    let argv: Vec<String> = cfg
        .command
        .argv
        .iter()
        .map(|a| a.replace("{prompt}", req.prompt))
        .collect();
    let (program, args) = argv
        .split_first()
        .ok_or("not configured (set web_search.command.argv)")?;
    let mut command = tokio::process::Command::new(program);
    let _folder = engine::io::in_empty_folder(&mut command, "unity-assets-web-search-")
        .map_err(|e| format!("cannot make an empty working folder: {e}"))?;
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("not installed: `{program}` is not on PATH"),
            _ => format!("cannot start `{program}`: {e}"),
        })?;
    // Both streams are read within bounds while the program runs: a program
    // printing without end is cut off, not buffered.
    let limit = req.max_answer_bytes;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut stdout_pipe = child.stdout.take().expect("stdout is piped");
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let run = async {
        let read_out = async {
            (&mut stdout_pipe).take(limit + 1).read_to_end(&mut stdout).await?;
            if stdout.len() as u64 > limit {
                child.start_kill()?;
            }
            Ok::<_, std::io::Error>(())
        };
        // The rest of stderr is drained so the program never blocks on it.
        let read_err = async {
            (&mut stderr_pipe).take(STDERR_BYTES).read_to_end(&mut stderr).await?;
            tokio::io::copy(&mut stderr_pipe, &mut tokio::io::sink()).await
        };
        let (out, err) = tokio::join!(read_out, read_err);
        out?;
        err?;
        child.wait().await
    };
    let status = tokio::time::timeout(Duration::from_secs(cfg.timeout_s), run)
        .await
        .map_err(|_| format!("`{program}` did not finish within {}s", cfg.timeout_s))?
        .map_err(|e| e.to_string())?;
    if stdout.len() as u64 > limit {
        return Err(format!("`{program}`: {}", too_large(limit)));
    }
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        return Err(format!("`{program}` exited with {status}: {first}"));
    }
    let stdout = String::from_utf8_lossy(&stdout);
    let json =
        engine::llm::extract::extract_json(&stdout).ok_or_else(|| format!("`{program}` printed no result JSON"))?;
    let rows = match &json {
        Value::Array(rows) => rows,
        other => other
            .get("results")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`{program}` printed JSON without a result list"))?,
    };
    Ok(rows.iter().filter_map(row).take(cfg.max_results).collect())
}

/// One row as `prompts/web-search/command.j2` asks for it (`title, url, snippet,
/// source_type`), with the metadata the tier bonuses read when present.
fn row(r: &Value) -> Option<WebResult> {
    let first = |keys: &[&str]| keys.iter().find_map(|k| r.get(*k));
    let mut out = result(
        r.get("title"),
        r.get("url"),
        first(&["snippet", "content", "description"]),
        first(&["published_at", "publishedAt", "date"]),
    )?;
    let number = |k: &str| r.get(k).and_then(Value::as_f64);
    out.source_type = r.get("source_type").and_then(Value::as_str).map(str::to_owned);
    out.votes = number("votes");
    out.reactions = number("reactions");
    out.claps = number("claps");
    Some(out)
}
