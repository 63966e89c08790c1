"""Does a pretrained sentence encoder carry routing signal the n-grams lack?

Per-model logistic heads (scikit-learn) on TF-IDF n-grams (+ task one-hot),
on Universal Sentence Encoder vectors, a kNN on those vectors, and their
averages; 5 folds by the repository's sha256 rule; for each estimator the
log loss of the per-model estimates and the cost-tradeoff frontier (the
cheapest candidate within a tolerance of the best estimate).

  python3 frontier.py llmrouter9 EMB.jsonl [EMB.jsonl ...]
  python3 frontier.py zeroeval   EMB.jsonl [EMB.jsonl ...]

Debian: apt-get install python3-numpy python3-scipy python3-sklearn.
"""
import hashlib, json, sys, warnings
import numpy as np
from scipy.sparse import csr_matrix, hstack, issparse, vstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

warnings.filterwarnings("ignore")
DATA = "../../../shared/data/routing/"
source, files = sys.argv[1], sys.argv[2:]

if source == "llmrouter9":
    rows = [json.loads(l) for l in open(DATA + "llmrouter9_train.jsonl")]
    catalogue = json.load(open(DATA + "llmrouter9_models.json"))
    cands = [(m["id"], (m["input_price_per_mtok"] + m["output_price_per_mtok"]) / 2) for m in catalogue]
    import ast
    for r in rows:
        if isinstance(r["scores"], str):
            r["scores"] = ast.literal_eval(r["scores"])
    tolerances = [0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1]
else:
    rows = [json.loads(l) for l in open(DATA + "zeroeval/zeroeval_train.jsonl")]
    router = json.load(open("../../routing/defaultrouter/router.json"))
    cands = [(c["measured_as"][0], c["price"]) for c in router["classes"] if c.get("price") and "zeroeval" in c["sources"]]
    cands = [(m, p) for m, p in cands if sum(m in r["scores"] for r in rows) > 0.9 * len(rows)]
    rows = [r for r in rows if all(m in r["scores"] for m, _ in cands)]
    tolerances = [0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2]

models = [m for m, _ in cands]
P = np.array([p for _, p in cands])
S = np.array([[r["scores"].get(m, 0.0) for m in models] for r in rows])
fold = np.array([hashlib.sha256((source + ":" + r["id"]).encode()).digest()[0] % 5 for r in rows])
texts = [r["problem"] for r in rows]
tasks = sorted({r["task"] for r in rows})
T = csr_matrix(np.array([[1.0 if r["task"] == t else 0.0 for t in tasks] for r in rows]))
vectors = {}
for f in files:
    for line in open(f):
        d = json.loads(line)
        vectors[d["id"]] = d["e"]
E = np.array([vectors[r["id"]] for r in rows])
E /= np.linalg.norm(E, axis=1, keepdims=True)
best = S.mean(0).argmax()
print(f"{len(rows)} rows, {len(models)} candidates; best single {models[best]} {S[:, best].mean():.3f} @ {P[best]:.2f}")


def logistic(Xtr, ytr, Xte, C=4.0):
    if ytr.min() == ytr.max():
        return np.full(Xte.shape[0], 0.01 + 0.98 * ytr[0])
    n = Xtr.shape[0]  # soft targets: each row twice, weighted by its score
    X2 = vstack([Xtr, Xtr]) if issparse(Xtr) else np.vstack([Xtr, Xtr])
    lr = LogisticRegression(C=C, max_iter=300)
    lr.fit(X2, np.r_[np.ones(n), np.zeros(n)], sample_weight=np.r_[ytr, 1 - ytr] + 1e-9)
    return lr.predict_proba(Xte)[:, 1]


def estimates(features):
    Q = np.zeros_like(S)
    for k in range(5):
        tr, te = fold != k, fold == k
        Xtr, Xte = features(tr, te)
        for j in range(len(models)):
            Q[te, j] = logistic(Xtr, S[tr, j], Xte)
    return Q


def tfidf(tr, te, task):
    words = TfidfVectorizer(ngram_range=(1, 2), min_df=3, sublinear_tf=True, max_features=100000)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), min_df=5, sublinear_tf=True, max_features=100000)
    a = [texts[i] for i in np.where(tr)[0]]
    b = [texts[i] for i in np.where(te)[0]]
    Xa = [words.fit_transform(a), chars.fit_transform(a)] + ([T[tr]] if task else [])
    Xb = [words.transform(b), chars.transform(b)] + ([T[te]] if task else [])
    return hstack(Xa).tocsr(), hstack(Xb).tocsr()


def knn(k=25):
    Q = np.zeros_like(S)
    for f in range(5):
        tr, te = fold != f, fold == f
        sim = E[te] @ E[tr].T
        idx = np.argpartition(-sim, k, axis=1)[:, :k]
        w = np.maximum(np.take_along_axis(sim, idx, 1), 0) ** 3 + 1e-9
        Q[te] = (w[:, :, None] * S[tr][idx]).sum(1) / w.sum(1)[:, None]
    return Q


def frontier(Q, name):
    out = []
    for t in tolerances:
        ok = Q >= Q.max(1, keepdims=True) - t - 1e-12
        pick = np.where(ok, P[None, :] + 1e-6 * (1 - Q), np.inf).argmin(1)
        out.append((t, S[np.arange(len(S)), pick].mean(), P[pick].mean()))
    prices, scores = [o[2] for o in out][::-1], [o[1] for o in out][::-1]
    at = 0.40 if source == "llmrouter9" else 0.5 * P[best]
    ll = -np.mean(S * np.log(np.clip(Q, 1e-6, 1)) + (1 - S) * np.log(np.clip(1 - Q, 1e-6, 1)))
    line = " ".join(f"{t}:{s:.3f}@{p:.2f}" for t, s, p in out)
    print(f"{name:24s} log loss {ll:.4f}  score at price {at:.2f}: {np.interp(at, prices, scores):.3f} | {line}", flush=True)


Qn = estimates(lambda tr, te: tfidf(tr, te, False))
Qt = estimates(lambda tr, te: tfidf(tr, te, True))
Qu = estimates(lambda tr, te: (E[tr], E[te]))
Qk = knn()
frontier(Qn, "n-grams")
frontier(Qt, "n-grams + task")
frontier(Qu, "encoder")
frontier(Qk, "encoder kNN 25")
frontier((Qn + Qu) / 2, "avg(n-grams, encoder)")
frontier((Qt + Qu) / 2, "avg(n-grams+task, enc)")
frontier((Qt + Qu + Qk) / 3, "avg(+kNN)")
