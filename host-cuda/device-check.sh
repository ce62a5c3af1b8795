#!/usr/bin/env bash
# The CUDA device check, in two halves (see README "CUDA"):
#
#   host-cuda/device-check.sh build   here, no GPU needed: builds ONE stripped
#       release binary of the conformance suites for the CUDA provider
#       (tests/tests/cuda/main.rs, `--no-default-features --features cuda`:
#       no OpenBLAS, checked with ldd), the two suites that cannot join it
#       (prims, ad_program: own #[global_allocator]) and the timing example,
#       into .device/ (git-ignored through .git/info/exclude, ≤ 64 MiB), and
#       prints the exact `run` tool call for a GPU session.
#   host-cuda/device-check.sh run     on the GPU machine, from the repo root:
#       finds the CUDA 13 libraries, runs the suites filtered to `::cuda`
#       and the timing table, writing logs under $OUT (default .device/out).
#       Without a GPU it stops at once with "no GPU: …" (exit 3).
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || echo "$(dirname "$0")/..")"
DEV=.device
mode=${1:-build}

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
    if ldd "$DEV/cuda_conformance" | grep -qi openblas; then
        echo "device-check: the CUDA suite links OpenBLAS" >&2
        exit 1
    fi
    local size
    size=$(du -sb "$DEV" --exclude=out | cut -f1)
    if [ "$size" -gt $((64 * 1024 * 1024)) ]; then
        echo "device-check: $DEV is $size bytes, over the 64 MiB carry limit" >&2
        exit 1
    fi
    echo "device-check: built $DEV ($size bytes; no OpenBLAS in cuda_conformance):"
    ls -l "$DEV"
    cat <<'CALL'

On a session whose device tool has a GPU (status: can_start_another true), call:
  run(command="bash .device/device-check.sh run", carry=[".device"], timeout_s=420)
The logs come back under $OUT: conformance.log, prims.log, ad_program.log, timing.md, summary.txt.
CALL
}

find_libs() {
    local roots=(/usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/local/nvidia/lib64
        /opt/torch/.venv/lib/python3.12/site-packages/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64)
    local dirs=()
    for root in "${roots[@]}"; do
        [ -d "$root" ] || continue
        while IFS= read -r lib; do
            dirs+=("$(dirname "$lib")")
        done < <(find "$root" -maxdepth 4 \( -name 'libcuda.so*' -o -name 'libcusolver.so*' -o -name 'libcublas.so*' \
            -o -name 'libcublasLt.so*' -o -name 'libnvrtc.so*' -o -name 'libnvrtc-builtins.so*' \
            -o -name 'libcusparse.so*' -o -name 'libnvJitLink.so*' \) 2>/dev/null)
    done
    printf '%s\n' "${dirs[@]}" | awk 'NF && !seen[$0]++' | paste -sd:
}

run() {
    local out=${OUT:-$DEV/out}
    mkdir -p "$out"
    local libs
    libs=$(find_libs)
    export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee "$out/summary.txt"
    if ! printf '%s' "$libs" | tr ':' '\n' | while read -r d; do ls "$d"/libcuda.so* 2>/dev/null; done | grep -q .; then
        echo "no GPU: no CUDA driver library (libcuda.so) under the searched roots" | tee -a "$out/summary.txt"
        exit 3
    fi
    if command -v nvidia-smi >/dev/null && ! nvidia-smi -L >>"$out/summary.txt" 2>&1; then
        echo "no GPU: nvidia-smi sees no device" | tee -a "$out/summary.txt"
        exit 3
    fi
    local status=0
    for suite in cuda_conformance prims ad_program; do
        echo "== $suite ::cuda" | tee -a "$out/summary.txt"
        if timeout 150 "$DEV/$suite" ::cuda >"$out/$suite.log" 2>&1; then
            tail -3 "$out/$suite.log" | tee -a "$out/summary.txt"
        else
            status=1
            grep -E '^test .* FAILED|test result' "$out/$suite.log" | tail -40 | tee -a "$out/summary.txt" || true
        fi
        grep -c 'skipped:' "$out/$suite.log" | sed 's/^/skipped tests: /' | tee -a "$out/summary.txt" || true
    done
    echo "== timing" | tee -a "$out/summary.txt"
    timeout 150 "$DEV/cuda_timing" --require-gpu 2>&1 | tee "$out/timing.md" | tee -a "$out/summary.txt" || status=1
    exit $status
}

case "$mode" in
    build) build ;;
    run) run ;;
    *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
