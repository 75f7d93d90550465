//! A realistic large Unity project for the scale bench (`cargo bench --bench
//! scale`) and the scale tests: 5,000 to 1,000,000 assets laid out as a
//! studio's project is, deterministic for a seed.
//!
//! - **Names** are sampled from the words of the three corpora's file names
//!   (`../shared/corpora/*.tar.gz`, read at run time with `tar`, never
//!   copied into the repository) mixed with a built-in word list, skewed so a
//!   few words are common and most are rare, as in real projects; about one
//!   file in twenty has a Korean name.
//! - **Folders** nest two to five levels under the project's own content
//!   (`Assets/Art/Characters/…`), vendor packs with a readme marker
//!   (`Assets/<Vendor>/<Pack>/`), `Assets/Plugins/<Name>/` and embedded
//!   packages (`Packages/com.studio.<name>/` with a `package.json`).
//! - **Content**: binary assets (textures, audio, models) are empty files;
//!   every asset has a real `.meta` (guid, importer); prefabs, scenes,
//!   materials, animator controllers and ScriptableObject `.asset`s are small
//!   Unity YAML that references earlier assets by guid (materials → textures
//!   and shaders, prefabs → materials, meshes, scripts, nested prefabs and
//!   variants, scenes → prefabs and scripts), with a few missing scripts.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a generated project holds, for the bench's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generated {
    pub assets: usize,
    /// Asset files plus `.meta` files plus package markers.
    pub files: usize,
    pub packages: usize,
    pub korean_names: usize,
    pub yaml_files: usize,
}

/// The words names are made of: the corpora's file-name words when
/// `corpora` holds the archives, mixed with the built-in list (so a fixed
/// query list finds answers either way); sorted, so the same inputs give the
/// same project.
pub fn vocabulary(corpora: &Path) -> (Vec<String>, String) {
    let mut words: Vec<String> = BUILT_IN_WORDS.iter().map(|w| (*w).to_owned()).collect();
    let mut from_corpora = 0;
    for name in ["fpssample", "danmokou", "bossroom"] {
        let archive = corpora.join(format!("{name}.tar.gz"));
        let Ok(listing) = std::process::Command::new("tar").arg("-tzf").arg(&archive).output() else {
            continue;
        };
        if !listing.status.success() {
            continue;
        }
        for path in String::from_utf8_lossy(&listing.stdout).lines() {
            if path.ends_with(".meta") || path.ends_with('/') {
                continue;
            }
            let file = path.rsplit('/').next().unwrap_or(path);
            let stem = file.split('.').next().unwrap_or(file);
            for word in name_words(stem) {
                words.push(word);
                from_corpora += 1;
            }
        }
    }
    words.sort();
    words.dedup();
    let source = if from_corpora > 0 {
        format!("corpora + built-in ({} words)", words.len())
    } else {
        format!("built-in ({} words)", words.len())
    };
    (words, source)
}

/// `ZombieAttack_Heavy01` → `Zombie`, `Attack`, `Heavy`: ASCII letters only,
/// 3–12 long, first letter capitalised.
fn name_words(stem: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in stem.chars() {
        let boundary = !c.is_ascii_alphabetic() || (c.is_ascii_uppercase() && previous_lower);
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if c.is_ascii_alphabetic() {
            current.push(c);
        }
        previous_lower = c.is_ascii_lowercase();
    }
    words.push(current);
    words
        .into_iter()
        .filter(|w| (3..=12).contains(&w.len()))
        .map(|w| {
            let lower = w.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars
                .next()
                .map(|f| f.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Always among the words, whatever the corpora hold: the things a game
/// project is made of, so fixed queries have answers at every size.
const BUILT_IN_WORDS: &[&str] = &[
    "Zombie",
    "Soldier",
    "Knight",
    "Orc",
    "Goblin",
    "Dragon",
    "Robot",
    "Player",
    "Enemy",
    "Boss",
    "Villager",
    "Tree",
    "Pine",
    "Oak",
    "Bush",
    "Grass",
    "Flower",
    "Rock",
    "Stone",
    "Cliff",
    "Mossy",
    "Wall",
    "Floor",
    "Door",
    "Window",
    "Roof",
    "Crate",
    "Barrel",
    "Chest",
    "Lamp",
    "Torch",
    "Fence",
    "Bridge",
    "House",
    "Tavern",
    "Castle",
    "Tower",
    "Sword",
    "Shield",
    "Axe",
    "Bow",
    "Rifle",
    "Pistol",
    "Bullet",
    "Grenade",
    "Potion",
    "Coin",
    "Gem",
    "Key",
    "Button",
    "Icon",
    "Panel",
    "Menu",
    "Cursor",
    "Health",
    "Music",
    "Ambience",
    "Footstep",
    "Explosion",
    "Impact",
    "Hit",
    "Attack",
    "Death",
    "Idle",
    "Walk",
    "Run",
    "Jump",
    "Fire",
    "Smoke",
    "Spark",
    "Water",
    "Rain",
    "Snow",
    "Sky",
    "Cloud",
    "Forest",
    "Desert",
    "Dungeon",
    "Village",
    "City",
    "Corridor",
    "SciFi",
    "Medieval",
    "Metal",
    "Wood",
    "Brick",
    "Dirt",
    "Sand",
    "Ice",
    "Lava",
    "Heavy",
    "Small",
    "Large",
    "Dark",
    "Red",
    "Blue",
    "Green",
    "Old",
    "Broken",
];

/// Korean words for the names of about one file in twenty.
const KOREAN_WORDS: &[&str] = &[
    "좀비",
    "병사",
    "기사",
    "용",
    "적",
    "보스",
    "주민",
    "나무",
    "소나무",
    "풀",
    "꽃",
    "바위",
    "돌",
    "절벽",
    "벽",
    "바닥",
    "문",
    "창문",
    "상자",
    "드럼통",
    "보물상자",
    "등불",
    "횃불",
    "다리",
    "집",
    "성",
    "탑",
    "검",
    "방패",
    "도끼",
    "활",
    "소총",
    "권총",
    "총알",
    "수류탄",
    "물약",
    "동전",
    "보석",
    "열쇠",
    "버튼",
    "아이콘",
    "메뉴",
    "체력바",
    "배경음악",
    "환경음",
    "발소리",
    "폭발",
    "타격",
    "공격",
    "사망",
    "대기",
    "걷기",
    "달리기",
    "점프",
    "불꽃",
    "연기",
    "물",
    "비",
    "눈",
    "하늘",
    "구름",
    "숲",
    "사막",
    "던전",
    "마을",
    "도시",
    "복도",
    "금속",
    "나무판",
];

/// What an asset is: its folder name, extension, importer block and how its
/// content is made.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Texture,
    Sprite,
    Model,
    Audio,
    Script,
    Shader,
    Material,
    Prefab,
    Scene,
    AnimationClip,
    Animator,
    ScriptableObject,
    Document,
}

/// Kinds with their weight per 1,000 assets (about FPSSample's mix).
const KIND_WEIGHTS: &[(Kind, u32)] = &[
    (Kind::Texture, 250),
    (Kind::Sprite, 60),
    (Kind::Model, 110),
    (Kind::Audio, 100),
    (Kind::Script, 120),
    (Kind::Shader, 15),
    (Kind::Material, 120),
    (Kind::Prefab, 120),
    (Kind::Scene, 5),
    (Kind::AnimationClip, 50),
    (Kind::Animator, 10),
    (Kind::ScriptableObject, 30),
    (Kind::Document, 10),
];

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Texture => "Textures",
            Kind::Sprite => "Sprites",
            Kind::Model => "Models",
            Kind::Audio => "Audio",
            Kind::Script => "Scripts",
            Kind::Shader => "Shaders",
            Kind::Material => "Materials",
            Kind::Prefab => "Prefabs",
            Kind::Scene => "Scenes",
            Kind::AnimationClip => "Animations",
            Kind::Animator => "Animators",
            Kind::ScriptableObject => "Data",
            Kind::Document => "Docs",
        }
    }

    fn extension(self, rng: &mut Rng) -> &'static str {
        match self {
            Kind::Texture => ["png", "png", "tga", "psd"][rng.below(4)],
            Kind::Sprite => "png",
            Kind::Model => ["fbx", "fbx", "obj"][rng.below(3)],
            Kind::Audio => ["wav", "ogg", "mp3"][rng.below(3)],
            Kind::Script => "cs",
            Kind::Shader => "shader",
            Kind::Material => "mat",
            Kind::Prefab => "prefab",
            Kind::Scene => "unity",
            Kind::AnimationClip => "anim",
            Kind::Animator => "controller",
            Kind::ScriptableObject => "asset",
            Kind::Document => ["txt", "json", "md"][rng.below(3)],
        }
    }

    /// A name suffix the kind's files often carry (`_Albedo`, `_SFX`).
    fn suffix(self, rng: &mut Rng) -> &'static str {
        let options: &[&str] = match self {
            Kind::Texture => &["_Albedo", "_Normal", "_Mask", "_Emission", "", ""],
            Kind::Audio => &["_SFX", "_Loop", "", ""],
            Kind::Model => &["_LOD0", "_Mesh", "", ""],
            Kind::Material => &["_Mat", "", ""],
            Kind::Sprite => &["_Icon", "_UI", ""],
            _ => &[""],
        };
        options[rng.below(options.len())]
    }
}

/// How many of the (shuffled) words name sub-folders.
const FOLDER_WORDS: usize = 8;

/// splitmix64: a seeded generator with no dependency (the benches draw
/// from it too).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Skewed towards the front: the first words of a list are the common ones.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u * u) * n as f64) as usize % n.max(1)
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn guid(&mut self) -> String {
        format!("{:016x}{:016x}", self.next_u64(), self.next_u64())
    }
}

/// A package root and the content folders made under it so far.
struct Package {
    root: String,
    /// Weight of the project's own content against the packs.
    weight: usize,
}

/// Guids of earlier assets by what later ones reference.
#[derive(Default)]
struct Referable {
    textures: Vec<String>,
    meshes: Vec<String>,
    scripts: Vec<(String, String)>,
    shaders: Vec<String>,
    materials: Vec<String>,
    prefabs: Vec<String>,
    clips: Vec<String>,
}

/// Write a project of `assets` assets under `root` (which should be empty),
/// from `words` (see [`vocabulary`]) and `seed`.
pub fn generate(root: &Path, assets: usize, words: &[String], seed: u64) -> io::Result<Generated> {
    let mut rng = Rng(seed);
    // The word list in a seeded order: which words are common differs by seed, not by sort order.
    let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
    for i in (1..words.len()).rev() {
        let j = rng.below(i + 1);
        words.swap(i, j);
    }
    fs::create_dir_all(root.join("ProjectSettings"))?;
    fs::write(
        root.join("ProjectSettings/ProjectVersion.txt"),
        "m_EditorVersion: 2022.3.20f1\n",
    )?;
    let mut generated = Generated {
        assets,
        ..Generated::default()
    };
    let packages = make_packages(root, assets, &words, &mut rng, &mut generated)?;
    let total_weight: usize = packages.iter().map(|p| p.weight).sum();
    let mut referable = Referable::default();
    let mut taken: HashSet<String> = HashSet::with_capacity(assets);
    let kind_total: u32 = KIND_WEIGHTS.iter().map(|(_, w)| w).sum();

    for i in 0..assets {
        let kind = pick_kind(&mut rng, kind_total);
        let package = pick_package(&packages, &mut rng, total_weight);
        let mut folder = format!("{}/{}", package.root, kind.folder());
        // Half the files sit in the kind's folder, the rest one or two levels
        // down, named from the commoner words (`Props/Barrel/Broken`): about
        // five files per folder, as in the corpora.
        let folder_words = words.len().min(FOLDER_WORDS);
        let depth = match rng.below(20) {
            0..10 => 0,
            10..17 => 1,
            _ => 2,
        };
        for _ in 0..depth {
            let _ = write!(folder, "/{}", words[rng.skewed(folder_words)]);
        }
        let korean = rng.percent(5);
        let stem = if korean {
            generated.korean_names += 1;
            korean_stem(&mut rng)
        } else {
            english_stem(&mut rng, &words, kind)
        };
        let extension = kind.extension(&mut rng);
        let mut path = format!("{folder}/{stem}.{extension}");
        if !taken.insert(path.clone()) {
            path = format!("{folder}/{stem}_{i}.{extension}");
            taken.insert(path.clone());
        }
        let guid = rng.guid();
        let name = stem.clone();
        let content = content(kind, &name, &mut rng, &referable);
        if content.starts_with(YAML_HEADER) {
            generated.yaml_files += 1;
        }
        let full = root.join(&path);
        fs::create_dir_all(full.parent().expect("a file has a folder"))?;
        fs::write(&full, content)?;
        fs::write(meta_path(&full), meta(kind, extension, &guid, &mut rng))?;
        generated.files += 2;
        remember(&mut referable, kind, guid, name);
    }
    Ok(generated)
}

fn meta_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".meta");
    PathBuf::from(name)
}

/// The project's own content, vendor packs with a readme, plugins and
/// embedded packages: about one package per 1,000 assets, at least eight.
fn make_packages(
    root: &Path,
    assets: usize,
    words: &[&str],
    rng: &mut Rng,
    generated: &mut Generated,
) -> io::Result<Vec<Package>> {
    let count = (assets / 1000).max(8);
    let mut packages = Vec::with_capacity(count + 6);
    for area in [
        "Art/Characters",
        "Art/Environment",
        "Art/Props",
        "Audio",
        "Gameplay",
        "UI",
    ] {
        packages.push(Package {
            root: format!("Assets/{area}"),
            weight: 10,
        });
    }
    let mut roots = HashSet::new();
    for n in 0..count {
        let a = words[rng.below(words.len())];
        let b = words[rng.below(words.len())];
        let (root_path, marker, body) = match n % 4 {
            0 | 1 => (
                format!("Assets/{a}Studio/{b}Pack{n}"),
                "Readme.txt",
                format!("{b} pack by {a} Studio.\n"),
            ),
            2 => (format!("Assets/Plugins/{a}{b}{n}"), "LICENSE.md", "MIT\n".to_owned()),
            _ => {
                let id = format!("com.studio.{}-{}{n}", a.to_ascii_lowercase(), b.to_ascii_lowercase());
                (
                    format!("Packages/{id}"),
                    "package.json",
                    format!("{{\"name\": \"{id}\", \"version\": \"1.0.{n}\", \"displayName\": \"{a} {b}\"}}\n"),
                )
            }
        };
        if !roots.insert(root_path.clone()) {
            continue;
        }
        let folder = root.join(&root_path);
        fs::create_dir_all(&folder)?;
        fs::write(folder.join(marker), body)?;
        fs::write(
            meta_path(&folder.join(marker)),
            format!(
                "fileFormatVersion: 2\nguid: {}\nTextScriptImporter:\n  externalObjects: {{}}\n",
                rng.guid()
            ),
        )?;
        generated.files += 2;
        packages.push(Package {
            root: root_path,
            weight: 1,
        });
    }
    generated.packages = packages.len();
    Ok(packages)
}

fn pick_kind(rng: &mut Rng, total: u32) -> Kind {
    let mut at = rng.below(total as usize) as u32;
    for &(kind, weight) in KIND_WEIGHTS {
        if at < weight {
            return kind;
        }
        at -= weight;
    }
    Kind::Texture
}

fn pick_package<'a>(packages: &'a [Package], rng: &mut Rng, total: usize) -> &'a Package {
    let mut at = rng.below(total);
    for package in packages {
        if at < package.weight {
            return package;
        }
        at -= package.weight;
    }
    &packages[0]
}

/// `Mossy_Rock_Large_03_Albedo`, `ZombieAttack`, `rock-wall-b`: the casings studios mix.
fn english_stem(rng: &mut Rng, words: &[&str], kind: Kind) -> String {
    let count = 1 + rng.below(3);
    let picked: Vec<&str> = (0..count).map(|_| words[rng.skewed(words.len())]).collect();
    let mut stem = match rng.below(3) {
        0 => picked.join("_"),
        1 => picked.concat(),
        _ => picked
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join("-"),
    };
    if rng.percent(40) {
        let _ = write!(stem, "_{:02}", rng.below(30));
    }
    stem.push_str(kind.suffix(rng));
    stem
}

/// `좀비_공격_02`.
fn korean_stem(rng: &mut Rng) -> String {
    let count = 1 + rng.below(2);
    let mut stem = (0..count)
        .map(|_| KOREAN_WORDS[rng.below(KOREAN_WORDS.len())])
        .collect::<Vec<_>>()
        .join("_");
    if rng.percent(50) {
        let _ = write!(stem, "_{:02}", rng.below(10));
    }
    stem
}

fn remember(referable: &mut Referable, kind: Kind, guid: String, name: String) {
    match kind {
        Kind::Texture | Kind::Sprite => referable.textures.push(guid),
        Kind::Model => referable.meshes.push(guid),
        Kind::Script => referable.scripts.push((guid, name)),
        Kind::Shader => referable.shaders.push(guid),
        Kind::Material => referable.materials.push(guid),
        Kind::Prefab => referable.prefabs.push(guid),
        Kind::AnimationClip => referable.clips.push(guid),
        _ => {}
    }
}

/// An earlier asset's guid from `pool`, or none yet.
fn any<'a>(rng: &mut Rng, pool: &'a [String]) -> Option<&'a str> {
    (!pool.is_empty()).then(|| pool[rng.below(pool.len())].as_str())
}

const YAML_HEADER: &str = "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n";
/// The guid of Unity's built-in resources (Standard shader, default meshes).
const BUILTIN_GUID: &str = "0000000000000000f000000000000000";

fn content(kind: Kind, name: &str, rng: &mut Rng, referable: &Referable) -> String {
    match kind {
        Kind::Script => format!(
            "using UnityEngine;\n\npublic class {} : MonoBehaviour\n{{\n}}\n",
            class_name(name)
        ),
        Kind::Shader => format!(
            "Shader \"Custom/{}\"\n{{\n  SubShader {{ Pass {{ }} }}\n}}\n",
            class_name(name)
        ),
        Kind::Material => material(name, rng, referable),
        Kind::Prefab => prefab(name, rng, referable),
        Kind::Scene => scene(rng, referable),
        Kind::AnimationClip => format!(
            "{YAML_HEADER}--- !u!74 &7400000\nAnimationClip:\n  m_Name: {name}\n  m_SampleRate: 60\n  m_WrapMode: 0\n"
        ),
        Kind::Animator => animator(name, rng, referable),
        Kind::ScriptableObject => scriptable_object(name, rng, referable),
        Kind::Document => format!("{name}\n"),
        Kind::Texture | Kind::Sprite | Kind::Model | Kind::Audio => String::new(),
    }
}

/// A C# class name from a file stem (Korean and dashes are not identifiers).
fn class_name(stem: &str) -> String {
    let name: String = stem.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => name,
        _ => format!("Behaviour{name}"),
    }
}

fn material(name: &str, rng: &mut Rng, referable: &Referable) -> String {
    let shader = match any(rng, &referable.shaders) {
        Some(guid) if rng.percent(30) => format!("{{fileID: 4800000, guid: {guid}, type: 3}}"),
        _ => format!("{{fileID: 46, guid: {BUILTIN_GUID}, type: 0}}"),
    };
    let mut text = format!(
        "{YAML_HEADER}--- !u!21 &2100000\nMaterial:\n  serializedVersion: 6\n  m_Name: {name}\n  m_Shader: {shader}\n  \
         m_ShaderKeywords: _NORMALMAP\n  m_SavedProperties:\n    serializedVersion: 3\n    m_TexEnvs:\n"
    );
    for slot in ["_MainTex", "_BumpMap", "_MetallicGlossMap"] {
        let texture = match any(rng, &referable.textures) {
            Some(guid) if rng.percent(60) => format!("{{fileID: 2800000, guid: {guid}, type: 3}}"),
            _ => "{fileID: 0}".to_owned(),
        };
        let _ = write!(
            text,
            "    - {slot}:\n        m_Texture: {texture}\n        m_Scale: {{x: 1, y: 1}}\n        m_Offset: {{x: 0, y: 0}}\n"
        );
    }
    text.push_str("    m_Floats:\n    - _Glossiness: 0.5\n    - _Metallic: 0\n    m_Colors:\n    - _Color: {r: 1, g: 1, b: 1, a: 1}\n");
    text
}

/// A MonoBehaviour's `m_Script`: an earlier script, or (one in fifty) a
/// guid no script of the project has, as a deleted script leaves behind.
fn script_reference(rng: &mut Rng, referable: &Referable) -> Option<String> {
    if rng.percent(2) {
        return Some(rng.guid());
    }
    (!referable.scripts.is_empty()).then(|| referable.scripts[rng.below(referable.scripts.len())].0.clone())
}

fn prefab(name: &str, rng: &mut Rng, referable: &Referable) -> String {
    // One prefab in ten is a variant of an earlier one.
    if let Some(parent) = any(rng, &referable.prefabs).filter(|_| rng.percent(10)) {
        return format!(
            "{YAML_HEADER}--- !u!1001 &100100000\nPrefabInstance:\n  m_ObjectHideFlags: 0\n  serializedVersion: 2\n  \
             m_Modification:\n    m_TransformParent: {{fileID: 0}}\n    m_Modifications:\n    - target: {{fileID: 1, guid: {parent}, type: 3}}\n      \
             propertyPath: m_Name\n      value: {name}\n      objectReference: {{fileID: 0}}\n    m_RemovedComponents: []\n  \
             m_SourcePrefab: {{fileID: 100100000, guid: {parent}, type: 3}}\n"
        );
    }
    let mut text = String::from(YAML_HEADER);
    let children = 1 + rng.below(3);
    let mut id = 1000u64;
    for child in 0..children {
        let object_name = if child == 0 {
            name.to_owned()
        } else {
            format!("{name}_Part{child}")
        };
        let (go, transform, renderer, filter, behaviour) = (id, id + 1, id + 2, id + 3, id + 4);
        id += 10;
        let _ = write!(
            text,
            "--- !u!1 &{go}\nGameObject:\n  m_ObjectHideFlags: 0\n  serializedVersion: 6\n  m_Component:\n  \
             - component: {{fileID: {transform}}}\n  - component: {{fileID: {filter}}}\n  - component: {{fileID: {renderer}}}\n  \
             - component: {{fileID: {behaviour}}}\n  m_Layer: 0\n  m_Name: {object_name}\n  m_TagString: Untagged\n  m_IsActive: 1\n\
             --- !u!4 &{transform}\nTransform:\n  m_GameObject: {{fileID: {go}}}\n  m_LocalPosition: {{x: 0, y: 0, z: 0}}\n  \
             m_Children: []\n  m_Father: {{fileID: {}}}\n",
            if child == 0 { 0 } else { 1001 }
        );
        let mesh = any(rng, &referable.meshes).map_or_else(
            || format!("{{fileID: 10202, guid: {BUILTIN_GUID}, type: 0}}"),
            |g| format!("{{fileID: 4300000, guid: {g}, type: 3}}"),
        );
        let _ = write!(
            text,
            "--- !u!33 &{filter}\nMeshFilter:\n  m_GameObject: {{fileID: {go}}}\n  m_Mesh: {mesh}\n\
             --- !u!23 &{renderer}\nMeshRenderer:\n  m_GameObject: {{fileID: {go}}}\n  m_Enabled: 1\n  m_Materials:\n"
        );
        match any(rng, &referable.materials) {
            Some(material) => {
                let _ = writeln!(text, "  - {{fileID: 2100000, guid: {material}, type: 2}}");
            }
            None => text.push_str("  - {fileID: 10303, guid: 0000000000000000f000000000000000, type: 0}\n"),
        }
        if let Some(script) = script_reference(rng, referable) {
            let _ = write!(
                text,
                "--- !u!114 &{behaviour}\nMonoBehaviour:\n  m_GameObject: {{fileID: {go}}}\n  m_Enabled: 1\n  \
                 m_Script: {{fileID: 11500000, guid: {script}, type: 3}}\n  m_Name: \n  speed: {}\n",
                rng.below(10)
            );
        }
    }
    // One prefab in five nests an earlier prefab.
    if let Some(nested) = any(rng, &referable.prefabs).filter(|_| rng.percent(20)) {
        let _ = write!(
            text,
            "--- !u!1001 &{id}\nPrefabInstance:\n  m_Modification:\n    m_TransformParent: {{fileID: 1001}}\n    \
             m_Modifications: []\n  m_SourcePrefab: {{fileID: 100100000, guid: {nested}, type: 3}}\n"
        );
    }
    text
}

fn scene(rng: &mut Rng, referable: &Referable) -> String {
    let mut text = format!(
        "{YAML_HEADER}--- !u!29 &1\nOcclusionCullingSettings:\n  m_ObjectHideFlags: 0\n  serializedVersion: 2\n\
         --- !u!104 &2\nRenderSettings:\n  m_Fog: 0\n  m_SkyboxMaterial: {{fileID: 10304, guid: {BUILTIN_GUID}, type: 0}}\n"
    );
    let mut id = 100u64;
    for _ in 0..(3 + rng.below(20)) {
        if let Some(prefab) = any(rng, &referable.prefabs) {
            let _ = write!(
                text,
                "--- !u!1001 &{id}\nPrefabInstance:\n  m_Modification:\n    m_TransformParent: {{fileID: 0}}\n    \
                 m_Modifications: []\n  m_SourcePrefab: {{fileID: 100100000, guid: {prefab}, type: 3}}\n"
            );
        }
        id += 1;
    }
    if let Some(script) = script_reference(rng, referable) {
        let _ = write!(
            text,
            "--- !u!1 &{id}\nGameObject:\n  m_Component:\n  - component: {{fileID: {}}}\n  m_Name: GameManager\n\
             --- !u!114 &{}\nMonoBehaviour:\n  m_GameObject: {{fileID: {id}}}\n  m_Script: {{fileID: 11500000, guid: {script}, type: 3}}\n",
            id + 1,
            id + 1
        );
    }
    text
}

fn animator(name: &str, rng: &mut Rng, referable: &Referable) -> String {
    let mut text = format!(
        "{YAML_HEADER}--- !u!91 &9100000\nAnimatorController:\n  m_Name: {name}\n  serializedVersion: 5\n  m_AnimatorLayers:\n  \
         - serializedVersion: 5\n    m_Name: Base Layer\n    m_StateMachine: {{fileID: 1107000}}\n"
    );
    for (n, state) in ["Idle", "Walk", "Run", "Attack"]
        .iter()
        .enumerate()
        .take(1 + rng.below(4))
    {
        let motion = any(rng, &referable.clips).map_or_else(
            || "{fileID: 0}".to_owned(),
            |g| format!("{{fileID: 7400000, guid: {g}, type: 2}}"),
        );
        let _ = write!(
            text,
            "--- !u!1102 &{}\nAnimatorState:\n  m_Name: {state}\n  m_Speed: 1\n  m_Motion: {motion}\n",
            1102000 + n
        );
    }
    text
}

fn scriptable_object(name: &str, rng: &mut Rng, referable: &Referable) -> String {
    let script = script_reference(rng, referable).unwrap_or_else(|| BUILTIN_GUID.to_owned());
    format!(
        "{YAML_HEADER}--- !u!114 &11400000\nMonoBehaviour:\n  m_ObjectHideFlags: 0\n  m_GameObject: {{fileID: 0}}\n  \
         m_Enabled: 1\n  m_Script: {{fileID: 11500000, guid: {script}, type: 3}}\n  m_Name: {name}\n  m_EditorClassIdentifier: \n  \
         value: {}\n",
        rng.below(100)
    )
}

/// A `.meta` with the importer Unity writes for the kind (and, one in
/// fifty, asset labels).
fn meta(kind: Kind, extension: &str, guid: &str, rng: &mut Rng) -> String {
    let mut text = format!("fileFormatVersion: 2\nguid: {guid}\n");
    if rng.percent(2) {
        text.push_str(
            [
                "labels:\n- Environment\n",
                "labels:\n- Character\n",
                "labels:\n- UI\n- Icon\n",
            ][rng.below(3)],
        );
    }
    text.push_str(match kind {
        Kind::Texture => "TextureImporter:\n  serializedVersion: 12\n  mipmaps:\n    enableMipMap: 1\n  textureType: 0\n  spriteMode: 0\n  alphaIsTransparency: 0\n",
        Kind::Sprite => "TextureImporter:\n  serializedVersion: 12\n  mipmaps:\n    enableMipMap: 0\n  textureType: 8\n  spriteMode: 1\n  alphaIsTransparency: 1\n",
        Kind::Model => "ModelImporter:\n  serializedVersion: 22200\n  animationType: 2\n  importAnimation: 1\n  meshes:\n    globalScale: 1\n",
        Kind::Audio => "AudioImporter:\n  serializedVersion: 7\n  defaultSettings:\n    loadType: 0\n    compressionFormat: 1\n  forceToMono: 0\n",
        Kind::Script => "MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  executionOrder: 0\n  icon: {instanceID: 0}\n",
        Kind::Shader => "ShaderImporter:\n  externalObjects: {}\n  defaultTextures: []\n",
        Kind::Material => "NativeFormatImporter:\n  externalObjects: {}\n  mainObjectFileID: 2100000\n",
        Kind::Prefab => "PrefabImporter:\n  externalObjects: {}\n",
        Kind::Scene => "DefaultImporter:\n  externalObjects: {}\n",
        Kind::AnimationClip => "NativeFormatImporter:\n  externalObjects: {}\n  mainObjectFileID: 7400000\n",
        Kind::Animator => "NativeFormatImporter:\n  externalObjects: {}\n  mainObjectFileID: 9100000\n",
        Kind::ScriptableObject => "NativeFormatImporter:\n  externalObjects: {}\n  mainObjectFileID: 11400000\n",
        Kind::Document if extension == "json" => "TextScriptImporter:\n  externalObjects: {}\n",
        Kind::Document => "TextScriptImporter:\n  externalObjects: {}\n  userData: \n",
    });
    text
}
