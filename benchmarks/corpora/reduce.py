#!/usr/bin/env python3
"""Reduce a public Unity project, read from a bare git repository, to what indexing needs.

Usage: reduce.py GIT_DIR COMMIT OUT.tar.gz NAME [--subdir DIR]

Writes OUT.tar.gz whose single top folder is NAME/, holding the Unity project found at
COMMIT (the folder that holds Assets/; when the repository keeps its project in a subfolder,
the shallowest folder holding both Assets/ and ProjectSettings/, or DIR when given).

The reduction rule is the one of the corpora in shared/corpora:
  * every file under Assets/ appears, at its own path;
  * every .meta file keeps its real text;
  * a Unity YAML asset (extension in YAML_EXTS and text starting with %YAML) keeps its real
    text when it is at most 512 KiB;
  * every other file (textures, audio, models, scripts, shaders, bigger YAML ...) is an EMPTY
    placeholder, and so is any blob that is a Git LFS pointer or missing from the repository;
  * outside Assets/, only Packages/manifest.json and ProjectSettings/ProjectVersion.txt are
    kept (real text); everything else outside the project root is skipped.
Submodules (gitlinks) are skipped; symbolic links become empty placeholders.
The archive is deterministic: members are sorted, owned by root, dated at the commit time.

Python 3 standard library only; needs `git` on PATH.
"""

import gzip
import io
import os
import subprocess
import sys
import tarfile
import threading

YAML_EXTS = {
    ".prefab", ".mat", ".controller", ".overridecontroller", ".asset", ".unity", ".anim",
    ".mask", ".physicmaterial", ".physicsmaterial2d", ".flare", ".rendertexture", ".mixer",
    ".shadervariants", ".spriteatlas", ".guiskin", ".fontsettings", ".lighting", ".playable",
    ".signal", ".preset", ".brush", ".terrainlayer", ".cubemap",
}
YAML_MAX = 512 * 1024
EXTRA_FILES = ("Packages/manifest.json", "ProjectSettings/ProjectVersion.txt")
LFS_PREFIX = b"version https://git-lfs.github.com/spec/"
BOM = b"\xef\xbb\xbf"


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir=" + git_dir, *args], check=True,
                          stdout=subprocess.PIPE).stdout


def list_tree(git_dir, commit):
    """Yield (mode, type, sha, size, path) for every entry of COMMIT, recursively.

    size is None for gitlinks and -1 for a blob missing from the repository (git prints BAD)."""
    out = git(git_dir, "ls-tree", "-r", "-l", "-z", commit)
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, typ, sha, size = meta.split()
        size = None if size == b"-" else -1 if size == b"BAD" else int(size)
        yield mode.decode(), typ.decode(), sha.decode(), size, path.decode("utf-8", "surrogateescape")


def find_root(paths, subdir=None):
    if subdir is not None:
        return subdir.strip("/")
    if any(p.startswith("Assets/") for p in paths):
        return ""
    assets, settings = {}, set()
    for p in paths:
        parts = p.split("/")
        for i, part in enumerate(parts[:-1]):
            base = "/".join(parts[:i])
            if part == "Assets":
                assets[base] = assets.get(base, 0) + 1
            elif part == "ProjectSettings":
                settings.add(base)
    both = [d for d in assets if d in settings]
    if not both:
        raise SystemExit("no folder holds both Assets/ and ProjectSettings/")
    # shallowest first, then the one with the most files under Assets/
    both.sort(key=lambda d: (d.count("/") if d else -1, -assets[d], d))
    return both[0]


def read_blobs(git_dir, shas):
    """Return {sha: bytes or None (missing)} using one git cat-file --batch process."""
    result = {}
    if not shas:
        return result
    proc = subprocess.Popen(["git", "--git-dir=" + git_dir, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # requests are written from a thread so that neither pipe can fill up and deadlock

    def feed():
        for sha in shas:
            proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.close()

    t = threading.Thread(target=feed)
    t.start()
    out = proc.stdout
    for _ in shas:
        header = out.readline()
        if not header:
            break
        fields = header.split()
        sha = fields[0].decode()
        if len(fields) < 3 or fields[1] == b"missing":
            result[sha] = None
            continue
        size = int(fields[2])
        data = out.read(size)
        out.read(1)  # trailing newline
        result[sha] = data
    t.join()
    proc.wait()
    return result


def keeps_text(rel, size):
    """Whether the file at project-relative path REL may keep its real text (before content checks)."""
    if rel in EXTRA_FILES:
        return True
    if not rel.startswith("Assets/"):
        return False
    low = rel.lower()
    if low.endswith(".meta"):
        return True
    ext = os.path.splitext(low)[1]
    return ext in YAML_EXTS and size is not None and 0 <= size <= YAML_MAX


def main(argv):
    args = list(argv[1:])
    subdir = None
    if "--subdir" in args:
        i = args.index("--subdir")
        subdir = args[i + 1]
        del args[i:i + 2]
    if len(args) != 4:
        raise SystemExit(__doc__)
    git_dir, commit, out_path, name = args
    commit = git(git_dir, "rev-parse", commit + "^{commit}").decode().strip()
    commit_time = int(git(git_dir, "show", "-s", "--format=%ct", commit).decode().strip())

    entries = list(list_tree(git_dir, commit))
    root = find_root([e[4] for e in entries], subdir)
    prefix = root + "/" if root else ""

    files = []  # (rel, mode, sha, size)
    for mode, typ, sha, size, path in entries:
        if typ != "blob" or not path.startswith(prefix):
            continue
        rel = path[len(prefix):]
        if rel.startswith("Assets/") or rel in EXTRA_FILES:
            files.append((rel, mode, sha, size))
    files.sort()

    wanted = sorted({sha for rel, mode, sha, size in files
                     if mode != "120000" and keeps_text(rel, size)})
    blobs = read_blobs(git_dir, wanted)

    stats = {"files": 0, "meta": 0, "yaml": 0, "placeholders": 0, "lfs": 0, "missing": 0}
    dirs = set()
    for rel, *_ in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))

    def tarinfo(path, isdir=False, size=0):
        ti = tarfile.TarInfo(path)
        ti.mtime = commit_time
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        if isdir:
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
        else:
            ti.mode = 0o644
            ti.size = size
        return ti

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = out_path + ".part"
    with open(tmp, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9,
                          mtime=commit_time) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(tarinfo(name + "/", isdir=True))
        members = [(d, None) for d in dirs] + [(f[0], f) for f in files]
        members.sort(key=lambda m: m[0])
        for rel, f in members:
            if f is None:
                tar.addfile(tarinfo(name + "/" + rel + "/", isdir=True))
                continue
            _, mode, sha, size = f
            data = b""
            low = rel.lower()
            is_meta = low.endswith(".meta") and rel.startswith("Assets/")
            if size == -1:
                stats["missing"] += 1
            elif mode != "120000" and keeps_text(rel, size):
                blob = blobs.get(sha)
                if blob is None:
                    stats["missing"] += 1
                elif blob.startswith(LFS_PREFIX):
                    stats["lfs"] += 1
                elif is_meta or rel in EXTRA_FILES:
                    data = blob
                elif blob.startswith(b"%YAML") or blob.startswith(BOM + b"%YAML"):
                    data = blob
                    stats["yaml"] += 1
            stats["files"] += 1
            stats["meta"] += is_meta
            if not data:
                stats["placeholders"] += 1
            tar.addfile(tarinfo(name + "/" + rel, size=len(data)), io.BytesIO(data))
    os.replace(tmp, out_path)
    print(f"{name}: commit {commit} root {root or '.'!r} files {stats['files']} "
          f"meta {stats['meta']} yaml {stats['yaml']} empty {stats['placeholders']} "
          f"lfs {stats['lfs']} missing {stats['missing']}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
