//! The project's settings: `.claude/unity-assets.yml` read by the very code
//! every command opens it with (so doctor and the commands cannot disagree),
//! the curated labels, and `--set` values the doctor run had to leave out.

use std::path::Path;

use engine::resources::Resources;

use super::Check;
use crate::config::{Config, CONFIG_FILE};
use crate::index::labels::CuratedLabels;

/// `set_errors`: why the run's `--set` values could not be used, one message each.
pub fn check(project: &Path, resources: &Resources, limits: &engine::io::Limits, set_errors: &[String]) -> Check {
    const NAME: &str = "config";
    let config = Config::load(project, resources)
        .err()
        .into_iter()
        .flat_map(|d| d.0)
        .map(|d| d.to_string());
    let labels = CuratedLabels::load(project, limits).err().map(|e| format!("{e:#}"));
    let problems: Vec<String> = config.chain(labels).chain(set_errors.iter().cloned()).collect();
    match problems.as_slice() {
        [] if project.join(CONFIG_FILE).is_file() => Check::pass(NAME, format!("{CONFIG_FILE} is valid")),
        [] => Check::pass(NAME, format!("no {CONFIG_FILE}; defaults apply")),
        _ => Check::fail(
            NAME,
            problems.join("\n"),
            format!("correct {CONFIG_FILE} or the --set values (see the README's configuration keys)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_problems_are_reported_at_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let resources = crate::project::resources(None);
        assert!(check(dir.path(), &resources, &engine::io::Limits::default(), &[]).ok());
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "index_depth: deep\nbatch_size: 0\n").unwrap();
        let found = check(dir.path(), &resources, &engine::io::Limits::default(), &[]);
        assert!(!found.ok());
        assert!(
            found.detail.contains("unity-assets.yml:1:") && found.detail.contains("unity-assets.yml:2:"),
            "{}",
            found.detail
        );
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "index_depth: rich\nignore_paths: [Assets/Plugins]\n",
        )
        .unwrap();
        assert!(check(dir.path(), &resources, &engine::io::Limits::default(), &[]).ok());
        let flags = check(
            dir.path(),
            &resources,
            &engine::io::Limits::default(),
            &["--set x: error: bad".to_owned()],
        );
        assert!(!flags.ok() && flags.detail == "--set x: error: bad", "{flags:?}");
    }
}
