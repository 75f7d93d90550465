//! Each MCP session picks from its own last search. `search-result.json`
//! stays the one file of the CLI's contract, so the server gives the file
//! to one session at a time: a call that reads or writes it (search, pick,
//! build) takes the server's turn, puts the session's own last result in
//! place, runs, and keeps what the run left as the session's.
//! Thirty clients searching at once used to pick from each other's results.

use std::future::Future;
use std::path::Path;

use engine::io::Limits;
use tokio::sync::Mutex;

use crate::search::result::{self, RESULT_FILE};

/// The pipelines that read or write `search-result.json`.
const USE_THE_FILE: &[&str] = &["search", "pick", "build"];

/// The server's turn at the file, shared by every session.
#[derive(Default)]
pub struct Turn(Mutex<()>);

/// One session's last search result (the file's text), once it has one.
#[derive(Default)]
pub struct Own(std::sync::Mutex<Option<String>>);

impl Own {
    fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, text: String) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
    }
}

/// Run `run` (a call of `pipeline` in the session that owns `own`) with the
/// session's last result in the index folder. A session that never searched
/// uses the file as it is (a search made on the command line, say).
pub async fn with_own<T>(
    turn: &Turn,
    own: &Own,
    index_dir: &Path,
    limits: &Limits,
    pipeline: &str,
    run: impl Future<Output = T>,
) -> Result<T, String> {
    if !USE_THE_FILE.contains(&pipeline) {
        return Ok(run.await);
    }
    let _turn = turn.0.lock().await;
    if let Some(text) = own.get() {
        let path = index_dir.join(RESULT_FILE);
        engine::io::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("cannot put this session's last search in {}: {e}", path.display()))?;
    }
    let done = run.await;
    // A pick only reads the file: a session that never searched keeps none.
    if pipeline != "pick" {
        if let Ok(Some(text)) = result::read_text(index_dir, limits) {
            own.set(text);
        }
    }
    Ok(done)
}
