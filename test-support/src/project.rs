//! A Unity project in a temporary folder for end-to-end runs of the binary:
//! asset files and `.meta` files only, named from a small vocabulary, and
//! its `.claude/` configuration.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli::{self, Run};

pub const INDEX_DIR: &str = ".claude/unity-asset-index";

/// A project folder (removed when dropped) and the binary that runs on it.
pub struct Project {
    pub dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Project {
    /// A project holding only `.claude/unity-assets.yml` = `config`, run by
    /// `bin` (`env!("CARGO_BIN_EXE_unity-assets")`).
    pub fn configured(bin: &str, config: &str) -> Self {
        let project = Self {
            dir: tempfile::tempdir().expect("a temporary folder"),
            bin: bin.into(),
        };
        project.configure(config);
        project
    }

    /// `n` assets over 40 vendor packages, named from a small vocabulary so
    /// that a query matches some tens of them, as in a real project.
    pub fn generated(bin: &str, n: usize) -> Self {
        const THINGS: &[(&str, &str)] = &[
            ("Zombie", "prefab"),
            ("Soldier", "prefab"),
            ("Tree", "prefab"),
            ("Rock", "mat"),
            ("Crate", "prefab"),
            ("Music", "wav"),
            ("Footstep", "wav"),
            ("Button", "png"),
            ("Rifle", "fbx"),
            ("Door", "prefab"),
        ];
        const STYLES: &[&str] = &["Basic", "Fast", "Dark", "Old", "Heavy", "Small", "Red", "Mossy"];
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::create_dir_all(dir.path().join("ProjectSettings")).unwrap();
        let project = Self { dir, bin: bin.into() };
        for i in 0..n {
            let (thing, ext) = THINGS[i % THINGS.len()];
            let style = STYLES[(i / THINGS.len()) % STYLES.len()];
            let rel = format!("Assets/Vendor{:02}/{thing}s/{thing}_{style}_{i:05}.{ext}", i % 40);
            project.add_asset(&rel, i);
        }
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An empty asset file at `rel` with a `.meta` whose guid is `n` in hex.
    pub fn add_asset(&self, rel: &str, n: usize) {
        let file = self.dir.path().join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        std::fs::write(
            format!("{}.meta", file.display()),
            format!("fileFormatVersion: 2\nguid: {n:032x}\n"),
        )
        .unwrap();
    }

    pub fn configure(&self, yaml: &str) {
        std::fs::create_dir_all(self.dir.path().join(".claude")).unwrap();
        std::fs::write(self.dir.path().join(".claude/unity-assets.yml"), yaml).unwrap();
    }

    /// Write a file under the project's override folder (.claude/unity-assets/).
    pub fn override_file(&self, rel: &str, text: &str) {
        let file = self.path().join(".claude/unity-assets").join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    /// A file in the project folder (a query set, a pipeline to `run`); its
    /// path, as a command line names it.
    pub fn file(&self, name: &str, text: &str) -> String {
        let file = self.path().join(name);
        std::fs::write(&file, text).unwrap();
        file.to_string_lossy().into_owned()
    }

    /// An executable shell script in the project folder (a `command` backend).
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let file = self.path().join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        file
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    /// [`Self::run`] with extra environment variables (a test key).
    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        Run::of(
            cli::command(&self.bin, self.path())
                .args(args)
                // These projects name their own model servers and search
                // backends: trusted for the test.
                .env("UNITY_ASSETS_TRUST", "1")
                .env_remove("BRAVE_API_KEY")
                .env_remove("TAVILY_API_KEY")
                .envs(env.iter().copied()),
        )
    }

    pub fn result_guids(&self) -> Vec<Vec<String>> {
        let path = self.dir.path().join(INDEX_DIR).join("search-result.json");
        let result: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        candidates(&result, "guid")
    }
}

/// One field (`guid`, `path`) of every candidate of every group of a
/// `search-result.json`.
pub fn candidates(result: &Value, field: &str) -> Vec<Vec<String>> {
    result["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c[field].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// Copies the folder `from` (files and subfolders) into `to`, creating it:
/// the example project as a test's own throwaway copy.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
