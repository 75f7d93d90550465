//! The sentence encoder behind search by meaning: optional, so its absence
//! passes (search is then lexical only) and a broken file does not fail the doctor.

use encoder::Encoder;

use super::Check;
use crate::model::{installed_builtin_model, NOT_INSTALLED};

const NAME: &str = "sentence encoder";

/// Installed and opening (with its id), or not installed and how to turn it on.
pub fn check() -> Check {
    let Some(path) = installed_builtin_model() else {
        return Check::pass(NAME, NOT_INSTALLED);
    };
    match Encoder::open(&path) {
        Ok(encoder) => Check::pass(NAME, format!("{} at {}", encoder.model_id(), path.display())),
        Err(e) => Check::fail(
            NAME,
            e.to_string(),
            "run `unity-assets model remove`, then `unity-assets model install`",
        )
        .optional(),
    }
}
