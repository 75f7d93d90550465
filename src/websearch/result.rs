//! One web search result as it travels between the stages.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebResult {
    pub title: String,
    pub url: String,
    #[serde(default)]
    pub snippet: String,
    /// 1 (official) to 4 (personal); 0 until classified.
    #[serde(default)]
    pub tier: u8,
    /// 0–100; 0 until classified.
    #[serde(default)]
    pub reliability_score: u32,
    /// The tier's label (공식 문서, 준공식, 커뮤니티, 전문가/개인).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// What the backend said the source is (the command backend's `source_type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// Metadata a backend gave; each feeds a bonus of data/source-tiers.yml.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reactions: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claps: Option<f64>,
}
