//! The text an asset is embedded as: its name's words, the words of its
//! folder and its type. Measured on FPSSample's dev and meaning sets (53
//! queries, meaning alone, Recall@3): name, folder and type 0.623; name and
//! type 0.604; name alone 0.604; name, two folders and type 0.566. The tags
//! and summary of the builtin tagger repeat those words; component names
//! made a prototype worse (they name code, not what the asset shows).

use crate::search::records::AssetRow;
use crate::search::text::{for_each_part, Scratch};

/// Names the recipe below: vectors embedded from another recipe are
/// re-embedded.
pub const VERSION: &str = "name+folder+type/1";

/// How many folders above the asset are embedded with it.
const FOLDERS: usize = 1;

/// `Assets/Props/Barrels/Barrel_Scifi_A.prefab` → `barrel scifi barrels prefab`.
pub fn asset_text(row: &AssetRow) -> String {
    let mut scratch = Scratch::default();
    let mut words: Vec<String> = vec![];
    let mut add = |text: &str, words: &mut Vec<String>| {
        for_each_part(text, &mut scratch, |part| {
            if !words.iter().any(|w| w == part) {
                words.push(part.to_owned());
            }
        })
    };
    let name = if row.name.is_empty() {
        row.path.rsplit('/').next().unwrap_or_default()
    } else {
        &row.name
    };
    add(name, &mut words);
    let folders: Vec<&str> = row.path.split('/').collect();
    let parents = &folders[..folders.len().saturating_sub(1)];
    for folder in parents.iter().rev().take(FOLDERS).rev() {
        add(folder, &mut words);
    }
    add(&row.asset_type, &mut words);
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_words_then_the_folder_then_the_type_each_word_once() {
        let row = AssetRow {
            path: "Assets/Prefabs/Props/Barrels/Barrel_Scifi_A.prefab".into(),
            name: "Barrel_Scifi_A".into(),
            asset_type: "Prefab".into(),
            ..AssetRow::default()
        };
        assert_eq!(asset_text(&row), "barrel scifi barrels prefab");
    }
}
