//! Each MCP session picks from its own last search. `search-result.json`
//! stays the one file of the CLI's contract, so the server gives the file
//! to one session at a time: a call whose pipeline says `mcp: {session:
//! reads | writes}` (pick; search, build) takes the server's turn, puts the
//! session's own last result in place, runs, and (`writes`) keeps what the
//! run left as the session's.
//! Thirty clients searching at once used to pick from each other's results.

use std::future::Future;
use std::path::Path;

use engine::io::Limits;
use engine::SessionUse;
use tokio::sync::Mutex;

use crate::search::result::{self, RESULT_FILE};

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

/// Run `run` (a call that uses the session's state as `session` says, in
/// the session that owns `own`) with the session's last result in the
/// index folder. A session that never searched
/// uses the file as it is (a search made on the command line, say).
pub async fn with_own<T>(
    turn: &Turn,
    own: &Own,
    index_dir: &Path,
    limits: &Limits,
    session: SessionUse,
    run: impl Future<Output = T>,
) -> Result<T, String> {
    if session == SessionUse::None {
        return Ok(run.await);
    }
    let _turn = turn.0.lock().await;
    if let Some(text) = own.get() {
        let path = index_dir.join(RESULT_FILE);
        engine::io::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("cannot put this session's last search in {}: {e}", path.display()))?;
    }
    let done = run.await;
    // A call that only reads the file (a pick) leaves the session as it was:
    // one that never searched keeps none.
    if session == SessionUse::Writes {
        if let Ok(Some(text)) = result::read_text(index_dir, limits) {
            own.set(text);
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a call using the session as `session` says; the call writes
    /// `left` as the last search and answers what it found in place.
    async fn call(own: &Own, dir: &Path, session: SessionUse, left: &str) -> Option<String> {
        let limits = Limits::default();
        let run = async {
            let found = result::read_text(dir, &limits).unwrap();
            std::fs::write(dir.join(RESULT_FILE), left).unwrap();
            found
        };
        with_own(&Turn::default(), own, dir, &limits, session, run)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn writes_keeps_what_the_call_left_reads_only_puts_it_in_place_none_leaves_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let own = Own::default();
        assert_eq!(call(&own, dir.path(), SessionUse::Writes, "mine").await, None);
        assert_eq!(own.get().as_deref(), Some("mine"));

        // Another session's search replaced the file; this session's own comes back.
        std::fs::write(dir.path().join(RESULT_FILE), "theirs").unwrap();
        assert_eq!(
            call(&own, dir.path(), SessionUse::Reads, "read").await.as_deref(),
            Some("mine")
        );
        assert_eq!(own.get().as_deref(), Some("mine"), "a read keeps the session as it was");

        std::fs::write(dir.path().join(RESULT_FILE), "theirs").unwrap();
        assert_eq!(
            call(&own, dir.path(), SessionUse::None, "x").await.as_deref(),
            Some("theirs")
        );
        assert_eq!(own.get().as_deref(), Some("mine"));
    }
}
