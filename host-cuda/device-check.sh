#!/usr/bin/env bash
# The CUDA device check, in two halves (see docs/cuda.md):
#
#   host-cuda/device-check.sh build   (`cargo xtask cuda-check`) on any
#       machine, no GPU needed: builds ONE stripped release binary of the
#       conformance suites for the CUDA provider (tests/tests/cuda/main.rs,
#       `--features cuda`: no OpenBLAS, checked with ldd), the two suites that
#       cannot join it (prims, ad_program: own #[global_allocator]) and the
#       timing example into .device/ (git-ignored), with a copy of this
#       script.
#   bash .device/device-check.sh run   on a machine with an NVIDIA GPU and
#       the CUDA 13 libraries, from a checkout holding that .device/: finds
#       the libraries, runs (each under `timeout`, ≤ TOTAL s in all, see
#       run()) the required timing rows, the suites filtered to `::cuda`
#       with LINDIFF_REQUIRE_CUDA=1 (a suite that cannot get the GPU fails)
#       and `--nocapture` (the harness's lines — "skipped (unsupported on
#       cuda)", "cuda: N device calls", the budget stops — reach the logs as
#       they happen, also when `timeout` kills the binary), then the
#       explicit SVD drivers (informational: their failure or timeout does
#       not fail the run), writing logs under $OUT (default .device/out).
#       Without a GPU it stops at once with "no GPU: …" (exit 3).
#
# Testing only: LINDIFF_DEVICE_CHECK_FAKE_GPU=1 skips the GPU detection so
# that `run` can be exercised with stub binaries on a machine without a GPU
# (host-cuda/device-check-test.sh, part of `cargo xtask test`). Never set it
# on a real device run.
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || echo "$(dirname "$0")/..")"
DEV=.device
mode=${1:-build}

# Time budgets (s) of the run's steps, so that the whole run takes about
# six minutes. The suites make far more provider calls than that affords
# (host-cpu counts, `--features calls`, tests/src/calls.rs and
# docs/cuda.md), and each CudaStaged call is a staged round trip (alloc, memset,
# uploads, the op with 1–3 synchronisations, downloads, free: ~10 driver
# calls, a few ms). Three limits keep each step inside its budget
# (tests/src/cuda.rs):
#  * LINDIFF_CUDA_SUITE_SECONDS: each suite stops ("stopped at the suite
#    budget") once its own time in staged device calls exceeds it; it adapts
#    to the real per-call cost. 1 s × ~90 suites in cuda_conformance ≈ 90 s
#    of device time (the staged calls are serialised, so the sum is wall
#    time); 4 s per suite in prims/ad_program.
#  * LINDIFF_CUDA_DEADLINE_S: a process-wide deadline counted from the first
#    device call, the step's budget − 20 s (room for the CUDA/cuSOLVER start
#    and the NVRTC compile, ~10 s per process, before the first call, and for
#    the report): every call after it is refused ("stopped at the deadline"),
#    so a step ends on its own before `timeout` kills it.
#  * LINDIFF_CUDA_SUITE_CALLS (optional override, unset by default): a fixed
#    call cap per suite; export it to pass it through.
# A stopped suite passes; a failure before the stop fails it. Worst case
# 80 + 140 + 45 + 45 + 50 = 360 s.
# Every suite logs "<test>: cuda: <n> device calls in <t> s": retune from those.
SUITE_SECONDS=1
SEPARATE_SECONDS=4
DEADLINE_MARGIN=20
T_TIMING=80 T_CONFORMANCE=140 T_PRIMS=45 T_AD_PROGRAM=45 T_DRIVERS=50
TOTAL=$((T_TIMING + T_CONFORMANCE + T_PRIMS + T_AD_PROGRAM + T_DRIVERS))

build() {
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    mkdir -p "$DEV"
    local json
    json=$(cargo test --release -p lindiff-tests --features cuda \
        --test cuda_conformance --test prims --test ad_program --no-run --message-format=json)
    for name in cuda_conformance prims ad_program; do
        # `|| true`: under pipefail a grep matching nothing would end the
        # script here, before the message below.
        exe=$(printf '%s\n' "$json" | { grep '"executable":"[^"]*"' || true; } |
            { grep "\"name\":\"$name\"" || true; } | sed 's/.*"executable":"\([^"]*\)".*/\1/' | tail -1)
        [ -n "$exe" ] || { echo "device-check: no test binary for $name" >&2; exit 1; }
        cp "$exe" "$DEV/$name"
    done
    cargo build --release -p lindiff-cuda --example cuda_timing
    cp "$CARGO_TARGET_DIR/release/examples/cuda_timing" "$DEV/cuda_timing"
    cp host-cuda/device-check.sh "$DEV/device-check.sh"
    strip "$DEV"/cuda_conformance "$DEV"/prims "$DEV"/ad_program "$DEV"/cuda_timing
    local bin deps
    for bin in cuda_conformance prims ad_program cuda_timing; do
        # Capture first: grep -q on a pipe would SIGPIPE ldd under pipefail.
        deps=$(ldd "$DEV/$bin")
        if grep -Eiq 'openblas|libblas|liblapack' <<<"$deps"; then
            echo "device-check: $bin links a host BLAS/LAPACK:" >&2
            grep -Ei 'openblas|libblas|liblapack' <<<"$deps" >&2
            exit 1
        fi
    done
    local size
    size=$(du -sb "$DEV" --exclude=out | cut -f1)
    echo "device-check: built $DEV ($size bytes; ldd: no OpenBLAS/BLAS/LAPACK in any binary):"
    ls -l "$DEV"
    cat <<RUN

On a machine with an NVIDIA GPU, from a checkout holding this .device/:
  bash .device/device-check.sh run
(at most ${TOTAL} s: timing ${T_TIMING} + suites ${T_CONFORMANCE}/${T_PRIMS}/${T_AD_PROGRAM}
+ drivers ${T_DRIVERS} (informational), each under \`timeout\`; each suite stops after ${SUITE_SECONDS} s
(${SEPARATE_SECONDS} s in prims/ad_program) of device calls, each suite binary at its step's budget − ${DEADLINE_MARGIN} s)
The logs land under \$OUT (default .device/out): cuda_conformance.log, prims.log, ad_program.log,
timing.md, timing_drivers.md, summary.txt.
RUN
}

# The folders holding the CUDA 13 user-space libraries (cuSOLVER, cuBLAS,
# NVRTC, …), for LD_LIBRARY_PATH. `find -L` follows the symlinked
# /usr/local/cuda*; */stubs/* (link-time stubs, a stub libcuda fails every
# call) and */compat/* are never searched. libcuda (the driver) is left to
# the loader when ldconfig knows it; only otherwise is a folder holding a
# real libcuda.so.1 added, last.
find_libs() {
    local roots=(/usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/local/nvidia/lib64
        /opt/*/.venv/lib/python3*/site-packages/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64)
    local dirs=() driver_dirs=() root lib
    for root in "${roots[@]}"; do
        [ -d "$root" ] || continue
        while IFS= read -r lib; do
            case "$lib" in
                */libcuda.so*) driver_dirs+=("$(dirname "$lib")") ;;
                *) dirs+=("$(dirname "$lib")") ;;
            esac
        done < <(find -L "$root" -maxdepth 4 \( -path '*/stubs' -o -path '*/compat' \) -prune -o \
            \( -name 'libcuda.so.1' -o -name 'libcusolver.so*' -o -name 'libcublas.so*' \
            -o -name 'libcublasLt.so*' -o -name 'libnvrtc.so*' -o -name 'libnvrtc-builtins.so*' \
            -o -name 'libcusparse.so*' -o -name 'libnvJitLink.so*' \) -print 2>/dev/null)
    done
    if ! ldconfig_has_libcuda; then
        dirs+=("${driver_dirs[@]}")
    fi
    printf '%s\n' "${dirs[@]}" | awk 'NF && !seen[$0]++' | paste -sd:
}

# Whether ldconfig's cache lists libcuda.so.1 (captured first: `grep -q` on
# a pipe would SIGPIPE ldconfig and, under pipefail, read as "absent").
ldconfig_has_libcuda() {
    local cache
    cache=$(ldconfig -p 2>/dev/null || true)
    grep -q 'libcuda\.so\.1' <<<"$cache"
}

# Whether a CUDA driver library is loadable: known to ldconfig, or in one
# of the LD_LIBRARY_PATH folders (never a stub).
have_libcuda() {
    local d
    if ldconfig_has_libcuda; then
        return 0
    fi
    local IFS=:
    for d in $1; do
        case "$d" in */stubs*) continue ;; esac
        if compgen -G "$d/libcuda.so*" >/dev/null; then
            return 0
        fi
    done
    return 1
}

# One step of the run: `timeout SECS` on BIN ARGS, log in $out/LOG, a
# summary line. KIND `required`: a failure or timeout sets status=1;
# `info`: reported, never fails the run.
step() {
    local kind=$1 secs=$2 log=$3
    shift 3
    local start=$SECONDS rc=0
    echo "== $log ($kind): $* (timeout ${secs}s)" | tee -a "$out/summary.txt"
    timeout "$secs" "$@" >"$out/$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        grep -E '^test result|^\||^calls:' "$out/$log" | tail -12 | tee -a "$out/summary.txt" || true
    else
        if [ "$kind" = required ]; then
            status=1
        else
            echo "(informational step: does not fail the run)" | tee -a "$out/summary.txt"
        fi
        [ "$rc" -eq 124 ] && echo "TIMED OUT after ${secs}s" | tee -a "$out/summary.txt"
        grep -E '^test .* FAILED|^test result|^\||panicked' "$out/$log" | tail -40 | tee -a "$out/summary.txt" || true
    fi
    # Every count below must survive a log without matches (grep exits 1):
    # under `set -euo pipefail` a failing substitution ends the script.
    local unsupported skipped capped calls
    unsupported=$(grep -c 'skipped (unsupported on cuda)' "$out/$log" || true)
    skipped=$(grep -c 'skipped: ' "$out/$log" || true)
    capped=$(grep -c 'stopped at the \(suite budget\|call budget\|deadline\)' "$out/$log" || true)
    calls=$( { grep -o 'cuda: [0-9]* device calls' "$out/$log" || true; } | awk '{s += $2} END {print s + 0}')
    echo "rc=$rc, $((SECONDS - start)) s, device calls: $calls; suites skipped as unsupported on cuda: $unsupported," \
        "stopped at a budget or the deadline: $capped, skipped for no GPU: $skipped" | tee -a "$out/summary.txt"
    { grep -ho 'skipped (unsupported on cuda).*' "$out/$log" || true; } | sort | uniq -c | sort -rn | head -20 |
        tee -a "$out/summary.txt"
}

# A suite binary's step: SECS budget, each suite stopped after SUITE_SECS s
# of device calls, the process after SECS − DEADLINE_MARGIN s of them.
suite() {
    local secs=$1 suite_secs=$2 name=$3
    LINDIFF_CUDA_SUITE_SECONDS=$suite_secs LINDIFF_CUDA_DEADLINE_S=$((secs - DEADLINE_MARGIN)) \
        step required "$secs" "$name.log" "$DEV/$name" ::cuda --nocapture
}

run() {
    out=${OUT:-$DEV/out}
    mkdir -p "$out"
    # A copied .device/ may have lost the executable bits.
    chmod +x "$DEV"/* 2>/dev/null || true
    local libs
    libs=$(find_libs)
    # Joined without an empty entry (a leading ':' means the working directory).
    LD_LIBRARY_PATH=$(printf '%s:%s' "$libs" "${LD_LIBRARY_PATH:-}" | tr -s : | sed 's/^://; s/:$//')
    export LD_LIBRARY_PATH
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee "$out/summary.txt"
    if [ "${LINDIFF_DEVICE_CHECK_FAKE_GPU:-}" = 1 ]; then
        # Testing only (see the top of this file): stub binaries, no GPU.
        echo "LINDIFF_DEVICE_CHECK_FAKE_GPU=1: GPU detection skipped (a test of this script with stub binaries)" |
            tee -a "$out/summary.txt"
    elif ! have_libcuda "$LD_LIBRARY_PATH"; then
        echo "no GPU: no CUDA driver library (libcuda.so.1) known to ldconfig or under the searched roots" |
            tee -a "$out/summary.txt"
        exit 3
    elif command -v nvidia-smi >/dev/null && ! nvidia-smi -L >>"$out/summary.txt" 2>&1; then
        echo "no GPU: nvidia-smi sees no device" | tee -a "$out/summary.txt"
        exit 3
    fi
    # A suite whose cuda arm cannot get the GPU fails instead of skipping.
    export LINDIFF_REQUIRE_CUDA=1
    status=0
    # Budgets, deadlines and the optional call cap: see the top of this file.
    step required "$T_TIMING" timing.md "$DEV/cuda_timing" --require-gpu --part required
    suite "$T_CONFORMANCE" "$SUITE_SECONDS" cuda_conformance
    suite "$T_PRIMS" "$SEPARATE_SECONDS" prims
    suite "$T_AD_PROGRAM" "$SEPARATE_SECONDS" ad_program
    step info "$T_DRIVERS" timing_drivers.md "$DEV/cuda_timing" --require-gpu --part drivers
    echo "total ${SECONDS} s, status $status (the drivers step is informational)" | tee -a "$out/summary.txt"
    exit $status
}

case "$mode" in
    build) build ;;
    run) run ;;
    *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
