//! Search's freshness check: `state.json`'s `last_run` against the
//! modification time of `assets.jsonl` ([`freshness_of`]), reading
//! `state.json` only as far as `last_run`. The index writes that key
//! first, before the per-asset signatures that make a large project's
//! state tens of megabytes; were it last, the whole file would be read,
//! as before.

use std::fmt;
use std::io::{BufReader, Read as _};
use std::path::Path;

use anyhow::Context as _;
use engine::io::Limits;
use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

use crate::index::store::{freshness_of, index_dir, StateHead, STATE_FILE};
use crate::index::Freshness;

/// Is the project's index fresh? (What [`crate::index::index_freshness`]
/// answers, without reading the rest of `state.json`.)
pub fn index_freshness(project: &Path, limits: &Limits) -> Freshness {
    let state = last_run(&index_dir(project).join(STATE_FILE), limits).map(|last_run| StateHead {
        last_run,
        ..StateHead::default()
    });
    freshness_of(project, state)
}

/// `state.json`'s top-level `last_run`, read up to that key; `None` when
/// the file or the key is absent. What is not a regular file is refused
/// before it is opened (a FIFO would block).
fn last_run(path: &Path, limits: &Limits) -> anyhow::Result<Option<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if !meta.is_file() {
        anyhow::bail!("{} is not a regular file", path.display());
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut found = None;
    let mut json = serde_json::Deserializer::from_reader(BufReader::new(file.take(limits.data_bytes)));
    let read = json.deserialize_map(LastRun(&mut found));
    match (found, read) {
        // Stopped at the key: what follows is not read, so not judged either.
        (Some(last_run), _) => Ok(last_run),
        (None, Ok(())) => Ok(None),
        (None, Err(e)) => Err(e).with_context(|| {
            format!(
                "{} is corrupt; delete it and run `unity-assets reindex`",
                path.display()
            )
        }),
    }
}

/// Reads a JSON object's keys until `last_run`, whose value it keeps.
struct LastRun<'a>(&'a mut Option<Option<String>>);

impl<'de> Visitor<'de> for LastRun<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "last_run" {
                *self.0 = Some(map.next_value()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> anyhow::Result<Option<String>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STATE_FILE);
        std::fs::write(&path, text).unwrap();
        last_run(&path, &Limits::default())
    }

    #[test]
    fn reads_last_run_wherever_it_is_and_stops_there() {
        let head = r#"{"last_run": "2026-12-02T10:20:11.3Z", "guid_signatures": {"#;
        assert_eq!(read(head).unwrap().as_deref(), Some("2026-12-02T10:20:11.3Z"));
        let last = r#"{"in_progress_run": null, "guid_signatures": {"a": "1"}, "last_run": "x"}"#;
        assert_eq!(read(last).unwrap().as_deref(), Some("x"));
        assert_eq!(read(r#"{"last_run": null}"#).unwrap(), None);
        assert_eq!(read(r#"{"guid_signatures": {}}"#).unwrap(), None);
    }

    #[test]
    fn a_corrupt_state_before_last_run_is_an_error_naming_the_file() {
        let e = read(r#"{"in_progress_run": nul"#).unwrap_err();
        assert!(format!("{e:#}").contains("state.json is corrupt"), "{e:#}");
        assert!(read("[1, 2]").is_err());
    }

    #[test]
    fn a_missing_state_has_no_last_run() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            last_run(&dir.path().join(STATE_FILE), &Limits::default()).unwrap(),
            None
        );
    }
}
