//! The search data files as written: `data/aliases.yml` ([`VocabularyFile`])
//! and `data/lexicon/*.yml` ([`LexiconFile`]).
//!
//! `build.rs` includes this module too: it parses the embedded copies once
//! at build time (the aliases kept as JSON, the lexicon merged into a
//! table), so a search does not parse 90 KB of YAML on every run (8.5 ms
//! for the lexicon alone, measured). A project's
//! own copies are YAML read at run time through the same types, so both
//! routes accept exactly the same files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One `data/lexicon/*.yml` file: `{domain, role, entries: {korean: [english, …]}}`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LexiconFile {
    #[serde(default, rename = "domain")]
    pub _domain: Option<String>,
    /// What the file's words are in a query (default: things).
    #[serde(default)]
    pub role: Role,
    pub entries: BTreeMap<String, Vec<String>>,
}

/// What a word is in a query, by the domain it comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A thing that can be the subject (barrel, bridge, zombie).
    #[default]
    Thing,
    /// A word that qualifies a thing: how it sounds, its colour, size or
    /// material (신음, 빨강, 금속); the subject only when nothing else is.
    Qualifier,
    /// An action or state (깨지다, 떨어지다): a modifier, never the subject
    /// while a noun is there.
    Predicate,
}

/// `data/aliases.yml`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VocabularyFile {
    /// The file format version; only 1 exists, so it is accepted and not read.
    #[serde(default, rename = "version")]
    pub _version: Option<u32>,
    #[serde(default)]
    pub aliases: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub stopwords: Vec<String>,
    #[serde(default)]
    pub weak_words: Vec<String>,
    #[serde(default)]
    pub categories: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub subtype_hints: Vec<SubtypeRuleFile>,
    #[serde(default)]
    pub scene_request: Option<SceneRequest>,
}

/// One entry of a rule: a word, or several words that must all be present.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Phrase {
    One(String),
    All(Vec<String>),
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubtypeRuleFile {
    pub any: Vec<Phrase>,
    #[serde(default)]
    pub with: Vec<Phrase>,
    pub subtype: Option<String>,
}

/// How a request for a whole game or scene is split into roles.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SceneRequest {
    pub(crate) triggers: Vec<String>,
    pub(crate) requires_any: Vec<String>,
    pub(crate) roles: Vec<SceneRole>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SceneRole {
    pub intent: String,
    pub category: Option<String>,
    pub subtype: Option<String>,
}
