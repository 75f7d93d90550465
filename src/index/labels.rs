//! Curated labels (`.claude/unity-assets.labels.yml`) and how they merge with
//! `.meta` labels and generated tags.
//!
//! The file is an ordered list of rules; the first whose glob matches an
//! asset's project-relative path gives its curated labels:
//!
//! ```yaml
//! - glob: "Assets/ZombieKit/Characters/**"
//!   labels: [zombie, enemy]
//! - glob: "Assets/**/*.wav"
//!   labels: [sound]
//! ```
//!
//! `*` stays inside one folder, `**` crosses folders. Priority is curated >
//! `.meta` > LLM: an asset's `labels` are its curated labels followed by its
//! `.meta` labels (a label differing only in case is kept once, in the
//! higher-priority spelling), and a generated tag already present as a label
//! is dropped from `llm_tags`.

use std::path::Path;

use anyhow::Context as _;
use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::Deserialize;

/// Where the curated labels live, relative to the project.
pub const LABELS_FILE: &str = ".claude/unity-assets.labels.yml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    glob: String,
    labels: Vec<String>,
}

/// The text of the project's labels file within `limits.file_mb`, `None`
/// when there is none. Read once per scan: parsed and fingerprinted.
pub fn read(project: &Path, limits: &engine::io::Limits) -> anyhow::Result<Option<String>> {
    let path = project.join(LABELS_FILE);
    Ok(engine::io::read_text_if_present(
        &path,
        limits.file_bytes,
        engine::io::FILE_KEY,
        &crate::PRODUCT,
    )?)
}

/// The compiled, ordered rules.
#[derive(Debug, Default)]
pub struct CuratedLabels {
    rules: Vec<(GlobMatcher, Vec<String>)>,
}

impl CuratedLabels {
    /// Load the project's rules; a missing file means no curated labels.
    pub fn load(project: &Path, limits: &engine::io::Limits) -> anyhow::Result<Self> {
        Self::from_file(project, read(project, limits)?.as_deref())
    }

    /// The rules of the file's `text` (`None`: no file, no rules).
    pub fn from_file(project: &Path, text: Option<&str>) -> anyhow::Result<Self> {
        match text {
            Some(text) => Self::parse(text).with_context(|| format!("{}", project.join(LABELS_FILE).display())),
            None => Ok(Self::default()),
        }
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let specs: Option<Vec<RuleSpec>> =
            serde_yaml::from_str(text).context("expected a list of `{glob: \"Assets/…/**\", labels: [..]}` rules")?;
        let rules = specs
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                let glob: Glob = GlobBuilder::new(&spec.glob)
                    .literal_separator(true)
                    .build()
                    .with_context(|| format!("rule {}: bad glob `{}`", i + 1, spec.glob))?;
                Ok((glob.compile_matcher(), spec.labels))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { rules })
    }

    /// The labels of the first rule matching `path`, if any.
    pub fn for_path(&self, path: &str) -> &[String] {
        self.rules
            .iter()
            .find(|(glob, _)| glob.is_match(path))
            .map(|(_, labels)| labels.as_slice())
            .unwrap_or_default()
    }
}

/// Curated labels then `.meta` labels, each kept once (case-insensitively).
pub fn merge_labels(curated: &[String], meta: &[String]) -> Vec<String> {
    let mut merged: Vec<String> = Vec::with_capacity(curated.len() + meta.len());
    for label in curated.iter().chain(meta) {
        let label = label.trim();
        if !label.is_empty() && !merged.iter().any(|m| m.eq_ignore_ascii_case(label)) {
            merged.push(label.to_owned());
        }
    }
    merged
}

/// Generated tags minus those already present as labels.
pub fn tags_without_labels(tags: Vec<String>, labels: &[String]) -> Vec<String> {
    let label_tags: Vec<String> = labels.iter().map(|l| super::tagger::kebab(l)).collect();
    tags.into_iter().filter(|t| !label_tags.contains(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_rule_wins_and_star_stays_in_a_folder() {
        let curated = CuratedLabels::parse(
            "- glob: \"Assets/ZombieKit/*.prefab\"\n  labels: [zombie]\n\
             - glob: \"Assets/**/*.prefab\"\n  labels: [prefab-any]\n",
        )
        .unwrap();
        assert_eq!(curated.for_path("Assets/ZombieKit/Walker.prefab"), ["zombie"]);
        assert_eq!(curated.for_path("Assets/ZombieKit/Boss/Big.prefab"), ["prefab-any"]);
        assert!(curated.for_path("Assets/ZombieKit/Walker.mat").is_empty());
    }

    #[test]
    fn empty_file_and_bad_glob() {
        assert!(CuratedLabels::parse("").unwrap().for_path("Assets/a").is_empty());
        let err = CuratedLabels::parse("- glob: \"Assets/[\"\n  labels: [x]\n").unwrap_err();
        assert!(format!("{err:#}").contains("rule 1"), "{err:#}");
    }

    #[test]
    fn curated_before_meta_and_tags_drop_labels() {
        let merged = merge_labels(&["Enemy".into()], &["enemy".into(), "Undead".into()]);
        assert_eq!(merged, ["Enemy", "Undead"]);
        let tags = tags_without_labels(vec!["enemy".into(), "walker".into()], &merged);
        assert_eq!(tags, ["walker"]);
    }
}
