//! Builtin search latency over synthetic indexes of 5,000 and 100,000 asset
//! rows (`cargo bench --bench search`). Prints the median of several runs:
//! - `rank`: `search.rank-assets` on decoded rows (route + tokenise + score);
//! - `decode+rank`: the same from JSONL text, as a cold search reads it.
//!

use std::time::{Duration, Instant};

use unity_assets::search::query::Query;
use unity_assets::search::rank::{rank_assets, RankOptions};
use unity_assets::search::records::AssetRow;
use unity_assets::search::vocab::Vocabulary;

const KINDS: &[(&str, &str)] = &[
    ("Prefab", "prefab"),
    ("Material", "mat"),
    ("Texture2D", "png"),
    ("AudioClip", "wav"),
    ("AnimatorController", "controller"),
    ("MonoScript", "cs"),
];
const WORDS: &[&str] = &[
    "zombie",
    "enemy",
    "player",
    "survivor",
    "tree",
    "rock",
    "wall",
    "medieval",
    "village",
    "menu",
    "hud",
    "music",
    "sfx",
    "footstep",
    "stone",
    "mossy",
    "forest",
    "pine",
    "oak",
    "crate",
    "scifi",
    "metal",
    "wood",
    "tavern",
    "house",
    "weapon",
    "sword",
    "gun",
    "potion",
    "loot",
    "spawn",
    "wave",
    "config",
    "ui",
    "canvas",
    "button",
    "icon",
    "terrain",
    "grass",
    "water",
    "fire",
    "particle",
    "light",
    "camera",
    "character",
    "humanoid",
    "fast",
];

/// A small deterministic generator (no dependency needed for a bench).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn synthetic(n: usize) -> Vec<AssetRow> {
    let mut rng = Lcg(42);
    (0..n)
        .map(|i| {
            let (kind, ext) = KINDS[rng.next(KINDS.len())];
            let a = WORDS[rng.next(WORDS.len())];
            let b = WORDS[rng.next(WORDS.len())];
            let package = format!("Vendor{}Pack", i % 97);
            let name = format!("{}_{}_{i:05}", capitalise(a), capitalise(b));
            AssetRow {
                guid: format!("{i:032x}"),
                path: format!("Assets/{package}/{kind}s/{name}.{ext}"),
                name,
                kind: kind.to_owned(),
                labels: vec![a.to_owned()],
                llm_tags: (0..5).map(|_| WORDS[rng.next(WORDS.len())].to_owned()).collect(),
                llm_summary: format!(
                    "A {a} {b} {} asset for {} scenes.",
                    kind.to_lowercase(),
                    WORDS[rng.next(WORDS.len())]
                ),
                package_id: Some(package),
                ..Default::default()
            }
        })
        .collect()
}

fn capitalise(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let vocab = Vocabulary::embedded();
    let query_text = "탑다운 좀비 적 캐릭터 프리팹";
    for n in [5_000, 100_000] {
        let rows = synthetic(n);
        let jsonl: String = rows.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        let rank = |rows: &[AssetRow]| {
            let query = Query::analyze(query_text, &vocab);
            let options = RankOptions {
                subtype_hint: Some("Prefab/character"),
                top_k: 10,
                ..Default::default()
            };
            rank_assets(rows, &query, &options)
        };
        let runs = if n > 10_000 { 7 } else { 25 };
        let ranked = median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(rank(&rows));
                    t.elapsed()
                })
                .collect(),
        );
        let cold = median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    let decoded: Vec<AssetRow> = jsonl.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
                    std::hint::black_box(rank(&decoded));
                    t.elapsed()
                })
                .collect(),
        );
        // A word no vocabulary knows is read as a loanword: the project's
        // words are indexed by phonetic key first (the slowest query shape).
        let loanword = median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    let query = Query::analyze("스노우모빌 좀비", &vocab);
                    std::hint::black_box(rank_assets(
                        &rows,
                        &query,
                        &RankOptions {
                            top_k: 10,
                            ..Default::default()
                        },
                    ));
                    t.elapsed()
                })
                .collect(),
        );
        let best = rank(&rows);
        println!(
            "search/{n:>6} assets: rank {:>7.1} ms   decode+rank {:>7.1} ms   rank with a loanword {:>7.1} ms   (top: {} @ {:.2})",
            ranked.as_secs_f64() * 1e3,
            cold.as_secs_f64() * 1e3,
            loanword.as_secs_f64() * 1e3,
            best.first().map_or("-", |c| c.path.as_str()),
            best.first().map_or(0.0, |c| c.confidence)
        );
    }
}
