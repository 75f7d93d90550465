//! `eject`: copy the embedded pipelines, prompts, schemas and data into the
//! project so a team can edit them; never overwrite an edited file silently.

use crate::config::OVERRIDES;
use crate::exit::Outcome;
use crate::project::Project;

/// `unity-assets eject`: copy the embedded files into the project's overrides folder; an edited copy is kept unless `force`.
pub fn eject(project: &Project, force: bool) -> Outcome {
    let root = project.root.join(OVERRIDES);
    let (mut written, mut same, mut kept) = (0, 0, vec![]);
    for (rel, bytes) in project.resources.embedded_files() {
        // Through real folders only: a symlinked `.claude/` must not carry the copy elsewhere.
        let dest = match engine::io::confine_for_write(&project.root, &format!("{OVERRIDES}/{rel}")) {
            Ok(dest) => dest,
            Err(e) => return Outcome::failed(format!("cannot eject {rel}: {e}")),
        };
        match std::fs::read(&dest) {
            Ok(existing) if existing == bytes => {
                same += 1;
                continue;
            }
            Ok(_) if !force => {
                kept.push(rel);
                continue;
            }
            _ => {}
        }
        if let Err(e) = engine::io::write_atomic(&dest, bytes) {
            return Outcome::failed(format!("cannot write {}: {e}", dest.display()));
        }
        written += 1;
    }
    crate::outln!(
        "ejected to {}: {written} written, {same} unchanged, {} kept (edited)",
        root.display(),
        kept.len()
    );
    for k in &kept {
        crate::outln!("  kept {k} (differs from the embedded copy; --force overwrites)");
    }
    Outcome::ok()
}
