"""Runs each pair of EXPECTED.txt through fpa explain, one at a time; writes json/<problem>__<solution>.json and
RESULTS.txt."""

import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
FPA = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(HERE))), ".venv", "bin", "fpa"
)  # the repository's venv
os.makedirs(os.path.join(HERE, "json"), exist_ok=True)
rows = []
for line in open(os.path.join(HERE, "EXPECTED.txt")):
    if not line.strip() or line.startswith("#"):
        continue
    prob, sol, exp = line.split("#")[0].split()
    out = os.path.join(HERE, "json", f"{prob}__{sol}.json")
    if not os.path.exists(out) or "--rerun" in sys.argv:
        r = subprocess.run(
            [
                FPA,
                "explain",
                "--problem",
                f"{HERE}/{prob}/problem.py",
                "--solution",
                f"{HERE}/{prob}/{sol}.py",
                "--device",
                "cpu",
                "--json",
                "--no-store",
                "--timeout",
                "120",
            ],
            capture_output=True,
            text=True,
        )
        with open(out, "w") as f:
            json.dump({"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-4000:]}, f)
    rec = json.load(open(out))
    try:
        d = json.loads(rec["stdout"])
    except Exception:
        d = {}
    verdict = d.get("verdict", "?")
    mx = (d.get("mismatch") or {}).get("max_abs", float("nan"))
    rc = rec["rc"]
    ok = (exp == "E" and rc == 0) or (exp == "B" and rc == 1)
    rows.append(f"{prob} {sol} {exp} {verdict} {rc} {mx:.3g} {'OK' if ok else 'WRONG'}")
    print(rows[-1], flush=True)
with open(os.path.join(HERE, "RESULTS.txt"), "w") as f:
    f.write(
        "# problem solution expected verdict exit_code max_abs_difference(candidate vs Model, fpa mismatch) OK/WRONG\n"
    )
    f.write("\n".join(rows) + "\n")
    f.write(
        f"# {sum(r.endswith(' OK') for r in rows)} OK, {sum(r.endswith('WRONG') for r in rows)} WRONG of {len(rows)}\n"
    )
