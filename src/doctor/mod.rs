//! `unity-assets doctor`: read-only checks, each a [`Check`] with a fix.
//!
//! The checks never write: a doctor run on a broken project must not make it
//! worse. `pipelines/doctor.yaml` runs them as `doctor.*` functions (one file
//! here per group: `files`, `config`, `provider`, `trust`, [`mcp`],
//! `model`),
//! prints one line per check with `report`, and exits 1 when a required
//! check fails. `providers check` shares the provider check's connection step.

pub(crate) mod config;
pub(crate) mod files;
pub mod mcp;
pub(crate) mod model;
pub(crate) mod provider;
pub(crate) mod trust;

use engine::llm::LlmConfig;
use engine::mcp::ServerConfig;
use engine::{Reach, Registry};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// ✓
    Ok,
    /// ! — not a failure, but worth a look (a check skipped on request).
    Warn,
    /// ✗
    Fail,
}

impl Status {
    fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
        }
    }
}

/// One doctor line: what was checked, its status, what was seen, how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Check {
    /// What was checked.
    pub name: String,
    pub(crate) status: Status,
    /// Whether a failure makes `doctor` exit 1.
    #[serde(default = "required_by_default")]
    pub required: bool,
    #[serde(default)]
    pub(crate) detail: String,
    /// What to do about a failure or warning (empty when ok).
    #[serde(default)]
    pub fix: String,
}

fn required_by_default() -> bool {
    true
}

/// `--json` consumers read `ok` as well as `status` (it predates `status`).
impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("Check", 6)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("status", &self.status)?;
        out.serialize_field("ok", &self.ok())?;
        out.serialize_field("required", &self.required)?;
        out.serialize_field("detail", &self.detail)?;
        out.serialize_field("fix", &self.fix)?;
        out.end()
    }
}

impl Check {
    pub(crate) fn pass(name: &str, detail: impl Into<String>) -> Self {
        Self::new(name, Status::Ok, detail, "")
    }

    pub(crate) fn warn(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(name, Status::Warn, detail, fix)
    }

    pub(crate) fn fail(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(name, Status::Fail, detail, fix)
    }

    fn new(name: &str, status: Status, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            status,
            required: true,
            detail: detail.into(),
            fix: fix.into(),
        }
    }

    /// A check whose failure is reported but does not fail the doctor.
    pub fn optional(self) -> Self {
        Self {
            required: false,
            ..self
        }
    }

    /// Whether the check did not fail (a warning passes).
    pub fn ok(&self) -> bool {
        self.status != Status::Fail
    }

    /// `✗ name: detail (optional) — fix: …`
    pub fn line(&self) -> String {
        let optional = if self.ok() || self.required { "" } else { " (optional)" };
        let fix = if self.status == Status::Ok || self.fix.is_empty() {
            String::new()
        } else {
            format!(" — fix: {}", self.fix)
        };
        format!("{} {}: {}{optional}{fix}", self.status.mark(), self.name, self.detail)
    }
}

/// The printed lines and whether every required check passed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Report {
    /// Whether every required check passed.
    pub ok: bool,
    pub(crate) text: String,
    /// The checks as given, for `doctor --json`.
    pub checks: Vec<Check>,
}

pub(crate) fn report(checks: &[Check]) -> Report {
    let lines: Vec<String> = checks.iter().map(Check::line).collect();
    Report {
        ok: checks.iter().all(|c| c.ok() || !c.required),
        text: lines.join("\n"),
        checks: checks.to_vec(),
    }
}

/// The doctor pipeline's inputs the caller (CLI or MCP server) fills:
/// whether the project's items may be used, the trust check, and the
/// `--set` values the run had to leave out (reported by the config check).
pub fn inputs(gate: &crate::trust::Gate, root: &std::path::Path, set_errors: Vec<String>) -> Map<String, Value> {
    let (trusted, check) = trust::check(root, gate);
    let mut map = Map::new();
    map.insert("trusted".into(), Value::Bool(trusted));
    map.insert("trust".into(), serde_json::to_value(check).unwrap_or_default());
    map.insert("set_errors".into(), set_errors.into());
    map
}

#[derive(Deserialize)]
struct NoArgs {}

#[derive(Deserialize)]
struct RowsArgs {
    #[serde(default)]
    rows: Option<files::ReadRows>,
}

#[derive(Deserialize)]
struct IndexArgs {
    #[serde(default)]
    rows: Option<files::ReadRows>,
    #[serde(default)]
    packages: Option<files::ReadRows>,
}

#[derive(Deserialize)]
struct ConfigArgs {
    #[serde(default)]
    set_errors: Vec<String>,
}

#[derive(Deserialize)]
struct ProviderArgs {
    #[serde(default)]
    offline: bool,
}

#[derive(Deserialize)]
struct McpArgs {
    #[serde(default)]
    mcp: Option<ServerConfig>,
    /// `offline` or `untrusted`: the server is not started.
    #[serde(default)]
    skip: String,
}

#[derive(Deserialize)]
struct ReportArgs {
    checks: Vec<Check>,
}

/// Register every `doctor.*` function.
pub(crate) fn register(registry: &mut Registry, llm: LlmConfig, meaning_off: Option<String>) {
    registry
        .function(
            "doctor.project",
            Reach::NONE,
            "the project root holds Assets/",
            |_: NoArgs, ctx| Ok(files::project(&ctx.workdir)),
        )
        .function(
            "doctor.config",
            Reach::NONE,
            "the project config, curated labels and --set values are valid",
            |a: ConfigArgs, ctx| Ok(config::check(&ctx.workdir, &ctx.resources, &ctx.limits, &a.set_errors)),
        )
        .function(
            "doctor.index",
            Reach::NONE,
            "the index is present, fresh and its asset and package rows schema-valid",
            |a: IndexArgs, ctx| {
                Ok(files::index(
                    &ctx.workdir,
                    &ctx.limits,
                    &a.rows.unwrap_or_default(),
                    &a.packages.unwrap_or_default(),
                ))
            },
        )
        .function(
            "doctor.feedback",
            Reach::NONE,
            "feedback rows are valid",
            |a: RowsArgs, _| Ok(files::feedback(&a.rows.unwrap_or_default())),
        )
        .function(
            "doctor.temp_files",
            Reach::NONE,
            "no stray temp, lock or partial files in the index folder",
            |_: NoArgs, ctx| Ok(files::temp_files(&ctx.workdir, &ctx.limits)),
        )
        .function(
            "doctor.model",
            Reach::NONE,
            "the sentence encoder for search by meaning: installed and readable, or how to install it",
            move |_: NoArgs, _| Ok(model::check(meaning_off.as_deref())),
        )
        .async_function(
            "doctor.provider",
            Reach::ALL,
            "is the LLM provider configured and reachable?",
            move |a: ProviderArgs, ctx| {
                let llm = llm.clone();
                async move { Ok(provider::check(&llm, &ctx.limits, a.offline).await) }
            },
        )
        .async_function(
            "doctor.mcp",
            Reach::ALL,
            "MCP for Unity reachable and a Unity editor attached: initialize, tools/list, active scene",
            |a: McpArgs, ctx| async move {
                Ok(match a.skip.as_str() {
                    "" => mcp::check(&ctx.workdir, a.mcp, &ctx.limits).await,
                    why => mcp::not_started(why),
                })
            },
        )
        .function(
            "doctor.report",
            Reach::NONE,
            "one ✓/!/✗ line per check and the overall verdict",
            |a: ReportArgs, _| Ok(report(&a.checks)),
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_marks_and_exit_status() {
        let mcp = Check::fail("MCP for Unity", "down", "start it").optional();
        let r = report(&[Check::pass("project root", "ok here"), mcp]);
        assert!(r.ok, "an optional check does not fail the doctor");
        assert_eq!(
            r.text,
            "✓ project root: ok here\n✗ MCP for Unity: down (optional) — fix: start it"
        );
        let r = report(&[Check::warn("MCP for Unity", "not checked", "run without --offline")]);
        assert!(r.ok, "a warning does not fail the doctor");
        assert_eq!(r.text, "! MCP for Unity: not checked — fix: run without --offline");
        let r = report(&[Check::fail("index", "missing", "run it")]);
        assert!(!r.ok);
        assert_eq!(r.text, "✗ index: missing — fix: run it");
    }

    #[test]
    fn json_keeps_ok_and_reads_back() {
        let check = Check::fail("index", "missing", "run it");
        let json = serde_json::to_value(&check).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["status"], "fail");
        assert_eq!(serde_json::from_value::<Check>(json).unwrap(), check);
    }
}
