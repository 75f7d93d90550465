//! Meaning at the word level. The sentence encoder knows single words well
//! across languages (지도 → map, 산성 → acid) where a whole asset text
//! blurs them, so the project's own vocabulary — the words of its file names
//! and folders, a few thousand — is embedded at index time
//! (`vocabulary.vectors`), and at search time (`semantic.word-meanings`, before the word ranker runs) each query word no file name
//! of the project holds (a predicate aside) is mapped to the project word nearest in meaning. That word
//! joins the query's concept as a weighted alternative term, so the word
//! ranker finds `Peach.prefab` for "복숭아" the way it finds a translation,
//! and says so (`복숭아 ≈ peach (0.83)`). The cut and the weight are params
//! of `search.semantic.words`, measured on the judged corpus.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use engine::CallContext;
use serde::{Deserialize, Serialize};

use super::embedder::{Embedder, Unavailable};
use super::vectors::{self, text_hash, Vectors};
use crate::search::records::AssetRow;
use crate::search::route::{SubIntent, WordMeaning};
use crate::search::text::{for_each_part, stem, Scratch};

/// The vocabulary's vectors, beside `assets.vectors`.
pub const VOCABULARY_FILE: &str = "vocabulary.vectors";
/// What the vocabulary vectors hold (their `text`): bump when the words change.
const VOCABULARY_TEXT: &str = "words-1";

/// The project's words: the parts of its file names and folders (`Zombie_Walker`
/// → `zombie`, `walker`), lowercased, letters only, three or more of them.
pub fn project_words(rows: &[AssetRow]) -> Vec<String> {
    let mut words = BTreeSet::new();
    let mut scratch = Scratch::default();
    for row in rows {
        let name = row.path.rsplit_once('.').map_or(row.path.as_str(), |(stem, _)| stem);
        for_each_part(name, &mut scratch, |part| {
            if part.chars().count() >= 3 && part.chars().all(|c| c.is_ascii_alphabetic()) {
                words.insert(part.to_owned());
            }
        });
    }
    words.into_iter().collect()
}

/// Bring `vocabulary.vectors` up to date with `words` (the project's,
/// [`project_words`]): a word embedded before keeps its vector. Returns how
/// many words were embedded anew.
pub async fn embed_vocabulary(embedder: &Embedder, words: &[String], ctx: &CallContext) -> anyhow::Result<usize> {
    let dir = ctx.workdir.join(crate::index::INDEX_DIR);
    let model = embedder.id();
    let previous = vectors::open_named(&dir, VOCABULARY_FILE, &ctx.limits)
        .ok()
        .flatten()
        .and_then(|file| file.rows_and_sketch().ok())
        .filter(|v| v.model == model && v.text == VOCABULARY_TEXT);
    let reusable = previous.as_ref().map(Vectors::rows_by_key).unwrap_or_default();
    let wanted: Vec<String> = words
        .iter()
        .filter(|w| !reusable.contains_key(&(w.as_str(), text_hash(w))))
        .cloned()
        .collect();
    let fresh = match wanted.is_empty() {
        true => vec![],
        false => embedder.embed(&wanted).await?,
    };
    let dim = fresh
        .first()
        .map(Vec::len)
        .or(previous.as_ref().map(|p| p.dim))
        .unwrap_or(0);
    let mut out = Vectors::new(model, VOCABULARY_TEXT.to_owned(), dim);
    let mut fresh = fresh.into_iter();
    for word in words {
        let hash = text_hash(word);
        match (reusable.get(&(word.as_str(), hash)), &previous) {
            (Some(&at), Some(previous)) => out.push_from(previous, at),
            _ => out.push(word.clone(), hash, &fresh.next().expect("one vector per word embedded")),
        }
    }
    if previous.as_ref() != Some(&out) {
        vectors::write_named(&dir, VOCABULARY_FILE, &out)?;
    }
    Ok(wanted.len())
}

/// `search.semantic.words`: which project word a query word may stand for.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct WordSettings {
    /// The least cosine between a query word and a project word.
    pub min_similarity: f32,
    /// How far the nearest word must be ahead of the second nearest: a word
    /// as near several unrelated words (a verb, an ending) means none of them.
    pub min_margin: f32,
    /// The weight of the project word as a term of the query word's concept
    /// (a translation's is 1, a sibling translation's 0.7).
    pub weight: f32,
    /// The least cosine at which a project word the query word may be the
    /// loanword of stands for it: its sound agrees, so less is asked.
    #[serde(default = "default_min_loanword_similarity")]
    pub min_loanword_similarity: f32,
}

fn default_min_loanword_similarity() -> f32 {
    0.4
}

/// The index's vocabulary vectors, when `embedder` made them; why not, when not.
pub(super) fn vocabulary_vectors(embedder: &Embedder, ctx: &CallContext) -> Result<Vectors, String> {
    let dir = ctx.workdir.join(crate::index::INDEX_DIR);
    match vectors::open_named(&dir, VOCABULARY_FILE, &ctx.limits) {
        Ok(Some(file)) if file.summary().model == embedder.id() && file.summary().text == VOCABULARY_TEXT => {
            file.rows().map_err(|e| format!("{e:#}"))
        }
        Ok(_) => Err("the index has no vocabulary vectors of this model; `unity-assets index` embeds them".into()),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// `semantic.word-meanings`' arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeaningsArgs {
    sub_intents: Vec<SubIntent>,
    /// `search.semantic.words`; none: no meanings are sought.
    #[serde(default)]
    words: Option<WordSettings>,
    /// `search.aliases`: the vocabulary that tells which words the project lacks.
    #[serde(default)]
    aliases: Option<std::path::PathBuf>,
}

#[derive(Serialize)]
pub struct MeaningsOut {
    /// The sub-intents, each with the meanings of its words no file name
    /// holds: the word ranker searches with these.
    sub_intents: Vec<SubIntent>,
    /// Why no meaning was sought (no embedder, no vocabulary vectors).
    note: Option<String>,
}

/// The sub-intents with their words' meanings ([`add_meanings`]); as they
/// are, and a note, without an embedder or settings.
pub async fn word_meanings(
    embedder: &Result<Arc<Embedder>, Unavailable>,
    args: MeaningsArgs,
    ctx: &CallContext,
) -> anyhow::Result<MeaningsOut> {
    let MeaningsArgs {
        mut sub_intents,
        words,
        aliases,
    } = args;
    let note = match (embedder, words) {
        (Err(Unavailable(why)), _) => Some(why.clone()),
        (Ok(_), None) => None,
        (Ok(embedder), Some(settings)) => {
            add_meanings(embedder, &mut sub_intents, aliases.as_deref(), settings, ctx).await?
        }
    };
    Ok(MeaningsOut { sub_intents, note })
}

/// Add to each sub-intent its words no file name holds, each with
/// the project word nearest it in meaning (`settings` decide how near); a
/// note instead when the vocabulary's vectors cannot be used.
async fn add_meanings(
    embedder: &Embedder,
    sub_intents: &mut [SubIntent],
    aliases: Option<&Path>,
    settings: WordSettings,
    ctx: &CallContext,
) -> anyhow::Result<Option<String>> {
    let vocabulary = match vocabulary_vectors(embedder, ctx) {
        Ok(vocabulary) => vocabulary,
        Err(note) => return Ok(Some(note)),
    };
    let index = crate::search::term_index(ctx)?;
    let vocab = crate::search::vocabulary(aliases, ctx)?;
    // Per sub-intent, its words no file name holds by the word or a
    // translation: a half of a compound (`house` of greenhouse) or a loose
    // synonym is no sign the project names the thing, nor is a word held
    // only by a part or a folder (`pig` of a child `pig_spear`, where the
    // project names its pigs `swine_piglet`).
    let mut unknown_korean = Vec::new();
    let missing: Vec<Vec<String>> = sub_intents
        .iter()
        .map(|intent| {
            crate::search::query::Query::analyze(&intent.intent, &vocab)
                .concepts
                .iter()
                // A predicate (먹을, 나는) drifts to unrelated words at the
                // cosines of real matches.
                .filter(|c| !c.predicate)
                .filter(|c| !c.terms.iter().any(|(term, weight)| *weight >= 1.0 && index.names(term)))
                .inspect(|c| unknown_korean.extend(c.unknown_korean.clone()))
                .map(|c| c.word.clone())
                .collect()
        })
        .collect();
    // The project words an unknown Hangul word may be the loanword of.
    let loans = index.loanwords(unknown_korean.iter().map(String::as_str))?;
    let words: Vec<String> = missing
        .iter()
        .flatten()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if words.is_empty() {
        return Ok(None);
    }
    let embedded = embedder.embed(&words).await?;
    for (intent, missing) in sub_intents.iter_mut().zip(&missing) {
        for word in missing {
            let at = words.binary_search(word).expect("every missing word was embedded");
            // Of several project words its sound may stand for, the one
            // near it in meaning (셔플: `shuffle`, not `espr`); else the
            // project word nearest in meaning, clear of the next.
            let sounded = loans.lookup(word);
            let heard = match sounded.is_empty() {
                true => None,
                false => vocabulary
                    .nearest(&embedded[at], 1, |row| sounded.contains(&stem(vocabulary.guid(row))))
                    .first()
                    .copied()
                    .filter(|&(_, s)| s >= settings.min_loanword_similarity),
            };
            let nearest = || {
                let near = vocabulary.nearest(&embedded[at], 2, |_| true);
                let &(best, similarity) = near.first()?;
                let margin = similarity - near.get(1).map_or(0.0, |n| n.1);
                (similarity >= settings.min_similarity && margin >= settings.min_margin).then_some((best, similarity))
            };
            if let Some((best, similarity)) = heard.or_else(nearest) {
                intent.meanings.push(WordMeaning {
                    word: word.clone(),
                    term: vocabulary.guid(best).to_owned(),
                    similarity: (similarity * 100.0).round() / 100.0,
                    weight: settings.weight,
                });
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_is_the_words_of_names_and_folders() {
        let row = |path: &str| AssetRow {
            path: path.into(),
            ..AssetRow::default()
        };
        let words = project_words(&[row("Assets/Fruit/Peach_01.prefab"), row("Assets/UI/HealthBar.png")]);
        assert_eq!(words, ["assets", "bar", "fruit", "health", "peach"]);
    }
}
