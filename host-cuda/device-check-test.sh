#!/usr/bin/env bash
# A test of `host-cuda/device-check.sh run` without a GPU (part of `cargo
# xtask test`, ~1 s): stub binaries that print what the real ones print run
# through the whole script with LINDIFF_DEVICE_CHECK_FAKE_GPU=1 (the
# testing-only override of its GPU detection), in a temporary folder outside
# any git repository. Catches the `set -euo pipefail` traps (a grep that
# matches nothing inside `$( … )` ends the script after one step) and checks
# the exit status and the summary's counts.
#
#   bash host-cuda/device-check-test.sh [path/to/device-check.sh]
set -euo pipefail
script=$(realpath "${1:-$(dirname "$0")/device-check.sh}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "device-check-test: $*" >&2
    [ -f "$tmp/out/summary.txt" ] && sed 's/^/  summary: /' "$tmp/out/summary.txt" >&2
    exit 1
}

# stubs MODE: .device/ with the script and four stub binaries. MODE `pass`:
# every suite passes; `fail`: cuda_conformance fails (exit 101, as libtest).
stubs() {
    rm -rf "$tmp/.device" "$tmp/out"
    mkdir -p "$tmp/.device"
    cp "$script" "$tmp/.device/device-check.sh"
    cat >"$tmp/.device/cuda_timing" <<'EOF'
#!/usr/bin/env bash
echo "device: stub"
echo "| op | dtype | median ms |"
echo "|---|---|---|"
echo "| svd 4096² (Auto = Xgesvd) | f64 | 1.00 |"
EOF
    local conformance_rc=0
    [ "$1" = fail ] && conformance_rc=101
    cat >"$tmp/.device/cuda_conformance" <<EOF
#!/usr/bin/env bash
echo "running 3 tests"
echo "ad_cholesky::cuda: cuda: 12 device calls in 0.20 s"
echo "ad_lu::cuda: cuda: 30 device calls in 1.01 s"
echo "ad_lu::cuda: stopped at the suite budget (1 s of device calls, LINDIFF_CUDA_SUITE_SECONDS): the rest of this suite did not run"
echo "householder::cuda: skipped (unsupported on cuda): householder_qr: not supported by provider cuda: x; the rest of this suite did not run"
echo "householder::cuda: cuda: 0 device calls in 0.00 s"
echo "deadline \$LINDIFF_CUDA_DEADLINE_S suite \$LINDIFF_CUDA_SUITE_SECONDS require \$LINDIFF_REQUIRE_CUDA args \$*"
[ $conformance_rc -eq 0 ] || { echo "test ad_qr::cuda ... FAILED"; echo "test result: FAILED. 2 passed; 1 failed"; exit $conformance_rc; }
echo "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.30s"
EOF
    for name in prims ad_program; do
        # No "cuda:" line at all: the counts must still be 0, not an exit.
        printf '#!/usr/bin/env bash\necho "running 1 test"\necho "test result: ok. 1 passed; 0 failed"\n' \
            >"$tmp/.device/$name"
    done
    chmod -x "$tmp/.device"/* # a copy may drop the bits; the script restores them
}

# run_it: the script's `run` from $tmp (no git repository: GIT_DIR points
# nowhere, so it falls back to its own folder's parent).
run_it() {
    local rc=0
    (cd "$tmp" && GIT_DIR=/nonexistent OUT="$tmp/out" LINDIFF_DEVICE_CHECK_FAKE_GPU=1 \
        bash .device/device-check.sh run >"$tmp/stdout" 2>&1) || rc=$?
    echo "$rc"
}

stubs pass
rc=$(run_it)
[ "$rc" -eq 0 ] || fail "all stubs pass, yet exit $rc"
summary=$tmp/out/summary.txt
for log in timing.md cuda_conformance.log prims.log ad_program.log timing_drivers.md; do
    grep -q "^== $log " "$summary" || fail "step $log did not run"
done
grep -q 'device calls: 42; suites skipped as unsupported on cuda: 1, stopped at a budget or the deadline: 1' \
    "$summary" || fail "wrong counts for cuda_conformance"
grep -q 'device calls: 0;' "$summary" || fail "no zero count for a log without cuda: lines"
grep -q 'deadline 120 suite 1 require 1 args ::cuda --nocapture' "$tmp/out/cuda_conformance.log" ||
    fail "cuda_conformance did not get its deadline/budget/flags"
grep -q '^total .* status 0' "$summary" || fail "no final total line"
grep -q '^LD_LIBRARY_PATH=[^:]' "$summary" || grep -q '^LD_LIBRARY_PATH=$' "$summary" ||
    fail "LD_LIBRARY_PATH starts with ':'"

stubs fail
rc=$(run_it)
[ "$rc" -eq 1 ] || fail "a failing suite, yet exit $rc"
grep -q '^== ad_program.log ' "$tmp/out/summary.txt" || fail "the steps after a failure did not run"
grep -q 'test ad_qr::cuda ... FAILED' "$tmp/out/summary.txt" || fail "the failure is not in the summary"

echo "device-check-test: ok (run path with stub binaries: pass → 0, a failing suite → 1, all steps run)"
