//! The path check never admits a path whose canonical form leaves the
//! project: random path strings (`..`, absolute, drive letters, backslashes)
//! against a project holding random symlinks created for each case (to
//! outside folders and files, `/`, `/dev/zero`, inside folders, dangling).

#![cfg(unix)]

use std::path::{Path, PathBuf};

use engine::io::{confine, confine_for_write};
use proptest::prelude::*;

const NAMES: &[&str] = &["a", "b", "l0", "l1", "l2", "l3"];

/// What a link made on the fly points at.
#[derive(Debug, Clone, Copy)]
enum Target {
    OutsideDir,
    OutsideFile,
    FsRoot,
    DevZero,
    InsideDir,
    ProjectRoot,
    Parent,
    Dangling,
    OtherLink,
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        Just(Target::OutsideDir),
        Just(Target::OutsideFile),
        Just(Target::FsRoot),
        Just(Target::DevZero),
        Just(Target::InsideDir),
        Just(Target::ProjectRoot),
        Just(Target::Parent),
        Just(Target::Dangling),
        Just(Target::OtherLink),
    ]
}

fn path_string() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        // Mostly the names of the folders and links the sandbox holds.
        8 => proptest::sample::select(NAMES).prop_map(str::to_owned),
        1 => Just("..".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just("".to_owned()),
        1 => Just("/".to_owned()),
        1 => Just("\\".to_owned()),
        1 => Just("C:".to_owned()),
        1 => Just("...".to_owned()),
        1 => Just("outside".to_owned()),
        1 => Just("x.json".to_owned()),
        1 => "[a-z.]{1,4}",
    ];
    (proptest::bool::weighted(0.2), proptest::collection::vec(part, 1..6)).prop_map(|(abs, parts)| {
        let joined = parts.join("/");
        if abs {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn sandbox(links: &[(usize, Target)]) -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x.json"), "{}").unwrap();
    std::fs::write(root.join("a/x.json"), "{}").unwrap();
    for (i, (slot, t)) in links.iter().enumerate() {
        let name = format!("l{}", i.min(3));
        // Links sit at the root or inside `a/`.
        let link = if slot % 2 == 0 {
            root.join(&name)
        } else {
            root.join("a").join(&name)
        };
        let to: PathBuf = match t {
            Target::OutsideDir => outside.clone(),
            Target::OutsideFile => outside.join("x.json"),
            Target::FsRoot => PathBuf::from("/"),
            Target::DevZero => PathBuf::from("/dev/zero"),
            Target::InsideDir => root.join("a/b"),
            Target::ProjectRoot => root.clone(),
            Target::Parent => PathBuf::from(".."),
            Target::Dangling => root.join("nowhere"),
            Target::OtherLink => PathBuf::from("l0"),
        };
        let _ = std::os::unix::fs::symlink(&to, &link);
    }
    Sandbox {
        _dir: dir,
        root,
        outside,
    }
}

/// The canonical form of the deepest existing ancestor of `p`.
fn canonical_existing(p: &Path) -> Option<PathBuf> {
    let mut probe = p;
    loop {
        if probe.symlink_metadata().is_ok() {
            return probe.canonicalize().ok();
        }
        probe = probe.parent()?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn admitted_paths_resolve_inside_the_project(
        links in proptest::collection::vec((0usize..4, target()), 0..5),
        rel in path_string(),
    ) {
        let sb = sandbox(&links);
        let root = sb.root.canonicalize().unwrap();
        if let Ok(p) = confine(&sb.root, &rel) {
            let canon = canonical_existing(&p).expect("an admitted path has an existing ancestor");
            prop_assert!(canon.starts_with(&root), "{rel:?} admitted as {p:?}, resolves to {canon:?}");
            prop_assert!(!rel.starts_with('/') && !rel.split(['/', '\\']).any(|s| s == ".."));
        }
        if let Ok(p) = confine_for_write(&sb.root, &rel) {
            // Writing there for real lands inside, and touches nothing outside.
            if std::fs::create_dir_all(p.parent().unwrap()).is_ok() && std::fs::write(&p, "w").is_ok() {
                let canon = p.canonicalize().unwrap();
                prop_assert!(canon.starts_with(&root), "{rel:?} wrote to {canon:?}");
            }
            let outside: Vec<_> = std::fs::read_dir(&sb.outside).unwrap().map(|e| e.unwrap().file_name()).collect();
            prop_assert_eq!(outside.len(), 1);
            prop_assert_eq!(std::fs::read_to_string(sb.outside.join("x.json")).unwrap(), "{}");
        }
    }
}
