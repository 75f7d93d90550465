//! What the word ranker saw in one record, as numbers: the features the
//! learned scorer ([`crate::search::scorer`]) weighs beside the name and
//! meaning channels. The rule-based confidence is one of them; the rest say
//! *where* the query's concepts matched, which the confidence folds away.

use serde::{Deserialize, Serialize};

use super::bm25f::{Field, Scored};
use super::Calibration;

/// Shares of the query's concepts, by where a record matched them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The ranker's weighted coverage (0–1).
    pub(crate) coverage: f32,
    /// Matched in the record's own words: name, tags, labels, file-name signals.
    pub named: f32,
    /// Matched in its file name itself.
    pub(crate) in_file_name: f32,
    /// One over the number of the query's concepts: a long query's answer
    /// covers less of it.
    pub(crate) brevity: f32,
    /// Matched only in a folder name.
    pub(crate) folder_only: f32,
    /// Matched only in a part the record holds (a child, a texture).
    pub(crate) part_only: f32,
    /// Not matched at all, though other records hold it.
    pub missing: f32,
    /// Held by no record of the project at all.
    pub(crate) unseen: f32,
    /// The query's subject is missing or only a part (the record is capped).
    pub(crate) subject_missing: bool,
    /// The query's subject is a word no record of the project holds.
    pub(crate) subject_unseen: bool,
    /// Of a type the query named otherwise, or code it did not ask for.
    pub(crate) off_type: bool,
    /// Of the type the query wants (or a placeable one when it names none).
    pub(crate) wanted_type: bool,
    /// Matched only through words near in meaning.
    pub(crate) meaning_alone: bool,
    /// Its BM25F score over the best of the candidates it was ranked with (0–1).
    pub(crate) bm25: f32,
    /// How well the subject matched (`Scored::strength`; 0 without one):
    /// the word itself, or only a loose synonym of it (우주선 → `~ship`).
    pub(crate) subject_strength: f32,
    /// Matched, but only weakly: by a loose synonym, a sibling translation
    /// or half a compound.
    pub(crate) loose: f32,
}

impl Evidence {
    /// The evidence of `s`, one record's scores for `query`.
    pub(super) fn of(
        s: &Scored,
        subject: Option<usize>,
        calibration: Calibration,
        wanted_type: bool,
        best_bm25: f32,
    ) -> Self {
        let n = s.found_in.len().max(1) as f32;
        let unseen = |c: usize| s.unseen & (1 << c) != 0;
        let share = |test: &dyn Fn(usize, u16) -> bool| {
            s.found_in
                .iter()
                .enumerate()
                .filter(|&(c, &mask)| test(c, mask))
                .count() as f32
                / n
        };
        let own = mask_of(&[Field::Name, Field::Tags, Field::Labels, Field::Signals]);
        let file_name = mask_of(&[Field::Name]);
        let folder = mask_of(&[Field::Path]);
        let parts = mask_of(&[Field::Children, Field::Textures, Field::Properties]);
        Self {
            coverage: s.coverage,
            named: share(&|_, m| m & own != 0),
            in_file_name: share(&|_, m| m & file_name != 0),
            brevity: 1.0 / n,
            folder_only: share(&|_, m| m != 0 && m & !folder == 0),
            part_only: share(&|_, m| m != 0 && m & !parts == 0),
            missing: share(&|c, m| m == 0 && !unseen(c)),
            unseen: share(&|c, _| unseen(c)),
            subject_missing: matches!(calibration, Calibration::SubjectMissing | Calibration::SubjectOnlyPart),
            subject_unseen: subject.is_some_and(unseen),
            off_type: matches!(calibration, Calibration::OtherType | Calibration::NonContent),
            wanted_type,
            meaning_alone: matches!(calibration, Calibration::MeaningAlone | Calibration::MeaningOnly),
            bm25: if best_bm25 > 0.0 { s.bm25 / best_bm25 } else { 0.0 },
            subject_strength: subject.and_then(|c| s.strength.get(c)).copied().unwrap_or(0.0),
            loose: share(&|c, m| m != 0 && s.strength[c] < super::STRONG_SUBJECT),
        }
    }
}

/// The [`Scored::found_in`] bits of `fields`.
fn mask_of(fields: &[Field]) -> u16 {
    Field::ALL
        .iter()
        .enumerate()
        .filter(|(_, f)| fields.contains(f))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}
