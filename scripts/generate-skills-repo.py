#!/usr/bin/env python3
"""Write a synthetic skills git repository for benchmarks.

usage: generate-skills-repo.py DIR --skills N [--commits K] [--seed S]

Sizes and structure follow what real SKILL.md files look like: median about
6 KB with a long tail past 100 KB, 5 to 60 headings, code fences (with `#`
lines inside), tables, and frontmatter that uses block scalars. The first
commit adds all skills; each further commit edits a few files.
"""
import argparse, os, random, subprocess

WORDS = ("data model train evaluate deploy metric batch token prompt skill agent search "
         "index vector chunk section heading markdown parse dataset pipeline inference "
         "fine-tune upload download repository space endpoint cache shard").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def skill_text(rng, name):
    target = min(int(rng.lognormvariate(8.7, 0.9)), 400_000)  # median ~6 KB
    headings = rng.randint(5, 60)
    out = ["---", f"name: {name}", "description: >-", f"  {sentence(rng, 14)}",
           f"  {sentence(rng, 10)}", "license: Apache-2.0", "---", sentence(rng, 20), ""]
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
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    git(a.dir, "init", "-q", "-b", "main")
    paths = []
    for i in range(a.skills):
        name = f"skill-{i:06d}"
        path = os.path.join(a.dir, "skills", f"group-{i % 100:02d}", name, "SKILL.md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(skill_text(rng, name))
        paths.append(path)
    git(a.dir, "add", "-A")
    git(a.dir, "commit", "-q", "-m", "initial")
    for c in range(1, a.commits):
        for path in rng.sample(paths, min(3, len(paths))):
            with open(path, "a") as f:
                f.write(f"\n## Change {c}\n\n{sentence(rng, 30)}\n")
        git(a.dir, "commit", "-q", "-am", f"change {c}")


if __name__ == "__main__":
    main()
