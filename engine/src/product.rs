//! Who the engine runs for: the product's name and where its settings
//! live. The engine names no product of its own; the product injects this
//! once, and the engine uses it wherever it speaks for the product: the user
//! agent it sends, the name its MCP client gives servers, its temporary
//! folders, and the file a limit is raised in.

/// The application running the engine, as its users and the servers it
/// reaches see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    /// The application's name (`my-tool`): user agents and the MCP client
    /// name are `<name>-engine`.
    pub name: &'static str,
    /// Where its settings live, as a message to a user names them
    /// (`.my-tool/settings.yml`): the file a limit is raised in.
    pub settings: &'static str,
}

impl Product {
    /// The engine run without a product (its own tests, a bare embedding):
    /// neutral names and "the settings file".
    pub const NEUTRAL: Product = Product::new("pipeline", "the settings file");

    /// The product named `name`, whose settings live in `settings`.
    pub const fn new(name: &'static str, settings: &'static str) -> Self {
        Self { name, settings }
    }

    /// `<name>-engine`: the name the engine's MCP client gives servers.
    pub fn client_name(&self) -> String {
        format!("{}-engine", self.name)
    }

    /// `<name>-engine/<version>`: the user agent of the engine's HTTP requests.
    pub fn user_agent(&self) -> String {
        format!("{}/{}", self.client_name(), env!("CARGO_PKG_VERSION"))
    }

    /// `<name>-<purpose>-`: the prefix of a temporary folder made for `purpose`.
    pub fn temp_prefix(&self, purpose: &str) -> String {
        format!("{}-{purpose}-", self.name)
    }

    /// How a limit is raised, for the parenthesis of a message refusing
    /// something over it: "the limit `key`; raise it in `settings` if the
    /// `what` is genuine".
    pub fn raise_limit(&self, key: &str, what: &str) -> String {
        format!(
            "the limit `{key}`; raise it in {} if the {what} is genuine",
            self.settings
        )
    }
}

impl Default for Product {
    fn default() -> Self {
        Self::NEUTRAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_from_the_product() {
        let p = Product::new("acme", ".acme/settings.yml");
        assert_eq!(p.client_name(), "acme-engine");
        assert_eq!(p.user_agent(), concat!("acme-engine/", env!("CARGO_PKG_VERSION")));
        assert_eq!(p.temp_prefix("claude"), "acme-claude-");
        assert_eq!(
            p.raise_limit("limits.http_mb", "answer"),
            "the limit `limits.http_mb`; raise it in .acme/settings.yml if the answer is genuine"
        );
        assert_eq!(Product::default(), Product::NEUTRAL);
    }
}
