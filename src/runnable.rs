//! The commands a line suggests (`` `unity-assets reindex` ``), runnable as
//! shown in the door that shows them: a run on `--project DIR` suggests
//! commands that name the same project, so they work from the folder the
//! user typed the first one in (docs/contracts.md#next-steps).

use std::path::Path;
use std::sync::Arc;

/// Where a suggested command starts, as the lines write it.
const COMMAND: &str = "`unity-assets ";

/// `line` with `--project DIR` after every `` `unity-assets `` that names no
/// project of its own.
pub(crate) fn with_project(line: &str, project: &Path) -> String {
    if !line.contains(COMMAND) {
        return line.to_owned();
    }
    let flag = format!(
        "--project {} ",
        engine::template::shell_word(&project.to_string_lossy())
    );
    let mut out = String::with_capacity(line.len() + flag.len());
    let mut rest = line;
    while let Some(at) = rest.find(COMMAND) {
        let (before, after) = rest.split_at(at + COMMAND.len());
        out.push_str(before);
        if !after.starts_with("--project ") {
            out.push_str(&flag);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The rewrite of every line shown for a run on `project`: none when the
/// project is the current folder, where the suggestions run as they are.
pub fn rewrite_for(project: &Path) -> Option<engine::Rewrite> {
    if project == Path::new(".") || project.as_os_str().is_empty() {
        return None;
    }
    let project = project.to_path_buf();
    Some(Arc::new(move |line: &str| with_project(line, &project)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suggested_command_names_the_project_once() {
        let project = Path::new("../My Game");
        assert_eq!(
            with_project("Next: `unity-assets pick 0`, or `unity-assets reindex`.", project),
            "Next: `unity-assets --project '../My Game' pick 0`, or `unity-assets --project '../My Game' reindex`."
        );
        let named = "help: run `unity-assets --project /p trust` to allow them";
        assert_eq!(with_project(named, project), named);
        assert_eq!(with_project("no command here", project), "no command here");
        assert!(rewrite_for(Path::new(".")).is_none());
    }
}
