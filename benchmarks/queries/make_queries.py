#!/usr/bin/env python3
"""Write benchmarks/queries/{fpssample,danmokou,bossroom}.yml and the NAME-meaning.yml sets from the specs below.

Each query was written, with the pattern naming its accepted answers, from the
project's file listing before the ranker was run on it. The pattern (a regular
expression over the asset path, searched case-insensitively) is expanded here
against the unpacked project so the YAML lists explicit paths. `None` marks a
no-answer control (`accepted: []`): the project has nothing of the kind, so the
top result must stay under the confirm threshold (0.40).

The `-meaning` sets (issue 23) hold the queries a closed vocabulary misses: English sentences with a
post-modifier ("door that opens when ..."), names only meaning connects (a character named for who
she is, an enemy for what it does) and everyday words outside data/aliases.yml and data/lexicon.
They are reported apart from the dev sets.

Usage: make_queries.py CORPORA_DIR   (holding fpssample/, danmokou/, bossroom/
unpacked from ../shared/corpora, each with the project one level down).
"""
import os
import re
import sys

PLACE = r"\.(prefab|fbx|obj)$"
AUDIO = r"\.(wav|ogg|mp3|aif|aiff)$"
IMG = r"\.(png|jpg|tga|psd)$"

SPECS = {
    "fpssample": [
        ("en", "sci-fi barrel", r"/Barrel_Scifi_A[^/]*" + PLACE),
        ("en", "crate", r"/Crate_Scifi_A[^/]*" + PLACE),
        ("en", "boulder rock", r"/Rock_Boulder_[A-D]" + PLACE),
        ("en", "ceiling lamp", r"/Lamp_Ceiling_Scifi_A[^/]*" + PLACE),
        ("en", "crashed spaceship", r"/(Spaceship_A_Crashed|SpaceShip_Terraformers_Pod_A_Broken)" + PLACE),
        ("en", "sand dune", r"/Sand_Dune_[^/]*" + PLACE),
        ("en", "robot footstep sound", r"/Robot_footstep[^/]*" + AUDIO),
        ("en", "title screen music", r"TitleScreenMusic" + AUDIO),
        ("en", "pipe valve", r"/Pipe_D\d+_A_Valve_[AB]" + PLACE),
        ("en", "lava material", r"/Lava[^/]*\.mat$"),
        ("en", "ventilation fan", r"/(Ventilation_[^/]*Fan[^/]*|Vent_Scifi_A_Fan)" + PLACE),
        ("en", "grenade explosion sound", r"/GirlWeaponGrenade(ExplodeV2|Impact01)" + AUDIO),
        ("en", "alien grass", r"/Grass_Alien_[A-E]" + PLACE),
        ("en", "industrial tank", r"/Tank_Industrial_Scifi_[A-C]" + PLACE),
        ("en", "stalactite", r"/Stalactite[^/]*" + PLACE),
        ("ko", "공상과학 드럼통", r"/Barrel_Scifi_A[^/]*" + PLACE),
        ("ko", "상자 프리팹", r"/Crate_Scifi_A[^/]*\.prefab$"),
        ("ko", "큰 바위", r"/(Rock_Boulder_[A-D]|Rock_Billboard_Big_[A-C])" + PLACE),
        ("ko", "천장에 다는 조명", r"/Lamp_Ceiling_Scifi_A[^/]*" + PLACE),
        ("ko", "추락한 우주선", r"/(Spaceship_A_Crashed|SpaceShip_Terraformers_Pod_A_Broken)" + PLACE),
        ("ko", "모래 언덕", r"/Sand_Dune_[^/]*" + PLACE),
        ("ko", "로봇 발소리", r"/Robot_footstep[^/]*" + AUDIO),
        ("ko", "타이틀 화면 배경음악", r"TitleScreenMusic" + AUDIO),
        ("ko", "파이프 밸브", r"/Pipe_D\d+_A_Valve_[AB]" + PLACE),
        ("ko", "용암 머티리얼", r"/Lava[^/]*\.mat$"),
        ("ko", "환풍기 팬", r"/(Ventilation_[^/]*Fan[^/]*|Vent_Scifi_A_Fan)" + PLACE),
        ("ko", "폭발하는 드럼통 소리", r"/BarrelExplode01" + AUDIO),
        ("ko", "외계 풀", r"/Grass_Alien_[A-E]" + PLACE),
        ("ko", "엘리베이터", r"/(Elevator_Industrial_Scifi_A[^/]*|ElevatorMover)" + PLACE),
        ("ko", "제트팩 소리", r"/GirlJetPack01" + AUDIO),
        ("ko", "녹슨 데칼", r"/Decal_Rust_[A-C]" + PLACE),
        ("ko", "가로등", r"/Lamp_Post_Medium_Scifi_A[^/]*" + PLACE),
        ("ko", "굴뚝", r"/Smokestack_Industrial_Scifi_[AB]" + PLACE),
        ("ko", "거대한 굴착기", r"/Giant_Digger_A[^/]*" + PLACE),
        ("ko", "소행성", r"/Asteroid_[^/]*" + PLACE),
        ("ko", "유리 재질", r"Glass[^/]*\.mat$"),
        ("ko", "계단", r"/Stairs_400x\d00_A" + PLACE),
        ("ko", "총 쏘는 소리", r"/(Robot_gunfire[^/]*|GirlWeaponFire[^/]*|RobotGunVariation[^/]*)" + AUDIO),
        ("ko", "좀비 적 캐릭터", None),
        ("ko", "말 타는 기사", None),
        ("en", "dragon roaring sound", None),
        ("ko", "벚꽃 나무", None),
        ("en", "pirate ship cannon", None),
    ],
    "danmokou": [
        ("en", "fireball bullet", r"/Bullets/small/fireball\.prefab$"),
        ("en", "crow enemy", r"/Summons/Enemy/i?crow\.prefab$"),
        ("en", "fairy enemy", r"/Summons/Enemy/[^/]*fairy[^/]*\.prefab$"),
        ("en", "forest background", r"/(ForestBG\.prefab|forest bg\.prefab|BGMAT Forest \d\.mat)$"),
        ("en", "snow background", r"/Snow[^/]*BG\.prefab$"),
        ("en", "explosion effect", r"/Effects/Particle/(Explode Effect|_Explode Fire|_Explode Sparks)\.prefab$"),
        ("en", "smoke particle texture", r"/Particle samples/[^/]*/smoke_\d+\.png$"),
        ("en", "chess king icon", r"/chess_king\.png$"),
        ("en", "crosshair", r"/crosshairs/crosshair\d+\.jpg$"),
        ("en", "laser sound", r"/(laser1\.ogg|laser fire 01\.wav|laser on 01\.wav|Laser Fired 01\.asset|Laser On 01\.asset)$"),
        ("en", "power up item", r"/Prefab/Items/(Power|Powerup [^/]*|FullPower)\.prefab$"),
        ("en", "trash can icon", r"/trashcan(Open)?\.png$"),
        ("en", "dice", r"/GameIcons/dice[^/]*\.png$"),
        ("en", "boss explosion sound", r"/(Boss Explode\.asset|bossdeath\.ogg)$"),
        ("en", "campfire icon", r"/campfire\.png$"),
        ("ko", "불덩이 탄환", r"/Bullets/small/fireball\.prefab$"),
        ("ko", "까마귀 적", r"/Summons/Enemy/i?crow\.prefab$"),
        ("ko", "요정 적 프리팹", r"/Summons/Enemy/[^/]*fairy[^/]*\.prefab$"),
        ("ko", "숲 배경", r"/(ForestBG\.prefab|forest bg\.prefab|BGMAT Forest \d\.mat)$"),
        ("ko", "눈 내리는 배경", r"/Snow[^/]*BG\.prefab$"),
        ("ko", "폭발 이펙트", r"/Effects/Particle/(Explode Effect|_Explode Fire|_Explode Sparks)\.prefab$"),
        ("ko", "연기 파티클 텍스처", r"/Particle samples/[^/]*/smoke_\d+\.png$"),
        ("ko", "체스 킹 아이콘", r"/chess_king\.png$"),
        ("ko", "조준점 이미지", r"/crosshairs/crosshair\d+\.jpg$"),
        ("ko", "레이저 효과음", r"/(laser1\.ogg|laser fire 01\.wav|laser on 01\.wav|Laser Fired 01\.asset|Laser On 01\.asset)$"),
        ("ko", "파워업 아이템", r"/Prefab/Items/(Power|Powerup [^/]*|FullPower)\.prefab$"),
        ("ko", "휴지통 아이콘", r"/trashcan(Open)?\.png$"),
        ("ko", "주사위 아이콘", r"/GameIcons/dice[^/]*\.png$"),
        ("ko", "보스 폭발 소리", r"/(Boss Explode\.asset|bossdeath\.ogg)$"),
        ("ko", "모닥불 아이콘", r"/campfire\.png$"),
        ("ko", "왕관", r"/crown_[ab]\.png$"),
        ("ko", "잠긴 자물쇠 아이콘", r"/(lock_closed|locked)\.png$"),
        ("ko", "폭포 배경", r"/WaterfallBG\.prefab$"),
        ("ko", "호수 배경", r"/LakeBG\.prefab$"),
        ("ko", "방패 아이콘", r"/GameIcons/(shield|dice_shield)\.png$"),
        ("ko", "불꽃 텍스처", r"/Particle samples/[^/]*/(flame|fire)_\d+\.png$"),
        ("ko", "카운트다운 소리", r"/Countdown \d\.asset$"),
        ("ko", "우주선 격납고", None),
        ("en", "zombie walking animation", None),
        ("ko", "자동차 엔진 소리", None),
        ("ko", "기관총 총기 모델", None),
    ],
    "bossroom": [
        ("en", "treasure chest", r"/env_treasure_chest_ani\.prefab$"),
        ("en", "torch", r"/env_torch2?\.prefab$"),
        ("en", "breakable pot", r"/(BreakablePot|env_pot_break_parent|PrebrokenPot)\.prefab$"),
        ("en", "lava floor", r"/(ScrollingLava|env_lava)\.prefab$"),
        ("en", "spider web", r"/env_spiderweb_1\.prefab$"),
        ("en", "imp enemy", r"/Character/(Imp|VandalImp|ImpBoss)\.prefab$"),
        ("en", "boss battle music", r"/Boss_Room_Battle_Loop\.ogg$"),
        ("en", "water dripping sound", r"/P2 Water dripping\.wav$"),
        ("en", "health bar UI", r"/(UIHealth\.prefab|ui_healthbar(_bg)?\.png)$"),
        ("en", "floor switch", r"/(InteractiveFloorSwitch|env_floor_switch_[a-z]+)\.prefab$"),
        ("en", "loading screen", r"/(LoadingScreen|LoadingSpinner)\.prefab$"),
        ("en", "archer arrow", r"/(Arrow|ChargedArrow\d|FX_arrow|fx_ArrowGraphics)\.prefab$"),
        ("en", "crystal break sound", r"/Environment Crystal_break\.wav$"),
        ("en", "door", r"/(env_Door|InteractiveBossDoor|env_door_boss_[a-z]+|env_spawn_door)\.prefab$"),
        ("en", "pillar", r"/(env_pillar2?|env_pillar2_break_parent|BreakablePillar)\.prefab$"),
        ("ko", "보물 상자", r"/env_treasure_chest_ani\.prefab$"),
        ("ko", "횃불", r"/env_torch2?\.prefab$"),
        ("ko", "깨지는 항아리", r"/(BreakablePot|env_pot_break_parent|PrebrokenPot)\.prefab$"),
        ("ko", "용암 바닥", r"/(ScrollingLava|env_lava)\.prefab$"),
        ("ko", "거미줄", r"/env_spiderweb_1\.prefab$"),
        ("ko", "임프 적 캐릭터", r"/Character/(Imp|VandalImp|ImpBoss)\.prefab$"),
        ("ko", "보스 전투 음악", r"/Boss_Room_Battle_Loop\.ogg$"),
        ("ko", "물 떨어지는 소리", r"/P2 Water dripping\.wav$"),
        ("ko", "체력바 UI", r"/(UIHealth\.prefab|ui_healthbar(_bg)?\.png)$"),
        ("ko", "바닥 스위치", r"/(InteractiveFloorSwitch|env_floor_switch_[a-z]+)\.prefab$"),
        ("ko", "로딩 화면", r"/(LoadingScreen|LoadingSpinner)\.prefab$"),
        ("ko", "궁수 화살", r"/(Arrow|ChargedArrow\d|FX_arrow|fx_ArrowGraphics)\.prefab$"),
        ("ko", "수정 깨지는 소리", r"/Environment Crystal_break\.wav$"),
        ("ko", "보스 방 문", r"/(InteractiveBossDoor|env_door_boss_[a-z]+)\.prefab$"),
        ("ko", "부서지는 기둥", r"/(BreakablePillar|env_pillar2_break_parent)\.prefab$"),
        ("ko", "얼음 이펙트", r"/FX_Ice_[A-Za-z]+\.prefab$"),
        ("ko", "상자 여는 소리", r"/Treasure Chest_open\.wav$"),
        ("ko", "깃발", r"/env_banner\.prefab$"),
        ("ko", "메인 메뉴 화면", r"/MainMenu UI Canvas\.prefab$"),
        ("ko", "돌멩이", r"/(env_pebbles|env_rock)\.prefab$"),
        ("ko", "설정 창", r"/SettingsPanelCanvas\.prefab$"),
        ("ko", "보스 쓰러지는 소리", r"/Boss/defeat(_loop)?_a\.wav$"),
        ("ko", "우주선", None),
        ("en", "zombie horde", None),
        ("ko", "자동차 경적 소리", None),
        ("ko", "눈 덮인 소나무", None),
        ("en", "sniper rifle", None),
    ],
}

MEANING_SPECS = {
    "fpssample": [
        ("en", "door that opens when the player has the key", r"/(Spawn_ForceField_)?Door_\d+x\d+(_[A-Z])?" + PLACE),
        ("en", "crate to hide the player behind", r"/Crate_Scifi_A[^/]*" + PLACE),
        ("en", "lamp mounted on the wall of a corridor", r"/Lamp_Wall_[^/]*" + PLACE),
        ("en", "machine that digs tunnels", r"/Tunne[lL]_Digger[^/]*" + PLACE),
        ("ko", "플레이어가 열쇠를 가지고 있으면 열리는 문", r"/(Spawn_ForceField_)?Door_\d+x\d+(_[A-Z])?" + PLACE),
        ("ko", "엄폐물로 쓸 상자", r"/Crate_Scifi_A[^/]*" + PLACE),
        ("ko", "여자 주인공 발소리", r"/GirlFootstepsV2[^/]*" + AUDIO),
        ("ko", "재장전 소리", r"/GirlWeaponReload[^/]*" + AUDIO),
        ("ko", "높은 곳에서 착지하는 소리", r"/GirlLand(Large|Small)[^/]*" + AUDIO),
        ("ko", "점령 지점", r"/Capture[pP]oint[^/]*" + PLACE),
        ("ko", "무너지는 건물 벽", r"/Building_[AB]_Wall_Destuction[^/]*" + PLACE),
        ("ko", "우주선 뒤쪽 엔진", r"/Spaceship_Background_A_Engine_Turbine[^/]*" + PLACE),
        ("ko", "쇳물 녹이는 용광로", r"/Factory_Furnace[^/]*" + PLACE),
        ("ko", "외계 행성에 자라는 덩굴 식물", r"/Spaceplant_Liana[^/]*" + PLACE),
        ("ko", "저격수 캐릭터", r"/Terraformer_Sniper[^/]*" + PLACE),
        ("ko", "유니콘 인형", None),
        ("en", "wooden rowing boat on a lake", None),
    ],
    "danmokou": [
        ("en", "bird that flies at the player", r"/Summons/Enemy/i?crow\.prefab$"),
        ("en", "background with falling snow for a dialogue scene", r"/VN/Backgrounds/Snow[^/]*BG\.prefab$"),
        ("en", "bullet shaped like a star", r"/Bullets/(small|large)/star(-large)?\.prefab$"),
        ("en", "effect that plays when an enemy dies", r"/Effects/Particle/Enemy Death[^/]*\.prefab$"),
        ("ko", "무녀 캐릭터", r"/(VN/Characters/Reimu|Players/Player - Reimu)\.prefab$"),
        ("ko", "사과 모양 탄환", r"/Bullets/small/apple\.prefab$"),
        ("ko", "노란 붓꽃", r"/(YellowIris\.prefab|yellowiris\.png)$"),
        ("ko", "백합 꽃", r"/(YellowLily\.prefab|yellowlily\.png)$"),
        ("ko", "목숨 하나 늘려주는 아이템", r"/Prefab/Items/(Life|1Up)\.prefab$"),
        ("ko", "플레이어가 죽을 때 나오는 이펙트", r"/Effects/Particle/Player Death[^/]*\.prefab$"),
        ("ko", "눈사람 소품", r"/(Snowman\.prefab|snowman\.png)$"),
        ("ko", "날아다니는 책 적", r"/Summons/Enemy/book\.prefab$"),
        ("ko", "풍차 모양 가시 장애물", r"/WindmillSpikes\.prefab$"),
        ("ko", "벚꽃잎 탄막", r"/Bullets/small/sakura\.prefab$"),
        ("ko", "책이 가득한 방 배경", r"/LibraryBG\.prefab$"),
        ("ko", "잠수함 어뢰", None),
        ("en", "tractor parked in a barn", None),
    ],
    "bossroom": [
        ("en", "door that opens when the player steps on the switch", r"/(env_Door|InteractiveBossDoor|env_door_boss_[a-z]+|env_spawn_door)\.prefab$"),
        ("en", "pot that the player can pick up and throw", r"/(PickUpPot|BreakablePot|env_pot(_heavy|_break_parent)?|PrebrokenPot)\.prefab$"),
        ("en", "sound of the imp calling for help", r"/mn_imp_call_for_help\.wav$"),
        ("en", "effect for the boss slamming the ground", r"/FX_Boss_Leap_Ground pound\.prefab$"),
        ("ko", "탱커 캐릭터", r"/PlayerGraphics_Tank[^/]*\.prefab$"),
        ("ko", "힐러 스킬 효과음", r"/skill_heal_a\.wav$"),
        ("ko", "얼려버리는 마법 소리", r"/(skill_freeze_a|shared_ice_freeze)\.wav$"),
        ("ko", "쓰러진 동료 부활 이펙트", r"/FX_Revive\.prefab$"),
        ("ko", "기절했을 때 머리 위 이펙트", r"/FX_shared_hero_stunned\.prefab$"),
        ("ko", "궁수 화살통", r"/Gear_LS_Archer_Quiver_(Boy|Girl)\.prefab$"),
        ("ko", "탱커 어깨 보호대", r"/Gear_[LR]S_Tank_ShoulderPad_(Boy|Girl)\.prefab$"),
        ("ko", "적이 계속 나오는 소환 장치", r"/EnemySpawner\.prefab$"),
        ("ko", "보스 이겼을 때 나오는 음악", r"/Boss_Room_Victory\.ogg$"),
        ("ko", "작은 악마 몬스터", r"/Character/(Imp|VandalImp)\.prefab$"),
        ("ko", "바닥에 깔린 쇠창살", r"/env_floor_grate\.prefab$"),
        ("ko", "헬리콥터 프로펠러 소리", None),
        ("en", "skateboard ramp in a city park", None),
    ],
}


def asset_paths(project):
    """Every file under Assets/ with a .meta beside it, as Unity sees it (dot folders skipped)."""
    out = []
    for root, dirs, files in os.walk(os.path.join(project, "Assets")):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if not f.endswith(".meta") and f + ".meta" in files:
                out.append(os.path.relpath(os.path.join(root, f), project).replace(os.sep, "/"))
    return sorted(out)


def quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_set(corpora, name, specs, suffix, title):
    """Expand one corpus's specs against its unpacked project and write benchmarks/queries/NAME{suffix}.yml."""
    here = os.path.dirname(os.path.abspath(__file__))
    project = os.path.join(corpora, name, name)
    paths = asset_paths(project)
    lines = [
        f"# {title} for the {name} corpus (../shared/corpora/{name}.tar.gz).",
        "# Generated by make_queries.py; written before the ranker was run on it.",
        "# category: en | ko | control (accepted: [] = nothing in the project fits).",
        "queries:",
    ]
    for lang, query, pattern in specs:
        category = "control" if pattern is None else lang
        accepted = [] if pattern is None else [p for p in paths if re.search(pattern, p, re.I)]
        if pattern is not None and not accepted:
            sys.exit(f"{name}: {query!r}: pattern {pattern!r} matches nothing")
        lines.append(f"  - query: {quote(query)}")
        lines.append(f"    category: {category}")
        if accepted:
            lines.append("    accepted:")
            lines.extend(f"      - {quote(p)}" for p in accepted)
        else:
            lines.append("    accepted: []")
    with open(os.path.join(here, f"{name}{suffix}.yml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    n = len(specs)
    ko = sum(1 for s in specs if s[0] == "ko")
    controls = sum(1 for s in specs if s[2] is None)
    print(f"{name}{suffix}: {n} queries, {ko} Korean, {controls} controls")


def main():
    corpora = sys.argv[1]
    for name, specs in SPECS.items():
        write_set(corpora, name, specs, "", "Dev query set")
    for name, specs in MEANING_SPECS.items():
        write_set(corpora, name, specs, "-meaning", "Query set by meaning (issue 23)")


main()
