//! The name channel end to end (issue 40, item 1): a query that is an
//! asset's file name — any case, separators or camelCase, with or without
//! its extension — puts that asset first; a prefix or a one-letter typo
//! ranks it high; an extension narrows; filters still apply; every
//! retrieval mode gets it.

use serde_json::Value;
use test_support::project::Project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

/// A project where the names share their words with many other assets,
/// scripts among them (code the lexical ranker keeps under confirm).
fn project() -> Project {
    let p = Project::configured(BIN, "");
    let files = [
        "Assets/Scripts/Abilities/Ability_RocketJump.cs",
        "Assets/Scripts/UI/RocketLauncherUI.cs",
        "Assets/Prefabs/Weapons/RocketLauncher.prefab",
        "Assets/Prefabs/Weapons/Rocket_Big.prefab",
        "Assets/Prefabs/Weapons/Rocket_Small.prefab",
        "Assets/Prefabs/Abilities/RocketJump_Trail.prefab",
        "Assets/Prefabs/Enemies/Zombie_Brute.prefab",
        "Assets/Models/Zombie_Brute.fbx",
        "Assets/Materials/Concrete_A.mat",
        "Assets/Materials/Metal_Wall.mat",
    ];
    for (i, f) in files.iter().enumerate() {
        p.add_asset(f, i + 1);
    }
    let run = p.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.output());
    p
}

/// The paths of the first group's candidates and the first's confidence.
fn top(p: &Project, query: &str, extra: &[&str]) -> (Vec<String>, f64) {
    let mut args = vec!["search", query, "--json"];
    args.extend(extra);
    let run = p.run(&args);
    assert_eq!(run.code, 0, "{query}: {}", run.output());
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let first = &doc["groups"][0]["candidates"];
    let paths = first
        .as_array()
        .map(|cs| cs.iter().map(|c| c["path"].as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    (paths, first[0]["confidence"].as_f64().unwrap_or(0.0))
}

#[test]
fn an_exact_file_name_is_first_at_auto_in_any_spelling() {
    let p = project();
    for query in [
        "Ability_RocketJump.cs",
        "Ability_RocketJump",
        "ability rocketjump",
        "ABILITY-ROCKET-JUMP",
        "RocketLauncherUI",
        "rocket launcher ui",
    ] {
        let (paths, confidence) = top(&p, query, &[]);
        let want = if query.to_lowercase().contains("ability") {
            "Assets/Scripts/Abilities/Ability_RocketJump.cs"
        } else {
            "Assets/Scripts/UI/RocketLauncherUI.cs"
        };
        assert_eq!(paths.first().map(String::as_str), Some(want), "{query}: {paths:?}");
        assert!(confidence >= 0.70, "{query}: {confidence}");
    }
}

#[test]
fn an_extension_narrows_to_its_asset_and_without_it_both_twins_lead() {
    let p = project();
    let (paths, confidence) = top(&p, "Zombie_Brute.fbx", &[]);
    assert_eq!(paths[0], "Assets/Models/Zombie_Brute.fbx", "{paths:?}");
    assert!(confidence >= 0.70);
    let (paths, _) = top(&p, "Zombie_Brute", &[]);
    assert_eq!(
        paths[..2].iter().collect::<std::collections::BTreeSet<_>>(),
        [
            "Assets/Models/Zombie_Brute.fbx",
            "Assets/Prefabs/Enemies/Zombie_Brute.prefab"
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .iter()
        .collect(),
        "{paths:?}"
    );
}

#[test]
fn a_prefix_or_a_one_letter_typo_ranks_the_asset_high() {
    let p = project();
    for query in [
        "Ability_RocketJ",
        "Abilty_RocketJump",
        "RocketLauncherIU",
        "Zombie_Brut.prefab",
    ] {
        let (paths, _) = top(&p, query, &[]);
        let want = match query.chars().next() {
            Some('A') => "Assets/Scripts/Abilities/Ability_RocketJump.cs",
            Some('Z') => "Assets/Prefabs/Enemies/Zombie_Brute.prefab",
            _ => "Assets/Scripts/UI/RocketLauncherUI.cs",
        };
        assert!(paths.iter().take(3).any(|p| p == want), "{query}: {paths:?}");
    }
}

#[test]
fn filters_still_apply_and_every_mode_gets_the_name() {
    let p = project();
    let (paths, _) = top(&p, "t:Prefab Zombie_Brute", &[]);
    assert_eq!(paths[0], "Assets/Prefabs/Enemies/Zombie_Brute.prefab", "{paths:?}");
    assert!(!paths.iter().any(|p| p.ends_with(".fbx")), "{paths:?}");
    for mode in ["exhaustive", "drill-down", "rerank"] {
        let (paths, _) = top(&p, "RocketLauncherUI", &["--set", &format!("search.mode={mode}")]);
        assert_eq!(
            paths.first().map(String::as_str),
            Some("Assets/Scripts/UI/RocketLauncherUI.cs"),
            "{mode}"
        );
    }
}

/// Names a router or the validator used to take apart: one with `&` or
/// `,` (routed as two requests), one of digits (no word in it), one with a
/// long Unity extension.
#[test]
fn names_with_separators_digits_or_long_extensions_are_found() {
    let p = Project::configured(BIN, "");
    for (i, f) in [
        "Assets/Tiles/GrassJoin&Left.png",
        "Assets/Tiles/GrassJoin.prefab",
        "Assets/UI/0011.png",
        "Assets/Anim/Set_Archer.overrideController",
        "Assets/Anim/Set_Boss.overrideController",
    ]
    .iter()
    .enumerate()
    {
        p.add_asset(f, i + 1);
    }
    assert_eq!(p.run(&["index"]).code, 0);
    for (query, want) in [
        ("GrassJoin&Left.png", "Assets/Tiles/GrassJoin&Left.png"),
        ("0011", "Assets/UI/0011.png"),
        (
            "Set_Archer.overrideController",
            "Assets/Anim/Set_Archer.overrideController",
        ),
    ] {
        let (paths, _) = top(&p, query, &[]);
        assert_eq!(paths.first().map(String::as_str), Some(want), "{query}: {paths:?}");
    }
}

/// A typo in a name's first word (`Quiksand` of `Quicksand-Bold`), and a
/// typo of a whole camelCase name among names that share most of its words
/// (`BoxOnBoxArea` holds three of `PlyerOnBoxArea`'s four).
#[test]
fn a_typo_of_a_names_start_or_among_its_lookalikes_finds_it() {
    let p = Project::configured(BIN, "");
    for (i, f) in [
        "Assets/Fonts/Quicksand-Bold.otf",
        "Assets/Fonts/Roboto-Bold.otf",
        "Assets/Tiles/PlayerOnBoxArea.png",
        "Assets/Tiles/BoxOnBoxArea.png",
        "Assets/Tiles/EditorBoxOnBoxArea.png",
        "Assets/Tiles/BoxArea.png",
    ]
    .iter()
    .enumerate()
    {
        p.add_asset(f, i + 1);
    }
    assert_eq!(p.run(&["index"]).code, 0);
    for (query, want) in [
        ("Quiksand", "Assets/Fonts/Quicksand-Bold.otf"),
        ("PlyerOnBoxArea", "Assets/Tiles/PlayerOnBoxArea.png"),
    ] {
        let (paths, confidence) = top(&p, query, &[]);
        assert_eq!(paths.first().map(String::as_str), Some(want), "{query}: {paths:?}");
        assert!(confidence >= 0.40, "{query}: {confidence}");
    }
}
