"""Example agent for Switchyard's prompt optimizer (agentopt).

It classifies customer-support tickets into one of four queues. The optimizer rewrites only
the EDITABLE section (the SYSTEM_PROMPT string); the FIXED section is never changed.

Inside the sandbox the agent can reach nothing but Switchyard's OpenAI-compatible gateway:
OPENAI_BASE_URL points at it, OPENAI_API_KEY (also passed to run_batch as api_key) is a
temporary key limited to the target model, and SWITCHYARD_MODEL names that model. Only the
Python standard library is used (urllib), so no DEPENDENCIES are needed.
"""
import json
import os
import urllib.request
from concurrent.futures import ThreadPoolExecutor

# === EDITABLE START ===
SYSTEM_PROMPT = """You sort customer support tickets.
Answer with the name of the queue only."""
# === EDITABLE END ===

# === FIXED START ===
QUEUES = ("billing", "technical", "account", "shipping")


def _classify(base_url, api_key, model, ticket):
    body = json.dumps({
        "model": model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": ticket},
        ],
    }).encode()
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + api_key},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        data = json.load(response)
    answer = data["choices"][0]["message"]["content"] or ""
    usage = data.get("usage") or {}
    return answer.strip(), int(usage.get("total_tokens", 0))


def run_batch(inputs, api_key):
    """Classify every input; returns (predictions, {"tokens": int, "cost": float})."""
    base_url = os.environ["OPENAI_BASE_URL"]
    model = os.environ["SWITCHYARD_MODEL"]
    key = api_key or os.environ.get("OPENAI_API_KEY", "")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda t: _classify(base_url, key, model, t), inputs))
    predictions = [answer for answer, _ in results]
    tokens = sum(used for _, used in results)
    # The gateway meters cost per job; the agent reports what it can see.
    return predictions, {"tokens": tokens, "cost": 0.0}
# === FIXED END ===
