#!/usr/bin/env python3
"""Write benchmarks/queries/{fpssample,danmokou,bossroom}.yml from the specs below.

Each query was written, with the pattern naming its accepted answers, from the
project's file listing before the ranker was run on it. The pattern (a regular
expression over the asset path, searched case-insensitively) is expanded here
against the unpacked project so the YAML lists explicit paths. `None` marks a
no-answer control (`accepted: []`): the project has nothing of the kind, so the
top result must stay under the confirm threshold (0.40).

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


def main():
    corpora = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    for name, specs in SPECS.items():
        project = os.path.join(corpora, name, name)
        paths = asset_paths(project)
        lines = [
            f"# Dev query set for the {name} corpus (../shared/corpora/{name}.tar.gz).",
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
        with open(os.path.join(here, f"{name}.yml"), "w") as f:
            f.write("\n".join(lines) + "\n")
        n = len(specs)
        ko = sum(1 for s in specs if s[0] == "ko")
        controls = sum(1 for s in specs if s[2] is None)
        print(f"{name}: {n} queries, {ko} Korean, {controls} controls")


main()
