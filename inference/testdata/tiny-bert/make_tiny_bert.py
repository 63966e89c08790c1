#!/usr/bin/env python3
"""Generate a random-weight BERT-architecture sentence encoder in ONNX.

It has the inputs and output of a Hugging Face BERT export (input_ids, attention_mask,
token_type_ids -> last_hidden_state [batch, sequence, hidden]) so that Switchyard's ONNX
embedder can be tested on real loading, tokenisation and pooling without downloading
weights. The weights are random (fixed seed): the embeddings mean nothing.

The committed fixture (model.onnx, ~4 MB) was made with the defaults:

    /usr/bin/python3 make_tiny_bert.py --out model.onnx --reference reference.json

A MiniLM-size model (for benchmarks; ~90 MB, not committed):

    /usr/bin/python3 make_tiny_bert.py --out /tmp/m/model.onnx --hidden 384 --layers 6 \
        --heads 12 --intermediate 1536

Needs python3-onnx and python3-numpy (Debian: apt-get install -y python3-onnx).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(vocab, hidden, layers, heads, intermediate, max_pos, seed):
    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def weight(shape, scale=0.05):
        n = name("w")
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), n))
        return n

    def const(value, dtype=np.float32):
        n = name("c")
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), n))
        return n

    def node(op, inputs, **attrs):
        out = name(op.lower())
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def layer_norm(x):
        return node("LayerNormalization", [x, const(np.ones(hidden)), const(np.zeros(hidden))], axis=-1, epsilon=1e-12)

    def dense(x, n_in, n_out):
        return node("Add", [node("MatMul", [x, weight((n_in, n_out))]), weight((n_out,), 0.02)])

    # Embeddings: word + position + token type, then LayerNorm.
    word = node("Gather", [weight((vocab, hidden)), "input_ids"], axis=0)
    seq_len = node("Gather", [node("Shape", ["input_ids"]), const(1, np.int64)], axis=0)
    positions = node("Range", [const(0, np.int64), seq_len, const(1, np.int64)])
    pos = node("Gather", [weight((max_pos, hidden)), positions], axis=0)
    typ = node("Gather", [weight((2, hidden)), "token_type_ids"], axis=0)
    x = layer_norm(node("Add", [node("Add", [word, pos]), typ]))

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, -10000 on padding.
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = node("Mul", [node("Sub", [const(1.0), mask]), const(-10000.0)])
    mask = node("Unsqueeze", [mask, const([1, 2], np.int64)])

    dh = hidden // heads
    split_shape = const([0, 0, heads, dh], np.int64)
    merge_shape = const([0, 0, hidden], np.int64)
    for _ in range(layers):
        q = node("Transpose", [node("Reshape", [dense(x, hidden, hidden), split_shape])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [dense(x, hidden, hidden), split_shape])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [dense(x, hidden, hidden), split_shape])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Div", [node("MatMul", [q, k]), const(np.sqrt(dh))]), mask])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        x = layer_norm(node("Add", [x, dense(ctx, hidden, hidden)]))
        h = dense(x, hidden, intermediate)
        # GELU (erf form), as BERT.
        h = node("Mul", [node("Mul", [h, const(0.5)]),
                         node("Add", [const(1.0), node("Erf", [node("Div", [h, const(np.sqrt(2.0))])])])])
        x = layer_norm(node("Add", [x, dense(h, intermediate, hidden)]))
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    ids = lambda n: helper.make_tensor_value_info(n, TensorProto.INT64, ["batch_size", "sequence_length"])
    graph = helper.make_graph(
        nodes, "tiny_bert",
        [ids("input_ids"), ids("attention_mask"), ids("token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "sequence_length", hidden])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="switchyard make_tiny_bert.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def run_numpy(model, input_ids, attention_mask):
    """Evaluate the graph with numpy (an independent reference for the Go runtime)."""
    from math import erf
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env["input_ids"] = input_ids
    env["attention_mask"] = attention_mask
    env["token_type_ids"] = np.zeros_like(input_ids)
    verf = np.vectorize(erf)
    for n in model.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        i = [env[x] for x in n.input]
        op = n.op_type
        if op == "Gather":
            r = np.take(i[0], i[1], axis=a.get("axis", 0))
        elif op == "Shape":
            r = np.array(i[0].shape, dtype=np.int64)
        elif op == "Range":
            r = np.arange(i[0], i[1], i[2], dtype=np.int64)
        elif op == "Add":
            r = i[0] + i[1]
        elif op == "Sub":
            r = i[0] - i[1]
        elif op == "Mul":
            r = i[0] * i[1]
        elif op == "Div":
            r = i[0] / i[1]
        elif op == "MatMul":
            r = np.matmul(i[0], i[1])
        elif op == "LayerNormalization":
            mu = i[0].mean(-1, keepdims=True)
            var = ((i[0] - mu) ** 2).mean(-1, keepdims=True)
            r = (i[0] - mu) / np.sqrt(var + a["epsilon"]) * i[1] + i[2]
        elif op == "Cast":
            r = i[0].astype(np.float32)
        elif op == "Unsqueeze":
            r = i[0]
            for ax in sorted(i[1]):
                r = np.expand_dims(r, ax)
        elif op == "Reshape":
            shape = [i[0].shape[k] if d == 0 else d for k, d in enumerate(i[1])]
            r = i[0].reshape(shape)
        elif op == "Transpose":
            r = np.transpose(i[0], a["perm"])
        elif op == "Softmax":
            e = np.exp(i[0] - i[0].max(-1, keepdims=True))
            r = e / e.sum(-1, keepdims=True)
        elif op == "Erf":
            r = verf(i[0]).astype(np.float32)
        elif op == "Identity":
            r = i[0]
        else:
            raise ValueError(op)
        env[n.output[0]] = np.asarray(r)
    return env["last_hidden_state"]


def write_reference(model, tokenizer_path, out_path):
    """Sentence embeddings of a few texts, mean-pooled over the attention mask and
    L2-normalised like sentence-transformers, computed with numpy."""
    vocab = json.load(open(tokenizer_path))["model"]["vocab"]
    texts = ["hello world", "the cat sat on the mat", "which model should answer this question"]
    seqs = [[vocab["[CLS]"]] + [vocab[w] for w in t.split()] + [vocab["[SEP]"]] for t in texts]
    width = max(len(s) for s in seqs)
    ids = np.array([s + [0] * (width - len(s)) for s in seqs], dtype=np.int64)
    mask = np.array([[1] * len(s) + [0] * (width - len(s)) for s in seqs], dtype=np.int64)
    hidden = run_numpy(model, ids, mask).astype(np.float64)
    m = mask[:, :, None].astype(np.float64)
    pooled = (hidden * m).sum(1) / m.sum(1)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    with open(out_path, "w") as f:
        json.dump({"texts": texts, "token_ids": seqs, "embeddings": pooled.tolist()}, f)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="model.onnx")
    p.add_argument("--vocab", type=int, default=30522, help="vocabulary size (all-MiniLM-L6-v2: 30522)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--intermediate", type=int, default=64)
    p.add_argument("--max-pos", type=int, default=512)
    p.add_argument("--seed", type=int, default=20261122)
    p.add_argument("--reference", default="", help="also write numpy reference embeddings (JSON) here")
    p.add_argument("--tokenizer", default="tokenizer.json", help="tokenizer.json whose vocabulary --reference uses")
    a = p.parse_args()
    model = build(a.vocab, a.hidden, a.layers, a.heads, a.intermediate, a.max_pos, a.seed)
    onnx.save(model, a.out)
    cfg = {"model_type": "bert", "hidden_size": a.hidden, "num_hidden_layers": a.layers,
           "num_attention_heads": a.heads, "intermediate_size": a.intermediate,
           "max_position_embeddings": a.max_pos, "vocab_size": a.vocab}
    with open(os.path.join(os.path.dirname(os.path.abspath(a.out)), "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    if a.reference:
        write_reference(model, a.tokenizer, a.reference)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes)")


if __name__ == "__main__":
    main()
