//! The stage kinds, each named once: the YAML key is derived from the
//! variant's entry here, and every list of keys (validation, messages,
//! reports) is read from [`ActionKind::ALL`] and [`ModifierKind::ALL`].

/// An enum of kinds with its YAML keys, written as one list.
macro_rules! kinds {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $key:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(#[doc = concat!("`", $key, ":`")] $variant),+
        }

        impl $name {
            /// Every kind, in the order the docs list them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The key a pipeline writes.
            pub fn key(self) -> &'static str {
                match self {
                    $($name::$variant => $key),+
                }
            }
        }
    };
}

kinds!(
    /// What a stage does: exactly one per stage.
    ActionKind {
        Fn => "fn",
        Llm => "llm",
        Run => "run",
        Read => "read",
        Write => "write",
        Append => "append",
        Emit => "emit",
        Exit => "exit",
        Ask => "ask",
        Http => "http",
        Exec => "exec",
        Mcp => "mcp",
    }
);

kinds!(
    /// How a stage repeats its action: at most one per stage.
    ModifierKind {
        ForEach => "for_each",
        MapReduce => "map_reduce",
        Repeat => "repeat",
    }
);

/// The keys of `kinds`, comma-separated, for messages.
pub fn keys<K: Copy>(kinds: &[K], key: fn(K) -> &'static str) -> String {
    kinds.iter().map(|k| key(*k)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_across_actions_and_modifiers() {
        let mut all: Vec<&str> = ActionKind::ALL.iter().map(|k| k.key()).collect();
        all.extend(ModifierKind::ALL.iter().map(|k| k.key()));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
