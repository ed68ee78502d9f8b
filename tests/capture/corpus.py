# ruff: noqa: B007, B008, F841 - user-code styles (unused loop variables, array defaults) on purpose
"""A corpus of ordinary numerical NumPy functions, in the styles of tutorials, textbooks and papers.

Each entry of ``CASES`` is ``(function, make_args)``; ``make_args(rng)`` builds fresh small
inputs from a ``numpy.random.Generator``: a tuple of positional arguments, or a ``Call`` when
the function takes keyword arguments. ``test_corpus.py`` traces every function: gcompile may
refuse a construct (an ``UnsupportedError`` naming it and the line), but must never fail
internally, and whatever it compiles must compute what eager NumPy computes.
"""

from __future__ import annotations

import math
from functools import reduce

import numpy as np
from numpy import abs as np_abs
from numpy import cumsum, exp, linspace, maximum, sqrt, where, zeros
from numpy.linalg import norm, solve


class Call:
    """Positional and keyword arguments of one call (for functions taking keywords)."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs


def _n(rng, lo=3, hi=12):
    return int(rng.integers(lo, hi + 1))


def _vec(rng, n=None):
    return rng.standard_normal(n if n is not None else _n(rng))


def _pos(rng, n=None):
    return rng.uniform(0.5, 2.0, n if n is not None else _n(rng))


def _mat(rng, m=None, n=None):
    return rng.standard_normal((m or _n(rng), n or _n(rng)))


def _spd(rng, n=None):
    n = n or _n(rng, 3, 6)
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# ---------------------------------------------------------------- elementwise and broadcasting


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def gelu_tanh(x):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))


def softmax_rows(z):
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def log_sum_exp(v):
    m = np.max(v)
    return m + np.log(np.sum(np.exp(v - m)))


def standardize_columns(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    return (X - mu) / (sd + 1e-8)


def min_max_scale(x, lo=0.0, hi=1.0):
    span = x.max() - x.min()
    return lo + (x - x.min()) * (hi - lo) / (span + 1e-12)


def pairwise_distances(A, B):
    diff = A[:, None, :] - B[None, :, :]
    return np.sqrt((diff**2).sum(axis=-1))


def pairwise_sq_dist_gram(X):
    sq = np.sum(X * X, axis=1)
    return sq[:, None] + sq[None, :] - 2.0 * X @ X.T


def outer_product_table(x, y):
    return np.multiply.outer(x, y) + np.add.outer(x, y)


def haversine(lat1, lon1, lat2, lon2):
    lat1, lon1, lat2, lon2 = map(np.radians, (lat1, lon1, lat2, lon2))
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    a = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    return 6371.0 * 2 * np.arcsin(np.sqrt(a))


def polar_to_cartesian(r, theta):
    return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=-1)


def clip_and_round(x, lo, hi):
    return np.round(np.clip(x, lo, hi), 2)


def imported_names(x, y):
    d = sqrt(x * x + y * y)
    return where(d > 1.0, d, zeros(d.shape)) + maximum(x, y)


def relu_leaky(x, alpha=0.01):
    return np.where(x > 0, x, alpha * x)


def huber_loss(y, yhat, delta=1.0):
    r = np.abs(y - yhat)
    quad = 0.5 * r**2
    lin = delta * (r - 0.5 * delta)
    return np.mean(np.where(r <= delta, quad, lin))


def cosine_similarity(a, b):
    return np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))


def rgb_to_gray(img):
    weights = np.array([0.299, 0.587, 0.114])
    return img @ weights


def gamma_correct(img, gamma):
    return np.power(np.clip(img, 0.0, 1.0), 1.0 / gamma)


# ---------------------------------------------------------------- finance


def black_scholes_call(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma**2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    cdf = lambda z: 0.5 * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z**3)))  # noqa: E731
    return S * cdf(d1) - K * np.exp(-r * T) * cdf(d2)


def compound_growth(principal, rates):
    value = principal
    for r in rates:
        value = value * (1 + r)
    return value


def log_returns(prices):
    return np.diff(np.log(prices))


def drawdown(prices):
    peak = np.maximum.accumulate(prices)
    return (prices - peak) / peak


def max_drawdown_loop(prices):
    peak = prices[0]
    worst = 0.0
    for p in prices:
        if p > peak:
            peak = p
        dd = (p - peak) / peak
        if dd < worst:
            worst = dd
    return worst


def ewma(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for t in range(1, x.shape[0]):
        out[t] = alpha * x[t] + (1 - alpha) * out[t - 1]
    return out


def portfolio_variance(weights, cov):
    return weights @ cov @ weights


def sharpe_ratio(returns, rf=0.0):
    excess = returns - rf
    return excess.mean() / excess.std(ddof=1) * np.sqrt(252)


def binomial_option(S, K, r, sigma, steps):
    dt = 1.0 / steps
    u = math.exp(sigma * math.sqrt(dt))
    d = 1.0 / u
    p = (math.exp(r * dt) - d) / (u - d)
    j = np.arange(steps + 1)
    prices = S * u**j * d ** (steps - j)
    values = np.maximum(prices - K, 0.0)
    for _ in range(steps):
        values = math.exp(-r * dt) * (p * values[1:] + (1 - p) * values[:-1])
    return values[0]


def monte_carlo_paths(z, s0, mu, sigma, dt):
    increments = (mu - 0.5 * sigma**2) * dt + sigma * math.sqrt(dt) * z
    return s0 * np.exp(np.cumsum(increments, axis=1))


def amortization_schedule(principal, rate, n):
    payment = principal * rate / (1 - (1 + rate) ** (-n))
    balance = np.zeros(n + 1)
    balance[0] = principal
    for k in range(n):
        balance[k + 1] = balance[k] * (1 + rate) - payment
    return balance


# ---------------------------------------------------------------- signal processing


def moving_average_cumsum(x, w):
    c = np.cumsum(np.concatenate(([0.0], x)))
    return (c[w:] - c[:-w]) / w


def moving_average_loop(x, w):
    n = x.shape[0] - w + 1
    out = np.zeros(n)
    for i in range(n):
        out[i] = x[i : i + w].mean()
    return out


def fir_filter(x, taps):
    y = np.zeros_like(x)
    for k in range(taps.shape[0]):
        y[k:] += taps[k] * x[: x.shape[0] - k]
    return y


def iir_first_order(x, a):
    y = np.zeros_like(x)
    prev = 0.0
    for i in range(x.shape[0]):
        prev = a * prev + (1 - a) * x[i]
        y[i] = prev
    return y


def convolve_valid(x, k):
    return np.convolve(x, k, mode="valid")


def autocorrelation(x, max_lag):
    x = x - x.mean()
    denom = np.dot(x, x)
    return np.array([np.dot(x[: len(x) - k], x[k:]) / denom for k in range(max_lag)])


def zero_crossings(x):
    return np.sum(np.sign(x[1:]) != np.sign(x[:-1]))


def dft_matrix(x):
    n = x.shape[0]
    k = np.arange(n)
    W = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return np.abs(W @ x)


def hann_window_power(x):
    n = x.shape[0]
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / (n - 1))
    return np.sum((x * w) ** 2) / np.sum(w**2)


def median_filter_3(x):
    padded = np.pad(x, 1, mode="edge")
    stacked = np.stack([padded[:-2], padded[1:-1], padded[2:]])
    return np.median(stacked, axis=0)


def envelope_peak_hold(x, decay):
    env = np.empty_like(x)
    level = 0.0
    for i, v in enumerate(np.abs(x)):
        level = max(v, level * decay)
        env[i] = level
    return env


# ---------------------------------------------------------------- image processing and stencils


def box_blur(img):
    out = img.copy()
    out[1:-1, 1:-1] = (
        img[:-2, :-2]
        + img[:-2, 1:-1]
        + img[:-2, 2:]
        + img[1:-1, :-2]
        + img[1:-1, 1:-1]
        + img[1:-1, 2:]
        + img[2:, :-2]
        + img[2:, 1:-1]
        + img[2:, 2:]
    ) / 9.0
    return out


def sobel_magnitude(img):
    gx = img[1:-1, 2:] - img[1:-1, :-2]
    gy = img[2:, 1:-1] - img[:-2, 1:-1]
    return np.hypot(gx, gy)


def laplacian_loops(u):
    n, m = u.shape
    lap = np.zeros_like(u)
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            lap[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]
    return lap


def heat_equation_1d(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def jacobi_2d(grid, iters):
    g = grid.copy()
    for _ in range(iters):
        new = g.copy()
        new[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        g = new
    return g


def game_of_life_step(board):
    nb = sum(
        np.roll(np.roll(board, di, axis=0), dj, axis=1)
        for di in (-1, 0, 1)
        for dj in (-1, 0, 1)
        if (di, dj) != (0, 0)
    )
    return ((nb == 3) | ((board == 1) & (nb == 2))).astype(np.int64)


def threshold_image(img, t):
    out = np.zeros_like(img)
    out[img > t] = 1.0
    return out


def histogram_equalize(img):
    flat = img.ravel()
    order = np.argsort(flat)
    ranks = np.empty_like(order)
    ranks[order] = np.arange(flat.size)
    return (ranks / (flat.size - 1)).reshape(img.shape)


def integral_image(img):
    return img.cumsum(axis=0).cumsum(axis=1)


def flip_and_rotate(img):
    return np.rot90(img[::-1, :]).T + np.fliplr(img).T


def downsample_2x(img):
    h, w = img.shape[0] // 2 * 2, img.shape[1] // 2 * 2
    v = img[:h, :w]
    return 0.25 * (v[0::2, 0::2] + v[1::2, 0::2] + v[0::2, 1::2] + v[1::2, 1::2])


def wave_equation(u0, c, steps):
    prev = u0.copy()
    cur = u0.copy()
    for _ in range(steps):
        nxt = np.zeros_like(cur)
        nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + c * c * (cur[2:] - 2 * cur[1:-1] + cur[:-2])
        prev, cur = cur, nxt
    return cur


# ---------------------------------------------------------------- simulation


def euler_ode(y0, k, dt, steps):
    y = y0
    for _ in range(steps):
        y = y + dt * (-k * y)
    return y


def rk4_harmonic(state, omega, dt, steps):
    def f(s):
        return np.array([s[1], -omega * omega * s[0]])

    s = state.copy()
    for _ in range(steps):
        k1 = f(s)
        k2 = f(s + 0.5 * dt * k1)
        k3 = f(s + 0.5 * dt * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


def nbody_accelerations(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d**2).sum(-1) + 1e-3
    inv = r2**-1.5
    np.fill_diagonal(inv, 0.0)
    return (d * (mass[None, :, None] * inv[:, :, None])).sum(axis=1)


def leapfrog(x, v, dt, steps):
    x = x.copy()
    v = v.copy()
    for _ in range(steps):
        v -= 0.5 * dt * x
        x += dt * v
        v -= 0.5 * dt * x
    return x, v


def random_walk(steps_pm1):
    return np.cumsum(steps_pm1)


def logistic_map(r, x0, n):
    xs = np.empty(n)
    x = x0
    for i in range(n):
        x = r * x * (1 - x)
        xs[i] = x
    return xs


def lotka_volterra(prey, pred, a, b, c, d, dt, steps):
    for _ in range(steps):
        dprey = a * prey - b * prey * pred
        dpred = d * prey * pred - c * pred
        prey = prey + dt * dprey
        pred = pred + dt * dpred
    return prey, pred


def particles_bounce(pos, vel, dt, steps):
    pos = pos.copy()
    vel = vel.copy()
    for _ in range(steps):
        pos += vel * dt
        hit = (pos < 0) | (pos > 1)
        vel[hit] *= -1
        pos = np.clip(pos, 0, 1)
    return pos, vel


def ising_energy(spins):
    right = np.roll(spins, -1, axis=1)
    down = np.roll(spins, -1, axis=0)
    return -np.sum(spins * right + spins * down)


def diffusion_until_converged(u, tol):
    u = u.copy()
    for it in range(100):
        new = u.copy()
        new[1:-1] = 0.5 * (u[:-2] + u[2:])
        if np.max(np.abs(new - u)) < tol:
            break
        u = new
    return u


def newton_sqrt_while(a, tol=1e-10):
    x = a
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def bisection_root(lo, hi, c):
    f = lambda x: x**3 - c  # noqa: E731
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def power_iteration(A, iters):
    v = np.ones(A.shape[0])
    for _ in range(iters):
        w = A @ v
        v = w / np.linalg.norm(w)
    return v @ A @ v


# ---------------------------------------------------------------- linear algebra


def solve_normal_equations(X, y):
    return np.linalg.solve(X.T @ X + 1e-3 * np.eye(X.shape[1]), X.T @ y)


def least_squares_lstsq(X, y):
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return coef


def ridge_regression(X, y, lam):
    n_features = X.shape[1]
    return solve(X.T @ X + lam * np.eye(n_features), X.T @ y)


def cholesky_solve(A, b):
    L = np.linalg.cholesky(A)
    z = np.linalg.solve(L, b)
    return np.linalg.solve(L.T, z)


def determinant_and_inverse(A):
    return np.linalg.det(A), np.linalg.inv(A)


def gram_schmidt(A):
    Q = np.zeros_like(A)
    for j in range(A.shape[1]):
        v = A[:, j].copy()
        for i in range(j):
            v -= (Q[:, i] @ A[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    return Q


def lu_doolittle(A):
    n = A.shape[0]
    L = np.eye(n)
    U = A.copy()
    for k in range(n - 1):
        for i in range(k + 1, n):
            L[i, k] = U[i, k] / U[k, k]
            U[i, k:] -= L[i, k] * U[k, k:]
    return L, U


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def eig_symmetric_top(A):
    w, V = np.linalg.eigh(A)
    return w[-1], np.abs(V[:, -1])


def svd_low_rank(A, k):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return (U[:, :k] * s[:k]) @ Vt[:k]


def pca_project(X, k):
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / (X.shape[0] - 1)
    w, V = np.linalg.eigh(cov)
    return Xc @ V[:, ::-1][:, :k]


def matrix_power_loop(A, p):
    result = np.eye(A.shape[0])
    for _ in range(p):
        result = result @ A
    return result


def trace_and_frobenius(A):
    return np.trace(A), norm(A), np.linalg.norm(A, ord=1)


def conjugate_gradient(A, b, iters):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def kron_and_einsum(a, B):
    return np.einsum("ij->ji", B) + np.kron(a[:2], a[:2]).sum()  # (np.kron: probed)


# ---------------------------------------------------------------- ML pre/post-processing


def one_hot(labels, k):
    out = np.zeros((labels.shape[0], k))
    out[np.arange(labels.shape[0]), labels] = 1.0
    return out


def cross_entropy(probs, labels):
    n = labels.shape[0]
    return -np.mean(np.log(probs[np.arange(n), labels] + 1e-12))


def accuracy(logits, labels):
    return np.mean(np.argmax(logits, axis=1) == labels)


def confusion_matrix(y_true, y_pred, k):
    cm = np.zeros((k, k), dtype=np.int64)
    for t, p in zip(y_true, y_pred):
        cm[t, p] += 1
    return cm


def kmeans_assign(X, centers):
    d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1)


def kmeans_step(X, centers):
    labels = kmeans_assign(X, centers)
    new = np.zeros_like(centers)
    for c in range(centers.shape[0]):
        members = X[labels == c]
        if len(members) > 0:
            new[c] = members.mean(axis=0)
        else:
            new[c] = centers[c]
    return new


def logistic_regression_gd(X, y, lr, epochs):
    w = np.zeros(X.shape[1])
    b = 0.0
    for _ in range(epochs):
        p = sigmoid(X @ w + b)
        grad = p - y
        w -= lr * X.T @ grad / X.shape[0]
        b -= lr * grad.mean()
    return w, b


def mlp_forward(x, W1, b1, W2, b2):
    h = np.maximum(x @ W1 + b1, 0.0)
    return softmax_rows(h @ W2 + b2)


def batch_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def layer_norm(x, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def adam_update(param, grad, m, v, t, lr=1e-3, b1=0.9, b2=0.999):
    m[:] = b1 * m + (1 - b1) * grad
    v[:] = b2 * v + (1 - b2) * grad**2
    mhat = m / (1 - b1**t)
    vhat = v / (1 - b2**t)
    param -= lr * mhat / (np.sqrt(vhat) + 1e-8)
    return param


def sgd_momentum(params, grads, velocity, lr, mu):
    velocity *= mu
    velocity -= lr * grads
    params += velocity


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    return softmax_rows(scores) @ V


def top_k_mask(scores, k):
    idx = np.argsort(scores)[-k:]
    mask = np.zeros(scores.shape, dtype=bool)
    mask[idx] = True
    return mask


def nms_iou(boxes):
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    area = (x2 - x1) * (y2 - y1)
    xx1 = np.maximum(x1[:, None], x1[None, :])
    yy1 = np.maximum(y1[:, None], y1[None, :])
    xx2 = np.minimum(x2[:, None], x2[None, :])
    yy2 = np.minimum(y2[:, None], y2[None, :])
    inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
    return inter / (area[:, None] + area[None, :] - inter)


def class_weights(labels, k):
    counts = np.bincount(labels, minlength=k)
    return labels.shape[0] / (k * np.maximum(counts, 1))


def knn_predict(Xtrain, ytrain, Xtest, k):
    d = pairwise_distances(Xtest, Xtrain)
    nearest = np.argsort(d, axis=1)[:, :k]
    return ytrain[nearest].mean(axis=1)


def dropout_fixed(x, mask, p):
    return x * mask / (1 - p)


def r2_score(y, yhat):
    ss_res = ((y - yhat) ** 2).sum()
    ss_tot = ((y - y.mean()) ** 2).sum()
    return 1 - ss_res / ss_tot


def params_dict_forward(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return h.sum(axis=1)


def tuple_arg_affine(pair, x):
    scale, shift = pair
    return scale * x + shift


# ---------------------------------------------------------------- dynamic programmes


def edit_distance(a, b):
    n, m = len(a), len(b)
    D = np.zeros((n + 1, m + 1), dtype=np.int64)
    D[:, 0] = np.arange(n + 1)
    D[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return D[n, m]


def longest_increasing_subsequence(x):
    n = x.shape[0]
    best = np.ones(n, dtype=np.int64)
    for i in range(1, n):
        for j in range(i):
            if x[j] < x[i]:
                best[i] = max(best[i], best[j] + 1)
    return best.max()


def knapsack(weights, values, capacity):
    dp = np.zeros(capacity + 1)
    for i in range(len(weights)):
        w = weights[i]
        for c in range(capacity, w - 1, -1):
            dp[c] = max(dp[c], dp[c - w] + values[i])
    return dp[capacity]


def dtw_distance(s, t):
    n, m = s.shape[0], t.shape[0]
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = abs(s[i - 1] - t[j - 1])
            D[i, j] = cost + min(D[i - 1, j], D[i, j - 1], D[i - 1, j - 1])
    return D[n, m]


def max_subarray_kadane(x):
    best = x[0]
    cur = x[0]
    for v in x[1:]:
        cur = max(v, cur + v)
        best = max(best, cur)
    return best


def min_path_sum_grid(cost):
    n, m = cost.shape
    dp = np.zeros_like(cost)
    dp[0, 0] = cost[0, 0]
    for j in range(1, m):
        dp[0, j] = dp[0, j - 1] + cost[0, j]
    for i in range(1, n):
        dp[i, 0] = dp[i - 1, 0] + cost[i, 0]
        for j in range(1, m):
            dp[i, j] = cost[i, j] + min(dp[i - 1, j], dp[i, j - 1])
    return dp[-1, -1]


def viterbi(log_trans, log_emit, obs):
    n_states = log_trans.shape[0]
    score = log_emit[:, obs[0]].copy()
    for t in range(1, obs.shape[0]):
        score = (score[:, None] + log_trans).max(axis=0) + log_emit[:, obs[t]]
    return score.max()


def coin_change_ways(coins, amount):
    ways = np.zeros(amount + 1, dtype=np.int64)
    ways[0] = 1
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] += ways[a - c]
    return ways[amount]


# ---------------------------------------------------------------- reductions and statistics


def weighted_mean_var(x, w):
    m = np.average(x, weights=w)
    return m, np.average((x - m) ** 2, weights=w)


def running_stats_welford(x):
    mean = 0.0
    m2 = 0.0
    count = 0
    for v in x:
        count += 1
        delta = v - mean
        mean += delta / count
        m2 += delta * (v - mean)
    return mean, m2 / (count - 1)


def covariance_matrix(X):
    Xc = X - X.mean(axis=0, keepdims=True)
    return Xc.T @ Xc / (X.shape[0] - 1)


def correlation(x, y):
    return np.corrcoef(x, y)[0, 1]


def percentile_clip(x):
    lo, hi = np.percentile(x, [5, 95])
    return np.clip(x, lo, hi)


def histogram_counts(x, bins):
    edges = linspace(x.min(), x.max(), bins + 1)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    return np.bincount(idx, minlength=bins)


def generator_sum(x):
    return sum(x[i] * x[i] for i in range(x.shape[0]))


def list_comprehension_norms(X):
    return np.array([np.sqrt(np.sum(row**2)) for row in X])


def reduce_product(xs):
    return reduce(lambda a, b: a * b, xs, 1.0)


def masked_mean(x, mask):
    return np.sum(x * mask) / np.maximum(np.sum(mask), 1)


def count_above(x, t):
    count = 0
    for v in x:
        if v > t:
            count += 1
    return count


def argmax_loop(x):
    best_i = 0
    for i in range(1, len(x)):
        if x[i] > x[best_i]:
            best_i = i
    return best_i


def nan_aware_stats(x):
    y = x.copy()
    y[::3] = np.nan
    return np.nanmean(y), np.nanmax(y), np.isnan(y).sum()


def geometric_mean(x):
    return np.exp(np.mean(np.log(x)))


def trapezoid_integral(y, x):
    return np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2


def simpson_loop(f_vals, h):
    total = f_vals[0] + f_vals[-1]
    for i in range(1, f_vals.shape[0] - 1):
        total += (4 if i % 2 else 2) * f_vals[i]
    return total * h / 3


def any_all_checks(x):
    return np.any(x > 1), np.all(x > -5), np.count_nonzero(x > 0)


def cumulative_ops(x):
    return cumsum(x), np.cumprod(1 + 0.01 * x), np.diff(x, n=2)


# ---------------------------------------------------------------- in-place updates and views


def inplace_normalize_rows(A):
    A /= np.linalg.norm(A, axis=1, keepdims=True)


def swap_rows(A, i, j):
    A[[i, j]] = A[[j, i]]
    return A


def transpose_view_update(A):
    At = A.T
    At[0] += 1.0
    return A.sum()


def diagonal_add(A, lam):
    idx = np.arange(A.shape[0])
    A[idx, idx] += lam
    return A


def strided_view_write(x):
    x[::2] = 0.0
    x[1::2] *= 2
    return x


def reshape_and_sum(x):
    n = x.shape[0] // 2 * 2
    return x[:n].reshape(-1, 2).sum(axis=1)


def upper_triangle(A):
    return np.triu(A, 1) + np.tril(A).T


def clip_inplace(x, lo, hi):
    np.clip(x, lo, hi, out=x)
    return x


def fancy_gather_scatter(x, idx):
    out = np.zeros_like(x)
    out[idx] = x[idx] * 2
    return out


def boolean_mask_replace(x):
    x[x < 0] = 0.0
    return x


def scatter_add(values, idx, n):
    out = np.zeros(n)
    np.add.at(out, idx, values)
    return out


def cumulative_max_inplace(x):
    for i in range(1, x.shape[0]):
        if x[i] < x[i - 1]:
            x[i] = x[i - 1]
    return x


def roll_buffer(buf, new_value):
    buf[:-1] = buf[1:]
    buf[-1] = new_value
    return buf


# ---------------------------------------------------------------- functions, closures, classes


def factorial_recursive(n):
    return 1 if n <= 1 else n * factorial_recursive(n - 1)


def recursive_sum_halves(x):
    if x.shape[0] <= 2:
        return x.sum()
    mid = x.shape[0] // 2
    return recursive_sum_halves(x[:mid]) + recursive_sum_halves(x[mid:])


def closure_scaler(x, factor):
    def scale(v):
        return v * factor

    return scale(x) + scale(x.mean())


def make_polynomial(coeffs):
    def poly(x):
        acc = np.zeros_like(x)
        for c in coeffs:
            acc = acc * x + c
        return acc

    return poly


def closure_from_factory(x):
    p = make_polynomial([1.0, -2.0, 0.5])
    return p(x)


def nested_function_loop(x, n):
    def step(v):
        return 0.5 * (v + 1.0 / v)

    for _ in range(n):
        x = step(x)
    return x


def horner_polyval(coeffs, x):
    return np.polyval(coeffs, x)


class Standardizer:
    def __init__(self, mean, scale):
        self.mean = mean
        self.scale = scale

    def transform(self, x):
        return (x - self.mean) / self.scale

    @staticmethod
    def clip(x, bound):
        return np.clip(x, -bound, bound)


def uses_class_methods(x):
    s = Standardizer(x.mean(), x.std() + 1e-9)
    return Standardizer.clip(s.transform(x), 2.0)


class Integrator:
    def __init__(self, dt):
        self.dt = dt

    def step(self, y, dydt):
        return y + self.dt * dydt


def uses_instance_loop(y, k, steps):
    integ = Integrator(0.01)
    for _ in range(steps):
        y = integ.step(y, -k * y)
    return y


def lambda_map(x):
    f = lambda v: np.sin(v) ** 2 + np.cos(v) ** 2  # noqa: E731
    g = lambda v, w=2.0: v * w  # noqa: E731
    return g(f(x)) + x


def sorted_with_key(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    return x[order]


def star_args_sum(*arrays):
    total = np.zeros_like(arrays[0])
    for a in arrays:
        total = total + a
    return total


def kwargs_config(x, *, scale=1.0, shift=0.0, clip=None):
    y = x * scale + shift
    if clip is not None:
        y = np.clip(y, -clip, clip)
    return y


def variadic_kwargs(x, **options):
    y = x
    if options.get("square"):
        y = y * y
    return y + options.get("offset", 0.0)


def dict_of_arrays_update(state, dt):
    state["pos"] = state["pos"] + dt * state["vel"]
    return state["pos"].sum()


def tuple_return_unpack(x):
    def stats(v):
        return v.min(), v.max(), v.mean()

    lo, hi, mean = stats(x)
    return (x - mean) / (hi - lo)


def zip_enumerate_loop(xs, ys):
    acc = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        acc += i * a * b
    return acc


def while_halving(x):
    count = 0
    while np.max(np.abs(x)) > 1.0:
        x = x / 2
        count += 1
    return x, count


def break_on_threshold(x, limit):
    total = 0.0
    for v in x:
        total += v
        if total > limit:
            break
    return total


def data_dependent_branch(x):
    if x.mean() > 0:
        return x - x.mean()
    return x + 1.0


def python_max_builtin(x):
    return max(x.max(), 0.0) + min(abs(x.min()), 10.0)


def math_module_on_array_element(x):
    return math.exp(x[0]) + x


def list_accumulate_then_stack(x, n):
    rows = []
    for k in range(n):
        rows.append(x * k)
    return np.stack(rows)


def string_dispatch(x, kind):
    if kind == "l1":
        return np.abs(x).sum()
    elif kind == "l2":
        return np.sqrt((x**2).sum())
    return np.abs(x).max()


def try_except_fallback(A, b):
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.zeros_like(b)


def integer_array_arith(a, b):
    return (a * b) // 3 + a % 5 - (b << 1)


def complex_arith(z):
    return np.abs(z) ** 2 + np.angle(z) + (z * z.conj()).real


def float32_pipeline(x):
    y = x.astype(np.float32)
    return (y * np.float32(0.5) + 1).sum()


def meshgrid_gaussian(n, sigma):
    xs = np.linspace(-1, 1, n)
    X, Y = np.meshgrid(xs, xs)
    return np.exp(-(X**2 + Y**2) / (2 * sigma**2))


def sorted_unique_counts(labels):
    values, counts = np.unique(labels, return_counts=True)
    return values, counts


def nonzero_indices(x):
    return np.nonzero(x > 0)[0]


def argsort_rank(x):
    return np.argsort(np.argsort(x))


def abs_imported(x):
    return np_abs(x).max() + exp(-x).sum()


def global_constant_scale(x):
    return x * _GLOBAL_SCALE + _GLOBAL_OFFSETS[: x.shape[0]].sum()


_GLOBAL_SCALE = 2.5
_GLOBAL_OFFSETS = np.arange(20, dtype=np.float64)


def nested_loops_matmul(A, B):
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += A[i, p] * B[p, j]
            C[i, j] = s
    return C


def loop_over_rows_carried_array(X):
    acc = np.zeros(X.shape[1])
    best = -np.inf
    for row in X:
        acc += row
        best = max(best, row.sum())
    return acc, best


def loop_with_continue(x):
    total = 0.0
    for v in x:
        if v < 0:
            continue
        total += v
    return total


def loop_with_else(x, target):
    for i in range(x.shape[0]):
        if x[i] == target:
            found = i
            break
    else:
        found = -1
    return found


def nested_loop_break(A):
    count = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > 1.5:
                break
            count += 1
    return count


def tridiagonal_thomas(a, b, c, d):
    n = d.shape[0]
    cp = np.zeros(n)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def cumulative_trapz_loop(y, dx):
    out = np.zeros_like(y)
    for i in range(1, y.shape[0]):
        out[i] = out[i - 1] + 0.5 * dx * (y[i] + y[i - 1])
    return out


def sliding_window_max(x, w):
    n = x.shape[0] - w + 1
    out = np.empty(n)
    for i in range(n):
        out[i] = np.max(x[i : i + w])
    return out


def prefix_sums_2d_loop(A):
    S = np.zeros((A.shape[0] + 1, A.shape[1] + 1))
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            S[i + 1, j + 1] = A[i, j] + S[i, j + 1] + S[i + 1, j] - S[i, j]
    return S


# ---------------------------------------------------------------- more loop shapes


def carried_float_argument(x0, rates):
    x = x0
    for k in range(rates.shape[0]):
        x = x * (1 + rates[k]) + 1.0
    return x


def carried_int_to_float(x):
    acc = 0
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


def carried_tuple_state(x, steps):
    a, b = 0.0, 1.0
    for _ in range(steps):
        a, b = b, a + b * x.mean()
    return a, b


def loop_variable_after_loop(x):
    i = -1
    for i in range(x.shape[0]):
        x[i] = x[i] * i
    return x, i


def loop_over_list_of_arrays(arrays):
    total = 0.0
    for a in arrays:
        total = total + a.sum()
    return total


def loop_over_dict_items(weights, x):
    out = np.zeros_like(x)
    for name, w in weights.items():
        out = out + w * x
    return out


def reversed_range_backsub(U, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in reversed(range(n)):
        x[i] = (b[i] - U[i, i + 1 :] @ x[i + 1 :]) / U[i, i]
    return x


def loop_appends_scalars(x):
    out = []
    for v in x:
        out.append(v * 2.0)
    return np.array(out)


def loop_with_inner_helper(x, steps):
    for _ in range(steps):
        x = softmax_rows(x) + 0.1
    return x


def loop_writes_column_views(A):
    for j in range(A.shape[1]):
        col = A[:, j]
        col -= col.mean()
    return A


def loop_over_transposed_rows(A):
    out = np.zeros(A.shape[0])
    for col in A.T:
        out += col**2
    return out


def loop_shape_changes(x, steps):
    for _ in range(steps):
        x = x[1:] + x[:-1]
    return x


def loop_float_step_counter(x):
    t = 0.0
    dt = 0.25
    for _ in range(4):
        x = x + dt * np.sin(t)
        t += dt
    return x, t


def loop_dtype_promotion(x):
    acc = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(3):
        acc = acc + x * 0.5
    return acc


def loop_enumerate_rows(X):
    weights = np.zeros(X.shape[0])
    for i, row in enumerate(X):
        weights[i] = row @ row
    return weights


def loop_accumulates_matrix(X):
    S = np.zeros((X.shape[1], X.shape[1]))
    for row in X:
        S += np.outer(row, row)
    return S


def loop_nested_carried_scalar(A):
    total = 0.0
    for i in range(A.shape[0]):
        row_total = 0.0
        for j in range(A.shape[1]):
            row_total += A[i, j] * (i + j)
        total += row_total * row_total
    return total


def loop_step_two(x):
    s = 0.0
    for i in range(0, x.shape[0], 2):
        s += x[i]
    return s


def loop_with_unused_variable(x, n):
    for _ in range(n):
        tmp = x * 2
        x = x + 1
    return x


def loop_over_python_floats(values, x):
    out = x.copy()
    for v in values:
        out *= v
    return out


def loop_range_from_arg(x, start, stop):
    for i in range(start, stop):
        x[i] += x[i - 1]
    return x


def loop_scalar_and_array_swap(x, y, n):
    for _ in range(n):
        x, y = y, x + y
    return x, y


def loop_inplace_scalar_on_arg(x, n):
    for _ in range(n):
        x *= 1.1
    return x


def loop_builds_list_then_sum(X):
    parts = [row.max() for row in X]
    return sum(parts)


def loop_kwargs_helper(x, n):
    for _ in range(n):
        x = min_max_scale(x, lo=-1.0, hi=1.0)
    return x


# ---------------------------------------------------------------- more views, dtypes and calls


def view_chain_write(A):
    v = A[1:, ::2].T
    v[...] = v * 2 + 1
    return A


def aliasing_argument_twice(x):
    x += x[::-1]
    return x


def out_argument_ufunc(x, y):
    out = np.empty_like(x)
    np.multiply(x, y, out=out)
    np.add(out, 1.0, out=out)
    return out


def where_three_way(x):
    return np.where(x > 0.5, 1, np.where(x < -0.5, -1, 0))


def keepdims_broadcast_divide(A):
    return A / A.sum(axis=0, keepdims=True) - A.mean(axis=1)[:, None]


def newaxis_outer_sum(x):
    return (x[:, np.newaxis] * x[np.newaxis, :]).sum(axis=0)


def boolean_arith(x):
    pos = x > 0
    return pos.sum(), (pos & (x < 1)).mean(), (~pos).astype(np.float64) * x


def int_division_and_power(n, x):
    half = n // 2
    return x[:half] ** 2, x[half:] ** 0.5 if (x >= 0).all() else x[half:]


def empty_like_fill(x):
    out = np.empty_like(x)
    out.fill(3.0)
    out[:2] = x[:2]
    return out


def stack_concat_split(x):
    a = np.concatenate([x, x[::-1]])
    b = np.vstack([a, a * 2])
    left, right = np.split(b, 2, axis=1)
    return left - right


def ravel_flatten_reshape(A):
    return A.ravel()[::2].sum() + A.flatten().reshape(A.shape[1], A.shape[0]).trace()


def swapaxes_moveaxis(T):
    return np.swapaxes(T, 0, 2).sum(axis=0) + np.moveaxis(T, 0, -1).mean(axis=-1)


def float32_mixed_scalar(x):
    y = x.astype(np.float32)
    z = y * 2.5 + np.float64(1.0)
    return z, z.dtype == np.float32


def int_loop_counter_with_array(x, n):
    k = 0
    for _ in range(n):
        k += 2
        x = x + k
    return x, k


def nested_closure_counter(x):
    state = {"calls": 0}

    def f(v):
        state["calls"] += 1
        return v * 2

    y = f(f(x))
    return y, state["calls"]


def default_array_argument(x, w=np.ones(3)):
    return x[:3] * w


def sum_with_start(x):
    return sum([x, x * 2, x * 3], np.zeros_like(x))


def builtin_round_abs_len(x):
    return round(len(x) / 3) * abs(x)


def arange_float_step(n):
    return np.arange(0.0, n, 0.5) ** 2


def cumsum_axis_none(A):
    return A.cumsum(), A.sum(), A.prod(axis=1)


def masked_where_multiply(x, y):
    mask = (x > 0) & (y > 0)
    return np.sum(np.where(mask, x * y, 0.0)), mask.any()


def eye_identity_residual(A):
    n = A.shape[0]
    return np.abs(A @ np.eye(n) - A).max()


def tile_repeat(x):
    return np.tile(x, 2) + np.repeat(x, 2)


def sign_floor_ceil(x):
    return np.sign(x) * np.floor(np.abs(x)) + np.ceil(x) - np.trunc(x)


# ---------------------------------------------------------------- the cases


def _labels(rng, n, k):
    return rng.integers(0, k, n)


CASES = [
    (sigmoid, lambda r: (_vec(r),)),
    (softplus, lambda r: (_vec(r),)),
    (gelu_tanh, lambda r: (_vec(r),)),
    (softmax_rows, lambda r: (_mat(r),)),
    (log_sum_exp, lambda r: (_vec(r),)),
    (standardize_columns, lambda r: (_mat(r),)),
    (min_max_scale, lambda r: (_vec(r),)),
    (pairwise_distances, lambda r: (_mat(r, 4, 3), _mat(r, 5, 3))),
    (pairwise_sq_dist_gram, lambda r: (_mat(r, 6, 3),)),
    (outer_product_table, lambda r: (_vec(r), _vec(r))),
    (haversine, lambda r: tuple(r.uniform(-80, 80, 5) for _ in range(4))),
    (polar_to_cartesian, lambda r: (_pos(r, 6), _vec(r, 6))),
    (clip_and_round, lambda r: (_vec(r), -0.5, 0.5)),
    (imported_names, lambda r: (_vec(r, 7), _vec(r, 7))),
    (relu_leaky, lambda r: (_vec(r),)),
    (huber_loss, lambda r: (_vec(r, 8), _vec(r, 8))),
    (cosine_similarity, lambda r: (_vec(r, 5), _vec(r, 5))),
    (rgb_to_gray, lambda r: (r.uniform(0, 1, (4, 5, 3)),)),
    (gamma_correct, lambda r: (r.uniform(0, 1, (4, 4)), 2.2)),
    (black_scholes_call, lambda r: (_pos(r) * 100, 100.0, 0.5, 0.02, 0.25)),
    (compound_growth, lambda r: (1000.0, r.uniform(0, 0.1, 6))),
    (log_returns, lambda r: (_pos(r),)),
    (drawdown, lambda r: (_pos(r),)),
    (max_drawdown_loop, lambda r: (_pos(r),)),
    (ewma, lambda r: (_vec(r), 0.3)),
    (portfolio_variance, lambda r: (_vec(r, 4), _spd(r, 4))),
    (sharpe_ratio, lambda r: (0.01 * _vec(r),)),
    (binomial_option, lambda r: (100.0, 95.0, 0.03, 0.2, int(r.integers(3, 9)))),
    (monte_carlo_paths, lambda r: (_mat(r, 4, 6), 100.0, 0.05, 0.2, 0.01)),
    (amortization_schedule, lambda r: (1000.0, 0.01, int(r.integers(3, 10)))),
    (moving_average_cumsum, lambda r: (_vec(r, 10), 3)),
    (moving_average_loop, lambda r: (_vec(r, 10), 3)),
    (fir_filter, lambda r: (_vec(r, 10), _vec(r, 3))),
    (iir_first_order, lambda r: (_vec(r), 0.8)),
    (convolve_valid, lambda r: (_vec(r, 10), _vec(r, 3))),
    (autocorrelation, lambda r: (_vec(r, 10), 4)),
    (zero_crossings, lambda r: (_vec(r),)),
    (dft_matrix, lambda r: (_vec(r, 8),)),
    (hann_window_power, lambda r: (_vec(r, 8),)),
    (median_filter_3, lambda r: (_vec(r),)),
    (envelope_peak_hold, lambda r: (_vec(r), 0.9)),
    (box_blur, lambda r: (_mat(r, 6, 7),)),
    (sobel_magnitude, lambda r: (_mat(r, 6, 7),)),
    (laplacian_loops, lambda r: (_mat(r, 5, 6),)),
    (heat_equation_1d, lambda r: (_vec(r, 10), 0.25, 5)),
    (jacobi_2d, lambda r: (_mat(r, 6, 6), 3)),
    (game_of_life_step, lambda r: (r.integers(0, 2, (6, 6)),)),
    (threshold_image, lambda r: (_mat(r, 4, 5), 0.1)),
    (histogram_equalize, lambda r: (_mat(r, 4, 5),)),
    (integral_image, lambda r: (_mat(r, 4, 5),)),
    (flip_and_rotate, lambda r: (_mat(r, 5, 5),)),
    (downsample_2x, lambda r: (_mat(r, 6, 8),)),
    (wave_equation, lambda r: (_vec(r, 10), 0.5, 4)),
    (euler_ode, lambda r: (_vec(r), 0.5, 0.1, 6)),
    (rk4_harmonic, lambda r: (np.array([1.0, 0.0]), 2.0, 0.05, 5)),
    (nbody_accelerations, lambda r: (_mat(r, 5, 3), _pos(r, 5))),
    (leapfrog, lambda r: (_vec(r, 5), _vec(r, 5), 0.1, 4)),
    (random_walk, lambda r: (r.choice([-1, 1], 10),)),
    (logistic_map, lambda r: (3.7, 0.2, int(r.integers(3, 12)))),
    (lotka_volterra, lambda r: (10.0, 5.0, 1.1, 0.4, 0.4, 0.1, 0.01, 5)),
    (particles_bounce, lambda r: (r.uniform(0, 1, 6), _vec(r, 6), 0.2, 4)),
    (ising_energy, lambda r: (r.choice([-1, 1], (5, 5)),)),
    (diffusion_until_converged, lambda r: (_vec(r, 8), 1e-3)),
    (newton_sqrt_while, lambda r: (float(r.uniform(1, 10)),)),
    (bisection_root, lambda r: (0.0, 5.0, float(r.uniform(1, 20)))),
    (power_iteration, lambda r: (_spd(r), 8)),
    (solve_normal_equations, lambda r: (_mat(r, 8, 3), _vec(r, 8))),
    (least_squares_lstsq, lambda r: (_mat(r, 8, 3), _vec(r, 8))),
    (ridge_regression, lambda r: (_mat(r, 8, 3), _vec(r, 8), 0.1)),
    (cholesky_solve, lambda r: (_spd(r, 4), _vec(r, 4))),
    (determinant_and_inverse, lambda r: (_spd(r, 4),)),
    (gram_schmidt, lambda r: (_mat(r, 5, 3),)),
    (lu_doolittle, lambda r: (_spd(r, 4),)),
    (forward_substitution, lambda r: (np.tril(_spd(r, 5)), _vec(r, 5))),
    (eig_symmetric_top, lambda r: (_spd(r, 4),)),
    (svd_low_rank, lambda r: (_mat(r, 5, 4), 2)),
    (pca_project, lambda r: (_mat(r, 8, 4), 2)),
    (matrix_power_loop, lambda r: (_mat(r, 3, 3), 4)),
    (trace_and_frobenius, lambda r: (_mat(r, 4, 4),)),
    (conjugate_gradient, lambda r: (_spd(r, 4), _vec(r, 4), 4)),
    (kron_and_einsum, lambda r: (_vec(r, 4), _mat(r, 3, 4))),
    (one_hot, lambda r: (_labels(r, 6, 3), 3)),
    (cross_entropy, lambda r: (softmax_rows(_mat(r, 6, 3)), _labels(r, 6, 3))),
    (accuracy, lambda r: (_mat(r, 6, 3), _labels(r, 6, 3))),
    (confusion_matrix, lambda r: (_labels(r, 8, 3), _labels(r, 8, 3), 3)),
    (kmeans_assign, lambda r: (_mat(r, 8, 2), _mat(r, 3, 2))),
    (kmeans_step, lambda r: (_mat(r, 8, 2), _mat(r, 3, 2))),
    (logistic_regression_gd, lambda r: (_mat(r, 8, 3), (r.random(8) > 0.5) * 1.0, 0.1, 5)),
    (
        mlp_forward,
        lambda r: (_mat(r, 4, 3), _mat(r, 3, 5), _vec(r, 5), _mat(r, 5, 2), _vec(r, 2)),
    ),
    (batch_norm, lambda r: (_mat(r, 6, 3), _pos(r, 3), _vec(r, 3))),
    (layer_norm, lambda r: (_mat(r, 4, 6),)),
    (adam_update, lambda r: (_vec(r, 5), _vec(r, 5), np.zeros(5), np.zeros(5), 3)),
    (sgd_momentum, lambda r: (_vec(r, 5), _vec(r, 5), np.zeros(5), 0.1, 0.9)),
    (attention, lambda r: (_mat(r, 4, 3), _mat(r, 5, 3), _mat(r, 5, 2))),
    (top_k_mask, lambda r: (_vec(r, 8), 3)),
    (nms_iou, lambda r: (np.sort(r.uniform(0, 10, (5, 4)), axis=1)[:, [0, 1, 2, 3]],)),
    (class_weights, lambda r: (_labels(r, 10, 4), 4)),
    (knn_predict, lambda r: (_mat(r, 8, 2), _vec(r, 8), _mat(r, 3, 2), 3)),
    (dropout_fixed, lambda r: (_vec(r, 6), (r.random(6) > 0.3) * 1.0, 0.3)),
    (r2_score, lambda r: (_vec(r, 7), _vec(r, 7))),
    (params_dict_forward, lambda r: ({"W": _mat(r, 3, 4), "b": _vec(r, 4)}, _mat(r, 5, 3))),
    (tuple_arg_affine, lambda r: ((2.0, -1.0), _vec(r))),
    (edit_distance, lambda r: (_labels(r, 5, 3), _labels(r, 6, 3))),
    (longest_increasing_subsequence, lambda r: (_vec(r, 8),)),
    (knapsack, lambda r: ([2, 3, 4, 5], _pos(r, 4), 8)),
    (dtw_distance, lambda r: (_vec(r, 5), _vec(r, 6))),
    (max_subarray_kadane, lambda r: (_vec(r),)),
    (min_path_sum_grid, lambda r: (r.uniform(0, 1, (4, 5)),)),
    (
        viterbi,
        lambda r: (
            np.log(r.uniform(0.1, 1, (3, 3))),
            np.log(r.uniform(0.1, 1, (3, 4))),
            _labels(r, 6, 4),
        ),
    ),
    (coin_change_ways, lambda r: ([1, 2, 5], int(r.integers(3, 12)))),
    (weighted_mean_var, lambda r: (_vec(r, 6), _pos(r, 6))),
    (running_stats_welford, lambda r: (_vec(r),)),
    (covariance_matrix, lambda r: (_mat(r, 6, 3),)),
    (correlation, lambda r: (_vec(r, 7), _vec(r, 7))),
    (percentile_clip, lambda r: (_vec(r, 10),)),
    (histogram_counts, lambda r: (_vec(r, 12), 4)),
    (generator_sum, lambda r: (_vec(r),)),
    (list_comprehension_norms, lambda r: (_mat(r, 4, 3),)),
    (reduce_product, lambda r: (list(_pos(r, 4)),)),
    (masked_mean, lambda r: (_vec(r, 6), (r.random(6) > 0.5) * 1.0)),
    (count_above, lambda r: (_vec(r), 0.2)),
    (argmax_loop, lambda r: (_vec(r),)),
    (nan_aware_stats, lambda r: (_vec(r, 7),)),
    (geometric_mean, lambda r: (_pos(r),)),
    (trapezoid_integral, lambda r: (_vec(r, 7), np.sort(_vec(r, 7)))),
    (simpson_loop, lambda r: (_vec(r, 7), 0.1)),
    (any_all_checks, lambda r: (_vec(r),)),
    (cumulative_ops, lambda r: (_vec(r),)),
    (inplace_normalize_rows, lambda r: (_mat(r, 4, 3),)),
    (swap_rows, lambda r: (_mat(r, 4, 3), 0, 2)),
    (transpose_view_update, lambda r: (_mat(r, 3, 4),)),
    (diagonal_add, lambda r: (_mat(r, 4, 4), 0.5)),
    (strided_view_write, lambda r: (_vec(r),)),
    (reshape_and_sum, lambda r: (_vec(r, 8),)),
    (upper_triangle, lambda r: (_mat(r, 4, 4),)),
    (clip_inplace, lambda r: (_vec(r), -0.5, 0.5)),
    (fancy_gather_scatter, lambda r: (_vec(r, 8), np.array([0, 3, 5]))),
    (boolean_mask_replace, lambda r: (_vec(r),)),
    (scatter_add, lambda r: (_vec(r, 6), _labels(r, 6, 4), 4)),
    (cumulative_max_inplace, lambda r: (_vec(r),)),
    (roll_buffer, lambda r: (_vec(r, 5), 7.0)),
    (factorial_recursive, lambda r: (int(r.integers(3, 8)),)),
    (recursive_sum_halves, lambda r: (_vec(r, 8),)),
    (closure_scaler, lambda r: (_vec(r), 1.5)),
    (closure_from_factory, lambda r: (_vec(r),)),
    (nested_function_loop, lambda r: (_pos(r), 4)),
    (horner_polyval, lambda r: (_vec(r, 4), _vec(r, 6))),
    (uses_class_methods, lambda r: (_vec(r),)),
    (uses_instance_loop, lambda r: (_vec(r), 0.5, 4)),
    (lambda_map, lambda r: (_vec(r),)),
    (sorted_with_key, lambda r: (_vec(r, 6),)),
    (star_args_sum, lambda r: (_vec(r, 5), _vec(r, 5), _vec(r, 5))),
    (kwargs_config, lambda r: Call(_vec(r), scale=2.0, clip=1.0)),
    (variadic_kwargs, lambda r: Call(_vec(r), square=True, offset=1.0)),
    (dict_of_arrays_update, lambda r: ({"pos": _vec(r, 4), "vel": _vec(r, 4)}, 0.1)),
    (tuple_return_unpack, lambda r: (_vec(r),)),
    (zip_enumerate_loop, lambda r: (_vec(r, 5), _vec(r, 5))),
    (while_halving, lambda r: (4 * _vec(r),)),
    (break_on_threshold, lambda r: (_pos(r), 3.0)),
    (data_dependent_branch, lambda r: (_vec(r),)),
    (python_max_builtin, lambda r: (_vec(r),)),
    (math_module_on_array_element, lambda r: (_vec(r),)),
    (list_accumulate_then_stack, lambda r: (_vec(r, 4), 3)),
    (string_dispatch, lambda r: (_vec(r), "l2")),
    (try_except_fallback, lambda r: (_spd(r, 3), _vec(r, 3))),
    (integer_array_arith, lambda r: (r.integers(0, 50, 6), r.integers(0, 10, 6))),
    (complex_arith, lambda r: (_vec(r, 5) + 1j * _vec(r, 5),)),
    (float32_pipeline, lambda r: (_vec(r),)),
    (meshgrid_gaussian, lambda r: (int(r.integers(3, 8)), 0.5)),
    (sorted_unique_counts, lambda r: (_labels(r, 8, 4),)),
    (nonzero_indices, lambda r: (_vec(r),)),
    (argsort_rank, lambda r: (_vec(r),)),
    (abs_imported, lambda r: (_vec(r),)),
    (global_constant_scale, lambda r: (_vec(r),)),
    (nested_loops_matmul, lambda r: (_mat(r, 3, 4), _mat(r, 4, 2))),
    (loop_over_rows_carried_array, lambda r: (_mat(r, 5, 3),)),
    (loop_with_continue, lambda r: (_vec(r),)),
    (loop_with_else, lambda r: (np.arange(6.0), 3.0)),
    (nested_loop_break, lambda r: (_mat(r, 4, 4),)),
    (tridiagonal_thomas, lambda r: (_vec(r, 6), 4 + _pos(r, 6), _vec(r, 6), _vec(r, 6))),
    (cumulative_trapz_loop, lambda r: (_vec(r), 0.1)),
    (sliding_window_max, lambda r: (_vec(r, 10), 3)),
    (prefix_sums_2d_loop, lambda r: (_mat(r, 3, 4),)),
    (carried_float_argument, lambda r: (100.0, r.uniform(0, 0.1, 5))),
    (carried_int_to_float, lambda r: (_vec(r),)),
    (carried_tuple_state, lambda r: (_pos(r), 4)),
    (loop_variable_after_loop, lambda r: (_vec(r),)),
    (loop_over_list_of_arrays, lambda r: ([_vec(r, 3), _vec(r, 4), _vec(r, 5)],)),
    (loop_over_dict_items, lambda r: ({"a": 0.5, "b": 2.0}, _vec(r))),
    (reversed_range_backsub, lambda r: (np.triu(_spd(r, 5)), _vec(r, 5))),
    (loop_appends_scalars, lambda r: (_vec(r),)),
    (loop_with_inner_helper, lambda r: (_mat(r, 3, 4), 3)),
    (loop_writes_column_views, lambda r: (_mat(r, 4, 3),)),
    (loop_over_transposed_rows, lambda r: (_mat(r, 4, 3),)),
    (loop_shape_changes, lambda r: (_vec(r, 8), 3)),
    (loop_float_step_counter, lambda r: (_vec(r),)),
    (loop_dtype_promotion, lambda r: (r.integers(0, 9, 5),)),
    (loop_enumerate_rows, lambda r: (_mat(r, 4, 3),)),
    (loop_accumulates_matrix, lambda r: (_mat(r, 5, 3),)),
    (loop_nested_carried_scalar, lambda r: (_mat(r, 3, 4),)),
    (loop_step_two, lambda r: (_vec(r),)),
    (loop_with_unused_variable, lambda r: (_vec(r), 3)),
    (loop_over_python_floats, lambda r: ([1.5, 0.5, 2.0], _vec(r))),
    (loop_range_from_arg, lambda r: (_vec(r, 8), 2, 6)),
    (loop_scalar_and_array_swap, lambda r: (1.0, _vec(r), 4)),
    (loop_inplace_scalar_on_arg, lambda r: (2.0, 3)),
    (loop_builds_list_then_sum, lambda r: (_mat(r, 4, 3),)),
    (loop_kwargs_helper, lambda r: (_vec(r), 2)),
    (view_chain_write, lambda r: (_mat(r, 4, 5),)),
    (aliasing_argument_twice, lambda r: (_vec(r),)),
    (out_argument_ufunc, lambda r: (_vec(r, 5), _vec(r, 5))),
    (where_three_way, lambda r: (_vec(r),)),
    (keepdims_broadcast_divide, lambda r: (_pos(r, (4, 4)),)),
    (newaxis_outer_sum, lambda r: (_vec(r),)),
    (boolean_arith, lambda r: (_vec(r),)),
    (int_division_and_power, lambda r: (6, _pos(r, 6))),
    (empty_like_fill, lambda r: (_vec(r),)),
    (stack_concat_split, lambda r: (_vec(r, 4),)),
    (ravel_flatten_reshape, lambda r: (_mat(r, 3, 4),)),
    (swapaxes_moveaxis, lambda r: (r.standard_normal((3, 4, 3)),)),
    (float32_mixed_scalar, lambda r: (_vec(r),)),
    (int_loop_counter_with_array, lambda r: (_vec(r), 3)),
    (nested_closure_counter, lambda r: (_vec(r),)),
    (default_array_argument, lambda r: (_vec(r, 5),)),
    (sum_with_start, lambda r: (_vec(r),)),
    (builtin_round_abs_len, lambda r: (_vec(r),)),
    (arange_float_step, lambda r: (int(r.integers(3, 8)),)),
    (cumsum_axis_none, lambda r: (_mat(r, 3, 4),)),
    (masked_where_multiply, lambda r: (_vec(r, 6), _vec(r, 6))),
    (eye_identity_residual, lambda r: (_mat(r, 4, 4),)),
    (tile_repeat, lambda r: (_vec(r),)),
    (sign_floor_ceil, lambda r: (3 * _vec(r),)),
]
