//! Runs of the `unity-assets` binary. Its path is known only to the root
//! crate's integration tests (`env!("CARGO_BIN_EXE_unity-assets")`), so
//! they pass it in.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `bin --project <project>`, with the environment every end-to-end run
/// wants: no colour, and no log filter, provider override or installed
/// model (which turns search by meaning on) leaking in from the developer's
/// machine; a test that wants the model sets its own `XDG_CACHE_HOME`.
pub fn command(bin: &Path, project: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .env("XDG_CACHE_HOME", project.join(".no-model-cache"))
        .env_remove("RUST_LOG")
        .env_remove("UNITY_ASSETS_PROVIDER");
    command
}

/// `` `unity-assets ARGS` `` as a run of [`command`] on `project` suggests it:
/// naming the project, so it runs from any folder (a temp folder's path needs
/// no shell quoting).
pub fn suggested(project: &Path, args: &str) -> String {
    format!("`unity-assets --project {} {args}`", project.display())
}

/// What one finished run of the binary did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// From start to exit.
    pub wall: Duration,
}

impl Run {
    /// Run `command` to its end.
    pub fn of(command: &mut Command) -> Self {
        let started = Instant::now();
        let output = command.output().expect("the binary runs");
        Self::finished(output, started.elapsed())
    }

    /// Run `command` with stdin closed; `None` when it outlived `limit` and
    /// was killed (a hang fails the test instead of blocking it).
    pub fn within(command: &mut Command, limit: Duration) -> Option<Self> {
        let started = Instant::now();
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        while child.try_wait().expect("the child's status").is_none() {
            if started.elapsed() > limit {
                child.kill().expect("kill the child");
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let output = child.wait_with_output().expect("the child's output");
        Some(Self::finished(output, started.elapsed()))
    }

    /// The run behind an [`Output`] collected elsewhere (a spawned child).
    pub fn finished(output: Output, wall: Duration) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            wall,
        }
    }

    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    /// How many stdout lines are exactly `line`.
    pub fn count(&self, line: &str) -> usize {
        self.stdout.lines().filter(|l| *l == line).count()
    }

    pub fn has_line(&self, line: &str) -> bool {
        self.count(line) > 0
    }

    /// Stdout as the one JSON document `--json` prints.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{self:?}"))
    }

    /// Both streams, for failure messages.
    pub fn output(&self) -> String {
        format!("--- stdout\n{}--- stderr\n{}", self.stdout, self.stderr)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n{}", self.code, self.output())
    }
}
