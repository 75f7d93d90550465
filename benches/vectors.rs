//! Vectors at scale: the exact scan of `assets.vectors` against the search
//! through its sign sketch (rank every row by sketch, score the nearest few
//! thousand exactly) at 10^4, 10^5 and 10^6 rows, on real encoder vectors
//! and real query texts. `cargo bench --bench vectors`.
//!
//! Inputs (the bench says what is missing and stops when they are absent):
//! - `VECTORS_BENCH_FILE`: an `assets.vectors` made by `unity-assets index`
//!   with the builtin model installed (e.g. on the 100,000-asset project of
//!   `benches/scale.rs`); its rows are the real vectors.
//! - `UNITY_ASSETS_ENCODER_MODEL`: the converted model file (what `model
//!   install` wrote), to embed the queries of `benchmarks/queries/*.yml`.
//! - `VECTORS_BENCH_SIZES` (default `10000,100000,1000000`),
//!   `VECTORS_BENCH_ROUNDS` (timed rounds per query, default 3) and
//!   `VECTORS_BENCH_CANDIDATES` (rows scored exactly after the sketch's
//!   ranking, default the product's number for 10 answers, a quarter, half
//!   and 4× it).
//!
//! A size up to the file's rows takes its first rows. A larger size tiles
//! them: copy `c` of row `r` is the row plus Gaussian noise of standard
//! deviation [`NOISE`] per component (seeded by `c` and `r`), renormalised,
//! under the guid `<guid>-<c>` — a project of near-variants of real names.
//!
//! Per size: the file's size and the time to write it (sketch included:
//! there is nothing else to build); the exact path (read and check the
//! file, then score every row per query) and the sketch path (map the file
//! and read its offsets, then a search per query), each the median over
//! queries and rounds; recall@10 of the sketch's top 10 against the exact
//! top 10, averaged over the queries, and the same counting a returned row
//! as good as the exact 10th (a tie) as a hit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use test_support::large_project::Rng;
use unity_assets::semantic::embedder::normalize;
use unity_assets::semantic::vectors::{self, Vectors};

/// Per-component noise of a tiled copy: a 512-d copy stays at cosine ~0.9
/// with its source row.
const NOISE: f32 = 0.02;

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let Some(source) = std::env::var_os("VECTORS_BENCH_FILE").map(PathBuf::from) else {
        println!("vectors bench: set VECTORS_BENCH_FILE to an assets.vectors made with the builtin model; skipped");
        return;
    };
    let Some(model) = std::env::var_os("UNITY_ASSETS_ENCODER_MODEL").map(PathBuf::from) else {
        println!("vectors bench: set UNITY_ASSETS_ENCODER_MODEL to the converted model file; skipped");
        return;
    };
    let sizes: Vec<usize> = std::env::var("VECTORS_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000,1000000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("VECTORS_BENCH_SIZES: numbers separated by commas")
        })
        .collect();
    let rounds: usize = std::env::var("VECTORS_BENCH_ROUNDS")
        .ok()
        .map(|r| r.parse().expect("VECTORS_BENCH_ROUNDS: a number"))
        .unwrap_or(3);

    let source_dir = source.parent().expect("a file in a folder");
    let base = vectors::read(source_dir, &engine::io::Limits::default())
        .expect("a readable vectors file")
        .expect("the vectors file");
    let queries = queries();
    let encoder = encoder::Encoder::open(&model).expect("the model opens");
    let query_vectors: Vec<Vec<f32>> = encoder
        .embed(&queries.iter().map(String::as_str).collect::<Vec<_>>())
        .into_iter()
        .map(|v| {
            let mut v = v.to_vec();
            normalize(&mut v);
            v
        })
        .collect();
    println!(
        "vectors bench: {} real rows of {} dimensions from {}, {} queries, {} rounds",
        base.len(),
        base.dim,
        source.display(),
        queries.len(),
        rounds
    );
    println!("| rows | assets.vectors | write | exact: read | exact: scan/query | exact: read + scan | scored | sketch: open | sketch: search/query | sketch: open + search | recall@10 | recall@10, ties counted |");
    let product = vectors::sketch_candidates(10);
    let candidates: Vec<usize> = match std::env::var("VECTORS_BENCH_CANDIDATES") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("VECTORS_BENCH_CANDIDATES: numbers separated by commas")
            })
            .collect(),
        Err(_) => vec![product / 4, product / 2, product, 4 * product],
    };
    let work = tempfile::tempdir().expect("a temp folder");
    for size in sizes {
        let vectors = sized(&base, size);
        bench_size(work.path(), &vectors, &query_vectors, rounds, &candidates);
    }
}

/// The query texts of every dev and meaning set.
fn queries() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/queries");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("benchmarks/queries")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|file| {
            let set: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            set["queries"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|q| q["query"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `size` rows: the first of `base`, or `base` tiled with noise.
fn sized(base: &Vectors, size: usize) -> Vectors {
    let mut out = Vectors::new(base.model.clone(), base.text.clone(), base.dim);
    let mut unit = vec![0f32; base.dim];
    for i in 0..size {
        let (copy, row) = (i / base.len(), i % base.len());
        let values = base.values(row);
        let scale = base.scale(row);
        let mut rng = Noise(Rng(((copy as u64) << 32) ^ row as u64));
        for (u, v) in unit.iter_mut().zip(values) {
            *u = f32::from(*v) * scale + if copy == 0 { 0.0 } else { NOISE * rng.gaussian() };
        }
        normalize(&mut unit);
        let guid = match copy {
            0 => base.guid(row).to_owned(),
            c => format!("{}-{c}", base.guid(row)),
        };
        out.push(guid, i as u64, &unit);
    }
    out
}

fn bench_size(work: &Path, vectors: &Vectors, queries: &[Vec<f32>], rounds: usize, candidates: &[usize]) {
    let dir = work.join(format!("rows-{}", vectors.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    vectors::write(&dir, vectors).unwrap();
    let write = started.elapsed();
    let vectors_bytes = std::fs::metadata(dir.join(vectors::VECTORS_FILE)).unwrap().len();
    let limits = engine::io::Limits::default();
    let open = || vectors::open(&dir, &limits).unwrap().unwrap();

    let mut reads = vec![];
    let mut scans = vec![];
    let mut exact_top: Vec<Vec<(usize, f32)>> = vec![];
    for round in 0..rounds {
        let started = Instant::now();
        let read = open().rows().unwrap();
        reads.push(started.elapsed());
        for query in queries {
            let started = Instant::now();
            let top = read.nearest(query, 10, |_| true);
            scans.push(started.elapsed());
            if round == 0 {
                exact_top.push(top);
            }
        }
    }
    let (read, scan) = (median(&reads), median(&scans));
    for &scored in candidates {
        let mut opens = vec![];
        let mut searches = vec![];
        let (mut hits, mut tied_hits) = (0usize, 0usize);
        for round in 0..rounds {
            let started = Instant::now();
            let sketched = open().sketched().unwrap();
            opens.push(started.elapsed());
            for (query, exact) in queries.iter().zip(&exact_top) {
                let started = Instant::now();
                let top = sketched.nearest_scoring(query, 10, scored, |_| true);
                searches.push(started.elapsed());
                if round == 0 {
                    hits += top
                        .iter()
                        .filter(|(row, _)| exact.iter().any(|(r, _)| r == row))
                        .count();
                    // A row as similar as the exact 10th is as good an answer:
                    // the exact top 10 breaks ties by row number.
                    let tenth = exact.last().map_or(f32::MIN, |(_, sim)| *sim);
                    tied_hits += top.iter().filter(|(_, sim)| *sim >= tenth).count();
                }
            }
        }
        let (open, search) = (median(&opens), median(&searches));
        println!(
            "| {} | {:.1} MB | {} | {} | {} | {} | {scored} | {} | {} | {} | {:.3} | {:.3} |",
            vectors.len(),
            vectors_bytes as f64 / 1e6,
            ms(write),
            ms(read),
            ms(scan),
            ms(read + scan),
            ms(open),
            ms(search),
            ms(open + search),
            hits as f64 / (10 * queries.len()) as f64,
            tied_hits as f64 / (10 * queries.len()) as f64
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Seeded Box–Muller Gaussian noise.
struct Noise(Rng);

impl Noise {
    fn uniform(&mut self) -> f32 {
        ((self.0.next_u64() >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }

    fn gaussian(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}
