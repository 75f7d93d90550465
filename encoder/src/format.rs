//! The model file: a header naming the model, then named sections, each
//! aligned to 64 bytes so `f32` tensors are read in place from the mapping.
//!
//! ```text
//! magic "USEM3ENC" | format version u32 | section count u32 | model id [u8; 64]
//! section table: name [u8; 24] | kind u32 | rows u32 | cols u32 | 0u32 | offset u64 | len u64
//! sections (little-endian), each at a multiple of 64
//! ```

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Error;

#[cfg(not(target_endian = "little"))]
compile_error!("the model file stores little-endian floats read in place");

const MAGIC: &[u8; 8] = b"USEM3ENC";
/// Bumped whenever the layout or a section's meaning changes.
pub const FORMAT_VERSION: u32 = 1;
const MODEL_ID_LEN: usize = 64;
const NAME_LEN: usize = 24;
const HEADER_LEN: usize = 8 + 4 + 4 + MODEL_ID_LEN;
const ENTRY_LEN: usize = NAME_LEN + 4 * 4 + 8 + 8;
const ALIGN: usize = 64;
/// More sections than any model of this kind has: a bound for a corrupt header.
const MAX_SECTIONS: usize = 256;

/// What a section holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Raw bytes (a quantised table, an FST, a charsmap).
    Bytes = 0,
    /// Little-endian `f32`, row-major.
    F32 = 1,
}

/// One section of a mapped model: a cheap handle that keeps the mapping alive.
#[derive(Clone)]
pub struct Section {
    map: Arc<memmap2::Mmap>,
    offset: usize,
    len: usize,
}

impl Section {
    /// The section's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map[self.offset..self.offset + self.len]
    }

    /// The section as floats; [`Model::section`] checked alignment and length.
    pub fn floats(&self) -> &[f32] {
        bytemuck::cast_slice(self.bytes())
    }
}

impl AsRef<[u8]> for Section {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

struct Entry {
    name: String,
    kind: u32,
    rows: usize,
    cols: usize,
    offset: usize,
    len: usize,
}

/// A mapped model file with a checked header.
pub struct Model {
    path: PathBuf,
    map: Arc<memmap2::Mmap>,
    model_id: String,
    entries: Vec<Entry>,
}

impl Model {
    /// Map `path` and check the header and that every section lies in the file.
    pub fn open(path: &Path) -> Result<Model, Error> {
        let file = File::open(path).map_err(Error::io(path))?;
        // SAFETY: the file is only ever replaced by rename (see `write`), never
        // rewritten in place, so the mapped bytes do not change under us.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(Error::io(path))?;
        let bad = |reason: String| Error::malformed(path, format!("{reason}; run `unity-assets model install` again"));
        if map.len() < HEADER_LEN || &map[..8] != MAGIC {
            return Err(bad("not a model file of this encoder".into()));
        }
        let version = u32_at(&map, 8);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "model file format {version}, this build reads format {FORMAT_VERSION}"
            )));
        }
        let count = u32_at(&map, 12) as usize;
        let model_id = text_field(&map[16..16 + MODEL_ID_LEN]);
        if count > MAX_SECTIONS || HEADER_LEN + count * ENTRY_LEN > map.len() {
            return Err(bad("truncated section table".into()));
        }
        let mut entries = Vec::with_capacity(count);
        for i in 0..count {
            let at = HEADER_LEN + i * ENTRY_LEN;
            let e = &map[at..at + ENTRY_LEN];
            let entry = Entry {
                name: text_field(&e[..NAME_LEN]),
                kind: u32_at(e, NAME_LEN),
                rows: u32_at(e, NAME_LEN + 4) as usize,
                cols: u32_at(e, NAME_LEN + 8) as usize,
                offset: u64_at(e, NAME_LEN + 16) as usize,
                len: u64_at(e, NAME_LEN + 24) as usize,
            };
            let end = entry.offset.checked_add(entry.len);
            if end.is_none_or(|end| end > map.len()) || !entry.offset.is_multiple_of(ALIGN) {
                return Err(bad(format!("section {} lies outside the file", entry.name)));
            }
            entries.push(entry);
        }
        Ok(Model {
            path: path.to_path_buf(),
            map: Arc::new(map),
            model_id,
            entries,
        })
    }

    /// The file mapped.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id written by the converter.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The section `name`, checked to be of `kind` with `rows × cols` elements
    /// (`rows` or `cols` 0: any).
    pub fn section(&self, name: &str, kind: Kind, rows: usize, cols: usize) -> Result<Section, Error> {
        let entry = self.entries.iter().find(|e| e.name == name).ok_or_else(|| {
            Error::malformed(
                &self.path,
                format!("section {name} is missing; install the model again"),
            )
        })?;
        let elem = if kind == Kind::F32 { 4 } else { 1 };
        let shape_ok = (rows == 0 || entry.rows == rows) && (cols == 0 || entry.cols == cols);
        let len = entry.rows.checked_mul(entry.cols).and_then(|n| n.checked_mul(elem));
        if entry.kind != kind as u32 || !shape_ok || len != Some(entry.len) {
            return Err(Error::malformed(
                &self.path,
                format!(
                    "section {name} is {}×{} of kind {}, expected {rows}×{cols} of kind {}",
                    entry.rows, entry.cols, entry.kind, kind as u32
                ),
            ));
        }
        Ok(Section {
            map: Arc::clone(&self.map),
            offset: entry.offset,
            len: entry.len,
        })
    }
}

/// Sections collected in memory, then written as one model file.
#[derive(Default)]
pub struct Writer {
    sections: Vec<(String, Kind, usize, usize, Vec<u8>)>,
}

impl Writer {
    /// Add a section of raw bytes seen as `rows × cols`.
    pub fn bytes(&mut self, name: &str, rows: usize, cols: usize, data: Vec<u8>) {
        debug_assert_eq!(rows * cols, data.len());
        self.sections.push((name.to_string(), Kind::Bytes, rows, cols, data));
    }

    /// Add a section of floats, row-major `rows × cols`.
    pub fn floats(&mut self, name: &str, rows: usize, cols: usize, data: &[f32]) {
        debug_assert_eq!(rows * cols, data.len());
        let bytes = bytemuck::cast_slice(data).to_vec();
        self.sections.push((name.to_string(), Kind::F32, rows, cols, bytes));
    }

    /// Write the file atomically (temp file beside `out`, fsync, `verify`
    /// on the temp file, rename); returns its size in bytes.
    pub fn write(
        &self,
        out: &Path,
        model_id: &str,
        verify: impl FnOnce(&Path) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        assert!(model_id.len() <= MODEL_ID_LEN && self.sections.len() <= MAX_SECTIONS);
        let mut header = Vec::new();
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        header.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        header.extend_from_slice(&padded(model_id, MODEL_ID_LEN));
        let mut offset = align(HEADER_LEN + self.sections.len() * ENTRY_LEN);
        for (name, kind, rows, cols, data) in &self.sections {
            header.extend_from_slice(&padded(name, NAME_LEN));
            for field in [*kind as u32, *rows as u32, *cols as u32, 0] {
                header.extend_from_slice(&field.to_le_bytes());
            }
            header.extend_from_slice(&(offset as u64).to_le_bytes());
            header.extend_from_slice(&(data.len() as u64).to_le_bytes());
            offset = align(offset + data.len());
        }
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(Error::io(dir))?;
        let file = temp.as_file_mut();
        let mut written = 0;
        let mut put = |file: &mut File, bytes: &[u8]| -> std::io::Result<()> {
            file.write_all(bytes)?;
            written += bytes.len();
            let pad = align(written) - written;
            file.write_all(&vec![0; pad])?;
            written += pad;
            Ok(())
        };
        put(file, &header).map_err(Error::io(out))?;
        for (.., data) in &self.sections {
            put(file, data).map_err(Error::io(out))?;
        }
        file.sync_all().map_err(Error::io(out))?;
        verify(temp.path())?;
        temp.persist(out).map_err(|e| Error::Io {
            path: out.to_path_buf(),
            source: e.error,
        })?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(written as u64)
    }
}

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

fn padded(text: &str, len: usize) -> Vec<u8> {
    let mut field = text.as_bytes().to_vec();
    field.resize(len, 0);
    field
}

fn text_field(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}
