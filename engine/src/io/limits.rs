//! Size limits on what a run reads from files and the network, so a hostile
//! or broken input fails with a clear message instead of eating memory.
//! The product fills them from its config; each error names the key.

/// The limits of one run, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// One file a stage or a native function reads (`limits.file_mb`).
    pub file_bytes: u64,
    /// One data file that grows with what it describes: a line-per-record
    /// file (JSONL) and a product's own data files, such as an index of a
    /// million rows (`limits.data_mb`). Its lines stay bounded by
    /// `line_bytes`.
    pub data_bytes: u64,
    /// One HTTP answer: model providers, MCP servers reached over HTTP, the
    /// `http` stage (`limits.http_mb`).
    pub http_bytes: u64,
    /// One line of a line-per-record file: the index, `feedback.jsonl`
    /// (`limits.line_kb`).
    pub line_bytes: u64,
    /// The work one template render or expression may do, in minijinja fuel
    /// (about one instruction, or 64 bytes of output, each;
    /// `limits.template_fuel`): a loop that never ends fails instead of
    /// holding a core.
    pub template_fuel: u64,
}

/// The config key of [`Limits::file_bytes`], named in its errors.
pub const FILE_KEY: &str = "limits.file_mb";
/// The config key of [`Limits::data_bytes`], named in its errors.
pub const DATA_KEY: &str = "limits.data_mb";
/// The config key of [`Limits::http_bytes`], named in its errors.
pub const HTTP_KEY: &str = "limits.http_mb";
/// The config key of [`Limits::line_bytes`], named in its errors.
pub(crate) const LINE_KEY: &str = "limits.line_kb";

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self {
            file_bytes: 256 * MIB,
            data_bytes: 4096 * MIB,
            http_bytes: 16 * MIB,
            line_bytes: 1024 * KIB,
            template_fuel: 10_000_000,
        }
    }
}

impl Limits {
    /// From the config's `limits:` values (`file_mb`, `http_mb`, `line_kb`);
    /// absent keys keep their default.
    pub fn from_config(file_mb: Option<u64>, http_mb: Option<u64>, line_kb: Option<u64>) -> Self {
        let d = Self::default();
        Self {
            file_bytes: file_mb.map_or(d.file_bytes, |m| m.saturating_mul(MIB)),
            data_bytes: d.data_bytes,
            http_bytes: http_mb.map_or(d.http_bytes, |m| m.saturating_mul(MIB)),
            line_bytes: line_kb.map_or(d.line_bytes, |k| k.saturating_mul(KIB)),
            template_fuel: d.template_fuel,
        }
    }

    /// With the config's `limits.data_mb`, if set.
    pub fn with_data_mb(self, data_mb: Option<u64>) -> Self {
        Self {
            data_bytes: data_mb.map_or(self.data_bytes, |m| m.saturating_mul(MIB)),
            ..self
        }
    }

    /// With the config's `limits.template_fuel`, if set.
    pub fn with_template_fuel(self, fuel: Option<u64>) -> Self {
        Self {
            template_fuel: fuel.unwrap_or(self.template_fuel),
            ..self
        }
    }
}
