#!/usr/bin/env bash
# Every GPU check of issue 30 in one run of under 5 minutes, for whoever is lent a GPU:
#   1. float32 greedy tokens: torch on CUDA vs jit-static on the GPU (race --json), equal or where they part;
#   2. bfloat16: the first token where torch on CUDA and jit-static differ;
#   3. steady ms/token of torch (CUDA), torch-compile (CUDA, reduce-overhead) and jit-static, with the device's
#      memory-bandwidth bound (bench/decode.py --device gpu: a JAX device-to-device copy measures the bandwidth);
#   4. profile --step decode: its top rows;
#   5. passes --step decode: the compile split.
#
# Usage: bench/device_check.sh [--device gpu|cpu|tpu] [--quick]
#   --device: default gpu when JAX has one, else cpu (the CPU fallback: pydoc-llama, few tokens, no
#             torch-compile, a minute or so; it checks that the script and every command run).
#   Output: printed, and kept under $OUT (the device tool's folder) or /tmp/device_check.<time>/ as
#   check.log plus one file per step. Each step has its own time limit, so one slow step leaves time to the rest.
#   Environment: PYTHON (default .venv/bin/python, else python3); XLA_PYTHON_CLIENT_MEM_FRACTION (default 0.5
#   here: JAX preallocates 75 % of a GPU's memory, and torch on CUDA needs room beside it).
set -u
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
DEVICE=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    *) echo "usage: $0 [--device gpu|cpu|tpu] [--quick]" >&2; exit 2 ;;
  esac
done

export HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=offscreen TOKENIZERS_PARALLELISM=false
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.5}
if [ -z "$DEVICE" ]; then
  if "$PY" -c "import jax, sys; sys.exit(0 if jax.devices('gpu') else 1)" >/dev/null 2>&1; then DEVICE=gpu; else DEVICE=cpu; fi
fi

DIR=${OUT:-/tmp/device_check.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$DIR"
LOG="$DIR/check.log"
START=$(date +%s)

if [ "$DEVICE" = cpu ]; then  # the fallback: quick, and torch-compile's Inductor C++ build is minutes on 2 cores
  SMALL=pydoc-llama; BIG=pydoc-llama; TOKENS=8; BENCH_MODES="torch jit-static"; RACE_MODES="torch jit-static"
  PROFILE_STEPS=3; T_RACE=120; T_BENCH=150; T_PROFILE=120; T_PASSES=150
elif [ "$DEVICE" = tpu ]; then  # PyTorch has no TPU device here: jit-static alone
  SMALL=pydoc-llama; BIG=random:llama-1b-shape; TOKENS=32; BENCH_MODES="jit-static"; RACE_MODES="jit-static"
  PROFILE_STEPS=10; T_RACE=60; T_BENCH=90; T_PROFILE=60; T_PASSES=60
else
  SMALL=pydoc-llama; BIG=random:llama-1b-shape; TOKENS=32; BENCH_MODES="torch torch-compile jit-static"
  RACE_MODES="torch jit-static"; PROFILE_STEPS=10; T_RACE=45; T_BENCH=120; T_PROFILE=40; T_PASSES=40
fi
[ "$QUICK" = 1 ] && TOKENS=8

say() { echo "$*" | tee -a "$LOG"; }

# step NAME SECONDS COMMAND...: run with a time limit, keep its output in $DIR/NAME.txt, report the status.
step() {
  local name=$1 limit=$2; shift 2
  say ""
  say "=== $name (limit ${limit} s): $*"
  local t0; t0=$(date +%s)
  timeout "$limit" "$@" >"$DIR/$name.txt" 2>"$DIR/$name.err"
  local rc=$?
  say "--- $name: exit $rc in $(( $(date +%s) - t0 )) s$([ $rc = 124 ] && echo ' (TIME LIMIT)')"
  return 0
}

# compare FILE: the race's --json rows → tokens equal, or the first token where they differ.
compare() {
  "$PY" - "$1" <<'EOF' | tee -a "$LOG"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
if len(rows) < 2:
    print(f"  fewer than two modes finished ({[r['mode'] for r in rows]}): see the .err file")
    sys.exit(0)
ref = rows[0]
for row in rows:
    print(f"  {row['mode']:<14} on {row.get('device', '?')}: steady {row['steady_ms_per_token'] or float('nan'):.2f} "
          f"ms/token, {len(row['token_ids'])} tokens: {row['token_ids'][:12]}…")
for row in rows[1:]:
    a, b = ref["token_ids"], row["token_ids"]
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    n = min(len(a), len(b))
    print(f"  {row['mode']} vs {ref['mode']}: " + (f"EQUAL over {n} greedy tokens" if at is None else
          f"first differs at token {at} of {n} ({a[at]} vs {b[at]})"))
EOF
}

say "device check on $DEVICE · $(date -u +%FT%TZ) · python $("$PY" -c 'import sys; print(sys.version.split()[0])')"
"$PY" - <<'EOF' 2>&1 | tee -a "$LOG"
import jax, torch
print(f"jax {jax.__version__}: default backend {jax.default_backend()}, devices {jax.devices()}")
cuda = torch.cuda.is_available()
print(f"torch {torch.__version__}: cuda {cuda}" + (f" ({torch.cuda.get_device_name(0)})" if cuda else ""))
EOF

RACE="$PY -m app race --device $DEVICE --ignore-eos --json --max-new-tokens $TOKENS --modes $RACE_MODES"
# float32 at full precision on both sides: JAX's default lets XLA:GPU use TF32 for float32 dots, while torch's
# CUDA matmuls are true float32 (torch.backends.cuda.matmul.allow_tf32 is False by default).
step race-float32 "$T_RACE" env JAX_DEFAULT_MATMUL_PRECISION=highest $RACE --model "$SMALL" --dtype float32
compare "$DIR/race-float32.txt"
step race-bfloat16 "$T_RACE" $RACE --model "$BIG" --dtype bfloat16
compare "$DIR/race-bfloat16.txt"

# shellcheck disable=SC2086  # the mode lists are word lists
step bench-decode "$T_BENCH" "$PY" bench/decode.py --device "$DEVICE" --models "$BIG" --dtype bfloat16 \
  --tokens "$TOKENS" --modes $BENCH_MODES --steady-budget 15
grep -E "^[0-9-]+ [0-9:]+ UTC: device |^[a-z].* on .*bound|^mode |^(torch|torch-compile|jit-static|torchax-eager|jit-dynamic) |first .* compile phases|identical|vs |^paired rounds|÷" \
  "$DIR/bench-decode.txt" | tee -a "$LOG"

step profile-decode "$T_PROFILE" "$PY" -m app profile --device "$DEVICE" --model "$BIG" --dtype bfloat16 \
  --step decode --steps "$PROFILE_STEPS" --warmup 2 --top 10 --by fusion
head -n 16 "$DIR/profile-decode.txt" | tee -a "$LOG"
tail -n 8 "$DIR/profile-decode.txt" | tee -a "$LOG"

step passes-decode "$T_PASSES" "$PY" -m app passes --device "$DEVICE" --model "$SMALL" --step decode
head -n 3 "$DIR/passes-decode.txt" | tee -a "$LOG"
say "  …"
sed -n '/^compile /,$p' "$DIR/passes-decode.txt" | head -n 30 | tee -a "$LOG"  # the compile split

for f in "$DIR"/*.err; do
  if grep -qE "^error|Traceback" "$f"; then say ""; say "!!! $(basename "$f"):"; tail -n 5 "$f" | tee -a "$LOG"; fi
done
say ""
say "device check done in $(( $(date +%s) - START )) s; outputs in $DIR"
