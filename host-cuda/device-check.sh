#!/usr/bin/env bash
# The CUDA device check, in two halves (see README "CUDA"):
#
#   host-cuda/device-check.sh build   here, no GPU needed: builds ONE stripped
#       release binary of the conformance suites for the CUDA provider
#       (tests/tests/cuda/main.rs, `--no-default-features --features cuda`:
#       no OpenBLAS, checked with ldd), the two suites that cannot join it
#       (prims, ad_program: own #[global_allocator]) and the timing example,
#       into .device/ (git-ignored through .git/info/exclude; it must fit the
#       64 MiB carry limit together with the working tree), and prints the
#       exact `run` tool call for a GPU session.
#   host-cuda/device-check.sh run     on the GPU machine, from the repo root:
#       finds the CUDA 13 libraries, runs (each under `timeout`, ≤ TOTAL s in
#       all, see run()) the required timing rows, the suites filtered to
#       `::cuda` with LINDIFF_REQUIRE_CUDA=1 (a suite that cannot get the GPU
#       fails) and `--show-output` (so the passing tests' "skipped (unsupported
#       on cuda)" lines reach the logs), then the explicit SVD drivers
#       (informational: their failure or timeout does not fail the run),
#       writing logs under $OUT (default .device/out). Without a GPU it stops
#       at once with "no GPU: …" (exit 3).
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || echo "$(dirname "$0")/..")"
DEV=.device
mode=${1:-build}

# Time budgets (s) of the run's steps. The suites make far more provider
# calls than a device session affords (host-cpu counts, `--features calls`,
# tests/src/calls.rs: ~5.0 million in cuda_conformance, 704 in prims, 410 in
# ad_program), and each CudaStaged call is a staged round trip (alloc,
# memset, uploads, the op with 1–3 synchronisations, downloads, free: ~10
# driver calls at ~0.3–1 ms under gVisor, so ~3–12 ms). So each suite is
# capped at SUITE_CALLS calls (LINDIFF_CUDA_SUITE_CALLS; a capped suite
# prints "stopped at the call budget" and passes): 120 → at most 9 171 calls
# in cuda_conformance (sum over its 90 suites of min(calls, 120)), ≤ 110 s at
# 12 ms; the separate binaries run in full (400 ≥ their largest suite, 352).
# Each process also pays the CUDA/cuSOLVER start and the NVRTC compile once
# (~10–20 s). Worst case 80 + 140 + 30 + 30 + 50 = 330 s; expected ~200 s.
# Every suite logs "cuda: <n> device calls in <t> s": retune from those.
SUITE_CALLS=120
SEPARATE_CALLS=400
T_TIMING=80 T_CONFORMANCE=140 T_PRIMS=30 T_AD_PROGRAM=30 T_DRIVERS=50
TOTAL=$((T_TIMING + T_CONFORMANCE + T_PRIMS + T_AD_PROGRAM + T_DRIVERS))

build() {
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    mkdir -p "$DEV"
    exclude=$(git rev-parse --git-path info/exclude)
    mkdir -p "$(dirname "$exclude")"
    grep -qx '/.device/' "$exclude" 2>/dev/null || echo '/.device/' >>"$exclude"
    local json
    json=$(cargo test --release -p lindiff-tests --no-default-features --features cuda \
        --test cuda_conformance --test prims --test ad_program --no-run --message-format=json)
    for name in cuda_conformance prims ad_program; do
        exe=$(printf '%s\n' "$json" | grep '"executable":"[^"]*"' | grep "\"name\":\"$name\"" |
            sed 's/.*"executable":"\([^"]*\)".*/\1/' | tail -1)
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
    # The carry limit (64 MiB) holds the working tree that travels with the
    # carried folder: tracked files and untracked ones git does not ignore.
    local size tree limit
    size=$(du -sb "$DEV" --exclude=out | cut -f1)
    tree=$(git ls-files -z --cached --others --exclude-standard |
        du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
    limit=$((64 * 1024 * 1024 - tree))
    if [ "$size" -gt "$limit" ]; then
        echo "device-check: $DEV is $size bytes; with the working tree ($tree bytes) it is over the 64 MiB carry limit (room: $limit bytes)" >&2
        exit 1
    fi
    echo "device-check: built $DEV ($size bytes; working tree $tree bytes; room left $((limit - size)) bytes of 64 MiB; ldd: no OpenBLAS/BLAS/LAPACK in any binary):"
    ls -l "$DEV"
    cat <<CALL

On a session whose device tool has a GPU (status: can_start_another true), call:
  run(command="bash .device/device-check.sh run", carry=[".device"], timeout_s=420)
(the run keeps itself to at most ${TOTAL} s: timing ${T_TIMING} + suites ${T_CONFORMANCE}/${T_PRIMS}/${T_AD_PROGRAM}
+ drivers ${T_DRIVERS} (informational), each under \`timeout\`; suites capped at ${SUITE_CALLS} calls each)
The logs come back under \$OUT: cuda_conformance.log, prims.log, ad_program.log, timing.md,
timing_drivers.md, summary.txt.
CALL
}

# The folders holding the CUDA 13 user-space libraries (cuSOLVER, cuBLAS,
# NVRTC, …), for LD_LIBRARY_PATH. `find -L` follows the symlinked
# /usr/local/cuda*; */stubs/* (link-time stubs, a stub libcuda fails every
# call) and */compat/* are never searched. libcuda (the driver) is left to
# the loader when ldconfig knows it; only otherwise is a folder holding a
# real libcuda.so.1 added, last.
find_libs() {
    local roots=(/usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/local/nvidia/lib64
        /opt/torch/.venv/lib/python3.12/site-packages/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64)
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
    local unsupported skipped capped calls
    unsupported=$(grep -c 'skipped (unsupported on cuda)' "$out/$log" || true)
    skipped=$(grep -c '^skipped: ' "$out/$log" || true)
    capped=$(grep -c 'stopped at the call budget' "$out/$log" || true)
    calls=$(grep -o 'cuda: [0-9]* device calls' "$out/$log" | awk '{s += $2} END {print s + 0}')
    echo "rc=$rc, $((SECONDS - start)) s, device calls: $calls; suites skipped as unsupported on cuda: $unsupported," \
        "stopped at the call budget: $capped, skipped for no GPU: $skipped" | tee -a "$out/summary.txt"
    grep -h 'skipped (unsupported on cuda)' "$out/$log" | sort | uniq -c | sort -rn | head -20 |
        tee -a "$out/summary.txt" || true
}

run() {
    out=${OUT:-$DEV/out}
    mkdir -p "$out"
    # The carry may not keep the executable bits.
    chmod +x "$DEV"/* 2>/dev/null || true
    local libs
    libs=$(find_libs)
    export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee "$out/summary.txt"
    if ! have_libcuda "$LD_LIBRARY_PATH"; then
        echo "no GPU: no CUDA driver library (libcuda.so.1) known to ldconfig or under the searched roots" |
            tee -a "$out/summary.txt"
        exit 3
    fi
    if command -v nvidia-smi >/dev/null && ! nvidia-smi -L >>"$out/summary.txt" 2>&1; then
        echo "no GPU: nvidia-smi sees no device" | tee -a "$out/summary.txt"
        exit 3
    fi
    # A suite whose cuda arm cannot get the GPU fails instead of skipping.
    export LINDIFF_REQUIRE_CUDA=1
    # The test threads trace fixed-capacity programs on the stack: cargo
    # sets this from .cargo/config.toml, a bare test binary does not (the
    # suites overflow the default 2 MiB stack).
    export RUST_MIN_STACK=67108864
    status=0
    # Budgets and call caps: see the top of this file.
    step required "$T_TIMING" timing.md "$DEV/cuda_timing" --require-gpu --part required
    LINDIFF_CUDA_SUITE_CALLS=$SUITE_CALLS \
        step required "$T_CONFORMANCE" cuda_conformance.log "$DEV/cuda_conformance" ::cuda --show-output
    LINDIFF_CUDA_SUITE_CALLS=$SEPARATE_CALLS step required "$T_PRIMS" prims.log "$DEV/prims" ::cuda --show-output
    LINDIFF_CUDA_SUITE_CALLS=$SEPARATE_CALLS \
        step required "$T_AD_PROGRAM" ad_program.log "$DEV/ad_program" ::cuda --show-output
    step info "$T_DRIVERS" timing_drivers.md "$DEV/cuda_timing" --require-gpu --part drivers
    echo "total ${SECONDS} s, status $status (the drivers step is informational)" | tee -a "$out/summary.txt"
    exit $status
}

case "$mode" in
    build) build ;;
    run) run ;;
    *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
