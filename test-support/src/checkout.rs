//! A hostile checkout: someone else's project in a temporary folder, with a
//! trust store of its own and an "outside" folder standing for the rest of
//! the machine, run as a careful user would (never trusted unless the test
//! says so, bounded so a hang fails instead of blocking).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cli::{self, Run};

/// A key in the environment of every run (`UA_TEST_SECRET`): no output may show it.
pub const SECRET: &str = "sk-test-SECRET-0123456789";

/// A project, a user config folder and an outside folder under one temp folder.
pub struct Checkout {
    root: tempfile::TempDir,
    bin: PathBuf,
}

impl Checkout {
    /// An empty project (`Assets/`, `.claude/`) run by `bin`.
    pub fn new(bin: &str) -> Self {
        let root = tempfile::tempdir().expect("a temporary folder");
        for d in ["project/Assets", "project/.claude", "outside", "config", "bin"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        Self { root, bin: bin.into() }
    }

    pub fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }

    /// The file a hostile program creates if it runs.
    pub fn marker(&self) -> PathBuf {
        self.outside().join("marker")
    }

    /// Write `text` at `rel` in the project.
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.project().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// An empty asset with its `.meta` (guid `n` in hex).
    pub fn asset(&self, rel: &str, n: usize) {
        self.write(rel, "");
        self.write(
            &format!("{rel}.meta"),
            &format!("fileFormatVersion: 2\nguid: {n:032x}\n"),
        );
    }

    /// An executable `name` on the PATH the runs get (a stand-in for a
    /// program the product may start, such as `claude`).
    pub fn program(&self, name: &str, body: &str) -> PathBuf {
        let file = self.root.path().join("bin").join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        file
    }

    /// The user's config folder (the trust store), outside the project.
    pub fn config_dir(&self) -> PathBuf {
        self.root.path().join("config")
    }

    /// A shell command creating [`Self::marker`]: a hostile program's trace.
    pub fn touch(&self) -> String {
        format!("touch {}", self.marker().display())
    }

    /// The binary on the project, untrusted, the stand-in programs first on
    /// PATH and [`SECRET`] in the environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = cli::command(&self.bin, &self.project());
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.root.path().join("bin")];
        dirs.extend(std::env::split_paths(&path));
        c.args(args)
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("UA_TEST_SECRET", SECRET)
            .env_remove("UNITY_ASSETS_TRUST")
            .stdin(Stdio::null());
        c
    }

    /// Run, failing the test on a hang.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::within(&mut self.command(args), Duration::from_secs(60))
            .unwrap_or_else(|| panic!("`{}` hung", args.join(" ")))
    }

    /// [`Self::run`] with `cwd` as the working folder.
    pub fn run_from(&self, cwd: &Path, args: &[&str]) -> Run {
        Run::within(self.command(args).current_dir(cwd), Duration::from_secs(60))
            .unwrap_or_else(|| panic!("`{}` hung", args.join(" ")))
    }

    /// `unity-assets trust`, which must succeed.
    pub fn trust(&self) {
        let run = self.run(&["trust"]);
        assert_eq!(run.code, 0, "{run:?}");
    }

    /// Refused as untrusted: exit 3, `item` named with the fix, nothing run.
    pub fn assert_refused(&self, args: &[&str], item: &str) {
        let run = self.run(args);
        assert_eq!(run.code, 3, "`{}`: {run:?}", args.join(" "));
        assert!(
            run.stderr.contains(item),
            "`{}` does not name `{item}`: {run:?}",
            args.join(" ")
        );
        assert!(run.stderr.contains("trust"), "{run:?}");
        assert!(
            !self.marker().exists(),
            "`{}` ran the project's program",
            args.join(" ")
        );
    }

    /// `trust --show`'s output, which must name every one of `items`.
    pub fn assert_listed(&self, items: &[&str]) {
        let show = self.run(&["trust", "--show"]);
        for item in items {
            assert!(
                show.stdout.contains(item),
                "trust --show does not list `{item}`: {show:?}"
            );
        }
    }
}
