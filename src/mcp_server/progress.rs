//! Fan-out progress (index batches, map-reduce chunks) as MCP progress
//! notifications, for a call that asked for them with a progress token.
//!
//! The spec wants a token's progress to increase with every notification:
//! ticks from concurrent stages are numbered under one lock and sent, in
//! that order, by one task per call.

use std::sync::{Arc, Mutex};

use engine::{Progress, Tick};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

pub struct Notifier {
    token: ProgressToken,
    sent: Arc<Mutex<Sent>>,
}

/// Numbered and queued under one lock, so the queue is in order.
struct Sent {
    /// Ticks so far over every fan-out of the call.
    ticks: u64,
    /// The totals of every fan-out begun so far.
    total: u64,
    queue: UnboundedSender<ProgressNotificationParam>,
}

impl Notifier {
    /// A notifier for one call; its sending task ends when the run drops it.
    pub fn shared(peer: Peer<RoleServer>, token: ProgressToken) -> Arc<dyn Progress> {
        let (queue, mut queued) = unbounded_channel::<ProgressNotificationParam>();
        tokio::spawn(async move {
            while let Some(param) = queued.recv().await {
                // Best effort: a client that went away must not fail the run.
                let _ = peer.notify_progress(param).await;
            }
        });
        Arc::new(Self {
            token,
            sent: Arc::new(Mutex::new(Sent {
                ticks: 0,
                total: 0,
                queue,
            })),
        })
    }
}

impl Progress for Notifier {
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner()).total += total as u64;
        Box::new(Counting {
            token: self.token.clone(),
            sent: self.sent.clone(),
            label: label.to_owned(),
            total,
            done: Mutex::new(0),
        })
    }
}

struct Counting {
    token: ProgressToken,
    sent: Arc<Mutex<Sent>>,
    label: String,
    total: usize,
    done: Mutex<usize>,
}

impl Tick for Counting {
    fn advance(&self) {
        self.advance_by(1);
    }

    /// One notification however many items (an embedding slice is thousands).
    fn advance_by(&self, n: usize) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done += n;
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.ticks += n as u64;
        // `progress` counts every tick of the call; the message says which fan-out.
        let param = ProgressNotificationParam::new(self.token.clone(), sent.ticks as f64)
            .with_total(sent.total as f64)
            .with_message(format!("{} {}/{}", self.label, *done, self.total));
        let _ = sent.queue.send(param);
    }
}
