//! Where a loaded index's sections are read from: the open file, of which a
//! search reads only the term dictionary, the postings of its terms and the
//! row-table entries of the rows it fetches (at 10^6 assets the file is
//! ~100 MB, a search needs a few of them); or the bytes of a build that
//! could not be written.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::sync::{Arc, Mutex};

/// The sections after the header.
#[derive(Clone)]
pub(super) enum Body {
    /// The file, opened once: a file renamed over it later (the next
    /// `index`) leaves this one as it was.
    File {
        file: Arc<Mutex<File>>,
        at: u64,
        len: u64,
    },
    Memory {
        bytes: Arc<Vec<u8>>,
        at: usize,
    },
}

impl Body {
    /// Bytes `[start, end)` of the body; `None` past its end.
    pub(super) fn read(&self, start: usize, end: usize) -> std::io::Result<Option<Cow<'_, [u8]>>> {
        if start > end || end as u64 > self.len() {
            return Ok(None);
        }
        match self {
            Body::File { file, at, .. } => {
                let mut bytes = vec![0; end - start];
                let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
                file.seek(SeekFrom::Start(at + start as u64))?;
                file.read_exact(&mut bytes)?;
                Ok(Some(Cow::Owned(bytes)))
            }
            Body::Memory { bytes, at } => Ok(Some(Cow::Borrowed(&bytes[at + start..at + end]))),
        }
    }

    /// Bytes of the body.
    pub(super) fn len(&self) -> u64 {
        match self {
            Body::File { len, at, .. } => len - at,
            Body::Memory { bytes, at } => (bytes.len() - at) as u64,
        }
    }
}
