//! Per-user folders outside any project, after the XDG base directories.

use std::path::PathBuf;

/// `$XDG_VAR/unity-assets` when that variable holds an absolute path (the
/// XDG rule), else `$HOME/<home_default>/unity-assets`; `None` without either.
pub fn unity_assets_dir(xdg_var: &str, home_default: &str) -> Option<PathBuf> {
    let base = std::env::var_os(xdg_var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(home_default)))?;
    Some(base.join("unity-assets"))
}
