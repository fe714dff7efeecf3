#!/usr/bin/env bash
# Ray for the GPU machine, whose image has none and which reaches no index: this machine's Ray version (and what it
# needs that the image lacks: jsonschema's family), as CPython 3.12 manylinux wheels unpacked into one folder, less
# what `fpa triage --ray` never imports (Java jars, RLlib, Serve, Tune, Train, Data, LLM, the dashboard's web
# client), packed as .raybundle/ray_site.tar.xz (~28 MB: within a device call's 64 MiB carry; the wheel alone is 79).
#   bash experiments/ray_bundle.sh            then, on the device: carry .raybundle, and device_run.sh's `ray` step
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(.venv/bin/python -c "import ray; print(ray.__version__)")
work=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$work/wheels" \
  "ray==$version" jsonschema jsonschema-specifications referencing rpds-py
mkdir -p "$work/site" .raybundle
for wheel in "$work"/wheels/*.whl; do unzip -q -o "$wheel" -d "$work/site"; done
rm -rf "$work"/site/ray/{jars,rllib,serve,llm,train,tune,data} "$work/site/ray/dashboard/client"
tar -cJf .raybundle/ray_site.tar.xz -C "$work/site" .
rm -rf "$work"
ls -l .raybundle/ray_site.tar.xz
