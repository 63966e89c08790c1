# Test agent for the optimizer's end-to-end test: calls the task model through the
# OpenAI-compatible gateway with urllib only.
import json
import os
import urllib.request

# === EDITABLE START ===
SYSTEM_PROMPT = """You are a precise assistant.
RULE upper: write the text in capital letters."""
# === EDITABLE END ===

# === FIXED START ===
def _ask(base_url, api_key, model, text):
    body = json.dumps({
        "model": model,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": text},
        ],
    }).encode()
    req = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + api_key},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        data = json.load(resp)
    usage = data.get("usage") or {}
    return data["choices"][0]["message"]["content"], usage.get("total_tokens", 0)


def run_batch(inputs, api_key):
    base_url = os.environ["OPENAI_BASE_URL"]
    model = os.environ["SWITCHYARD_MODEL"]
    predictions, tokens = [], 0
    for text in inputs:
        answer, used = _ask(base_url, api_key, model, text)
        predictions.append(answer)
        tokens += used
    return predictions, {"tokens": tokens, "cost": 0.0}
# === FIXED END ===
