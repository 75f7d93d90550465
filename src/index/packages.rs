//! Which package (vendor pack, embedded package, or the project itself) an
//! asset belongs to.
//!
//! Rules, first that applies wins (paths are project-relative):
//! 1. `Packages/<name>/…` — the embedded package `<name>`.
//! 2. `Assets/Packages/<Name>/…` and `Assets/Plugins/<Name>/…` — the package `<Name>`.
//! 3. The deepest folder at least two levels below `Assets/`
//!    (`Assets/<Vendor>/<Pack>/…`) that directly holds a licence, readme,
//!    changelog or `package.json` (`package_markers` in
//!    `data/filename-conventions.yml`) — a pack shipped inside a vendor folder,
//!    such as `Assets/Danmokou/Kenney`.
//! 4. `Assets/<Vendor>/…` — the package `<Vendor>`, unless `<Vendor>` is one of
//!    the content-kind folders a project organises itself with (`Prefabs`,
//!    `Textures`, `Audio`, …: `project_folders` in the same file).
//! 5. Everything else (content-kind folders, files directly in `Assets/`) —
//!    the project's own package, id `project`, root `Assets`.
//!
//! A package's id is its name in kebab-case; when two packages would share an
//! id, both take the kebab-case of their root path instead.

use std::collections::{BTreeMap, BTreeSet};

use super::classify::{file_stem, name_words};
use super::data::Conventions;

/// The project's own package.
pub const PROJECT_ID: &str = "project";
const PROJECT_ROOT: &str = "Assets";
pub const PROJECT_NAME: &str = "Project";

/// A package's root folder and display name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PackageRoot {
    pub root: String,
    pub name: String,
}

/// Folders holding a package marker file, from every file path of the project.
pub fn marker_folders<'a>(files: impl Iterator<Item = &'a str>, conventions: &Conventions) -> BTreeSet<String> {
    files
        .filter(|path| conventions.package_markers.contains(&file_stem(path).to_lowercase()))
        .filter_map(|path| path.rsplit_once('/').map(|(folder, _)| folder.to_owned()))
        .collect()
}

/// The package an asset at `path` belongs to.
pub fn package_of(path: &str, markers: &BTreeSet<String>, conventions: &Conventions) -> PackageRoot {
    let parts: Vec<&str> = path.split('/').collect();
    let folders = &parts[..parts.len().saturating_sub(1)];
    let root_of = |depth: usize| PackageRoot {
        root: folders[..depth].join("/"),
        name: folders[depth - 1].to_owned(),
    };

    match folders {
        ["Packages", _, ..] => return root_of(2),
        ["Assets", "Packages" | "Plugins", _, ..] => return root_of(3),
        _ => {}
    }
    if folders.first() == Some(&"Assets") {
        let pack = (3..=folders.len())
            .rev()
            .find(|&depth| markers.contains(&folders[..depth].join("/")));
        if let Some(depth) = pack {
            return root_of(depth);
        }
        if let Some(vendor) = folders.get(1) {
            if !conventions.project_folders.contains(&vendor.to_lowercase()) {
                return root_of(2);
            }
        }
    }
    PackageRoot {
        root: PROJECT_ROOT.to_owned(),
        name: PROJECT_NAME.to_owned(),
    }
}

/// Stable ids for a set of package roots.
pub fn package_ids(roots: &BTreeSet<PackageRoot>) -> BTreeMap<String, String> {
    let slug = |text: &str| {
        let slug = name_words(text).join("-");
        if slug.is_empty() {
            "package".to_owned()
        } else {
            slug
        }
    };
    let id_of_name = |p: &PackageRoot| {
        if p.root == PROJECT_ROOT {
            PROJECT_ID.to_owned()
        } else {
            slug(&p.name)
        }
    };
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for p in roots {
        *uses.entry(id_of_name(p)).or_default() += 1;
    }
    roots
        .iter()
        .map(|p| {
            let id = id_of_name(p);
            let id = if uses[&id] > 1 { slug(&p.root) } else { id };
            (p.root.clone(), id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::data::embedded;

    #[test]
    fn applies_the_documented_rules_in_order() {
        let data = embedded();
        let files = [
            "Assets/Danmokou/Kenney/License.txt",
            "Assets/Danmokou/Kenney/SFX/hit.wav",
        ];
        let markers = marker_folders(files.into_iter(), &data.conventions);
        let of = |path: &str| package_of(path, &markers, &data.conventions);
        assert_eq!(
            of("Packages/com.acme.tools/Runtime/A.cs").root,
            "Packages/com.acme.tools"
        );
        assert_eq!(of("Assets/Packages/Zombie Kit/Z.prefab").name, "Zombie Kit");
        assert_eq!(of("Assets/Plugins/DOTween/D.dll").root, "Assets/Plugins/DOTween");
        assert_eq!(of("Assets/Danmokou/Kenney/SFX/hit.wav").root, "Assets/Danmokou/Kenney");
        assert_eq!(of("Assets/Danmokou/Sprites/a.png").root, "Assets/Danmokou");
        assert_eq!(of("Assets/Prefabs/Player.prefab").root, "Assets");
        assert_eq!(of("Assets/Readme.asset").root, "Assets");
        assert_eq!(of("Assets/Plugins/loose.dll").root, "Assets");
    }

    #[test]
    fn ids_are_kebab_names_and_disambiguated_by_root() {
        let root = |root: &str, name: &str| PackageRoot {
            root: root.into(),
            name: name.into(),
        };
        let roots: BTreeSet<_> = [
            root("Assets", "Project"),
            root("Assets/ZombieKit", "ZombieKit"),
            root("Assets/Tools", "Tools"),
            root("Packages/tools", "tools"),
        ]
        .into();
        let ids = package_ids(&roots);
        assert_eq!(ids["Assets"], "project");
        assert_eq!(ids["Assets/ZombieKit"], "zombie-kit");
        assert_eq!(ids["Assets/Tools"], "assets-tools");
        assert_eq!(ids["Packages/tools"], "packages-tools");
    }
}
