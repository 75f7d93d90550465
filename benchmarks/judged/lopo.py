#!/usr/bin/env python3
"""Leave-one-project-out over settings compared with evaluate.py.

Each argument is `LABEL=FILE.json`, FILE the --json output of one evaluate.py run with one
setting (--config). For every project, the setting is chosen on the *other* projects and the
project is scored with it: the honest figure for a project the choice never saw, printed beside
the in-sample figure (the one setting best over all projects). A setting is chosen by accuracy
over every query, a no-answer control counting as right when nothing reached confirm: recall
bought by answering controls is no gain.

Usage: lopo.py 'min_similarity 0.60=/tmp/a.json' 'min_similarity 0.70=/tmp/b.json' ...
"""
import json
import sys


def main():
    runs = {}
    for arg in sys.argv[1:]:
        label, path = arg.rsplit("=", 1)
        runs[label] = {r["project"]: r for r in json.load(open(path))}
    projects = sorted(set.intersection(*(set(r) for r in runs.values())))

    def mean(label, keep, key="recall_at_3"):
        return sum(runs[label][p][key] or 0 for p in keep) / len(keep)

    def accuracy(label, keep):
        right = total = 0
        for p in keep:
            r = runs[label][p]
            passed, controls = map(int, r["controls"].split("/"))
            right += r["recall_at_3"] * r["n"] + passed
            total += r["n"] + controls
        return right / total

    def best(keep):
        return max(runs, key=lambda l: (accuracy(l, keep), mean(l, keep, "mrr")))

    overall = best(projects)
    print(f"in-sample choice: {overall}")
    print(f"{'project':<20} {'LOPO choice':<28} {'R@3':>6} {'MRR':>6} {'ko':>6} {'controls':>8}   in-sample R@3")
    held = []
    for p in projects:
        choice = best([q for q in projects if q != p])
        r = runs[choice][p]
        held.append(r)
        print(f"{p:<20} {choice:<28} {r['recall_at_3']:>6.3f} {r['mrr']:>6.3f} {r['ko'] or 0:>6.3f} "
              f"{r['controls']:>8}   {runs[overall][p]['recall_at_3']:.3f}")
    n = len(held)
    passed = sum(int(r["controls"].split("/")[0]) for r in held)
    controls = sum(int(r["controls"].split("/")[1]) for r in held)
    print(f"{'mean':<20} {'':<28} {sum(r['recall_at_3'] for r in held) / n:>6.3f} "
          f"{sum(r['mrr'] for r in held) / n:>6.3f} {sum(r['ko'] or 0 for r in held) / n:>6.3f} "
          f"{f'{passed}/{controls}':>8}   {mean(overall, projects):.3f}")


if __name__ == "__main__":
    main()
