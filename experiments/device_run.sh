#!/usr/bin/env bash
# One call on the GPU machine: validate every kernel variant, then bench the ops; results under $OUT.
#   bash experiments/device_run.sh <kernels-tree> [gputests] [slowtests] [memcheck] [validate] [bench OP...] [sass] [probe PRESET]
#                                  [profile] [quick OP TEXT]
#                                  [isolation COMMIT] [general COMMIT] [beyond COMMIT] [tf32probe COMMIT] [fuzz COMMIT]
#                                  [triage COMMIT] [storecheck] [buildbench] [ray]
#                                  [speed COMMIT BASELINE_DIR] [startup] [fastmath COMMIT] [tolerance COMMIT]
# The tree id comes from this machine (`git rev-parse HEAD:kernels`): the device copy has no git HEAD.
set -euo pipefail
tree=$1; shift
mkdir -p /tmp/pp && ln -sfn "$PWD/kernels" /tmp/pp/fpa_kernels
export PYTHONPATH=$PWD:/tmp/pp PYTHONUNBUFFERED=1 FPA_STORE=/tmp/store
out=${OUT:-/tmp/out}
mkdir -p "$out/results" "$out/figures"
while [ $# -gt 0 ]; do
  case $1 in
    validate) python3 experiments/gpu_validation.py --configs 50 --kernels-tree "$tree" --out "$out/gpu_validation.json" \
                > /tmp/validate.log 2>&1 || { tail -40 /tmp/validate.log; exit 1; }
              tail -5 /tmp/validate.log; shift ;;
    gputests) # kernels == twins, small configs; a fresh machine builds every kernel first (GPUTESTS_TIMEOUT_S)
              timeout "${GPUTESTS_TIMEOUT_S:-420}" python3 -m pytest -q -x -m gpu --durations=8 tests/ 2>&1 | tail -25 \
                || echo "gputests: exit $?"; shift ;;
    slowtests) # the CPU tests CI's two cores leave out (marked slow: more cases of the kinds CI runs, full-size presets)
               FPA_RUN_SLOW=1 timeout 500 python3 -m pytest -q -m slow tests/ 2>&1 | tail -15 || echo "slowtests: exit $?"
               shift ;;
    memcheck) # every tiled kernel on the small cases, under compute-sanitizer's memcheck
              timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -x -m gpu \
                tests/gpu/test_tiled.py -k every_tiled 2>&1 | tail -15 || echo "memcheck: exit $?"; shift ;;
    sass) # the tiled fp32 kernel's machine code and its opcode counts (are the loads 16 bytes, any spills?)
           python3 -c "from fpa_kernels import *; print(variant_build(VariantSpec(Op.CONV2D, schedule=Schedule.TILED)).cubin())" > /tmp/cubin
           cuobjdump -sass "$(cat /tmp/cubin)" > "$out/sass_tiled.txt"
           grep -oE '^ +/\*[0-9a-f]{4}\*/ +[A-Z0-9_.]+' "$out/sass_tiled.txt" | awk '{print $2}' | sort | uniq -c | sort -rn | head -25
           shift ;;
    probe) # build alternatives beside the defaults on a preset's conv (tile_probe.py: dilated_conv2d, conv3d_kk1, conv_gelu;
           # PROBE_ONLY="I ...": only those rows, for every probe step)
           python3 experiments/tile_probe.py --preset "$2" ${PROBE_ONLY:+--only $PROBE_ONLY} 2>&1 | tail -24; shift 2 ;;
    profile) # where the full-size seed-000 explain --device cuda spends its time, profiled
             python3 experiments/profile_explain.py experiments/kernelbench_seed000/problem.py \
               experiments/kernelbench_seed000/solution.py --device cuda --out "$out/results/profile_seed000_h200.txt" \
               2>&1 | tail -25 || echo "profile: exit $?"
             shift ;;
    isolation) # fpa explain --device cuda on CUDA user code (load_inline builds, a fault, a hang) and seed 000
               python3 experiments/device_isolation.py "$out/results" "$2" || echo "isolation: exit $?"; shift 2 ;;
    general) # fpa explain --device cuda on whole Models beyond the seed ops, CUDA solutions, and seed 000
             python3 experiments/device_explain_general.py "$out/results" "$2" || echo "general: exit $?"; shift 2 ;;
    beyond) # fpa explain --device cuda on Models without convolutions (sums, a scan, norms, softmax, losses, argmax, matmuls),
            # CUDA solutions, each timed against KernelBench's check; BEYOND_ONLY="TEXT ..." runs the pairs whose stem holds one
            python3 experiments/device_beyond.py "$out/results" "$2" ${BEYOND_ONLY:-} || echo "beyond: exit $?"; shift 2 ;;
    tolerance) # fpa tolerance --problem --device cuda on KernelBench's shapes (kernelbench_shapes; TOLERANCE_ONLY: regexes
               # picking rows by "file family", TOLERANCE_DEADLINE_S: no row past that many seconds)
               python3 experiments/device_tolerance.py "$out/results" "$2" ${TOLERANCE_ONLY:-} || echo "tolerance: exit $?"
               shift 2 ;;
    ray) # Ray for the steps after it (the image has none): carry .raybundle (experiments/ray_bundle.sh makes it)
         mkdir -p /tmp/raysite && tar -xJf .raybundle/ray_site.tar.xz -C /tmp/raysite
         export PYTHONPATH=$PYTHONPATH:/tmp/raysite  # the Ray workers inherit it
         python3 -c "import ray; print('ray', ray.__version__)"; shift ;;
    triage) # fpa triage --device cuda on 82 load_inline pairs (66 kernels), from cold then with cached builds (TRIAGE_RUNS:
            # the runs, experiments/device_triage.py; TRIAGE_PAIRS=N: N of them; after `ray`, TRIAGE_RUNS=cold:ray=local
            # runs them as Ray tasks, build tasks ahead): verdicts, pairs/hour, GPU idle; fpa's progress and the whole
            # log under $OUT (a call cut off by its limit still shows how far it came)
            TRIAGE_PROGRESS="$out/triage_progress.txt" python3 experiments/device_triage.py "$out/results" "$2" \
              ${TRIAGE_RUNS:-} > "$out/triage.log" 2>&1 || echo "triage: exit $?"
            grep -v "^  ok " "$out/triage.log" | tail -40; shift 2 ;;
    storecheck) # fpa's store of builds on the GPU host: a correct pair (compiled in the store), another sample of the
                # same kernel (found: no compile) and a compile error twice (kept as its key's: the second compiles
                # nothing), each explained from a cold cache, timed, with what the store holds after
                python3 experiments/triage_gpu_pairs.py /tmp/storecheck > /dev/null
                for s in conv_relu/correct conv_relu/correct_resampled dilated_gelu/compile_error dilated_gelu/compile_error; do
                  XDG_CACHE_HOME=/tmp/storecheck-cache /usr/bin/time -f "$s: %e s" python3 -m fp_analysis explain \
                    --problem "/tmp/storecheck/$(dirname $s)/problem.py" --solution "/tmp/storecheck/$s.py" --device cuda \
                    --json --no-store > /tmp/storecheck.json 2> /tmp/storecheck.err || true
                  tail -1 /tmp/storecheck.err
                  python3 -c "import json; d = json.load(open('/tmp/storecheck.json')); print(' ', d.get('verdict'), (d.get('error') or {}).get('message', '')[:300])"
                done
                find /tmp/storecheck-cache/fp_analysis/extensions -name "*.so" -o -name "*.failed" | sed 's|^|  |'; shift ;;
    buildbench) # a load_inline extension's two compile units, each timed, with and without the builders' precompiled
                # torch/extension.h (is it used by this torch? is main.o the same bytes?)
                XDG_CACHE_HOME=/tmp/fpa_build_cache python3 experiments/bench_build_memory.py --repeats 1 --precompiled \
                  2>&1 | tail -10 | tee "$out/results/build_bench.txt" || echo "buildbench: exit $?"
                shift ;;
    speed) # the tool's own speed (issue 18): full-size seed 000 explain --device cuda, this tree beside a baseline
           # checkout (carried: git archive REV | tar -x -C DIR; DIR/.commit names REV), then this tree profiled
           python3 experiments/bench_speed.py --baseline-tree "$3" --baseline-name "$(cat "$3/.commit" 2>/dev/null)" \
             --cases seed000_cuda --repeats 1 --commit "$2" --out "$out/results/speed_h200.json" 2>&1 | tail -8 \
             || echo "speed: exit $?"
           python3 experiments/profile_explain.py experiments/kernelbench_seed000/problem.py \
             experiments/kernelbench_seed000/solution.py --device cuda --out "$out/results/profile_seed000_h200.txt" \
             2>&1 | tail -25 || echo "profile: exit $?"
           shift 3 ;;
    startup) # where a job's start goes: imports, the fork server's steps, CUDA's start, explain with a cold and a warm server
             python3 experiments/startup_timeline.py experiments/kernelbench_seed000/problem.py \
               experiments/kernelbench_seed000/solution.py --device cuda --out "$out/results/startup_h200.json" 2>&1 \
               | grep -v "'leave'" | tail -45 || echo "startup: exit $?"
             shift ;;
    fuzz) # fpa fuzz --device cuda on load_inline candidates, through their Models' constructors
          python3 experiments/device_fuzz.py "$out/results" "$2" || echo "fuzz: exit $?"; shift 2 ;;
    fastmath) # what --use_fast_math computes, against fp64 and against the engine's re-creation of it
              python3 experiments/fast_math/probe.py "$out/results/fast_math_probe_h200.json" "$2" 2>&1 | tail -20 \
                || echo "fastmath: exit $?"
              shift 2 ;;
    tf32probe) # which rounding cuDNN's TF32 convolutions use, per conv shape (the engine's tie rules)
               python3 experiments/tf32_probe.py "$out/results" "$2" 2>&1 | grep -v Warn | tail -8 || echo "tf32probe: exit $?"
               shift 2 ;;
    quick) shift  # bench OP, only the variants whose label contains TEXT, no ceilings file merge
           timeout 400 python3 -m fp_analysis bench "$1" --match "$2" --kernels-tree "$tree" \
             --out "$out/results/quick.json" --figure "$out/figures/quick_$1.png" --reps 10 2>&1 | tail -24 \
             || echo "quick: exit $?"
           shift 2 ;;
    bench) shift
           while [ $# -gt 0 ] && [ "$1" != validate ]; do
             python3 -m fp_analysis bench "$1" --kernels-tree "$tree" --out "$out/results/bench.json" \
               --figure "$out/figures/bench_$1.png" 2>&1 | tee "/tmp/bench_$1.log" | tail -30
             shift
           done ;;
    *) echo "unknown step $1"; exit 2 ;;
  esac
done
