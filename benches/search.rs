//! Builtin search latency over synthetic indexes of 5,000 and 100,000 asset
//! rows (`cargo bench --bench search`):
//! - `rank`: `search.rank-assets` on decoded rows (route + tokenise + score);
//! - `decode+rank`: the same from JSONL text, as a cold search reads it;
//! - `loanword`: a query word no vocabulary knows, so the project's words
//!   are indexed by phonetic key first (the slowest query shape).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
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
                asset_type: kind.to_owned(),
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

fn search(c: &mut Criterion) {
    let vocab = Vocabulary::embedded();
    let options = RankOptions {
        subtype_hint: Some("Prefab/character"),
        top_k: 10,
        ..Default::default()
    };
    let loanword_options = RankOptions {
        top_k: 10,
        ..Default::default()
    };
    let rank = |rows: &[AssetRow]| rank_assets(rows, &Query::analyze("탑다운 좀비 적 캐릭터 프리팹", &vocab), &options);
    let mut group = c.benchmark_group("search");
    for n in [5_000, 100_000] {
        let rows = synthetic(n);
        let jsonl: String = rows.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        // A bench of a search that finds nothing would measure the wrong thing.
        assert!(!rank(&rows).is_empty(), "the query finds the synthetic zombies");
        if n > 10_000 {
            // Tenths of a second per run: a fixed count per sample, not a ramp.
            group.sampling_mode(SamplingMode::Flat).sample_size(10);
        } else {
            // Milliseconds per run: 20 samples keep the ramp within seconds.
            group.sample_size(20);
        }
        group.bench_function(BenchmarkId::new("rank", n), |b| b.iter(|| rank(&rows)));
        group.bench_function(BenchmarkId::new("decode+rank", n), |b| {
            b.iter(|| {
                let decoded: Vec<AssetRow> = jsonl.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
                rank(&decoded)
            })
        });
        group.bench_function(BenchmarkId::new("loanword", n), |b| {
            b.iter(|| rank_assets(&rows, &Query::analyze("스노우모빌 좀비", &vocab), &loanword_options))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = search
}
criterion_main!(benches);
