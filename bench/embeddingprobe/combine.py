"""Blend the Go router's cross-validated estimates with sentence-encoder ones.

  go run ./bench/router -folds 5 -timing=false -onnx=false [-tasks=false] -estimates GO.jsonl
  python3 combine.py GO.jsonl EMB.jsonl [EMB.jsonl ...]

The encoder's heads and kNN are fitted on the same folds as the Go router's
(read from GO.jsonl), so every estimate of a row comes from fits that never
saw it. Prints the log loss and cost-tradeoff frontier of each blend.
"""
import json, sys, warnings
import numpy as np
from sklearn.linear_model import LogisticRegression

warnings.filterwarnings("ignore")
DATA = "../../../shared/data/routing/"
catalogue = json.load(open(DATA + "llmrouter9_models.json"))
models = [m["id"] for m in catalogue]
P = np.array([(m["input_price_per_mtok"] + m["output_price_per_mtok"]) / 2 for m in catalogue])
rows = {}
for line in open(DATA + "llmrouter9_train.jsonl"):
    r = json.loads(line)
    rows[r["id"]] = r
dumped = [json.loads(l) for l in open(sys.argv[1])]
ids = [d["id"] for d in dumped]
fold = np.array([d["fold"] for d in dumped])
G = np.array([[d["q"][m] for m in models] for d in dumped])
S = np.array([[rows[i]["scores"].get(m, 0.0) for m in models] for i in ids])
vectors = {}
for f in sys.argv[2:]:
    for line in open(f):
        d = json.loads(line)
        vectors[d["id"]] = d["e"]
E = np.array([vectors[i] for i in ids])
E /= np.linalg.norm(E, axis=1, keepdims=True)
K = fold.max() + 1

U = np.zeros_like(S)
N = np.zeros_like(S)
for k in range(K):
    tr, te = fold != k, fold == k
    n = tr.sum()
    for j in range(len(models)):
        y = S[tr, j]
        lr = LogisticRegression(C=4.0, max_iter=300)
        lr.fit(np.vstack([E[tr], E[tr]]), np.r_[np.ones(n), np.zeros(n)], sample_weight=np.r_[y, 1 - y] + 1e-9)
        U[te, j] = lr.predict_proba(E[te])[:, 1]
    sim = E[te] @ E[tr].T
    idx = np.argpartition(-sim, 25, axis=1)[:, :25]
    w = np.maximum(np.take_along_axis(sim, idx, 1), 0) ** 3 + 1e-9
    N[te] = (w[:, :, None] * S[tr][idx]).sum(1) / w.sum(1)[:, None]


def frontier(Q, name):
    out = []
    for t in [0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1]:
        ok = Q >= Q.max(1, keepdims=True) - t - 1e-12
        pick = np.where(ok, P[None, :] + 1e-6 * (1 - Q), np.inf).argmin(1)
        out.append((t, S[np.arange(len(S)), pick].mean(), P[pick].mean()))
    s40 = np.interp(0.40, [o[2] for o in out][::-1], [o[1] for o in out][::-1])
    ll = -np.mean(S * np.log(np.clip(Q, 1e-6, 1)) + (1 - S) * np.log(np.clip(1 - Q, 1e-6, 1)))
    line = " ".join(f"{t}:{s:.3f}@{p:.2f}" for t, s, p in out)
    print(f"{name:22s} log loss {ll:.4f}  score at price 0.40: {s40:.3f} | {line}", flush=True)


frontier(G, "Go router")
frontier(U, "encoder heads")
frontier(N, "encoder kNN 25")
for w in (0.25, 0.5):
    frontier((1 - w) * G + w * U, f"Go + {w} encoder")
frontier((G + U + N) / 3, "avg(Go, enc, kNN)")
