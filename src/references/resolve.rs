//! `references.resolve`: the ASSET a `refs`/`deps` call names — a path
//! inside the project, a guid, a file name, or a search query whose top
//! pick is taken only when it is confident — found in the reference graph.

use std::path::Path;

use serde::Serialize;

use super::Outcome;
use crate::index::graph::ReferenceGraph;
use crate::index::is_guid;
use crate::search::records::{decode_row, AssetRow};
use crate::search::result::shown_confidence;
use crate::search::vocab::Vocabulary;

/// How the asset was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoundBy {
    Path,
    Guid,
    Name,
    Search,
}

/// A search candidate shown when the pick is not confident.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub guid: String,
    pub path: String,
    pub confidence: f32,
}

/// What `asset` names: found (with how), or the refusal to show.
pub enum Resolution {
    Found(u32, FoundBy),
    Refused(Box<Outcome>),
}

impl Resolution {
    fn refused(outcome: Outcome) -> Self {
        Self::Refused(Box::new(outcome))
    }
}

/// What a query's pick needs besides the graph: the rows and vocabulary of
/// search, loaded only when the text is neither a path, a guid nor a name.
pub struct SearchSource<'a> {
    pub rows: &'a dyn Fn() -> anyhow::Result<Vec<AssetRow>>,
    pub vocabulary: &'a dyn Fn() -> anyhow::Result<std::sync::Arc<Vocabulary>>,
    /// The search's `confidence_threshold.auto`: a pick under it is refused.
    pub auto: f32,
    /// How far the top candidate must lead the next one: a tie is no pick.
    pub margin: f32,
}

/// Resolve `asset` against `graph` (`project` confines a path).
pub fn resolve(
    command: &str,
    project: &Path,
    graph: &ReferenceGraph,
    asset: &str,
    search: &SearchSource<'_>,
) -> anyhow::Result<Resolution> {
    let text = asset.trim();
    let refuse = |code, status: &str, line: String, help: &str| {
        Ok(Resolution::refused(Outcome::refused(
            command, code, status, text, line, help,
        )))
    };
    if text.is_empty() {
        return refuse(
            crate::exit::INVALID,
            "unknown_asset",
            "no asset given".into(),
            "name one: a path (Assets/…), a guid, a file name or a search query",
        );
    }
    if is_guid(text) {
        return match graph.by_guid(&text.to_ascii_lowercase()) {
            Some(i) => Ok(Resolution::Found(i, FoundBy::Guid)),
            None => refuse(
                crate::exit::INVALID,
                "unknown_asset",
                format!("no asset of the index has guid {text}"),
                "check the guid in the asset's .meta file; a new asset needs `unity-assets index` first",
            ),
        };
    }
    if text.contains('/') || text.contains('\\') {
        return Ok(match project_path(project, text) {
            Err(why) => Resolution::refused(Outcome::refused(
                command,
                crate::exit::INVALID,
                "outside_project",
                text,
                format!("{text}: {why}"),
                "name a path inside the project, relative to its folder (Assets/…)",
            )),
            Ok(rel) => match graph.by_path(&rel) {
                Some(i) => Resolution::Found(i, FoundBy::Path),
                None if project.join(&rel).is_file() => Resolution::refused(Outcome::refused(
                    command,
                    crate::exit::FAILED,
                    "not_indexed",
                    text,
                    format!("{rel} is not in the index"),
                    "run `unity-assets index` (a new asset, or one without a .meta file yet, is not indexed)",
                )),
                None => Resolution::refused(Outcome::refused(
                    command,
                    crate::exit::INVALID,
                    "unknown_asset",
                    text,
                    format!("no asset at {rel}"),
                    "paths are relative to the project folder (Assets/…); or search for it: give a few words instead",
                )),
            },
        });
    }
    let named: Vec<u32> = (0..graph.nodes.len() as u32)
        .filter(|&i| file_name(&graph.node(i).path) == text)
        .collect();
    match named.as_slice() {
        [one] => return Ok(Resolution::Found(*one, FoundBy::Name)),
        [] => {}
        several => {
            let candidates = several
                .iter()
                .map(|&i| Candidate {
                    guid: graph.node(i).guid.clone(),
                    path: graph.node(i).path.clone(),
                    confidence: 1.0,
                })
                .collect();
            return Ok(Resolution::refused(
                Outcome::refused(
                    command,
                    crate::exit::FAILED,
                    "ambiguous",
                    text,
                    format!("{} assets are named {text}", several.len()),
                    "name one by its path or guid",
                )
                .with_candidates(candidates),
            ));
        }
    }
    by_search(command, graph, text, search)
}

/// The confident top pick of a search for `text`.
fn by_search(
    command: &str,
    graph: &ReferenceGraph,
    text: &str,
    search: &SearchSource<'_>,
) -> anyhow::Result<Resolution> {
    let rows = (search.rows)()?;
    let vocabulary = (search.vocabulary)()?;
    let groups = crate::search::search_rows(&rows, text, &vocabulary, 5);
    let candidates: Vec<Candidate> = groups
        .iter()
        .flat_map(|g| &g.candidates)
        .map(|c| Candidate {
            guid: c.guid.clone(),
            path: c.path.clone(),
            confidence: c.confidence,
        })
        .collect();
    let leads = |top: &Candidate| {
        candidates
            .get(1)
            .is_none_or(|next| top.confidence - next.confidence >= search.margin)
    };
    let top = candidates
        .first()
        .filter(|c| c.confidence >= search.auto && leads(c) && groups.len() == 1);
    if let Some(index) = top.and_then(|c| graph.by_guid(&c.guid)) {
        return Ok(Resolution::Found(index, FoundBy::Search));
    }
    let (code, status, line, help) = if candidates.is_empty() {
        (
            crate::exit::INVALID,
            "unknown_asset",
            format!("no asset matches `{text}`"),
            "give its path (Assets/…) or guid, or other words",
        )
    } else {
        (
            crate::exit::FAILED,
            "ambiguous",
            format!(
                "`{text}` names no one asset with confidence (best {}; a pick needs {:.2}, a lead of {:.2} over the next and one request)",
                shown_confidence(candidates[0].confidence), search.auto, search.margin
            ),
            "name one of these by its path or guid",
        )
    };
    Ok(Resolution::refused(
        Outcome::refused(command, code, status, text, line, help).with_candidates(candidates),
    ))
}

/// A path as the index spells it: relative to the project, `/`-separated,
/// inside it (an absolute path under the project is made relative).
fn project_path(project: &Path, text: &str) -> Result<String, String> {
    let slashed = text.replace('\\', "/");
    let relative = match Path::new(&slashed).strip_prefix(project) {
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => match project.canonicalize().ok().and_then(|root| {
            Path::new(&slashed)
                .strip_prefix(&root)
                .ok()
                .map(|rest| rest.to_string_lossy().into_owned())
        }) {
            Some(rest) => rest,
            None => slashed.trim_start_matches("./").to_owned(),
        },
    };
    engine::io::confine(project, &relative).map_err(|e| e.to_string())?;
    Ok(relative)
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Every row of `assets.jsonl` as search reads it.
pub fn search_rows(index_dir: &Path, limits: engine::io::Limits) -> anyhow::Result<Vec<AssetRow>> {
    Ok(crate::search::load::IndexFiles::new(index_dir, limits)
        .asset_lines(None)?
        .into_iter()
        .filter_map(|line| decode_row(serde_json::Value::String(line)))
        .collect())
}
