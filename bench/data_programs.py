"""Loop programs whose control flow depends on the data, for bench/loop_bench.py
(``--suite data``): an ``if`` on a value, a ``while`` to convergence, masks, a ``break``.

The same conventions as bench/loop_programs.py: plain NumPy and Python loops in the subset
NumPy, ``numba.njit`` and Pythran all compile, inputs at three sizes (``tiny``, ``small``,
``medium``), and each program's Pythran signature. Sources:

- ``crc16``: the CRC-16/MODBUS bit loop as it is written in countless tutorials;
- ``crc32_table``: the CRC-32 (IEEE) of zlib by a 256-entry lookup table of the module, as
  table-driven CRC code is written;
- ``goertzel_power``: the Goertzel recurrence for the power of one frequency, its state kept
  in a list (``s[0] = ...``, ``s[1:3] = s[0:2]``) as nickodell/morse-code's ``gz_dsp`` keeps it;
- ``nussinov``: the RNA folding dynamic programme (npbench's, its ``match`` written inline);
- ``laplace_to_convergence``: step 9 of Lorena Barba's "12 steps to Navier-Stokes" (the
  Laplace equation iterated until the relative change falls below a tolerance);
- ``bubble_sort``: exchanges on a comparison of two elements;
- ``kepler``: Newton's method on Kepler's equation per orbit, iterated to a tolerance;
- ``masked_power``, ``masked_statistics``: boolean masks (an assignment, masked reductions);
- ``first_crossing``: a search loop that ``break``s;
- ``mandelbrot``: the NumPy tutorial's escape-time loop with boolean masks;
- ``csr_matvec``: a CSR sparse matrix-vector product (inner bounds read from the data);
- ``green_contraction``: an index-array gather and an ``einsum`` contraction;
- ``contour_solve``: ``np.linalg.solve`` per quadrature node of a contour integral;
- ``logged_relaxation``: relaxation steps with a ``print`` in the loop;
- ``clipped_diffusion``: diffusion steps clipped at a quantile that a plain Python helper
  finds by sorting a list (a graph break in the loop's body: neither Numba nor Pythran
  compiles the helper);
- ``histogram_counts``: a histogram by hand, ``counts[bins[i]] += 1`` (a write at a position
  read from the data), bins found by comparisons;
- ``insertion_sort``: the textbook in-place insertion sort (``while j >= 0 and x[j] > key``
  shifting elements);
- ``lorenz_history``: a fourth-order Runge-Kutta integration of the Lorenz system keeping
  its history in a list (``ys.append(y)`` each step, then ``np.array(ys)``), as public ODE
  code does (Valkondrat/haos_TS's ``runge_kutta``);
- ``neighbour_counts``: DBSCAN's region query, ``np.where(d < eps)[0]`` per point (a length
  the data decide on every trip of the loop);
- ``outlier_trimmed_mean``: the values within two deviations of the mean, gathered by a mask
  into an array of a length the data decide, sorted, their middle half averaged;
- ``azimuthal_profile``: azimuthal integration by two histograms (pyFAI's, as npbench's
  ``azimint_hist``: the mean of the data in each ring of radius).
"""

from __future__ import annotations

import numpy as np

from bench.loop_programs import Program, _n, _sizes

VECTOR, MATRIX, FLOAT = "float64[:]", "float64[:,:]", "float"


def crc16(data):
    """CRC-16/MODBUS of bytes (values 0-255 in an int64 array; reflected polynomial 0xA001),
    bit by bit."""
    crc = 0xFFFF
    for i in range(data.shape[0]):
        crc ^= data[i]
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return crc


def _crc32_entry(byte):
    value = byte
    for _ in range(8):
        value = (value >> 1) ^ 0xEDB88320 if value & 1 else value >> 1
    return value


CRC32_TABLE = tuple(_crc32_entry(byte) for byte in range(256))


def crc32_table(data):
    """CRC-32 (IEEE) of bytes (values 0-255 in an int64 array) by the module's lookup table."""
    crc = 0xFFFFFFFF
    for i in range(data.shape[0]):
        crc = (crc >> 8) ^ CRC32_TABLE[(crc ^ data[i]) & 0xFF]
    return crc ^ 0xFFFFFFFF


def nussinov(seq):
    """The largest number of base pairs of an RNA sequence (bases 0-3; 0+3 and 1+2 pair)."""
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = table[i, j - 1]
            if i + 1 < n:
                best = max(best, table[i + 1, j])
                pair = table[i + 1, j - 1]
                if i < j - 1:
                    if seq[i] + seq[j] == 3:
                        pair = pair + 1
                best = max(best, pair)
            for k in range(i + 1, j):
                best = max(best, table[i, k] + table[k + 1, j])
            table[i, j] = best
    return table


def laplace_to_convergence(p, tol):
    """Jacobi sweeps of the Laplace equation until the relative change is below ``tol``
    (right edge held at y, the rest Dirichlet/Neumann as in the "12 steps" notebook)."""
    ny = p.shape[0]
    y = np.linspace(0.0, 1.0, ny)
    change = 1.0
    steps = 0
    while change > tol:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
        p[:, 0] = 0.0
        p[:, -1] = y
        p[0, :] = p[1, :]
        p[-1, :] = p[-2, :]
        change = np.sum(np.abs(p) - np.abs(pn)) / np.sum(np.abs(pn))
        steps += 1
    return p, steps


def bubble_sort(x):
    """Sort in place by exchanging neighbours out of order."""
    n = x.shape[0]
    for i in range(n - 1):
        for j in range(n - 1 - i):
            if x[j] > x[j + 1]:
                t = x[j]
                x[j] = x[j + 1]
                x[j + 1] = t


def kepler(mean_anomaly, eccentricity, tol):
    """The eccentric anomaly E of each orbit: E - e sin E = M, by Newton's method."""
    n = mean_anomaly.shape[0]
    out = np.empty(n)
    for i in range(n):
        m = mean_anomaly[i]
        e = eccentricity[i]
        anomaly = m
        step = 1.0
        while abs(step) > tol:
            step = (anomaly - e * np.sin(anomaly) - m) / (1.0 - e * np.cos(anomaly))
            anomaly = anomaly - step
        out[i] = anomaly
    return out


def masked_power(x):
    """Inverse powers where the value is positive (a gravitational softening step)."""
    x = x.copy()
    x[x > 0] = x[x > 0] ** -1.5
    return x


def masked_statistics(data, low):
    """Mean, maximum and count of the values above ``low`` (masked reductions)."""
    above = data > low
    return data[above].mean() + data[above].max() + np.sum(above)


def first_crossing(x, level):
    """The first position where a running sum crosses ``level`` (a search loop that breaks)."""
    total = 0.0
    found = -1
    for i in range(x.shape[0]):
        total += x[i]
        if total > level:
            found = i
            break
    return found


def mandelbrot(c, iterations):
    """Escape times of points ``c`` (the NumPy tutorial's mask version: points that diverged
    are marked and reset with boolean masks each step)."""
    z = c.copy()
    escape = np.full(c.shape, iterations, dtype=np.int64)
    for i in range(iterations):
        z = z * z + c
        diverged = z.real * z.real + z.imag * z.imag > 4.0
        now = diverged & (escape == iterations)
        escape[now] = i
        z[diverged] = 2.0
    return escape


def csr_matvec(data, indices, indptr, x):
    """y = A x of a CSR matrix: the inner loop's bounds are read from the data."""
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            total += data[k] * x[indices[k]]
        y[i] = total
    return y


def green_contraction(g, picked, weights):
    """A Green's-function sum over the picked energies: an index-array gather, then a
    contraction (einsum) with the weights."""
    return np.einsum("kij,k->ij", g[picked], weights)


def contour_solve(a, nodes, weights):
    """A contour integral of the resolvent: one linear solve per quadrature node."""
    n = a.shape[0]
    total = np.zeros((n, n), dtype=np.complex128)
    for k in range(nodes.shape[0]):
        total += weights[k] * np.linalg.solve(nodes[k] * np.eye(n) - a, np.eye(n))
    return total


def logged_relaxation(u, steps):
    """Relaxation steps with a progress line printed at the last one (a print in the loop)."""
    for k in range(steps):
        u[1:-1] = 0.5 * (u[:-2] + u[2:])
        if k == steps - 1:
            print("relaxation: last step", k, "mean", np.round(u.mean(), 3))
    return u


def _upper_decile(values):
    """The upper decile of ``values``, as plain Python finds it (a list, sorted)."""
    ordered = sorted(values.tolist())
    return ordered[len(ordered) * 9 // 10]


def clipped_diffusion(u, steps):
    """Diffusion steps whose values are clipped at the upper decile of a sample of them."""
    for _ in range(steps):
        smooth = u[1:-1] + 0.2 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        limit = _upper_decile(smooth[::97])
        u[1:-1] = np.minimum(smooth, limit) + 1e-3 * np.tanh(smooth - limit)
    return u


def histogram_counts(x, edges):
    """Counts of ``x`` in the bins ``edges`` delimits (uniform, as ``np.histogram``'s), by
    hand: each value's bin computed, then counted."""
    counts = np.zeros(edges.shape[0] - 1, dtype=np.int64)
    low, width = edges[0], edges[1] - edges[0]
    last = edges.shape[0] - 2
    for i in range(x.shape[0]):
        k = int((x[i] - low) / width)
        if k > last:
            k = last
        counts[k] += 1
    return counts


def insertion_sort(x):
    """Sort in place, each element moved left past the larger ones before it."""
    for i in range(1, x.shape[0]):
        key = x[i]
        j = i - 1
        while j >= 0 and x[j] > key:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = key


def lorenz_history(ts, y0, p):
    """RK4 steps of the Lorenz system, the state appended to a list at every step."""
    ys = [y0]
    y = y0
    for t in range(ts.shape[0] - 1):
        dt = ts[t + 1] - ts[t]
        k1 = np.array(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]
        )
        z = y + dt / 2 * k1
        k2 = np.array(
            [p[0] * (z[1] - z[0]), z[0] * (p[1] - z[2]) - z[1], z[0] * z[1] - p[2] * z[2]]
        )
        z = y + dt / 2 * k2
        k3 = np.array(
            [p[0] * (z[1] - z[0]), z[0] * (p[1] - z[2]) - z[1], z[0] * z[1] - p[2] * z[2]]
        )
        z = y + dt * k3
        k4 = np.array(
            [p[0] * (z[1] - z[0]), z[0] * (p[1] - z[2]) - z[1], z[0] * z[1] - p[2] * z[2]]
        )
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.array(ys)


def _bytes(rng, n):
    return (rng.integers(0, 256, n).astype(np.int64),)


def _sequence(rng, n):
    return (rng.integers(0, 4, n).astype(np.int32),)


def _plate(rng, n, m):
    p = np.zeros((n, m))
    p[:, -1] = np.linspace(0.0, 1.0, n)
    return (p, 1e-4)


def goertzel_power(samples, freq):
    """The power of the frequency ``freq`` (cycles per sample) in ``samples`` by the Goertzel
    recurrence, its state in a list."""
    coeff = 2.0 * np.cos(2.0 * np.pi * freq)
    s = [0.0, 0.0, 0.0]
    for n in range(samples.shape[0]):
        s[0] = samples[n] + coeff * s[1] - s[2]
        s[1:3] = s[0:2]
    return s[1] ** 2 + s[2] ** 2 - s[1] * s[2] * coeff


def _tone(rng, n):
    return (np.sin(np.arange(n) * 0.3) + 0.1 * rng.standard_normal(n), 0.05)


def _shuffled(rng, n):
    return (rng.random(n),)


def azimuthal_profile(data, radius, npt):
    """The mean of ``data`` in each of ``npt`` equal rings of ``radius`` (``np.histogram``)."""
    counts = np.histogram(radius, npt)[0]
    sums = np.histogram(radius, npt, weights=data)[0]
    return sums / counts


def _rings(rng, n):
    return (rng.random(n), rng.random(n), max(8, n // 400))


def _signed(rng, n):
    return (rng.standard_normal(n),)


def _above(rng, n):
    return (rng.random(n), 0.7)


def _crossing(rng, n):
    return (rng.random(n), 0.35 * n)  # (crosses about 70% of the way along)


def _plane(rng, n):
    y, x = np.mgrid[-1.4 : 1.4 : n * 1j, -2.0 : 0.8 : n * 1j]
    return (x + 1j * y, 40)


def _sparse(rng, n):
    per_row = 8
    indices = rng.integers(0, n, n * per_row).astype(np.int64)
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
    return (rng.random(n * per_row), indices, indptr, rng.random(n))


def _greens(rng, n):
    return (rng.random((64, n, n)), rng.integers(0, 64, 48).astype(np.int64), rng.random(48))


def _resolvent(rng, n):
    angles = np.linspace(0.0, 2 * np.pi, 16, endpoint=False)
    return (rng.random((n, n)), 3.0 * np.exp(1j * angles), np.full(16, 1.0 / 16 + 0j))


def _relaxed(rng, n):
    return (rng.random(n), 200)


def neighbour_counts(points, eps):
    """How many points lie within ``eps`` of each point (DBSCAN's region query)."""
    counts = np.zeros(points.shape[0], dtype=np.int64)
    for i in range(points.shape[0]):
        d = np.sqrt(((points - points[i]) ** 2).sum(axis=1))
        neighbours = np.where(d < eps)[0]
        counts[i] = len(neighbours)
    return counts


def outlier_trimmed_mean(x):
    """The mean of the middle half of the values within two deviations of the mean."""
    kept = x[np.abs(x - x.mean()) < 2 * x.std()]
    ordered = np.sort(kept)
    quarter = ordered.shape[0] // 4
    return ordered[quarter : ordered.shape[0] - quarter].mean()


def _points(rng, n):
    return (rng.random((n, 2)), 0.1)


def _diffused(rng, n):
    return (rng.random(n), 20)


def _binned(rng, n):
    return (rng.random(n), np.linspace(0.0, 1.0, 101))


def _lorenz(rng, n):
    return (np.linspace(0.0, 0.01 * n, n), rng.random(3) + 1.0, np.array([10.0, 28.0, 8 / 3]))


def _orbits(rng, n):
    return (rng.random(n) * 2 * np.pi, rng.random(n) * 0.9, 1e-12)


PROGRAMS = [
    Program("crc16", crc16, _bytes, _n(64, 20000, 100000), "int64[:]"),
    Program("crc32_table", crc32_table, _bytes, _n(64, 20000, 100000), "int64[:]"),
    Program("neighbour_counts", neighbour_counts, _points, _n(16, 500, 2000), f"{MATRIX}, {FLOAT}"),
    Program("outlier_trimmed_mean", outlier_trimmed_mean, _signed, _n(16, 100000, 1000000), VECTOR),
    Program("goertzel_power", goertzel_power, _tone, _n(64, 200000, 2000000), f"{VECTOR}, {FLOAT}"),
    Program("nussinov", nussinov, _sequence, _n(12, 120, 250), "int32[:]"),
    Program(
        "laplace_to_convergence",
        laplace_to_convergence,
        _plate,
        _sizes({"n": 8, "m": 8}, {"n": 31, "m": 31}, {"n": 61, "m": 61}),
        f"{MATRIX}, {FLOAT}",
    ),
    Program("bubble_sort", bubble_sort, _shuffled, _n(16, 400, 1200), VECTOR),
    Program("kepler", kepler, _orbits, _n(16, 5000, 50000), f"{VECTOR}, {VECTOR}, {FLOAT}"),
    Program("masked_power", masked_power, _signed, _n(16, 100000, 1000000), VECTOR),
    Program(
        "masked_statistics",
        masked_statistics,
        _above,
        _n(16, 100000, 1000000),
        f"{VECTOR}, {FLOAT}",
    ),
    Program(
        "first_crossing", first_crossing, _crossing, _n(16, 100000, 1000000), f"{VECTOR}, {FLOAT}"
    ),
    Program("mandelbrot", mandelbrot, _plane, _n(16, 200, 600), "complex128[:,:], int"),
    Program(
        "csr_matvec",
        csr_matvec,
        _sparse,
        _n(16, 20000, 200000),
        "float64[:], int64[:], int64[:], float64[:]",
    ),
    Program(
        "green_contraction",
        green_contraction,
        _greens,
        _n(4, 128, 256),
        "float64[:,:,:], int64[:], float64[:]",
    ),
    Program(
        "contour_solve",
        contour_solve,
        _resolvent,
        _n(4, 16, 48),
        "float64[:,:], complex128[:], complex128[:]",
    ),
    Program(
        "logged_relaxation", logged_relaxation, _relaxed, _n(16, 2000, 20000), f"{VECTOR}, int"
    ),
    Program(
        "clipped_diffusion", clipped_diffusion, _diffused, _n(300, 20000, 200000), f"{VECTOR}, int"
    ),
    Program(
        "histogram_counts",
        histogram_counts,
        _binned,
        _n(64, 100000, 1000000),
        f"{VECTOR}, {VECTOR}",
    ),
    Program("insertion_sort", insertion_sort, _shuffled, _n(16, 1000, 3000), VECTOR),
    Program(
        "azimuthal_profile",
        azimuthal_profile,
        _rings,
        _n(64, 400000, 4000000),
        f"{VECTOR}, {VECTOR}, int",
    ),
    Program(
        "lorenz_history",
        lorenz_history,
        _lorenz,
        _n(16, 2000, 20000),
        f"{VECTOR}, {VECTOR}, {VECTOR}",
    ),
]
