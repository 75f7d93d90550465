//! A generated Unity project for end-to-end runs of the binary: asset files
//! and `.meta` files only, named from a small vocabulary.

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::process::Command;

use serde_json::Value;

pub const INDEX_DIR: &str = ".claude/unity-asset-index";

pub struct Project {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Project {
    /// `n` assets over 40 vendor packages, named from a small vocabulary so
    /// that a query matches some tens of them, as in a real project.
    pub fn generated(n: usize) -> Self {
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
        let project = Self { dir };
        for i in 0..n {
            let (thing, ext) = THINGS[i % THINGS.len()];
            let style = STYLES[(i / THINGS.len()) % STYLES.len()];
            let rel = format!("Assets/Vendor{:02}/{thing}s/{thing}_{style}_{i:05}.{ext}", i % 40);
            project.add_asset(&rel, i);
        }
        project
    }

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

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    /// [`Self::run`] with extra environment variables (a test key).
    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_unity-assets"))
            .arg("--project")
            .arg(self.dir.path())
            .args(args)
            // These projects name their own model servers: trusted for the test.
            .env("UNITY_ASSETS_TRUST", "1")
            .envs(env.iter().copied())
            .env("NO_COLOR", "1")
            .env_remove("UNITY_ASSETS_PROVIDER")
            .env_remove("RUST_LOG")
            .output()
            .expect("the binary runs");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn result_guids(&self) -> Vec<Vec<String>> {
        let path = self.dir.path().join(INDEX_DIR).join("search-result.json");
        let result: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        result["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                g["candidates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["guid"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect()
    }
}
