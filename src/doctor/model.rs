//! The sentence encoder behind search by meaning: optional, so its absence
//! passes (search is then lexical only) and a broken file does not fail the doctor.

use encoder::Encoder;

use super::Check;
use crate::config::Config;
use crate::model::{installed_builtin_model, INSTALL_SIZE, NOT_INSTALLED};
use crate::semantic::EmbeddingsProvider;

const NAME: &str = "sentence encoder";

/// Installed and opening (with its id), or not installed and how to turn it
/// on — a warning, not a failure: search then works from words alone.
/// `off`: the project's config turns search by meaning off (why).
pub fn check(off: Option<&str>) -> Check {
    let Some(path) = installed_builtin_model() else {
        return Check::warn(
            NAME,
            NOT_INSTALLED,
            format!("run `unity-assets model install` ({INSTALL_SIZE})"),
        );
    };
    match Encoder::open(&path) {
        Ok(encoder) => match off {
            Some(why) => Check::warn(
                NAME,
                format!(
                    "{} at {}, but search by meaning is off here: {why}",
                    encoder.model_id(),
                    path.display()
                ),
                "remove that setting from .claude/unity-assets.yml to search by meaning",
            ),
            None => Check::pass(
                NAME,
                format!("{} at {}; search by meaning is on", encoder.model_id(), path.display()),
            ),
        },
        Err(e) => Check::fail(
            NAME,
            e.to_string(),
            "run `unity-assets model remove`, then `unity-assets model install`",
        )
        .optional(),
    }
}

/// Why the project's config keeps search by meaning from running, if it does.
pub fn meaning_off(config: &Config) -> Option<String> {
    if config.embeddings.provider == EmbeddingsProvider::Off {
        return Some("embeddings.provider is off".to_owned());
    }
    let layer = config.layer.as_ref()?;
    (layer.values["search"]["semantic"]["retrievers"] == "lexical")
        .then(|| "search.semantic.retrievers is lexical".to_owned())
}
