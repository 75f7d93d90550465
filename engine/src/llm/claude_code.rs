//! Claude Code in headless mode: `claude -p --output-format json`, so users
//! keep their Claude Code login and need no API key.
//!
//! Prompt convention: the `system`, `cached` and `user` blocks and the schema
//! (as instructions) are joined by blank lines into one prompt on stdin. The
//! CLI prints one result envelope
//! (`{"type":"result","is_error":…,"result":"…","usage":{…}}`); the answer is
//! the JSON found in `result`. Only timeouts are retried: the CLI retries its
//! own API calls, and its other failures (no login, bad flags) are final.
//!
//! `claude` is an agent with tools, and `-p` skips its workspace trust: each
//! call runs in an empty folder of its own, with every tool off, no slash
//! commands, only the user's settings and no MCP server, so nothing of the
//! project (hooks, permissions, `.mcp.json`, `CLAUDE.md`) applies and the
//! prompt, on stdin, is data to answer, never a task to carry out.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::extract::extract_json;
use super::retry::{with_retries, Failure, RetryPolicy};
use super::structured::json_instructions;
use super::wire::{messages_usage, TierModels};
use super::{excerpt, LlmError, LlmReply, LlmRequest, Usage};

const NAME: &str = "claude-code";
const DEFAULT_COMMAND: &str = "claude";
/// Headless, answering only: no tools, slash commands, project or local
/// settings, or MCP servers (the CLI's flags as of Claude Code 2.1).
const ISOLATED: [&str; 9] = [
    "--tools",
    "",
    "--disable-slash-commands",
    "--setting-sources",
    "user",
    "--strict-mcp-config",
    "--mcp-config",
    r#"{"mcpServers":{}}"#,
    "--no-session-persistence",
];

pub(crate) struct ClaudeCode {
    /// The program and the arguments configured before ours.
    argv: Vec<String>,
    models: TierModels,
    policy: RetryPolicy,
    /// The prefix of the empty folder each call runs in (the product's name).
    folder_prefix: String,
}

impl ClaudeCode {
    /// `argv` is `llm.command` split into words; `None` runs `claude`.
    pub(crate) fn new(
        argv: Option<Vec<String>>,
        models: TierModels,
        policy: RetryPolicy,
        product: &crate::Product,
    ) -> Result<Self, LlmError> {
        let argv = argv.unwrap_or_else(|| vec![DEFAULT_COMMAND.into()]);
        if argv.is_empty() {
            return Err(setup(
                "llm.command is empty; name the Claude Code command (default `claude`)".into(),
            ));
        }
        Ok(Self {
            argv,
            models,
            policy,
            folder_prefix: product.temp_prefix("claude"),
        })
    }

    async fn call(&self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        let prompt = prompt_text(request);
        let model = self.models.get(request.tier);
        let ((value, usage), retries) = with_retries(NAME, self.policy, || self.attempt(&prompt, &model)).await?;
        Ok(LlmReply {
            value,
            usage,
            retries,
            model,
        })
    }

    async fn attempt(&self, prompt: &str, model: &str) -> Result<(Value, Usage), Failure> {
        let program = &self.argv[0];
        let mut command = Command::new(resolved(program));
        let _folder = crate::io::in_empty_folder(&mut command, &self.folder_prefix)
            .map_err(|e| Failure::fatal(setup(format!("cannot make an empty working folder: {e}"))))?;
        let mut child = command
            .args(&self.argv[1..])
            .args(["-p", "--output-format", "json", "--model", model])
            .args(ISOLATED)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Failure::fatal(setup(match e.kind() {
                    std::io::ErrorKind::NotFound => {
                        format!("command `{program}` not found; install Claude Code or set llm.command")
                    }
                    _ => format!("cannot start `{program}`: {e}"),
                }))
            })?;
        let stdin = child.stdin.take();
        let feed = async move {
            if let Some(mut stdin) = stdin {
                // A CLI that fails early stops reading; its exit status and
                // envelope explain why better than the broken pipe would.
                let _ = stdin.write_all(prompt.as_bytes()).await;
            }
        };
        let (_, output) = tokio::join!(feed, child.wait_with_output());
        let output = output.map_err(|e| Failure::fatal(setup(format!("`{program}` failed to run: {e}"))))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some(envelope) = result_envelope(&stdout) else {
            let said = match String::from_utf8_lossy(&output.stderr).trim() {
                "" => excerpt(&stdout),
                stderr => excerpt(stderr),
            };
            let message = if output.status.success() {
                format!("`{program}` printed no result envelope: {said}")
            } else {
                format!("`{program}` exited with {}: {said}{}", output.status, login_hint(&said))
            };
            return Err(Failure::fatal(setup(message)));
        };
        let result = envelope["result"].as_str().unwrap_or_default();
        if envelope["is_error"] == true || !output.status.success() {
            let message = format!(
                "`{program}` reported an error: {}{}",
                excerpt(result),
                login_hint(result)
            );
            return Err(Failure::fatal(setup(message)));
        }
        let value = extract_json(result).ok_or_else(|| {
            Failure::fatal(LlmError::NoJson {
                provider: NAME.into(),
                message: excerpt(result),
                usage: messages_usage(&envelope["usage"]),
            })
        })?;
        Ok((value, messages_usage(&envelope["usage"])))
    }
}

impl_provider!(ClaudeCode);

/// A program named by a relative path is found from where the product was
/// started, not from the empty folder it runs in.
fn resolved(program: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(program);
    match std::env::current_dir() {
        Ok(here) if path.is_relative() && path.components().count() > 1 => here.join(path),
        _ => path.to_path_buf(),
    }
}

fn setup(message: String) -> LlmError {
    LlmError::Setup {
        provider: NAME.into(),
        message,
    }
}

fn prompt_text(request: &LlmRequest) -> String {
    let instructions = json_instructions(request.schema.as_ref());
    [
        request.system.as_deref(),
        request.cached.as_deref(),
        Some(&request.user),
        Some(&instructions),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n\n")
}

/// The `{"type": "result", …}` object the CLI prints (alone, or as the last line).
fn result_envelope(stdout: &str) -> Option<Value> {
    let is_result = |v: &Value| v["type"] == "result";
    serde_json::from_str(stdout.trim()).ok().filter(is_result).or_else(|| {
        stdout
            .lines()
            .rev()
            .filter_map(|line| serde_json::from_str(line).ok())
            .find(is_result)
    })
}

/// How to fix a failure that reads like a missing login.
fn login_hint(text: &str) -> &'static str {
    let text = text.to_lowercase();
    let about_login = ["login", "log in", "api key", "authenticat"]
        .iter()
        .any(|needle| text.contains(needle));
    if about_login {
        " — Claude Code is not logged in: run `claude` once and use /login"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_may_follow_other_lines() {
        let stdout = "warming up\n{\"type\":\"result\",\"result\":\"{}\"}\n";
        assert_eq!(result_envelope(stdout).unwrap()["result"], "{}");
        assert!(result_envelope("{\"type\":\"system\"}").is_none());
    }

    #[test]
    fn login_failures_get_a_hint() {
        assert!(login_hint("Invalid API key · Please run /login").contains("/login"));
        assert_eq!(login_hint("overloaded"), "");
    }
}
