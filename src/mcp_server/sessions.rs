//! The HTTP server's sessions, bounded: each holds a server task and its
//! buffers (about 80 KB), and rmcp's session manager keeps every one it
//! opened until it idles out, so 12,000 `initialize` posts held 1 GB.
//! [`Sessions`] keeps at most [`MAX_SESSIONS`]: a new one closes the one
//! used least recently, and one idle for [`IDLE`] ends on its own. A client
//! whose session was closed gets 404 and, as the MCP spec asks, starts a new one.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use rmcp::transport::WorkerTransport;

/// Sessions open at once: more MCP clients than one machine runs.
pub const MAX_SESSIONS: usize = 64;
/// A session with no message either way for this long ends (rmcp's own
/// default is 5 minutes; a search on a slow model that sends no progress
/// notification may run that long).
pub const IDLE: Duration = Duration::from_secs(10 * 60);

/// rmcp's in-memory sessions, at most `max` of them.
pub struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    /// When each open session was last used.
    used: Mutex<HashMap<SessionId, Instant>>,
}

impl Sessions {
    /// At most `max` sessions, each ending after `idle` without a message.
    pub fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        inner.session_config = config;
        Self {
            inner,
            max,
            used: Mutex::new(HashMap::new()),
        }
    }

    /// How many sessions are open.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        // The map holds no invariant a panicking holder could break.
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note that `id` was used now (a session already closed stays closed).
    fn touch(&self, id: &SessionId) {
        if let Some(at) = self.lock().get_mut(id) {
            *at = Instant::now();
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        // Trimmed after the insert, so sessions created at once cannot all slip under the bound.
        let evicted = {
            let mut used = self.lock();
            used.insert(id.clone(), Instant::now());
            let mut evicted = vec![];
            while used.len() > self.max {
                let others = used.iter().filter(|(other, _)| **other != id);
                let Some(oldest) = others.min_by_key(|(_, at)| **at).map(|(old, _)| old.clone()) else {
                    break;
                };
                used.remove(&oldest);
                evicted.push(oldest);
            }
            evicted
        };
        for old in &evicted {
            tracing::info!(
                "closing MCP session {old}, the least recently used: {} sessions are open",
                self.max
            );
            // A session that cannot be closed must not cost the new one.
            if let Err(e) = self.inner.close_session(old).await {
                tracing::warn!("cannot close MCP session {old}: {e}");
            }
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}
