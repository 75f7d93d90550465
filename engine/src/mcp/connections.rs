//! The MCP clients of one run, shared by its stages.

use std::collections::HashMap;
use std::sync::Arc;

use super::{McpClient, McpError, ServerConfig};

/// Clients by server, connected on first use and reused for the whole run.
#[derive(Default)]
pub(crate) struct Connections {
    clients: tokio::sync::Mutex<HashMap<String, Arc<McpClient>>>,
}

impl Connections {
    /// The client for `config`, connecting on first use as `product`'s.
    pub async fn client(
        &self,
        config: &ServerConfig,
        max_answer_bytes: u64,
        product: &crate::Product,
    ) -> Result<Arc<McpClient>, McpError> {
        let key = config.describe();
        let mut clients = self.clients.lock().await;
        if let Some(c) = clients.get(&key) {
            return Ok(Arc::clone(c));
        }
        let client = Arc::new(McpClient::connect(config, max_answer_bytes, product).await?);
        clients.insert(key, Arc::clone(&client));
        Ok(client)
    }
}
