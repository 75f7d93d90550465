//! Index throughput with the builtin tagger (`cargo bench --bench index`):
//! the stages called directly, as the pipeline runs them, on
//! - the real corpora in `../shared/corpora/*.tar.gz`, when present (skipped
//!   otherwise), and
//! - a synthetic project of 100,000 assets in 40 vendor folders
//!   (`INDEX_BENCH_ASSETS` changes the count).
//!
//! For each: a full index (first run), a forced reindex and a no-op
//! incremental run, at `index_depth: minimal` and `rich`. Peak memory comes from outside: `/usr/bin/time -v
//! target/release/deps/index-*`.

use std::cell::OnceCell;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode};
use engine::io::Limits;
use tempfile::TempDir;
use unity_assets::index::data::IndexData;
use unity_assets::index::record::Depth;
use unity_assets::index::run::{self, Finalized};
use unity_assets::index::scan::{self, ScanOptions};
use unity_assets::index::store::TaggedBy;
use unity_assets::index::tagger::{self, TagRequest};
use unity_assets::search::term_index::TermIndex;

const BATCH_SIZE: usize = 20;

fn data() -> IndexData {
    IndexData::from_yaml(
        include_str!("../data/type-taxonomy.yml"),
        include_str!("../data/filename-conventions.yml"),
        include_str!("../data/asset-types.yml"),
    )
    .expect("embedded data parses")
}

/// One index run through the stages of `pipelines/index.yaml` (the no-op
/// fast path, or scan to finalize), tagging with the builtin.
fn index_once(project: &Path, data: &IndexData, depth: Depth, force: bool) -> Finalized {
    // The product's default limits (limits.file_mb and line_kb unset).
    let limits = Limits::default();
    let options = ScanOptions {
        index_depth: depth,
        ignore_paths: vec!["Assets/Plugins/Editor".into()],
    };
    let check = run::unchanged(project, &limits, data, &options, force, TermIndex::lines_not_rows).expect("unchanged");
    if check.same {
        return run::touch(project, &limits, &check.started_at, check.tree).expect("touch");
    }
    let scan = scan::scan(project, &limits, data, &options).expect("scan");
    let diff = run::diff(project, &limits, &scan, force).expect("diff");
    let plan = run::plan_batches(project, &limits, &scan, &diff, BATCH_SIZE).expect("plan");
    for batch in &plan.batches {
        let tags = tagger::tag_batch(&TagRequest {
            assets: batch.assets.clone(),
            index_depth: depth,
        });
        run::checkpoint(project, &limits, batch, &[&tags], TaggedBy::Builtin, depth).expect("checkpoint");
    }
    // Finalize reads the scan as the pipeline hands it over: its JSON output.
    let scan: run::ScanText = serde_json::from_value(scan.into_value().expect("scan output")).expect("scan text");
    run::finalize(project, &limits, &scan, &diff).expect("finalize")
}

/// A project folder, unpacked or generated on first use: criterion calls a
/// bench only when its id passes the filter, so a filtered run
/// (`cargo bench --bench index -- danmokou`) prepares only what it measures.
type Prepared = OnceCell<(TempDir, PathBuf)>;

/// `index/<label>/<depth>/{full,reindex,no-op}`; the reindex bench prints its
/// run's summary once (files walked, assets, warnings) as a check of what was indexed.
fn measure(c: &mut Criterion, label: &str, prepare: impl Fn() -> (TempDir, PathBuf), data: &IndexData) {
    let prepared = Prepared::new();
    let project = || prepared.get_or_init(&prepare).1.as_path();
    let mut group = c.benchmark_group(format!("index/{label}"));
    // Up to seconds per run: a fixed count per sample, not a ramp.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    for depth in [Depth::Minimal, Depth::Normal, Depth::Rich] {
        group.bench_function(format!("{}/full", depth.as_str()), |b| {
            let project = project();
            b.iter_batched(
                || {
                    let _ = fs::remove_dir_all(project.join(".claude/unity-asset-index"));
                },
                |()| index_once(project, data, depth, false),
                BatchSize::PerIteration,
            )
        });
        let mut said = false;
        group.bench_function(format!("{}/reindex", depth.as_str()), |b| {
            let project = project();
            if !std::mem::replace(&mut said, true) {
                eprintln!(
                    "{label} {}: {}",
                    depth.as_str(),
                    index_once(project, data, depth, true).summary
                );
            }
            b.iter(|| index_once(project, data, depth, true))
        });
        group.bench_function(format!("{}/no-op", depth.as_str()), |b| {
            let project = project();
            // Outside the timing: an index at this depth exists, whatever ran before.
            index_once(project, data, depth, false);
            b.iter(|| index_once(project, data, depth, false))
        });
    }
    group.finish();
}

const VENDORS: &[&str] = &[
    "ZombieKit",
    "MedievalVillage",
    "NatureForest",
    "UIKit",
    "AudioKit",
    "SciFiCorridor",
    "DungeonTiles",
    "PolyCity",
];
const FOLDERS: &[(&str, &str, &str)] = &[
    ("Prefabs", "prefab", "PrefabImporter:\n  externalObjects: {}\n"),
    (
        "Materials",
        "mat",
        "NativeFormatImporter:\n  mainObjectFileID: 2100000\n",
    ),
    (
        "Textures",
        "png",
        "TextureImporter:\n  textureType: 0\n  spriteMode: 0\n",
    ),
    ("UI", "png", "TextureImporter:\n  textureType: 8\n  spriteMode: 1\n"),
    ("SFX", "wav", "AudioImporter:\n  defaultSettings:\n    loadType: 0\n"),
    ("Models", "fbx", "ModelImporter:\n  animationType: 2\n"),
    ("Scripts", "cs", "MonoImporter:\n"),
];
const WORDS: &[&str] = &[
    "Zombie", "Tree", "Rock", "Wall", "Button", "Crate", "Sword", "Barrel", "Door", "Lamp",
];

/// `count` assets with metas; prefabs and materials carry small Unity YAML.
fn synthetic_project(root: &Path, count: usize) {
    for i in 0..count {
        let vendor = format!("{}{}", VENDORS[i % VENDORS.len()], i / 2500);
        let (folder, ext, importer) = FOLDERS[i % FOLDERS.len()];
        let dir = root
            .join("Assets")
            .join(&vendor)
            .join(folder)
            .join(format!("Set{}", i % 50));
        fs::create_dir_all(&dir).expect("create folder");
        let name = format!("{}_{:06}.{ext}", WORDS[i % WORDS.len()], i);
        let guid = format!("{:032x}", (i as u128 + 1) * 0x9e37_79b9_7f4a_7c15);
        let body = match ext {
            "prefab" => format!(
                "%YAML 1.1\n--- !u!1 &1\nGameObject:\n  m_Name: x\n--- !u!4 &2\nTransform:\n  m_Father: {{fileID: 0}}\n\
                 --- !u!23 &3\nMeshRenderer:\n  m_Materials:\n  - {{fileID: 2100000, guid: {:032x}, type: 2}}\n",
                i + 7
            ),
            "mat" => "%YAML 1.1\n--- !u!21 &2100000\nMaterial:\n  m_SavedProperties:\n    m_TexEnvs:\n    - _MainTex:\n        \
                      m_Texture: {fileID: 0}\n    m_Floats:\n    - _Glossiness: 0.5\n"
                .to_owned(),
            _ => String::new(),
        };
        fs::write(dir.join(&name), body).expect("write asset");
        fs::write(
            dir.join(format!("{name}.meta")),
            format!("fileFormatVersion: 2\nguid: {guid}\n{importer}"),
        )
        .expect("write meta");
    }
}

fn unpack(archive: &Path, into: &Path) -> Option<PathBuf> {
    let ok = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    fs::read_dir(into)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("Assets").is_dir())
}

fn index(c: &mut Criterion) {
    let data = data();
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora");
    for name in ["fpssample", "danmokou", "bossroom"] {
        let archive = corpora.join(format!("{name}.tar.gz"));
        if !archive.is_file() {
            eprintln!("index/{name}: skipped, no {}", archive.display());
            continue;
        }
        let prepare = || {
            let dir = tempfile::tempdir().expect("temp dir");
            let project = unpack(&archive, dir.path())
                .unwrap_or_else(|| panic!("{name}: could not unpack {}", archive.display()));
            (dir, project)
        };
        measure(c, name, prepare, &data);
    }

    let count = std::env::var("INDEX_BENCH_ASSETS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let prepare = || {
        let dir = tempfile::tempdir().expect("temp dir");
        let started = Instant::now();
        synthetic_project(dir.path(), count);
        eprintln!(
            "synthetic: generated {count} assets in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let project = dir.path().to_path_buf();
        (dir, project)
    };
    measure(c, "synthetic", prepare, &data);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = index
}
criterion_main!(benches);
