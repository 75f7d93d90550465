//! TEMPORARY STUB (not committed)
pub fn installed_builtin_model() -> Option<std::path::PathBuf> {
    std::env::var_os("UNITY_ASSETS_DEV_MODEL").map(Into::into)
}
