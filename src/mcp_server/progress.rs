//! Fan-out progress (index batches, map-reduce chunks) as MCP progress
//! notifications, for a call that asked for them with a progress token.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use engine::{Progress, Tick};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

pub struct Notifier {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Notifier {
    pub fn shared(peer: Peer<RoleServer>, token: ProgressToken) -> Arc<dyn Progress> {
        Arc::new(Self { peer, token })
    }
}

impl Progress for Notifier {
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick> {
        Box::new(Counting {
            peer: self.peer.clone(),
            token: self.token.clone(),
            label: label.to_owned(),
            total,
            done: AtomicUsize::new(0),
        })
    }
}

struct Counting {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    label: String,
    total: usize,
    done: AtomicUsize,
}

impl Tick for Counting {
    fn advance(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let param = ProgressNotificationParam::new(self.token.clone(), done as f64)
            .with_total(self.total as f64)
            .with_message(format!("{} {done}/{}", self.label, self.total));
        let peer = self.peer.clone();
        // A notification is best effort: a client that went away must not
        // fail the run, and the stage must not wait on the transport.
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}
