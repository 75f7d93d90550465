//! Workspace trust: a cloned project is untrusted input.
//!
//! What in a project can run a program, reach the network or choose which
//! credential goes where is used only after the user trusts that project,
//! as VS Code's workspace trust and direnv's `allow` do. [`review`] collects
//! those items with their `file:line` and a digest of exactly the files that
//! hold them; `unity-assets trust` records the project's path and that digest
//! in the user's own config folder (never in the project), so a change to
//! any of those files revokes trust until it is approved again. A project
//! with none of these items needs no trust. Embedded pipelines, files equal
//! to them, and the command line (`--set`, `--provider`) are the user's own.

mod review;
mod settings;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::resources::Resources;
use engine::Registry;
use serde::{Deserialize, Serialize};

pub use review::review;

/// `UNITY_ASSETS_TRUST=1` trusts the project for one run (CI), like `--trust`.
pub(crate) const TRUST_ENV: &str = "UNITY_ASSETS_TRUST";
/// What no pipeline writes, trusted or not: a file there would make another
/// program run something (git's config and hooks, Claude Code's and VS
/// Code's settings, hooks and MCP servers) or is Unity's own cache.
pub(crate) const PROTECTED: &[&str] = &[
    ".git",
    ".gitmodules",
    ".gitattributes",
    ".hg",
    ".svn",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks",
    ".claude/commands",
    ".claude/agents",
    ".claude/skills",
    ".mcp.json",
    ".vscode",
    ".idea",
    "Library",
];
/// The trust store is small; anything larger is not ours.
const STORE_LIMIT: u64 = 16 * 1024 * 1024;

/// One thing that needs trust, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Relative to the project.
    pub file: String,
    pub(crate) line: usize,
    pub(crate) what: String,
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// The project's trust-requiring items and the digest of the files holding them.
#[derive(Debug, Clone, Default)]
pub struct Review {
    pub(crate) items: Vec<Item>,
    /// Items of a pipeline file inside the project that `run FILE` names:
    /// `unity-assets trust` does not record such a file, so only `--trust` allows them.
    pub(crate) for_this_run: Vec<Item>,
    /// What was looked at and needs no trust, and why.
    pub notes: Vec<String>,
    /// Every pipeline by name: whether the project's edited copy reaches
    /// out, and the pipelines its `run:` stages name (listed only when
    /// some pipeline reaches out: otherwise no run can reach one).
    pub pipelines: BTreeMap<String, (bool, Vec<String>)>,
    pub(crate) digest: String,
}

impl Review {
    /// Whether running pipeline `name` runs a project override that reaches
    /// out, itself or through its sub-pipelines: `doctor`, which otherwise
    /// reports an untrusted project and runs, is then refused like any command.
    pub(crate) fn runs_reaching_override(&self, name: &str) -> bool {
        let mut pending = vec![name];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(next) = pending.pop() {
            if !seen.insert(next) {
                continue;
            }
            if let Some((reaches, runs)) = self.pipelines.get(next) {
                if *reaches {
                    return true;
                }
                pending.extend(runs.iter().map(String::as_str));
            }
        }
        false
    }

    /// Every item, the project's and a run file's.
    pub(crate) fn all_items(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().chain(&self.for_this_run)
    }
}

/// Whether a run may use the project's items, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Nothing in the project needs trust.
    NotNeeded,
    /// Recorded by `unity-assets trust` with the same digest.
    Trusted,
    /// `--trust` or `UNITY_ASSETS_TRUST=1` for this run.
    TrustedForRun,
    /// Never trusted, or changed since.
    Untrusted {
        /// When the project was last trusted, if ever.
        previous: Option<String>,
    },
}

impl Status {
    pub(crate) fn allows(&self) -> bool {
        !matches!(self, Status::Untrusted { .. })
    }
}

/// The trust decision a command or an MCP call makes before it runs: one
/// review of the project and its status, shared by the CLI and the server.
pub struct Gate {
    pub(crate) review: Review,
    pub(crate) status: Status,
}

impl Gate {
    /// The project at `root` as it is opened (its `resources` and the
    /// `registry` of its native functions); `run_file`: the pipeline file
    /// `run FILE` names (reviewed when it lies inside the project);
    /// `for_run`: `--trust` / `UNITY_ASSETS_TRUST=1`.
    pub fn check(
        root: &Path,
        resources: &Resources,
        registry: &Registry,
        run_file: Option<&Path>,
        for_run: bool,
    ) -> Self {
        let review = review(root, resources, registry, run_file);
        let status = status(root, &review, for_run);
        Self { review, status }
    }

    /// Why a run that uses the project must not start (`None`: it may).
    pub fn refusal(&self, root: &Path) -> Option<String> {
        match &self.status {
            Status::Untrusted { previous } => Some(refusal(root, &self.review, previous.as_deref())),
            _ => None,
        }
    }
}

/// The user's trust store: `$XDG_CONFIG_HOME/unity-assets/trusted.json`, or
/// `~/.config/unity-assets/trusted.json`.
pub(crate) fn store_path() -> Option<PathBuf> {
    Some(crate::user_dirs::unity_assets_dir("XDG_CONFIG_HOME", ".config")?.join("trusted.json"))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// By the project's canonical path.
    projects: BTreeMap<String, Record>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    digest: String,
    trusted_at: String,
    items: Vec<Item>,
}

fn key(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

fn load_store() -> Result<Store, String> {
    let Some(path) = store_path() else {
        return Ok(Store::default());
    };
    match engine::io::read_text_limited(&path, STORE_LIMIT, "trust store", &crate::PRODUCT) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| format!("{} is not a valid trust store: {e}", path.display()))
        }
        Err(e) if e.is_not_found() => Ok(Store::default()),
        Err(e) => Err(e.to_string()),
    }
}

fn save_store(store: &Store) -> Result<PathBuf, String> {
    let path = store_path().ok_or("no config folder: set XDG_CONFIG_HOME or HOME")?;
    let mut bytes = serde_json::to_vec_pretty(store).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    engine::io::write_atomic(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The project's trust status for this run (`for_run`: `--trust` or the env var).
pub fn status(root: &Path, review: &Review, for_run: bool) -> Status {
    if review.all_items().next().is_none() {
        return Status::NotNeeded;
    }
    if for_run {
        return Status::TrustedForRun;
    }
    if !review.for_this_run.is_empty() {
        return Status::Untrusted { previous: None };
    }
    // An unreadable store trusts nothing (fail closed).
    let record = load_store().ok().and_then(|s| s.projects.get(&key(root)).cloned());
    match record {
        Some(r) if r.digest == review.digest => Status::Trusted,
        Some(r) => Status::Untrusted {
            previous: Some(r.trusted_at),
        },
        None => Status::Untrusted { previous: None },
    }
}

/// The refusal of an untrusted project: every item with its `file:line`, and how to review and trust.
pub fn refusal(root: &Path, review: &Review, previous: Option<&str>) -> String {
    let mut out = match previous {
        Some(at) => format!(
            "error: {} changed since you trusted it ({at}); it can run programs, reach the network or choose credentials, so nothing was run:",
            root.display()
        ),
        None => format!(
            "error: {} is not trusted; it can run programs, reach the network or choose credentials, so nothing was run:",
            root.display()
        ),
    };
    for item in review.all_items() {
        out.push_str(&format!("\n  {item}"));
    }
    if review.for_this_run.is_empty() {
        out.push_str(&format!(
            "\n  help: review these lines, then run `unity-assets --project {} trust` to allow them \
             (or pass --trust, or set {TRUST_ENV}=1, for one run); a project without them needs no trust",
            root.display()
        ));
    } else {
        out.push_str(&format!(
            "\n  help: a pipeline file inside the project is project content: review it, then pass --trust \
             (or set {TRUST_ENV}=1) for this run, or move it to {}/pipelines/ and run `unity-assets trust`",
            crate::config::OVERRIDES
        ));
    }
    out
}

/// `unity-assets trust [--show] [--revoke]` on the project at `root`
/// (opened with `resources` and `registry`).
pub fn command(
    root: &Path,
    resources: &Resources,
    registry: &Registry,
    show: bool,
    revoke: bool,
) -> Result<String, String> {
    let review = review(root, resources, registry, None);
    let mut store = load_store()?;
    let k = key(root);
    if revoke {
        let removed = store.projects.remove(&k).is_some();
        if removed {
            save_store(&store)?;
        }
        return Ok(if removed {
            format!("trust revoked for {k}")
        } else {
            format!("{k} was not trusted; nothing to revoke")
        });
    }
    let mut out: String = review.notes.iter().map(|n| format!("{n}\n")).collect();
    if review.items.is_empty() {
        out.push_str(&format!(
            "{k} has nothing that needs trust (no program, network target or credential choice)"
        ));
        return Ok(out);
    }
    let state = match store.projects.get(&k) {
        Some(r) if r.digest == review.digest => format!("trusted since {}", r.trusted_at),
        Some(r) => format!("changed since it was trusted ({}); not trusted", r.trusted_at),
        None => "not trusted".to_owned(),
    };
    out.push_str(&format!("{k}: {state}\n{} item(s) need trust:", review.items.len()));
    for item in &review.items {
        out.push_str(&format!("\n  {item}"));
    }
    if show {
        return Ok(out);
    }
    let trusted_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    store.projects.insert(
        k,
        Record {
            digest: review.digest.clone(),
            trusted_at,
            items: review.items.clone(),
        },
    );
    let path = save_store(&store)?;
    out.push_str(&format!(
        "\ntrusted ({}; recorded in {}); a change to any of these files needs `unity-assets trust` again",
        review.digest,
        path.display()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests;
