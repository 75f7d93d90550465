//! Pre-converts the embedded search data for `OUT_DIR`, parsed with the
//! same types the search reads them with (`src/search/data_files.rs`):
//! `data/aliases.yml` to JSON, and `data/lexicon/*.yml` merged into one
//! table by the search's own merge and stemmer
//! (`src/search/lexicon_merge.rs`, `src/search/text.rs`). Parsing the
//! lexicon's YAML took 8.5 ms of every search, and merging it 17.7 M
//! instructions more. A file that does not parse stops the build with its
//! path and the parser's message.

use std::fs;
use std::path::{Path, PathBuf};

#[allow(dead_code)] // The build writes the files; the search reads their fields.
#[path = "src/search/data_files.rs"]
mod data_files;
#[allow(dead_code)] // The build writes the table; the search reads it.
#[path = "src/search/lexicon_merge.rs"]
mod lexicon_merge;
#[allow(dead_code)] // The merge stems words; the rest is the search's.
#[path = "src/search/text.rs"]
mod text;

fn main() {
    for watched in [
        "data/aliases.yml",
        "data/lexicon",
        "src/search/data_files.rs",
        "src/search/lexicon_merge.rs",
        "src/search/text.rs",
    ] {
        println!("cargo::rerun-if-changed={watched}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    let aliases: data_files::VocabularyFile = parse(Path::new("data/aliases.yml"));
    write(&out.join("aliases.json"), &aliases);

    // Sorted by name: the merge order is the same on every file system.
    let mut names: Vec<String> = fs::read_dir("data/lexicon")
        .expect("read data/lexicon")
        .map(|entry| {
            entry
                .expect("list data/lexicon")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".yml"))
        .collect();
    names.sort();
    let mut lexicon = lexicon_merge::Lexicon::default();
    for name in &names {
        lexicon.add(parse(&Path::new("data/lexicon").join(name)));
    }
    let table = lexicon
        .table()
        .expect("no key or word of data/lexicon holds a tab or a line break");
    fs::write(out.join("lexicon.tsv"), table).expect("write the lexicon table");
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, value: &impl serde::Serialize) {
    let json = serde_json::to_string(value).expect("the data files serialise to JSON");
    fs::write(path, json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
