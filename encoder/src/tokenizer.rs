//! SentencePiece unigram tokenizer, as the model was trained with it: the
//! `nmt_nfkc` normaliser (a darts-clone double-array trie over the
//! precompiled charsmap), whitespace escaping, and Viterbi segmentation over
//! the vocabulary, which is an FST walked byte by byte in the mapped file.

use fst::raw::{Fst, Output};

use crate::format::{Kind, Model, Section};
use crate::Error;

/// Ids the model reserves.
pub const UNK: u32 = 0;
const BOS: u32 = 1;
const EOS: u32 = 2;
/// What SentencePiece takes off the lowest piece score for an unknown character.
const UNK_PENALTY: f64 = 10.0;
/// The escaped space, U+2581.
pub const SPACE: &[u8] = "\u{2581}".as_bytes();

/// The most of a text read, in bytes, and the most pieces kept (BOS and EOS
/// included): far beyond any asset name or query, and a bound on the memory
/// and time one text can take.
const MAX_TEXT_BYTES: usize = 64 * 1024;
pub const MAX_PIECES: usize = 2048;

/// Section names shared with the converter.
pub const VOCAB: &str = "vocab";
pub const SCORES: &str = "scores";
pub const CHARSMAP: &str = "charsmap";

/// Segmentations of the words a thread has seen, by normalised word.
#[derive(Default)]
pub struct Words(std::collections::HashMap<Vec<u8>, Vec<u32>>);

pub struct Tokenizer {
    vocab: Fst<Section>,
    scores: Section,
    unk_score: f64,
    normalizer: Normalizer,
}

impl Tokenizer {
    pub fn new(model: &Model) -> Result<Tokenizer, Error> {
        let bytes = model.section(VOCAB, Kind::Bytes, 1, 0)?;
        let vocab = Fst::new(bytes)
            .map_err(|e| Error::malformed(model.path(), format!("the vocabulary does not read: {e}")))?;
        let scores = model.section(SCORES, Kind::F32, 1, 0)?;
        let lowest = scores.floats().iter().copied().fold(f32::INFINITY, f32::min);
        let normalizer = Normalizer::new(model.section(CHARSMAP, Kind::Bytes, 1, 0)?)
            .ok_or_else(|| Error::malformed(model.path(), "the charsmap does not read"))?;
        Ok(Tokenizer {
            vocab,
            scores,
            unk_score: f64::from(lowest) - UNK_PENALTY,
            normalizer,
        })
    }

    /// Number of pieces; every id the tokenizer returns is below it.
    pub fn vocab_size(&self) -> usize {
        self.scores.floats().len()
    }

    /// Piece ids of `text` between BOS and EOS; an empty text is one UNK. A
    /// text longer than `MAX_TEXT_BYTES` or [`MAX_PIECES`] is cut there.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.encode_words(text, &mut Words::default())
    }

    /// [`Tokenizer::encode`], segmenting each word once per `words`: no
    /// piece of the vocabulary holds an escaped space past its first
    /// character (the converter checks), so every segmentation breaks
    /// before each word and a text's is its words' one after another.
    /// Asset texts repeat their words ("prefab", "texture"): segmenting
    /// them took 8% of their embedding, 4.5% with the words kept.
    pub fn encode_words(&self, text: &str, words: &mut Words) -> Vec<u32> {
        let mut end = text.len().min(MAX_TEXT_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let normalized = self.normalizer.normalize(&text[..end]);
        let mut ids = vec![BOS];
        if normalized.is_empty() {
            ids.push(UNK);
        }
        let mut rest = &normalized[..];
        while !rest.is_empty() && ids.len() < MAX_PIECES - 1 {
            let len = (SPACE.len()..rest.len())
                .find(|&at| rest[at..].starts_with(SPACE))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            match words.0.get(word) {
                Some(pieces) => ids.extend_from_slice(pieces),
                None => {
                    let pieces = self.viterbi(word);
                    ids.extend_from_slice(&pieces);
                    words.0.insert(word.to_vec(), pieces);
                }
            }
            rest = &rest[len..];
        }
        ids.truncate(MAX_PIECES - 1);
        ids.push(EOS);
        ids
    }

    /// The best-scoring segmentation, exactly as SentencePiece's lattice finds
    /// it: every node starting at a character shares that character's best
    /// predecessor, so a left-to-right pass over character starts suffices;
    /// strict `>` keeps the earliest-starting node on ties.
    fn viterbi(&self, text: &[u8]) -> Vec<u32> {
        let len = text.len();
        let scores = self.scores.floats();
        let mut best = vec![f64::MIN; len + 1];
        best[0] = 0.0;
        let mut start_of = vec![0usize; len + 1];
        let mut piece_of = vec![UNK; len + 1];
        let mut relax = |best: &mut [f64], at: usize, from: usize, piece: u32, score: f64| {
            if score > best[at] {
                best[at] = score;
                start_of[at] = from;
                piece_of[at] = piece;
            }
        };
        for i in (0..len).filter(|&i| is_char_start(text[i])) {
            let base = best[i];
            let first_end = next_char_start(text, i);
            let mut single = false;
            let mut node = self.vocab.root();
            let mut out = Output::zero();
            for (j, &byte) in text.iter().enumerate().skip(i) {
                let Some(t) = node.find_input(byte) else { break };
                let step = node.transition(t);
                out = out.cat(step.out);
                node = self.vocab.node(step.addr);
                let end = j + 1;
                if !node.is_final() || (end < len && !is_char_start(text[end])) {
                    continue;
                }
                let id = out.cat(node.final_output()).value();
                let Some(&score) = scores.get(id as usize) else {
                    continue;
                };
                relax(&mut best, end, i, id as u32, base + f64::from(score));
                single |= end == first_end;
            }
            if !single {
                relax(&mut best, first_end, i, UNK, base + self.unk_score);
            }
        }
        let mut ids = Vec::new();
        let mut at = len;
        while at > 0 {
            ids.push(piece_of[at]);
            at = start_of[at];
        }
        ids.reverse();
        ids
    }
}

fn is_char_start(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

fn next_char_start(text: &[u8], at: usize) -> usize {
    (at + 1..text.len())
        .find(|&j| is_char_start(text[j]))
        .unwrap_or(text.len())
}

/// `nmt_nfkc` over the precompiled charsmap: a 4-byte trie size, the
/// double-array units, then NUL-terminated replacement strings.
struct Normalizer {
    charsmap: Section,
    trie_len: usize,
}

impl Normalizer {
    fn new(charsmap: Section) -> Option<Normalizer> {
        let bytes = charsmap.bytes();
        let trie_len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        if !trie_len.is_multiple_of(4) || trie_len == 0 || 4 + trie_len > bytes.len() {
            return None;
        }
        Some(Normalizer { charsmap, trie_len })
    }

    fn units(&self) -> &[u32] {
        bytemuck::cast_slice(&self.charsmap.bytes()[4..4 + self.trie_len])
    }

    fn replacements(&self) -> &[u8] {
        &self.charsmap.bytes()[4 + self.trie_len..]
    }

    /// The normalised, space-escaped text: leading, trailing and repeated
    /// spaces dropped, one escaped space in front (SentencePiece's dummy prefix).
    fn normalize(&self, text: &str) -> Vec<u8> {
        let raw = text.as_bytes();
        let mut pos = 0;
        while pos < raw.len() {
            let (piece, used) = self.normalize_prefix(raw, pos);
            if piece != b" " {
                break;
            }
            pos += used;
        }
        let mut out = Vec::with_capacity(raw.len() * 2);
        if pos >= raw.len() {
            return out;
        }
        out.extend_from_slice(SPACE);
        let mut prev_space = true;
        while pos < raw.len() {
            let (mut piece, used) = self.normalize_prefix(raw, pos);
            pos += used;
            if prev_space {
                while let [b' ', rest @ ..] = piece {
                    piece = rest;
                }
            }
            let Some(&last) = piece.last() else { continue };
            for &byte in piece {
                if byte == b' ' {
                    out.extend_from_slice(SPACE);
                } else {
                    out.push(byte);
                }
            }
            prev_space = last == b' ';
        }
        while out.ends_with(SPACE) {
            out.truncate(out.len() - SPACE.len());
        }
        out
    }

    /// The longest charsmap key at `raw[pos..]` and its replacement, or the
    /// character itself (one byte if it is not valid UTF-8); with the bytes used.
    fn normalize_prefix<'a>(&'a self, raw: &'a [u8], pos: usize) -> (&'a [u8], usize) {
        let units = self.units();
        let offset = |unit: u32| ((unit >> 10) << ((unit & 0x200) >> 6)) as usize;
        let (mut best_len, mut best_value) = (0, 0);
        let mut node = offset(units[0]);
        for (i, &byte) in raw.iter().enumerate().skip(pos) {
            node ^= byte as usize;
            let Some(&unit) = units.get(node) else { break };
            if unit & 0x8000_00FF != u32::from(byte) {
                break;
            }
            node ^= offset(unit);
            if unit & 0x100 != 0 {
                let Some(&value) = units.get(node) else { break };
                best_len = i + 1 - pos;
                best_value = (value & 0x7FFF_FFFF) as usize;
            }
        }
        let replacements = self.replacements();
        if best_len == 0 || best_value >= replacements.len() {
            let len = utf8_len(raw, pos);
            return (&raw[pos..pos + len], len);
        }
        let tail = &replacements[best_value..];
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        (&tail[..end], best_len)
    }
}

/// Length of the UTF-8 character at `raw[pos]`, 1 for an invalid sequence.
fn utf8_len(raw: &[u8], pos: usize) -> usize {
    let len = match raw[pos] {
        b if b < 0x80 => 1,
        b if b >> 5 == 0x6 => 2,
        b if b >> 4 == 0xE => 3,
        b if b >> 3 == 0x1E => 4,
        _ => 1,
    };
    let valid = (1..len).all(|k| raw.get(pos + k).is_some_and(|&b| b & 0xC0 == 0x80));
    if valid {
        len
    } else {
        1
    }
}
