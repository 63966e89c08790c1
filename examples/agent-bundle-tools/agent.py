"""Example tool-using agent for Switchyard's prompt optimizer (agentopt).

It answers shop questions ("How much do 3 apples and 2 pears cost?") by letting the model
call a `get_price` tool, run here from the FIXED section's price list, until the model gives
the total. The loop speaks OpenAI's tool calling through Switchyard's gateway, so it works
whatever provider serves the target model (OpenAI, Anthropic, Gemini). The optimizer rewrites
only the EDITABLE section (the SYSTEM_PROMPT string).

Inside the sandbox the agent reaches nothing but Switchyard's OpenAI-compatible gateway:
OPENAI_BASE_URL points at it, OPENAI_API_KEY (also passed to run_batch as api_key) is a
temporary key limited to the target model, and SWITCHYARD_MODEL names that model. Only the
Python standard library is used, so no DEPENDENCIES are needed.
"""
import json
import os
import urllib.request

# === EDITABLE START ===
SYSTEM_PROMPT = """You are a shop assistant. Look up the price of every item with get_price,
then answer with the total in dollars as a number with two decimals, and nothing else."""
# === EDITABLE END ===

# === FIXED START ===
PRICES = {"apple": 0.5, "pear": 0.75, "banana": 0.25, "melon": 3.0, "cherry": 0.1}

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_price",
        "description": "Unit price in dollars of one item sold by the shop.",
        "parameters": {
            "type": "object",
            "properties": {"item": {"type": "string", "description": "singular item name, e.g. apple"}},
            "required": ["item"],
        },
    },
}]

MAX_STEPS = 6


def _get_price(arguments):
    try:
        item = str(json.loads(arguments or "{}").get("item", "")).strip().lower().rstrip("s")
    except ValueError:
        return json.dumps({"error": "arguments are not JSON"})
    if item.endswith("ie"):
        item = item[:-2] + "y"
    if item not in PRICES:
        return json.dumps({"error": "unknown item " + item})
    return json.dumps({"item": item, "price": PRICES[item]})


def _chat(base_url, api_key, model, messages):
    body = json.dumps({"model": model, "temperature": 0, "messages": messages, "tools": TOOLS}).encode()
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + api_key},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def _answer(base_url, api_key, model, question):
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    tokens = 0
    for _ in range(MAX_STEPS):
        data = _chat(base_url, api_key, model, messages)
        tokens += int((data.get("usage") or {}).get("total_tokens", 0))
        message = data["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if not calls:
            return (message.get("content") or "").strip(), tokens
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for call in calls:
            result = _get_price(call["function"].get("arguments"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return "", tokens


def run_batch(inputs, api_key):
    """Answer every input; returns (predictions, {"tokens": int, "cost": float})."""
    base_url = os.environ["OPENAI_BASE_URL"]
    model = os.environ["SWITCHYARD_MODEL"]
    key = api_key or os.environ.get("OPENAI_API_KEY", "")
    predictions, tokens = [], 0
    for question in inputs:
        answer, used = _answer(base_url, key, model, question)
        predictions.append(answer)
        tokens += used
    # The gateway meters cost per job; the agent reports what it can see.
    return predictions, {"tokens": tokens, "cost": 0.0}
# === FIXED END ===
