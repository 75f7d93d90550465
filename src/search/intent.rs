//! Type intent (`data/type-intents.yml`): which asset type a query asks
//! for, read from its type words, used to break ties between results; and
//! the generic class words that are never a query's subject.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use serde::Deserialize;

use super::records::AssetRow;
use super::vocab::normal_word;

const EMBEDDED: &str = include_str!("../../data/type-intents.yml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentsFile {
    #[serde(default, rename = "version")]
    _version: Option<u32>,
    intents: BTreeMap<String, IntentFile>,
    #[serde(default)]
    suffixes: BTreeMap<String, String>,
    placeable: BTreeMap<String, f32>,
    non_content: Vec<String>,
    generic: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentFile {
    words: Vec<String>,
    prefer: BTreeMap<String, f32>,
    /// Types this intent does not rule out though it does not prefer them
    /// (sound definitions kept as ScriptableObjects).
    #[serde(default)]
    also: Vec<String>,
}

/// The type-intent tables, with words normalised like query words.
#[derive(Debug)]
pub struct TypeIntents {
    /// Normalised type word → intent name.
    words: HashMap<String, String>,
    suffixes: Vec<(String, String)>,
    prefer: HashMap<String, Vec<(String, f32)>>,
    also: HashMap<String, Vec<String>>,
    placeable: Vec<(String, f32)>,
    non_content: HashSet<String>,
    generic: HashSet<String>,
}

impl TypeIntents {
    pub fn embedded() -> &'static Self {
        static INTENTS: OnceLock<TypeIntents> = OnceLock::new();
        INTENTS.get_or_init(|| Self::parse(EMBEDDED).expect("the embedded data/type-intents.yml is valid (tested)"))
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let file: IntentsFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let mut words = HashMap::new();
        let mut prefer = HashMap::new();
        let mut also = HashMap::new();
        for (name, intent) in file.intents {
            for word in intent.words.iter().filter_map(|w| normal_word(w)) {
                words.insert(word, name.clone());
            }
            prefer.insert(name.clone(), intent.prefer.into_iter().collect());
            also.insert(name, intent.also);
        }
        for intent in file.suffixes.values() {
            if !prefer.contains_key(intent) {
                return Err(format!("suffix intent {intent:?} is not one of the intents"));
            }
        }
        Ok(Self {
            words,
            suffixes: file.suffixes.into_iter().collect(),
            prefer,
            also,
            placeable: file.placeable.into_iter().collect(),
            non_content: file.non_content.into_iter().collect(),
            generic: file.generic.iter().filter_map(|w| normal_word(w)).collect(),
        })
    }

    /// The intent a normalised query word names, if it is a type word.
    pub fn intent_of(&self, normal: &str) -> Option<&str> {
        self.words.get(normal).map(String::as_str)
    }

    /// The intent a Korean word implies by its ending (발소리 → audio),
    /// when the word is longer than the ending.
    pub fn suffix_intent(&self, word: &str) -> Option<&str> {
        self.suffixes
            .iter()
            .find(|(suffix, _)| word.len() > suffix.len() && word.ends_with(suffix.as_str()))
            .map(|(_, intent)| intent.as_str())
    }

    pub fn is_generic(&self, normal: &str) -> bool {
        self.generic.contains(normal)
    }

    /// Whether a query word as written names a type (`모델`, `sound`) or a
    /// generic class (`캐릭터`): a word that says what kind of asset is
    /// wanted, not which one.
    pub(crate) fn names_a_kind(&self, word: &str) -> bool {
        let forms = match word.chars().any(super::text::is_hangul) {
            true => super::text::korean_forms(&word.to_lowercase()),
            false => normal_word(word).into_iter().collect(),
        };
        forms.iter().any(|f| self.intent_of(f).is_some() || self.is_generic(f))
    }

    /// The ordering bonus of `row` under `intent` (`None`: no type named,
    /// placeable first).
    pub fn preference(&self, intent: Option<&str>, row: &AssetRow) -> f32 {
        self.preferences(intent)
            .iter()
            .filter(|(kind, _)| match kind.split_once('/') {
                Some(_) => row
                    .type_subtype
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(kind)),
                None => row.asset_type.eq_ignore_ascii_case(kind),
            })
            .map(|(_, bonus)| *bonus)
            .fold(0.0, f32::max)
    }

    /// The most [`Self::preference`] can give any row for `intent`.
    pub fn most_preferred(&self, intent: Option<&str>) -> f32 {
        self.preferences(intent)
            .iter()
            .map(|(_, bonus)| *bonus)
            .fold(0.0, f32::max)
    }

    /// The (type, bonus) table of `intent` (`None`: placeable types).
    fn preferences(&self, intent: Option<&str>) -> &[(String, f32)] {
        match intent {
            Some(name) => self.prefer.get(name).map(Vec::as_slice).unwrap_or_default(),
            None => &self.placeable,
        }
    }

    /// Whether `row` is content of a type some intent prefers, but not one
    /// `intent` does (an AudioClip for a model query). Types no intent
    /// lists, or the intent's `also` list, never are.
    pub fn is_other_type(&self, intent: Option<&str>, row: &AssetRow) -> bool {
        let allowed = intent
            .and_then(|name| self.also.get(name))
            .is_some_and(|kinds| kinds.iter().any(|k| k.eq_ignore_ascii_case(&row.asset_type)));
        !allowed
            && self.preference(intent, row) == 0.0
            && self.prefer.keys().any(|name| self.preference(Some(name), row) > 0.0)
    }

    /// Code and tooling rather than content.
    pub fn is_non_content(&self, row: &AssetRow) -> bool {
        self.non_content.contains(&row.asset_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: &str, subtype: Option<&str>) -> AssetRow {
        AssetRow {
            asset_type: kind.into(),
            type_subtype: subtype.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn type_words_name_intents_and_prefer_their_types() {
        let t = TypeIntents::embedded();
        assert_eq!(t.intent_of("소리"), Some("audio"));
        assert_eq!(t.intent_of(&normal_word("Sounds").unwrap()), Some("audio"));
        assert_eq!(t.intent_of("머티리얼"), Some("material"));
        assert_eq!(t.suffix_intent("발소리"), Some("audio"));
        assert_eq!(t.suffix_intent("소리"), None);
        let clip = row("AudioClip", Some("AudioClip/sfx"));
        let prefab = row("Prefab", None);
        assert!(t.preference(Some("audio"), &clip) > t.preference(Some("audio"), &prefab));
        assert!(t.preference(None, &prefab) > t.preference(None, &row("Model", None)));
        assert!(t.preference(None, &row("Model", None)) > t.preference(None, &row("Texture2D", None)));
        assert!(t.preference(Some("ui"), &row("Prefab", Some("Prefab/ui"))) > t.preference(Some("ui"), &prefab));
        assert!(t.is_non_content(&row("MonoScript", None)));
        assert!(t.is_generic("캐릭터") && !t.is_generic("좀비"));
    }
}
