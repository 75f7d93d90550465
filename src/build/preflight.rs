//! Is `search-result.json` fresh enough to build from?
//! (`docs/contracts.md#stale-search-result`)
//!
//! Stale when it is missing, has no `manifest_version`, names a manifest
//! version other than `manifest.json`'s, or was written before the index's
//! `state.json::last_run`. The pipeline prints [`NO_FRESH_RESULT_LINE`] and runs search
//! when it is not fresh, then asks again; still stale means `stale_search`.

use std::path::Path;
use std::time::SystemTime;

use engine::io::Limits;
use serde::Serialize;

use crate::index::store;
use crate::search::result::{self, RESULT_FILE};
use serde_json::Value;

/// The line build prints before redoing a stale or missing search; tests
/// compare it byte for byte (`docs/contracts.md#exact-lines`).
pub const NO_FRESH_RESULT_LINE: &str =
    "[unity-assets:build] No fresh search-result.json — running :search first (Ctrl+C to abort).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Staleness {
    Missing,
    Unreadable,
    NoManifestVersion,
    NoIndex,
    VersionMismatch,
    OlderThanIndex,
    /// The result answers another request than the one being built.
    OtherQuery,
}

/// What the preflight found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Freshness {
    pub fresh: bool,
    pub reason: Option<Staleness>,
    /// Human detail for the stale_search message.
    pub detail: String,
    /// The line to print when not fresh ([`NO_FRESH_RESULT_LINE`]), else `null`.
    pub line: Option<&'static str>,
}

impl Freshness {
    fn fresh() -> Self {
        Self {
            fresh: true,
            reason: None,
            detail: "search-result.json matches the index".into(),
            line: None,
        }
    }

    fn stale(reason: Staleness, detail: String) -> Self {
        Self {
            fresh: false,
            reason: Some(reason),
            detail,
            line: Some(NO_FRESH_RESULT_LINE),
        }
    }
}

/// Check `<project>/.claude/unity-asset-index/search-result.json`.
pub fn check(project: &Path, limits: &Limits, request: &str) -> Freshness {
    let index_dir = store::index_dir(project);
    let result_path = index_dir.join(RESULT_FILE);
    let text = match result::read_text(&index_dir, limits) {
        Ok(Some(text)) => text,
        Ok(None) => return Freshness::stale(Staleness::Missing, format!("{} does not exist", result_path.display())),
        Err(e) => return Freshness::stale(Staleness::Unreadable, e.to_string()),
    };
    let Ok(result) = serde_json::from_str::<Value>(&text) else {
        return Freshness::stale(
            Staleness::Unreadable,
            format!("{} is not valid JSON", result_path.display()),
        );
    };
    let Some(result_version) = result.get("manifest_version").and_then(Value::as_str) else {
        return Freshness::stale(
            Staleness::NoManifestVersion,
            "search-result.json has no manifest_version".into(),
        );
    };
    if result
        .get("query")
        .and_then(Value::as_str)
        .is_some_and(|q| q.trim() != request.trim())
    {
        return Freshness::stale(
            Staleness::OtherQuery,
            "search-result.json answers another request".into(),
        );
    }
    let Ok(Some(manifest)) = store::read_manifest(project, limits) else {
        return Freshness::stale(Staleness::NoIndex, "manifest.json is missing or unreadable".into());
    };
    let index_version = manifest.version.as_str();
    if result_version != index_version {
        return Freshness::stale(
            Staleness::VersionMismatch,
            format!("search-result.json is for manifest {result_version}, the index is {index_version}"),
        );
    }
    let last_run = store::read_state(project, limits)
        .ok()
        .and_then(|s| s.last_run)
        .and_then(|ts| parse_rfc3339(&ts));
    let written = std::fs::metadata(&result_path).and_then(|m| m.modified()).ok();
    if let (Some(last_run), Some(written)) = (last_run, written) {
        if written < last_run {
            return Freshness::stale(
                Staleness::OlderThanIndex,
                "search-result.json was written before the index's last run".into(),
            );
        }
    }
    Freshness::fresh()
}

fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let at = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(SystemTime::from(at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn project(manifest: &str, result: Option<&str>, state: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let index = store::index_dir(dir.path());
        fs::create_dir_all(&index).unwrap();
        fs::write(index.join("manifest.json"), manifest).unwrap();
        if let Some(state) = state {
            fs::write(index.join("state.json"), state).unwrap();
        }
        if let Some(result) = result {
            fs::write(index.join("search-result.json"), result).unwrap();
        }
        dir
    }

    const MANIFEST: &str = r#"{"version": "v1.2", "last_run": "2026-01-01T00:00:00Z", "schema_tier": "minimal"}"#;

    #[test]
    fn fresh_when_versions_match_and_written_after_the_index() {
        let p = project(
            MANIFEST,
            Some(r#"{"manifest_version": "v1.2", "query": "좀비", "groups": []}"#),
            Some(r#"{"last_run": "2020-01-01T00:00:00Z"}"#),
        );
        assert_eq!(check(p.path(), &Limits::default(), "좀비"), Freshness::fresh());
    }

    #[test]
    fn each_staleness_is_named_and_prints_r3() {
        let cases = [
            (project(MANIFEST, None, None), Staleness::Missing),
            (
                project(MANIFEST, Some(r#"{"groups": []}"#), None),
                Staleness::NoManifestVersion,
            ),
            (
                project(MANIFEST, Some(r#"{"manifest_version": "v1.1"}"#), None),
                Staleness::VersionMismatch,
            ),
            (
                project(
                    MANIFEST,
                    Some(r#"{"manifest_version": "v1.2"}"#),
                    Some(r#"{"last_run": "2999-01-01T00:00:00Z"}"#),
                ),
                Staleness::OlderThanIndex,
            ),
            (
                project(MANIFEST, Some(r#"{"manifest_version": "v1.2", "query": "메뉴"}"#), None),
                Staleness::OtherQuery,
            ),
        ];
        for (dir, reason) in cases {
            let found = check(dir.path(), &Limits::default(), "좀비");
            assert_eq!(found.reason, Some(reason), "{}", found.detail);
            assert_eq!(found.line, Some(NO_FRESH_RESULT_LINE));
        }
    }
}
