//! An empty working folder for a program the product starts: an agentic
//! CLI started in the project would read the project's instructions,
//! settings and hooks as its own.

/// Run `command` in a new empty temporary folder (`PWD` says so too, and
/// `OLDPWD` is cleared). The folder is removed when the guard drops, so keep
/// it until the program has ended.
pub fn in_empty_folder(command: &mut tokio::process::Command, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let folder = tempfile::Builder::new().prefix(prefix).tempdir()?;
    command
        .current_dir(folder.path())
        .env("PWD", folder.path())
        .env_remove("OLDPWD");
    Ok(folder)
}
