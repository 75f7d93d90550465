#!/usr/bin/env python3
"""What one search costs a team paying for model calls, measured through the
binary against a scripted OpenAI-compatible server on 127.0.0.1 that logs
every request (no network, no key).

The scripted model routes as the builtin router did for the same query (read
from a builtin run of the same search), reranks by keeping the rows in the
order it is given them (the lexical retriever's), and finds nothing in
map-reduce chunks and package lists. So the rerank run shows what the
hand-off (compact rows under per-call ids, mapped back to guids) costs and
whether it loses anything: its Recall@3 must equal the builtin's.

Tokens are estimated as characters / 4 of each request's JSON body (the same
rule puts FPSSample's 1.9 MB assets.jsonl at ~478k tokens, close to the
~490k per search the issue measured); a real tokenizer will differ by some
percent, most for Korean.

usage: llm_budget.py BINARY PROJECT [--queries FILE.yml] [--intents] [--exhaustive]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml  # PyYAML

STATE = {"route": None, "log": []}
LOCK = threading.Lock()


def answer(body):
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
    if name == "search-routing":
        return {"multi_category": len(STATE["route"]) > 1, "sub_intents": STATE["route"]}
    if name == "reranked-assets":
        user = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        ids = []
        for line in user.splitlines():
            if line.startswith('{"id":'):
                ids.append(json.loads(line)["id"])
        return {"candidates": [{"id": i, "confidence": 0.8, "reasoning": "In the order given."} for i in ids[:3]]}
    if name == "package-selection":
        return {"groups": []}
    return {"groups": []}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers["content-length"]))
        body = json.loads(raw)
        with LOCK:
            name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
            STATE["log"].append((len(raw.decode("utf-8")), name))
        content = json.dumps(answer(body))
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(raw.decode("utf-8")) // 4, "completion_tokens": len(content) // 4},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def run(binary, project, query, config):
    cfg = os.path.join(project, ".claude", "unity-assets.yml")
    with open(cfg, "w") as f:
        f.write(config)
    out = subprocess.run([binary, "--project", project, "-q", "search", query, "--json"],
                         capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"search {query!r} failed ({out.returncode}): {out.stderr}")


def top3_paths(doc):
    return [c["path"] for g in doc.get("groups", []) for c in g["candidates"][:3]]


def measure(binary, project, queries, url, mode, route_override=None):
    """Per query: (recall hit or None, requests, input chars)."""
    rows = []
    for q in queries:
        builtin = run(binary, project, q["query"], "search: {mode: drill-down}\n")
        route = [{"intent": g["sub_intent"], "category_hint": g.get("category_hint"), "subtype_hint": g.get("subtype_hint")}
                 for g in builtin.get("groups", [])] or [{"intent": q["query"], "category_hint": None, "subtype_hint": None}]
        STATE["route"] = route_override(q) if route_override else route
        with LOCK:
            STATE["log"] = []
        doc = run(binary, project, q["query"], f"llm: {{provider: openai, base_url: \"{url}/v1\"}}\nsearch: {{mode: {mode}}}\n")
        with LOCK:
            sizes = [n for n, _ in STATE["log"]]
            fell_back = any(name == "ranked-assets" for _, name in STATE["log"])
        accepted = set(q.get("accepted") or [])
        hit = None
        base = None
        if accepted:
            hit = bool(accepted & set(top3_paths(doc)))
            base = bool(accepted & set(top3_paths(builtin)))
        rows.append((hit, base, len(sizes), sum(sizes), fell_back))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("project")
    ap.add_argument("--queries", help="a dev query set (query + accepted paths)")
    ap.add_argument("--intents", action="store_true", help="cost of 1/2/4 sub-intents on one query")
    ap.add_argument("--exhaustive", action="store_true", help="also measure search.mode exhaustive")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    project = os.path.abspath(args.project)
    cfg = os.path.join(project, ".claude", "unity-assets.yml")
    saved = open(cfg).read() if os.path.exists(cfg) else None
    try:
        if args.queries:
            queries = yaml.safe_load(open(args.queries))["queries"]
            rows = measure(args.binary, project, queries, url, "rerank")
            scored = [r for r in rows if r[0] is not None]
            recall = sum(r[0] for r in scored) / len(scored)
            base = sum(r[1] for r in scored) / len(scored)
            chars = [r[3] for r in rows]
            print(f"queries {len(rows)} (scored {len(scored)}): Recall@3 builtin {base:.3f}, rerank (model in retrieval order) {recall:.3f}")
            print(f"rerank input per search: mean {sum(chars) / len(chars) / 4:.0f} tokens, max {max(chars) / 4:.0f}; requests mean {sum(r[2] for r in rows) / len(rows):.2f}")
            reranked = [r[3] for r in rows if not r[4]]
            fallback = [r[3] for r in rows if r[4]]
            if reranked:
                print(f"  {len(reranked)} searches reranked: mean {sum(reranked) / len(reranked) / 4:.0f} tokens, max {max(reranked) / 4:.0f}")
            if fallback:
                print(f"  {len(fallback)} searches whose retrieval found nothing (exhaustive fallback): mean {sum(fallback) / len(fallback) / 4:.0f} tokens")
        if args.intents:
            parts = ["sci-fi barrel", "ceiling lamp", "footstep sound", "health pickup"]
            for n in (1, 2, 4):
                query = {"query": " and ".join(parts[:n])}
                route = lambda _q, n=n: [{"intent": p, "category_hint": None, "subtype_hint": None} for p in parts[:n]]
                for mode in ["rerank"] + (["exhaustive"] if args.exhaustive else []):
                    (_, _, requests, chars, _), = measure(args.binary, project, [query], url, mode, route)
                    print(f"{mode:10} sub-intents {n}: {requests} requests, {chars} chars, ~{chars // 4} input tokens")
    finally:
        if saved is None:
            os.remove(cfg)
        else:
            with open(cfg, "w") as f:
                f.write(saved)
        server.shutdown()


if __name__ == "__main__":
    main()
