#!/usr/bin/env python3
"""howe-predict's model against other ways of choosing (thi, c), leave-one-out on the training pages.

Reads what `docbin-bench --train-howe DIR --model M --grid GRID.csv > LOG` writes: the features of
every page (LOG) and its 11 x 33 F-measures (GRID.csv). For each page, each model is fitted on the
other pages and scored by the F-measure of the cell it picks for the left-out page (thi to the
nearest of the grid's, c's index rounded). Models: howe's defaults (thi 0.4, c 160); the cell best
on average over the training pages (const); docbin's fit, least squares of the best cell's thi and c
index on the standardised features with a ridge (ridgeL; -smooth1: the best cell of the grid
averaged over its 3 x 3 neighbourhood); the cell best on average over the k nearest training pages
in feature space (knnK); and linear weights that maximise the training pages' mean F directly
(directL, a seeded random search from const, ridge L on the weights).

With TEST_GRID.csv TEST_LOG pairs after them, each model is also fitted on all the training pages
and scored on the test pages' grids (pages it has not seen), by the same cell lookup.

usage: bench/howe_model_loo.py GRID.csv LOG [TEST_GRID.csv TEST_LOG ...]
"""
import csv
import re
import sys

import numpy as np

THI = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65]


def load(grid_csv, log):
    """Features (pages x 4) and grids (pages x 11 x 33) of the pages a training log names."""
    pages, feats = [], []
    for line in open(log):
        m = re.match(r'(\S+)\.png thi \S+ c \S+ F \S+ features (.*)', line)
        if m:
            pages.append(m.group(1))
            feats.append([float(x) for x in m.group(2).split()])
    grids = np.zeros((len(pages), 11, 33))
    idx = {p: i for i, p in enumerate(pages)}
    for r in csv.DictReader(open(grid_csv)):
        grids[idx[r['page']], THI.index(float(r['thi'])), int(r['c_index']) - 1] = float(r['f'])
    return np.array(feats), grids


X, F = load(sys.argv[1], sys.argv[2])
tests = [load(sys.argv[i], sys.argv[i + 1]) for i in range(3, len(sys.argv) - 1, 2)]
n = len(X)
default = F[:, THI.index(0.4), 12]  # c 160 = index 12 (0-based)

def f_at(grid, thi, ci):
    t = int(np.argmin([abs(thi - x) for x in THI]))
    c = int(min(32, max(0, round(ci))))
    return grid[t, c]

def standardise(tr):
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1
    return mu, sd

def ridge(Z, y, lam):
    A = np.hstack([np.ones((len(Z), 1)), Z])
    R = lam * np.eye(A.shape[1]); R[0, 0] = 0
    return np.linalg.solve(A.T @ A + R, A.T @ y)

def targets(tr, smooth=0):
    out = []
    for i in tr:
        g = F[i]
        if smooth:
            pad, w = np.pad(g, smooth, mode='edge'), 2 * smooth + 1
            g = np.array([[pad[a:a + w, b:b + w].mean() for b in range(33)] for a in range(11)])
        t, c = np.unravel_index(np.argmax(g), g.shape)
        out.append((THI[t], c))
    return np.array(out)

def m_ridge(lam, smooth=0):
    def fit(tr):
        mu, sd = standardise(tr)
        Z = (X[tr] - mu) / sd
        y = targets(tr, smooth)
        wt, wc = ridge(Z, y[:, 0], lam), ridge(Z, y[:, 1], lam)
        def pred(x):
            z = np.concatenate([[1], (x - mu) / sd])
            return min(0.65, max(0.15, z @ wt)), z @ wc
        return pred
    return fit

def m_const(tr):
    m = F[tr].mean(0)
    t, c = np.unravel_index(np.argmax(m), m.shape)
    return lambda x: (THI[t], c)

def m_knn(k):
    def fit(tr):
        mu, sd = standardise(tr)
        def pred(x):
            d = (((X[tr] - x) / sd) ** 2).sum(1)
            nb = np.argsort(d)[:k]
            # the cell best on average over the neighbours' grids
            m = F[np.array(tr)[nb]].mean(0)
            t, c = np.unravel_index(np.argmax(m), m.shape)
            return THI[t], c
        return pred
    return fit

def m_direct(lam, iters=3000, seed=1):
    """Weights that maximise the mean F over the training grids (nearest cell), ridge on the weights."""
    def fit(tr):
        mu, sd = standardise(tr)
        Z = np.hstack([np.ones((len(tr), 1)), (X[tr] - mu) / sd])
        t0, c0 = m_const(tr)(None)
        w = np.zeros(10); w[0] = t0; w[5] = c0
        def score(w):
            th = np.clip(Z @ w[:5], 0.15, 0.65); ci = np.clip(np.rint(Z @ w[5:]), 0, 32).astype(int)
            ti = np.rint((th - 0.15) / 0.05).astype(int)
            return F[tr, ti, ci].mean() - lam * ((w[1:5] / 0.05) ** 2).sum() - lam * (w[6:] ** 2).sum()
        rng = np.random.default_rng(seed)
        best, bw = score(w), w.copy()
        step = np.array([0.05, .05, .05, .05, .05, 2, 2, 2, 2, 2])
        for it in range(iters):
            cand = bw + rng.normal(0, 1, 10) * step * (1 - it / iters + 0.05)
            s = score(cand)
            if s > best:
                best, bw = s, cand
        def pred(x):
            z = np.concatenate([[1], (x - mu) / sd])
            return min(0.65, max(0.15, z @ bw[:5])), z @ bw[5:]
        return pred
    return fit

models = {'default': None, 'const': m_const}
for lam in (0.3, 1, 3, 10, 30, 100):
    models[f'ridge{lam}'] = m_ridge(lam)
for lam in (1, 10):
    models[f'ridge{lam}-smooth1'] = m_ridge(lam, 1)
for k in (3, 5, 8):
    models[f'knn{k}'] = m_knn(k)
for lam in (0.01, 0.1, 1):
    models[f'direct{lam}'] = m_direct(lam)
print(f'{n} pages; oracle {F.reshape(n, -1).max(1).mean():.3f}; default {default.mean():.3f}')
for Xt, Ft in tests:
    print(f'test: {len(Xt)} pages; oracle {Ft.reshape(len(Xt), -1).max(1).mean():.3f}; '
          f'default {Ft[:, THI.index(0.4), 12].mean():.3f}')
for name, fit in models.items():
    got = []
    for i in range(n):
        if fit is None:
            got.append(default[i])
            continue
        tr = [j for j in range(n) if j != i]
        got.append(f_at(F[i], *fit(tr)(X[i])))
    got = np.array(got)
    line = (f'{name:18s} LOO mean F {got.mean():.3f}  gain over default {got.mean() - default.mean():+.3f}  '
            f'error cut {(got.mean() - default.mean()) / (100 - default.mean()) * 100:5.1f}%  '
            f'pages worse {int((got < default - 1e-9).sum())}')
    for Xt, Ft in tests:
        base = Ft[:, THI.index(0.4), 12]
        pred = fit(list(range(n))) if fit else (lambda x: (0.4, 12))
        t = np.array([f_at(Ft[j], *pred(Xt[j])) for j in range(len(Xt))])
        line += f' | test mean F {t.mean():.3f} ({t.mean() - base.mean():+.3f})'
    print(line)
