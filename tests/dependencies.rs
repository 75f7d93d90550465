//! What ships in the binary: one HTTP client, one TLS crypto provider, one
//! version of each hashing and randomness crate (two of each used to ship,
//! our own next to rmcp's).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `name → versions` of every crate compiled into the binary (normal
/// dependencies, every target platform); `None` when some other platform's
/// crate was never downloaded (a build fetches only its own platform's;
/// `.ci/run` runs `cargo fetch` first, so CI always checks).
fn shipped() -> Option<BTreeMap<String, BTreeSet<String>>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "--offline", "-p", "unity-assets", "-e", "normal"])
        .args(["--target", "all", "--prefix", "none", "--format", "{p}"])
        .output()
        .expect("run cargo tree");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("--offline was specified") {
        eprintln!("skipped: a crate of another platform is not downloaded; run `cargo fetch --locked` first");
        return None;
    }
    assert!(out.status.success(), "cargo tree: {stderr}");
    let mut crates: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut words = line.split_whitespace();
        if let (Some(name), Some(version)) = (words.next(), words.next()) {
            crates.entry(name.to_owned()).or_default().insert(version.to_owned());
        }
    }
    Some(crates)
}

#[test]
fn one_version_of_each_http_hash_and_random_crate_ships() {
    let Some(crates) = shipped() else { return };
    for name in ["reqwest", "hyper", "rustls", "sha2", "digest", "rand", "rand_core"] {
        let versions = crates.get(name).cloned().unwrap_or_default();
        assert!(
            versions.len() <= 1,
            "{name} ships in {} versions: {versions:?}",
            versions.len()
        );
    }
    let providers: Vec<&str> = ["ring", "aws-lc-rs"]
        .into_iter()
        .filter(|p| crates.contains_key(*p))
        .collect();
    assert!(providers.len() <= 1, "two TLS crypto providers ship: {providers:?}");
}
