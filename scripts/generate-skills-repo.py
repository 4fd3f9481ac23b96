#!/usr/bin/env python3
"""Write a synthetic skills git repository for benchmarks.

usage: generate-skills-repo.py DIR --skills N [--commits K] [--changed C] [--seed S] [--clean]

Sizes and structure follow what real SKILL.md files look like: median about
6 KB with a long tail past 100 KB (about 1 in 30 over 30 KB), 5 to 60
headings, code fences (with `#` lines inside), tables, and frontmatter that
uses block scalars. So do its defects, as measured on real public
collections (unless --clean): about 16% of files have frontmatter that
strict YAML rejects (an unquoted `Use when: ...` description), 10% reuse a
name another folder has, and 10% have a name that is not their folder's.
The first commit adds all skills; each further commit edits C files (default 3).
"""
import argparse, os, random, subprocess

WORDS = ("data model train evaluate deploy metric batch token prompt skill agent search "
         "index vector chunk section heading markdown parse dataset pipeline inference "
         "fine-tune upload download repository space endpoint cache shard").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def frontmatter(rng, name, clean):
    if not clean and rng.random() < 0.16:
        # Strict YAML rejects this (a colon inside a plain scalar): recovered.
        return ["---", f"name: {name}", f"description: Use when: {sentence(rng, 12)} Not for: {sentence(rng, 6)}",
                "license: Apache-2.0", "---"]
    return ["---", f"name: {name}", "description: >-", f"  {sentence(rng, 14)}",
            f"  {sentence(rng, 10)}", "license: Apache-2.0", "---"]


def skill_text(rng, name, clean=True):
    target = min(int(rng.lognormvariate(8.7, 0.9)), 400_000)  # median ~6 KB
    headings = rng.randint(5, 60)
    out = frontmatter(rng, name, clean) + [sentence(rng, 20), ""]
    size, h = 0, 0
    while size < target:
        level = 1 if h == 0 else rng.choice([2, 2, 3, 3, 4])
        out.append("#" * level + " " + sentence(rng, 3)[:-1])
        out.append("")
        h += 1
        for _ in range(max(1, target // max(headings, 1) // 400)):
            kind = rng.random()
            if kind < 0.15:
                out += ["```bash", "# a comment, not a heading", f"hf {rng.choice(WORDS)} --flag", "```"]
            elif kind < 0.25:
                out += ["| a | b |", "|---|---|"] + [f"| {rng.choice(WORDS)} | {rng.randint(0, 99)} |" for _ in range(5)]
            elif kind < 0.4:
                out += [f"- {sentence(rng, 8)}" for _ in range(4)]
            else:
                out.append(sentence(rng, rng.randint(20, 80)))
            out.append("")
        size = sum(len(l) + 1 for l in out)
    return "\n".join(out) + "\n"


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="gen", GIT_AUTHOR_EMAIL="gen@example.org",
               GIT_COMMITTER_NAME="gen", GIT_COMMITTER_EMAIL="gen@example.org")
    subprocess.run(["git", "-C", repo, *args], check=True, env=env, stdout=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--skills", type=int, required=True)
    p.add_argument("--commits", type=int, default=1)
    p.add_argument("--changed", type=int, default=3, help="files edited by each commit after the first")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--clean", action="store_true", help="no defects: every frontmatter valid, names unique and matching")
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    git(a.dir, "init", "-q", "-b", "main")
    paths = []
    for i in range(a.skills):
        folder = f"skill-{i:06d}"
        name = folder
        roll = rng.random()
        if not a.clean and roll < 0.10 and i > 0:
            name = f"skill-{rng.randrange(i):06d}"  # a name another folder has
        elif not a.clean and roll < 0.20:
            name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-helper"  # not the folder's name
        path = os.path.join(a.dir, "skills", f"group-{i % 100:02d}", folder, "SKILL.md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(skill_text(rng, name, a.clean))
        paths.append(path)
    git(a.dir, "add", "-A")
    git(a.dir, "commit", "-q", "-m", "initial")
    for c in range(1, a.commits):
        for path in rng.sample(paths, min(a.changed, len(paths))):
            with open(path, "a") as f:
                f.write(f"\n## Change {c}\n\n{sentence(rng, 30)}\n")
        git(a.dir, "commit", "-q", "-am", f"change {c}")


if __name__ == "__main__":
    main()
