"""numpy, scipy and JAX on the cases of host-cpu/benches/peers.rs.

Driven over stdin/stdout by that bench (`cargo xtask bench --peers`), one
JSON object a line each way, so that its samples alternate with lindiff's
sample by sample:

  {"cmd": "load", "kind": k, "case": c, "path": p, "dims": [...]} -> {"libs": [...]}
      reads case c (of kind k: svd_batch, cholesky, svd, svd_loss,
      eigh, eigh_loss, svd_hvp (A and the direction as a batch of two), expm,
      expm_loss, expm_general, expm_general_loss, logm, sqrtm, and
      eigh_phases: LAPACK's steps of a symmetric eigendecomposition,
      offered as the "libs" dsyevd, dsytrd, dstevd and dormtr) from p, raw little-endian f64 written by the bench
      (column-major matrices, batch last, as lindiff lays them out), builds
      each library's function and runs it once (JAX: compiles it);
  {"cmd": "check", "case": c, "lib": l, "path": p} -> {"len": k}
      writes the library's result to compare (singular values, L, value and
      gradient) to p, column-major, raw f64;
  {"cmd": "time", "case": c, "lib": l, "reps": r} -> {"seconds": t}
      the fastest of r timed calls (JAX: each until block_until_ready);
  {"cmd": "accuracy", "kind": f, "a": p, "w": q, "ours": r, "n": n} -> {"<lib>_value": e, "<lib>_grad": e, ...}
      for f in expm, logm, sqrtm (and the Hermitian forms expm_hermitian,
      logm_pd, sqrtm_psd, on a symmetric A, whose gradients are folded onto the
      lower triangle they read): the relative Frobenius errors of f(A) and of
      the gradient of <W, f(A)> (= L(A^T, W), the Frechet derivative at A^T
      applied to W), lindiff's (read from r: value then gradient, column-major)
      and each peer's, against mpmath at 40 digits on the same stored A (the
      gradient by the block identity f([[A^T, W], [0, A^T]]) = [[f, L], [0, f]]);
      keys of what a library cannot compute are left out;
  {"cmd": "done"} -> {"medians": {case: {lib: seconds}}}
      the median of each case's samples, then exits.

The environment sets one thread per library (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, XLA_FLAGS); the bench passes it.
"""

import json
import statistics
import sys
import time

import numpy as np

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - reported as a missing library
    sla = None
try:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    import jax.scipy.linalg
except ImportError:  # pragma: no cover
    jax = None


def read(path, dims):
    """The bench's column-major array (batch last) as numpy's row-major one."""
    raw = np.fromfile(path, dtype="<f8")
    if len(dims) == 2:
        n, m = dims
        return np.ascontiguousarray(raw.reshape(m, n).T)
    if len(dims) == 3:
        n, m, count = dims
        return np.ascontiguousarray(raw.reshape(count, m, n).transpose(0, 2, 1))
    return raw.reshape(dims)


def flat(x):
    """Column-major flattening of each matrix, batch last, as lindiff's."""
    x = np.asarray(x)
    if x.ndim == 3:
        return x.transpose(0, 2, 1).reshape(-1)
    return x.reshape(-1, order="F")


def functions(case, a):
    """{lib: (call, result)}: call() runs once, result(out) -> check vector."""
    out = {}
    if case == "svd_batch":
        out["numpy"] = (lambda: np.linalg.svd(a), lambda r: r[1].reshape(-1))
        if jax is not None:
            f = jax.jit(jax.vmap(jnp.linalg.svd))
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.asarray(r[1]).reshape(-1))
    elif case == "cholesky":
        out["numpy"] = (lambda: np.linalg.cholesky(a), flat)
        if sla is not None:
            out["scipy"] = (lambda: sla.cholesky(a, lower=True), flat)
        if jax is not None:
            f = jax.jit(jnp.linalg.cholesky)
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), flat)
    elif case == "svd":
        out["numpy"] = (lambda: np.linalg.svd(a, full_matrices=False), lambda r: r[1])
        if sla is not None:
            out["scipy"] = (lambda: sla.svd(a, full_matrices=False), lambda r: r[1])
        if jax is not None:
            f = jax.jit(lambda m: jnp.linalg.svd(m, full_matrices=False))
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.asarray(r[1]))
    elif case == "eigh":
        out["numpy"] = (lambda: np.linalg.eigh(a), lambda r: r[0])
        if sla is not None:
            out["scipy"] = (lambda: sla.eigh(a), lambda r: r[0])
        if jax is not None:
            f = jax.jit(jnp.linalg.eigh)
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.asarray(r[0]))
    elif case == "eigh_phases":
        # The steps of LAPACK's dsyevd (the routine JAX's eigh calls), each
        # timed alone from scipy's OpenBLAS: the reduction to tridiagonal
        # form (blocked: the workspace dsyevd would give it), the
        # tridiagonal divide and conquer with vectors on that tridiagonal
        # matrix, and the back-transformation of its eigenvectors (dormtr
        # for a lower dsytrd is dormqr on the reflectors below the
        # subdiagonal, applied to rows 1.. of Z; timed in place on a work
        # copy, as dsyevd applies it). Each check vector is the eigenvalues
        # the step leads to.
        import scipy.linalg.lapack as lapack

        n = a.shape[0]
        f = np.asfortranarray(a)
        tri_lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])
        c, d, e, tau, info = lapack.dsytrd(f, lower=1, lwork=tri_lwork)
        assert info == 0, f"dsytrd info {info}"
        _, z, info = lapack.dstevd(d, e, compute_v=1)
        assert info == 0, f"dstevd info {info}"
        reflectors = np.asfortranarray(c[1:, : n - 1])
        rows = np.asfortranarray(z[1:, :])
        back_lwork = int(lapack.dormqr(b"L", b"N", reflectors, tau, rows, -1)[1][0])
        work = rows.copy(order="F")

        def back(c_rows, overwrite):
            return lapack.dormqr(b"L", b"N", reflectors, tau, c_rows, back_lwork, overwrite_c=overwrite)

        def rayleigh(_):
            # The eigenvalues as Rayleigh quotients of Q Z (Q applied once).
            q_z = np.vstack([z[:1, :], back(rows, 0)[0]])
            return np.einsum("ij,ij->j", q_z, a @ q_z)

        out["dsyevd"] = (lambda: lapack.dsyevd(f, compute_v=1, lower=1), lambda r: r[0])
        out["dsytrd"] = (
            lambda: lapack.dsytrd(f, lower=1, lwork=tri_lwork),
            lambda r: lapack.dstevd(r[1], r[2], compute_v=0)[0],
        )
        out["dstevd"] = (lambda: lapack.dstevd(d, e, compute_v=1), lambda r: r[0])
        out["dormtr"] = (lambda: back(work, 1), rayleigh)
    elif case == "svd_loss":
        if jax is not None:
            f = jax.jit(jax.value_and_grad(lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False))))
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.concatenate([[float(r[0])], flat(r[1])]))
    elif case == "eigh_loss":
        if jax is not None:
            w = jnp.arange(1, a.shape[0] + 1, dtype=jnp.float64)
            f = jax.jit(jax.value_and_grad(lambda m: jnp.dot(jnp.linalg.eigh(m)[0], w)))
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.concatenate([[float(r[0])], flat(r[1])]))
    elif case == "svd_hvp":
        if jax is not None:
            nuclear = lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False))
            f = jax.jit(lambda m, v: jax.jvp(jax.grad(nuclear), (m,), (v,))[1])
            x, v = jnp.asarray(a[0]), jnp.asarray(a[1])
            out["jax"] = (lambda: jax.block_until_ready(f(x, v)), flat)
    elif case in ("expm", "expm_general"):
        if sla is not None:
            out["scipy"] = (lambda: sla.expm(a), flat)
        if jax is not None:
            f = jax.jit(jax.scipy.linalg.expm)
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), flat)
    elif case in ("expm_loss", "expm_general_loss"):
        if jax is not None:
            f = jax.jit(jax.value_and_grad(lambda m: jnp.sum(jax.scipy.linalg.expm(m))))
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: np.concatenate([[float(r[0])], flat(r[1])]))
    elif case == "logm":
        if sla is not None:
            out["scipy"] = (lambda: sla.logm(a), lambda r: flat(np.real(r)))
    elif case == "sqrtm":
        if sla is not None:
            out["scipy"] = (lambda: sla.sqrtm(a), lambda r: flat(np.real(r)))
        if jax is not None:
            f = jax.scipy.linalg.sqrtm
            x = jnp.asarray(a)
            out["jax"] = (lambda: jax.block_until_ready(f(x)), lambda r: flat(np.real(r)))
    else:
        raise ValueError(f"unknown case {case}")
    return out


def block(at, w):
    """[[A^T, W], [0, A^T]]: f of it holds L(A^T, W) in its upper right block."""
    n = at.shape[0]
    b = np.zeros((2 * n, 2 * n))
    b[:n, :n] = at
    b[n:, n:] = at
    b[:n, n:] = w
    return b


def reference(kind, x):
    """f(x) by mpmath at 40 significant digits, as float64."""
    import mpmath

    mpmath.mp.dps = 40
    f = {"expm": mpmath.expm, "logm": mpmath.logm, "sqrtm": mpmath.sqrtm}[kind]
    y = f(mpmath.matrix(x.tolist()))
    return np.array([[float(mpmath.re(y[i, j])) for j in range(y.cols)] for i in range(y.rows)])


# The Hermitian forms: the general function they compute, on a symmetric A.
HERMITIAN = {"expm_hermitian": "expm", "logm_pd": "logm", "sqrtm_psd": "sqrtm"}


def fold(g):
    """A gradient on the lower triangle lindiff's Hermitian forms read:
    G_ij + G_ji below the diagonal, G_ii on it, zero above."""
    return np.tril(g + g.T, -1) + np.diag(np.diag(g))


def accuracy(msg):
    """Relative Frobenius errors of value and gradient, per library."""
    n, kind = int(msg["n"]), msg["kind"]
    hermitian = kind in HERMITIAN
    kind = HERMITIAN.get(kind, kind)
    a = read(msg["a"], [n, n])
    w = read(msg["w"], [n, n])
    ours = np.fromfile(msg["ours"], dtype="<f8")
    value = reference(kind, a)
    grad = reference(kind, block(a.T, w))[:n, n:]
    if hermitian:
        grad = fold(grad)
    lower = fold if hermitian else (lambda g: g)
    err = lambda x, ref: float(np.linalg.norm(np.real(x) - ref) / np.linalg.norm(ref))
    out = {
        "lindiff_value": err(ours[: n * n].reshape(n, n, order="F"), value),
        "lindiff_grad": err(ours[n * n :].reshape(n, n, order="F"), grad),
    }
    if sla is not None:
        f = {"expm": sla.expm, "logm": sla.logm, "sqrtm": sla.sqrtm}[kind]
        out["scipy_value"] = err(f(a), value)
        if kind == "expm":
            out["scipy_grad"] = err(lower(sla.expm_frechet(a.T, w, compute_expm=False)), grad)
        else:
            out["scipy_grad"] = err(lower(np.real(f(block(a.T, w))[:n, n:])), grad)
    if jax is not None and kind in ("expm", "sqrtm"):
        f = {"expm": jax.scipy.linalg.expm, "sqrtm": jax.scipy.linalg.sqrtm}[kind]
        x, wj = jnp.asarray(a), jnp.asarray(w)
        out["jax_value"] = err(np.asarray(f(x)), value)
        try:
            g = jax.grad(lambda m: jnp.sum(wj * jnp.real(f(m))))(x)
            if np.all(np.isfinite(np.asarray(g))):
                out["jax_grad"] = err(lower(np.asarray(g)), grad)
            else:
                out["jax_grad"] = float("inf")
        except Exception:  # no derivative rule: nothing to compare
            pass
    return out


def main():
    loaded = {}
    samples = {}
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg["cmd"]
        try:
            if cmd == "load":
                a = read(msg["path"], msg["dims"])
                fns = functions(msg["kind"], a)
                results = {}
                for lib, (call, _) in fns.items():
                    call()  # JAX compiles here: the timed calls exclude it
                    results[lib] = call()
                loaded[msg["case"]] = (fns, results)
                reply = {"libs": list(fns)}
            elif cmd == "check":
                fns, results = loaded[msg["case"]]
                v = np.asarray(fns[msg["lib"]][1](results[msg["lib"]]), dtype="<f8")
                v.tofile(msg["path"])
                reply = {"len": int(v.size)}
            elif cmd == "time":
                call = loaded[msg["case"]][0][msg["lib"]][0]
                best = float("inf")
                for _ in range(int(msg["reps"])):
                    t = time.perf_counter()
                    call()
                    best = min(best, time.perf_counter() - t)
                samples.setdefault(msg["case"], {}).setdefault(msg["lib"], []).append(best)
                reply = {"seconds": best}
            elif cmd == "accuracy":
                reply = accuracy(msg)
            elif cmd == "done":
                medians = {c: {l: statistics.median(s) for l, s in libs.items()} for c, libs in samples.items()}
                print(json.dumps({"medians": medians}), flush=True)
                return
            else:
                reply = {"error": f"unknown command {cmd}"}
        except Exception as e:  # reported to the bench, which prints it
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
