#!/usr/bin/env python3
"""Learn the search scorer's weights (data/search-weights.yml) from judged queries.

Input: the fusion pools `unity-assets eval SET.yml --features FILE.jsonl` writes (evaluate.py
--features DIR writes one per judged project): every candidate the search weighed for a query,
its features (src/search/scorer.rs FEATURES) and whether the judges accepted it.

The model is a logistic regression (Newton's method, L2-regularised, every query weighing the
same however many candidates it pooled), so its output is a probability that a candidate is an
answer: `auto` 0.70 and `confirm` 0.40 read as such. The likelihood weighs every pooled
candidate, most of them far below any shown answer; what a user meets is only the top of each
answer and whether it reaches confirm. So the fit is then refined by coordinate ascent on that
measure itself (the simulation below), pulled toward the likelihood's weights so the scale stays
a probability's wherever the measure does not ask otherwise. With several projects, the weights
written are the mean of the fits each without one project (`shipped_weights`). Plain Python, no
packages: a team retrains on its own judgments with the binary it has.

Usage:
  train.py DIR... --out data/search-weights.yml      # the mean of the leave-one-out fits
  train.py DIR... --lopo OUT                         # OUT/NAME.yml trained without NAME
  train.py DIR... --report                           # simulated in-sample and held-out figures

Each DIR holds one evaluate.py --features run; the shipped weights are trained on two, with the
encoder and without it (the `meaning_on` feature tells them apart), so one file serves both.

The simulation ranks each pool as semantic.fuse does (an exact name first, then probability;
top 3 per group, groups interleaved) and counts a query right when an answer is in the top 3
and the best confidence reaches confirm; a control is right when nothing does. evaluate.py
with --weights measures the real thing.
"""
import argparse
import collections
import glob
import json
import math
import multiprocessing
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The order of src/search/scorer.rs FEATURES (checked against the rows' length).
FEATURES = ["meaning_on", "rule", "rule_gap", "lexical", "lexical_rank", "name_exact", "name_fuzzy", "cosine",
            "cosine_gap", "meaning_rank", "word_cosine", "agree", "coverage", "named",
            "in_file_name", "brevity", "folder_only", "part_only",
            "missing", "unseen", "subject_missing", "subject_unseen", "off_type", "wanted_type", "meaning_alone", "bm25",
            "subject_strength", "loose"]
NAME_EXACT = FEATURES.index("name_exact")
L2 = 1.0
CONFIRM = 0.40
AUTO = 0.70
CAP_BELOW_AUTO = 0.05
SUBJECT_MISSING_CAP = 0.35
# A control weighs three queries: it is a tenth of the judged queries, and a confident answer
# where there is none misleads more than a weak answer where there is one.
CONTROL_WEIGHT = 3.0
# In the measure the ascent climbs, a control kept under confirm is worth six answers found: a
# step that trades one for a few answers of the projects it trains on loses it on unseen ones.
MEASURE_CONTROL_WEIGHT = 6.0
# What leaving the likelihood's weights costs the ascent, in queries per unit squared.
PULL = 5.0
# The moves the ascent tries on one weight at a time.
STEPS = (-1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0)
# Evidence against a candidate: the ascent never makes it count for one (a query word the
# asset lacks cannot raise its probability, whatever a few judged projects reward).
AGAINST = {"missing", "unseen", "subject_missing", "subject_unseen", "off_type", "loose", "folder_only", "part_only"}


def load(folders):
    """Queries by (set, query, folder): their pooled rows."""
    queries = collections.OrderedDict()
    for folder, path in sorted((f, p) for f in folders for p in glob.glob(os.path.join(f, "*.jsonl"))):
        for line in open(path, encoding="utf-8"):
            row = json.loads(line)
            if len(row["features"]) != len(FEATURES):
                sys.exit(f"{path}: {len(row['features'])} features, expected {len(FEATURES)} (a stale dump?)")
            queries.setdefault((row["set"], row["query"], folder), []).append(row)
    return queries


def fit(queries, control_weight=1.0):
    """Weights (bias first) maximising the regularised likelihood, by Newton's method; a
    no-answer control's pool weighs `control_weight` queries."""
    rows = [(r["features"], 1.0 if r["answer"] else 0.0, (control_weight if pool[0]["control"] else 1.0) / len(pool))
            for pool in queries.values() for r in pool]
    d = len(FEATURES) + 1
    w = [0.0] * d
    for _ in range(25):
        grad = [L2 * wi for wi in w]
        grad[0] = 0.0
        hess = [[0.0] * d for _ in range(d)]
        for i in range(1, d):
            hess[i][i] = L2
        for x, y, weight in rows:
            xs = [1.0] + x
            p = sigmoid(sum(a * b for a, b in zip(w, xs)))
            g = (p - y) * weight
            h = p * (1 - p) * weight
            for i in range(d):
                grad[i] += g * xs[i]
                hi = h * xs[i]
                row = hess[i]
                for j in range(i, d):
                    row[j] += hi * xs[j]
        for i in range(d):
            for j in range(i):
                hess[i][j] = hess[j][i]
        step = solve(hess, grad)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-6:
            break
    return w


def solve(a, b):
    """a x = b by Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[pivot] = m[pivot], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def confidence(w, row):
    """As src/semantic/fuse.rs learned_confidence reads the probability."""
    low, high = bounds(row)
    return min(max(sigmoid(w[0] + sum(a * b for a, b in zip(w[1:], row["features"]))), low), high)


def bounds(row):
    """Where learned_confidence's rules hold a candidate's probability, whatever the weights: a
    named asset keeps its rule confidence, an off-type one stays under confirm, one found by
    meaning alone under auto."""
    f = dict(zip(FEATURES, row["features"]))
    if f["name_exact"] or f["name_fuzzy"]:
        return f["rule"], 1.0
    high = SUBJECT_MISSING_CAP if f["off_type"] or f["subject_unseen"] else 1.0
    if f["meaning_alone"] or (not f["lexical"] and f["cosine"]) or f["missing"] >= 0.5:
        high = min(high, AUTO - CAP_BELOW_AUTO)
    return 0.0, high


def simulate(w, pool):
    """(answer in the shown top 3, best confidence) for one query, ranked as semantic.fuse ranks."""
    return shown_top(pool, [confidence(w, row) for row in pool])


def shown_top(pool, confidences):
    """`simulate` for candidates whose confidences are already known."""
    top = shown(pool, confidences)
    return any(row["answer"] for _, row in top[:3]), max((c for c, _ in top), default=0.0)


def shown(pool, confidences):
    """(confidence, row) of the candidates shown, in order: top 3 per group, groups interleaved."""
    groups = collections.defaultdict(list)
    for row, c in zip(pool, confidences):
        groups[row["group"]].append((row["features"][NAME_EXACT], c, row))
    out = []
    ranked = [sorted(g, key=lambda t: (-t[0], -t[1]))[:3] for _, g in sorted(groups.items())]
    for rank in range(3):
        for g in ranked:
            if rank < len(g) and g[rank][2]["guid"] not in [row["guid"] for _, row in out]:
                out.append(g[rank][1:])
    return out


def calibration(w, queries):
    """For the queries whose first shown candidate reaches confirm, and auto: how many there
    are and how many of those firsts are answers (a control's never is)."""
    out = {CONFIRM: [0, 0], AUTO: [0, 0]}
    for pool in queries.values():
        top = shown(pool, [confidence(w, row) for row in pool])
        for threshold, counts in out.items():
            if top and top[0][0] >= threshold:
                counts[0] += 1
                counts[1] += top[0][1]["answer"]
    return out


def right(pool, hit, best):
    """Whether the search answered a query right: an answer shown at confirm or better, or for
    a control, nothing that confident."""
    return best < CONFIRM if pool[0]["control"] else hit and best >= CONFIRM


def ascend(queries, start):
    """`start` refined one weight at a time toward more queries answered right (a control
    counting MEASURE_CONTROL_WEIGHT), less PULL times the squared distance from `start`; a
    weight of AGAINST stays at most zero."""
    pools = list(queries.values())
    # Each candidate's linear score, kept current as the weights move, and its bounds, which
    # the weights never move.
    scores = [[start[0] + sum(a * b for a, b in zip(start[1:], row["features"])) for row in pool]
              for pool in pools]
    limits = [[bounds(row) for row in pool] for pool in pools]

    def inputs(row, i):
        return 1.0 if i == 0 else row["features"][i - 1]

    def worth(p, step, i):
        """What pool p adds to the measure with weight i moved by `step`."""
        pool = pools[p]
        confidences = [min(max(sigmoid(z + step * inputs(row, i)), low), high)
                       for row, z, (low, high) in zip(pool, scores[p], limits[p])]
        hit, best = shown_top(pool, confidences)
        return (MEASURE_CONTROL_WEIGHT if pool[0]["control"] else 1.0) * right(pool, hit, best)

    # A step on weight i changes only the pools where some candidate has feature i.
    touched = [[p for p, pool in enumerate(pools) if any(inputs(row, i) for row in pool)]
               for i in range(len(start))]
    worths = [worth(p, 0.0, 0) for p in range(len(pools))]

    def measure(w, i, step):
        total = sum(worths) + sum(worth(p, step, i) - worths[p] for p in touched[i])
        moved = [wj + (step if j == i else 0.0) for j, wj in enumerate(w)]
        return total - PULL * sum((a - b) ** 2 for a, b in zip(moved, start))

    w = list(start)
    current = measure(w, 0, 0.0)
    for _ in range(3):
        moved = False
        for i in range(len(w)):
            steps = [s for s in STEPS if i == 0 or FEATURES[i - 1] not in AGAINST or w[i] + s <= 0 or s < 0]
            value, step = max(((measure(w, i, s), s) for s in steps), key=lambda t: t[0])
            if value > current + 1e-9:
                current, moved = value, True
                w[i] += step
                for p in touched[i]:
                    scores[p] = [z + step * inputs(row, i) for row, z in zip(pools[p], scores[p])]
                    worths[p] = worth(p, 0.0, i)
        if not moved:
            break
    return w


def train(queries, control_weight):
    """The shipped model: the likelihood fit, then the ascent on the measure."""
    return ascend(queries, fit(queries, control_weight))


def score(w, queries):
    """Per set: [answerable right, answerable, controls right, controls]."""
    out = collections.defaultdict(lambda: [0, 0, 0, 0])
    for (name, _, _), pool in queries.items():
        hit, best = simulate(w, pool)
        s = out[name]
        control = pool[0]["control"]
        s[2 if control else 0] += right(pool, hit, best)
        s[3 if control else 1] += 1
    return out


def write(w, path, trained_on):
    lines = ["# The learned scorer's weights (src/search/scorer.rs): a logistic model of the probability",
             "# that a candidate is what was asked for. Written by benchmarks/judged/train.py; retrain on",
             "# your own judgments with `unity-assets eval SET.yml --features F.jsonl` and train.py.",
             "version: 1", f"trained_on: {json.dumps(trained_on)}", f"bias: {w[0]:.4f}", "weights:"]
    lines += [f"  {name}: {wi:.4f}" for name, wi in zip(FEATURES, w[1:])]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("features", nargs="+", help="folders of eval --features dumps (e.g. one with the encoder, one without)")
    p.add_argument("--out", default="")
    p.add_argument("--lopo", default="")
    p.add_argument("--report", action="store_true")
    p.add_argument("--control-weight", type=float, default=CONTROL_WEIGHT,
                   help="how many queries a no-answer control weighs in the fit (default %(default)s)")
    a = p.parse_args()
    queries = load(a.features)
    sets = sorted({name for name, _, _ in queries})
    described = lambda names: (f"{len(names)} judged projects, {sum(1 for n, _, _ in queries if n in names)} "
                               f"query runs ({len(a.features)} configurations)")
    folds = leave_one_out(queries, sets, a.control_weight) if len(sets) > 1 else {}
    shipped = shipped_weights(queries, folds, a.control_weight)
    if a.out:
        how = f"; the mean of {len(folds)} fits, each without one project" if folds else ""
        write(shipped, a.out, described(sets) + how)
    if a.lopo:
        os.makedirs(a.lopo, exist_ok=True)
        for name, w in folds.items():
            write(w, os.path.join(a.lopo, f"{name}.yml"), described([s for s in sets if s != name]))
    if a.report:
        held, firsts = {}, {CONFIRM: [0, 0], AUTO: [0, 0]}
        for name, w in folds.items():
            mine = {k: v for k, v in queries.items() if k[0] == name}
            held[name] = score(w, mine)[name]
            for threshold, (count, answers) in calibration(w, mine).items():
                firsts[threshold][0] += count
                firsts[threshold][1] += answers
        inside = score(shipped, queries)
        print(f"{'project':<20} {'held-out R@3':>12} {'controls':>9} {'in-sample R@3':>14}")
        for name in folds:
            h, i = held[name], inside[name]
            print(f"{name:<20} {h[0] / max(h[1], 1):>12.3f} {h[2]:>4}/{h[3]:<4} {i[0] / max(i[1], 1):>14.3f}")
        mean = lambda d: sum(d[n][0] / max(d[n][1], 1) for n in folds) / max(len(folds), 1)
        print(f"{'mean':<20} {mean(held):>12.3f} {sum(h[2] for h in held.values()):>4}/"
              f"{sum(h[3] for h in held.values()):<4} {mean(inside):>14.3f}")
        for threshold, (n, hits) in firsts.items():
            print(f"held out, first shown at {threshold:.2f} or more: {hits}/{n} answers ({hits / max(n, 1):.2f})")


def without(queries, name):
    return collections.OrderedDict((k, v) for k, v in queries.items() if k[0] != name)


def fold(args):
    queries, name, control_weight = args
    return train(without(queries, name), control_weight)


def leave_one_out(queries, sets, control_weight):
    """Per project, the fit trained without it; the folds run on every core."""
    with multiprocessing.Pool(min(len(sets), os.cpu_count() or 1)) as workers:
        fits = workers.map(fold, [(queries, name, control_weight) for name in sets])
    return dict(zip(sets, fits))


def shipped_weights(queries, folds, control_weight):
    """The mean of the fits each without one project, when there are several: the ascent moves
    whole steps for a few queries, and one fit on every project kept such steps that cost three
    no-answer controls of the dev sets; the mean keeps what the fits agree on. One project: its fit."""
    if not folds:
        return train(queries, control_weight)
    return [sum(ws) / len(folds) for ws in zip(*folds.values())]


if __name__ == "__main__":
    main()
