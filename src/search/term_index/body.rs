//! Where a loaded index's sections are read from: the file, mapped, of
//! which a search touches only the term dictionary's paths to its terms,
//! their postings and the row-table entries of the rows it fetches (at 10^6
//! assets the file is ~100 MB, a search needs a few pages of it), so
//! opening the index costs the same at any size; or the bytes of a build
//! that could not be written.

use std::fs::File;
use std::sync::Arc;

/// The index file's bytes, shared by everything read from them.
#[derive(Clone)]
enum Whole {
    /// The file, mapped once: a file renamed over it later (the next
    /// `index`) leaves this mapping as it was.
    Mapped(Arc<memmap2::Mmap>),
    Built(Arc<Vec<u8>>),
}

impl Whole {
    fn bytes(&self) -> &[u8] {
        match self {
            Whole::Mapped(map) => map,
            Whole::Built(bytes) => bytes,
        }
    }
}

/// The sections after the header.
#[derive(Clone)]
pub(super) struct Body {
    whole: Whole,
    at: usize,
}

impl Body {
    /// The body of the index file `file`, which starts at byte `at`.
    pub(super) fn mapped(file: &File, at: usize) -> std::io::Result<Self> {
        // SAFETY: index files are replaced by renaming a finished file over
        // them (`engine::io::write_atomic`), never written in place, so the
        // mapped bytes do not change while they are read.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        Ok(Self {
            whole: Whole::Mapped(Arc::new(map)),
            at,
        })
    }

    /// The body of a build's bytes, which starts at byte `at`.
    pub(super) fn built(bytes: Vec<u8>, at: usize) -> Self {
        Self {
            whole: Whole::Built(Arc::new(bytes)),
            at,
        }
    }

    /// Whether the bytes are the file's (not a build's kept in memory).
    #[cfg(test)]
    pub(super) fn is_mapped(&self) -> bool {
        matches!(self.whole, Whole::Mapped(_))
    }

    /// Bytes `[start, end)` of the body; `None` past its end.
    pub(super) fn read(&self, start: usize, end: usize) -> Option<&[u8]> {
        let bytes = self.whole.bytes();
        let (start, end) = (self.at.checked_add(start)?, self.at.checked_add(end)?);
        (start <= end).then(|| bytes.get(start..end)).flatten()
    }

    /// Bytes `[start, end)` of the body as a value of their own (what an
    /// `fst` map is made over); `None` past its end.
    pub(super) fn section(&self, start: usize, end: usize) -> Option<Section> {
        self.read(start, end)?;
        Some(Section {
            whole: self.whole.clone(),
            start: self.at + start,
            end: self.at + end,
        })
    }

    /// Bytes of the body.
    pub(super) fn len(&self) -> u64 {
        (self.whole.bytes().len() - self.at) as u64
    }
}

/// A section of the index's bytes, sharing them.
#[derive(Clone)]
pub(super) struct Section {
    whole: Whole,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for Section {
    fn as_ref(&self) -> &[u8] {
        &self.whole.bytes()[self.start..self.end]
    }
}
