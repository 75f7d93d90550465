//! Which Unity project a call works on. An MCP client starts the server
//! wherever it likes, so the working folder says little: `--project` wins,
//! then the client's roots (`roots/list`), then `CLAUDE_PROJECT_DIR`, then
//! the project the working folder is in, found as the command line finds it
//! ([`crate::project::enclosing`]).

use std::path::{Path, PathBuf};

/// The environment variable Claude Code sets to the folder it was opened in.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";

/// Where to look, in order, besides `--project`.
pub struct Places<'a> {
    /// The client's roots as it sent them (`file://` URIs); `None`: the
    /// client does not offer roots.
    pub roots: Option<&'a [String]>,
    /// `CLAUDE_PROJECT_DIR`, if set.
    pub claude_project_dir: Option<PathBuf>,
    /// The server's working folder.
    pub working_dir: PathBuf,
}

impl<'a> Places<'a> {
    /// The places of this process: `roots`, its `CLAUDE_PROJECT_DIR`, its
    /// working folder.
    pub fn of_this_process(roots: Option<&'a [String]>) -> Self {
        Places {
            roots,
            claude_project_dir: std::env::var_os(CLAUDE_PROJECT_DIR)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            working_dir: std::env::current_dir().unwrap_or_else(|_| ".".into()),
        }
    }
}

/// The first Unity project among `places`, or a message naming every
/// place tried and how to point the server at a project.
pub fn locate(places: &Places) -> Result<PathBuf, String> {
    let mut tried = vec![];
    match places.roots {
        None => tried.push("the client's roots: the client offers none".to_owned()),
        Some([]) => tried.push("the client's roots: the client listed none".to_owned()),
        Some(roots) => {
            for uri in roots {
                match file_path(uri) {
                    Some(dir) if holds_assets(&dir) => return Ok(dir),
                    Some(dir) => tried.push(format!("root {}: no Assets/ folder", dir.display())),
                    None => tried.push(format!("root {uri}: not a local folder (file:// URI)")),
                }
            }
        }
    }
    match &places.claude_project_dir {
        Some(dir) if holds_assets(dir) => return Ok(dir.clone()),
        Some(dir) => tried.push(format!("{CLAUDE_PROJECT_DIR}={}: no Assets/ folder", dir.display())),
        None => tried.push(format!("{CLAUDE_PROJECT_DIR}: not set")),
    }
    if let Some(dir) = crate::project::enclosing(&places.working_dir) {
        return Ok(dir);
    }
    tried.push(format!(
        "{} and the folders above it: none holds Assets/",
        places.working_dir.display()
    ));
    Err(format!(
        "no Unity project found; tried:\n{}\n  help: start the server as `unity-assets --project DIR mcp`, \
         open the Unity project's folder in your MCP client, or set {CLAUDE_PROJECT_DIR}",
        tried.iter().map(|t| format!("  - {t}")).collect::<Vec<_>>().join("\n")
    ))
}

fn holds_assets(dir: &Path) -> bool {
    dir.join("Assets").is_dir()
}

/// The local folder a `file://` root names (without a trailing `/`).
fn file_path(uri: &str) -> Option<PathBuf> {
    let path = url::Url::parse(uri).ok()?.to_file_path().ok()?;
    Some(path.components().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project as the command line takes it: a folder holding Assets/ (no ProjectSettings/).
    fn unity_project(dir: &Path) {
        std::fs::create_dir_all(dir.join("Assets")).unwrap();
    }

    #[test]
    fn roots_come_first_then_the_environment_then_the_folders_above() {
        let tmp = tempfile::tempdir().unwrap();
        let (from_root, from_env, upward) = (tmp.path().join("a b"), tmp.path().join("env"), tmp.path().join("up"));
        for dir in [&from_root, &from_env, &upward] {
            unity_project(dir);
        }
        let deep = upward.join("Assets/Scripts");
        std::fs::create_dir_all(&deep).unwrap();
        let root_uri = url::Url::from_directory_path(&from_root).unwrap().to_string();
        let roots = vec!["file:///nonexistent".to_owned(), root_uri];
        let mut places = Places {
            roots: Some(&roots),
            claude_project_dir: Some(from_env.clone()),
            working_dir: deep.clone(),
        };
        assert_eq!(locate(&places).unwrap(), from_root);
        places.roots = None;
        assert_eq!(locate(&places).unwrap(), from_env);
        places.claude_project_dir = None;
        assert_eq!(locate(&places).unwrap(), upward);
        // A subfolder named Assets inside the project is not a project.
        let nested = upward.join("Assets/Art/Assets/Rocks");
        std::fs::create_dir_all(&nested).unwrap();
        places.working_dir = nested;
        assert_eq!(locate(&places).unwrap(), upward);
    }

    #[test]
    fn nothing_found_names_every_place_tried() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = vec![url::Url::from_directory_path(tmp.path()).unwrap().to_string()];
        let places = Places {
            roots: Some(&roots),
            claude_project_dir: Some(tmp.path().join("elsewhere")),
            working_dir: tmp.path().to_path_buf(),
        };
        let message = locate(&places).unwrap_err();
        for part in [
            "no Unity project found",
            &format!("root {}: no Assets/ folder", tmp.path().display()),
            "CLAUDE_PROJECT_DIR=",
            "none holds Assets/",
            "--project DIR",
        ] {
            assert!(message.contains(part), "{part} missing from {message}");
        }
    }
}
