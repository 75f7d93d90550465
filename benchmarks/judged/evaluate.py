#!/usr/bin/env python3
"""Score search on the judged corpus: every project of benchmarks/corpora/projects.yml that
has a query set here (NAME.yml, written blind from the project's file listing).

For each project: unpack its archive (built by benchmarks/corpora/reduce.py, never committed),
index it, run `eval NAME.yml --json` and `eval --name-lookup N --json`, and print one table:
Recall@3 / MRR overall, Korean, English, controls passed, shown-not-confirmed, name lookup.

Usage: evaluate.py --bin target/perf/unity-assets [--archives DIR] [--work DIR]
                   [--projects a,b] [--name-lookup 30] [--model-cache DIR] [--json OUT]
                   [--config YAML]

--config: the text of a `.claude/unity-assets.yml` written into every project first (params to
compare, e.g. "search: {semantic: {words: {min_similarity: 0.7}}}"); without it, the defaults.

--model-cache: an XDG_CACHE_HOME holding an installed encoder (`unity-assets model install`);
without it search runs on words alone.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(binary, project, args, cache):
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=cache, UNITY_ASSETS_TRUST="1")
    env.pop("UNITY_ASSETS_PROVIDER", None)
    out = subprocess.run([binary, "--project", project] + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} on {project} exited {out.returncode}:\n{out.stderr[-2000:]}")
    return out.stdout


def unpacked(archive, work, name):
    root = os.path.join(work, name)
    if not os.path.isdir(os.path.join(root, name)):
        os.makedirs(root, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(root, filter="data")
    return os.path.join(root, name)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--archives", default="/work/judged-corpora")
    p.add_argument("--work", default="/tmp/judged-work")
    p.add_argument("--projects", default="")
    p.add_argument("--name-lookup", type=int, default=30)
    p.add_argument("--model-cache", default="")
    p.add_argument("--json", default="")
    p.add_argument("--config", default="")
    p.add_argument("--features", default="", help="a folder: write each project's fusion pool there (NAME.jsonl)")
    p.add_argument("--weights", default="", help="a folder of NAME.yml scorer weights, each put in its project's "
                   ".claude/unity-assets/data/search-weights.yml (leave-one-project-out: train.py --lopo)")
    a = p.parse_args()
    binary = os.path.abspath(a.bin)
    manifest = yaml.safe_load(open(os.path.join(ROOT, "benchmarks/corpora/projects.yml")))
    wanted = set(filter(None, a.projects.split(",")))
    cache = a.model_cache or os.path.join(a.work, ".no-model-cache")
    rows = []
    for project in manifest["projects"]:
        name = project["name"]
        queries = os.path.join(HERE, f"{name}.yml")
        archive = os.path.join(a.archives, f"{name}.tar.gz")
        if (wanted and name not in wanted) or not os.path.exists(queries):
            continue
        if not os.path.exists(archive):
            print(f"skipped {name}: no archive at {archive} (benchmarks/corpora/reduce.py builds it)", file=sys.stderr)
            continue
        root = unpacked(archive, a.work, name)
        config = os.path.join(root, ".claude", "unity-assets.yml")
        os.makedirs(os.path.dirname(config), exist_ok=True)
        with open(config, "w") as f:
            f.write(a.config)
        weights = os.path.join(root, ".claude", "unity-assets", "data", "search-weights.yml")
        if os.path.exists(weights):
            os.remove(weights)
        if a.weights:
            os.makedirs(os.path.dirname(weights), exist_ok=True)
            shutil.copy(os.path.join(a.weights, f"{name}.yml"), weights)
        run(binary, root, ["index"], cache)
        features = ["--features", os.path.join(os.path.abspath(a.features), f"{name}.jsonl")] if a.features else []
        if a.features:
            os.makedirs(a.features, exist_ok=True)
        report = json.loads(run(binary, root, ["eval", queries, "--json"] + features, cache))
        lookup = json.loads(run(binary, root, ["eval", "--name-lookup", str(a.name_lookup), "--json"], cache))
        cat = report.get("by_category", {})
        controls = report.get("controls") or {}
        rows.append({
            "project": name,
            "n": report["overall"]["queries"],
            "recall_at_3": report["overall"]["recall_at_3"],
            "mrr": report["overall"]["mrr"],
            "ko": cat.get("ko", {}).get("recall_at_3"),
            "en": cat.get("en", {}).get("recall_at_3"),
            "controls": f"{controls.get('passed', 0)}/{controls.get('total', 0)}",
            "shown_not_confirmed": report.get("shown_not_confirmed", 0),
            "by_kind": {k: v["recall_at_3"] for k, v in report.get("by_kind", {}).items()},
            "name_ext": lookup["with_extension"]["rate"],
            "name_stem": lookup["without_extension"]["rate"],
            "misses": [o["query"] for o in report["outcomes"] if not o["hit"]],
        })
        r = rows[-1]
        print(f"{name:<20} n={r['n']:<3} R@3 {r['recall_at_3']:.3f} MRR {r['mrr']:.3f} "
              f"ko {r['ko'] or 0:.3f} en {r['en'] or 0:.3f} controls {r['controls']} "
              f"shown {r['shown_not_confirmed']} name {r['name_ext']:.2f}/{r['name_stem']:.2f}", flush=True)
    if rows:
        mean = lambda k: sum(r[k] or 0 for r in rows) / len(rows)
        print(f"{'mean':<20} R@3 {mean('recall_at_3'):.3f} MRR {mean('mrr'):.3f} ko {mean('ko'):.3f} "
              f"en {mean('en'):.3f} name {mean('name_ext'):.3f}/{mean('name_stem'):.3f}")
        kinds = sorted({k for r in rows for k in r["by_kind"]})
        print("by kind: " + "  ".join(
            f"{k} {sum(r['by_kind'].get(k, 0) for r in rows) / len(rows):.3f}" for k in kinds))
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
