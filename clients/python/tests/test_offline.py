"""Client-side logic (stream parsing, predict splitting, errors) against a small fake HTTP
server in this process. The same calls run against a real server in test_server.py."""

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import switchyard

CHUNK = {"provider": "openai", "model": "gpt-4o", "responseMessageId": "m1", "type": "text", "text": "Hel"}
CHUNK2 = dict(CHUNK, text="lo")
FINAL = {"type": "text", "text": "", "final": True, "provider": "openai", "model": "gpt-4o", "conversationId": "c1",
         "message": {"role": "assistant", "type": "text", "content": [{"type": "text", "text": "Hello"}]},
         "usage": {"promptTokens": 3, "completionTokens": 2, "totalTokens": 5}}


class FakeHandler(BaseHTTPRequestHandler):
    """A fake Switchyard: scripted SSE bodies and an echo predict endpoint."""

    sse_body = ""
    batches = []
    artifact_auth = []

    def log_message(self, *args):
        pass

    def _json(self, status, obj):
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path.startswith("/artifacts/"):
            return self._public_get()
        if self.headers.get("Authorization") != "Bearer fake-key":
            return self._json(401, {"error": "Unauthorized", "message": "missing or invalid API key"})
        u = urlsplit(self.path)
        if u.path == "/user/daily/activity":  # echoes the query
            return self._json(200, {"results": [], "metadata": {"query": parse_qs(u.query)}})
        self._json(404, {"error": "Not Found", "message": "no route"})

    def _public_get(self):
        """An artifact link: no key needed; records the Authorization it got."""
        type(self).artifact_auth.append(self.headers.get("Authorization"))
        if self.path == "/artifacts/gone/agent.py":
            return self._json(404, {"error": "Not Found", "message": "no artifact has this token"})
        raw = b"SYSTEM_PROMPT = 'x'\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/x-python; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else {}
        if self.headers.get("Authorization") != "Bearer fake-key":
            return self._json(401, {"error": "Unauthorized", "message": "missing or invalid API key"})
        if self.path.startswith("/api/v1/routers/train/cancel?"):
            job = parse_qs(urlsplit(self.path).query).get("task_id", [""])[0]
            if job == "tj_done":
                return self._json(409, {"error": "Conflict", "message": "trainer: job already finished: training job tj_done is completed"})
            return self._json(200, {"training_job_id": job, "status": "failed",
                                    "error_message": "cancelled by the caller before it started"})
        if self.path == "/api/v1/completions":
            if body.get("models") == ["fake/slow"]:
                import time
                time.sleep(0.5)  # longer than the test client's timeout
                return self._json(200, {})
            if body.get("guardrails") == ["no-secrets"]:
                return self._json(400, {"error": "Guardrail Violation", "guardrail": "no-secrets", "mode": "pre_call",
                                        "message": "Violated guardrail policy: no-secrets (pre_call) blocked the request"})
            if body.get("models") == ["fake/invalid"]:
                return self._json(422, {"error": "Validation Error", "message": "models[0]: unknown provider"})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(type(self).sse_body.encode())
            return
        if self.path == "/api/v1/optimize":  # echoes the body as the job's version
            return self._json(202, {"job_id": "opt_1", "status": "queued", "version": json.dumps(body, sort_keys=True)})
        if self.path == "/api/v1/routers/predict":
            if len(body["inputs"]) > 500:
                return self._json(422, {"error": "Validation Error", "message": "inputs: at most 500"})
            type(self).batches.append(len(body["inputs"]))
            return self._json(200, {"version": "v1", "predictions": [{"top_model": "echo/" + s} for s in body["inputs"]]})
        self._json(404, {"error": "Not Found", "message": "no route"})


class OfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeHandler)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.client = switchyard.Client("http://127.0.0.1:%d" % cls.httpd.server_port, "fake-key")

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def test_user_daily_activity_query(self):
        # user_id and the other parameters go in the query; None ones are left out.
        got = switchyard.user_daily_activity("2026-03-01", "2026-03-02", user_id="ann", model="openai/gpt-4o",
                                             page_size=10, api_key=None, client=self.client)
        self.assertEqual(got["metadata"]["query"], {"start_date": ["2026-03-01"], "end_date": ["2026-03-02"],
                                                    "user_id": ["ann"], "model": ["openai/gpt-4o"], "page_size": ["10"]})
        got = switchyard.user_daily_activity("2026-03-01", "2026-03-02", client=self.client)
        self.assertNotIn("user_id", got["metadata"]["query"])

    def test_guardrail_block(self):
        # guardrails goes in the body; a block is a GuardrailBlockedError (a BadRequestError)
        # naming the guardrail and when it ran.
        with self.assertRaises(switchyard.GuardrailBlockedError) as cm:
            switchyard.complete([{"role": "user", "content": "my key is sk-..."}], "openai/gpt-4o",
                                guardrails=["no-secrets"], client=self.client)
        self.assertIsInstance(cm.exception, switchyard.BadRequestError)
        self.assertEqual((cm.exception.guardrail, cm.exception.mode), ("no-secrets", "pre_call"))

    def test_stream_chunks_and_final(self):
        FakeHandler.sse_body = ": ping\n\n" + "".join("data: %s\n\n" % json.dumps(x) for x in (CHUNK, CHUNK2, FINAL)) + "data: [DONE]\n\n"
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=self.client)
        texts = [c["text"] for c in st]
        self.assertEqual(texts, ["Hel", "lo"])
        self.assertEqual(st.final["usage"]["totalTokens"], 5)
        self.assertEqual(st.text, "Hello")

    def test_stream_error_event(self):
        FakeHandler.sse_body = "data: %s\n\nevent: error\ndata: %s\n\n" % (
            json.dumps(CHUNK), json.dumps({"type": "error", "error": "Stream Error", "message": "upstream cut"}))
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=self.client)
        got = []
        with self.assertRaises(switchyard.StreamError) as cm:
            for c in st:
                got.append(c)
        self.assertEqual(len(got), 1)
        self.assertEqual(cm.exception.message, "upstream cut")

    def test_stream_without_done_is_truncated(self):
        FakeHandler.sse_body = "data: %s\n\n" % json.dumps(CHUNK)
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=self.client)
        with self.assertRaises(switchyard.StreamTruncatedError):
            list(st)

    def test_stream_errors_at_the_call_and_read_once(self):
        # An error answer is raised by complete() itself, not while iterating.
        with self.assertRaises(switchyard.ValidationError):
            switchyard.complete([{"role": "user", "content": "hi"}], "fake/invalid", stream=True, client=self.client)
        FakeHandler.sse_body = "".join("data: %s\n\n" % json.dumps(x) for x in (CHUNK, FINAL)) + "data: [DONE]\n\n"
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=self.client)
        self.assertEqual([c["text"] for c in st], ["Hel"])
        with self.assertRaisesRegex(switchyard.SwitchyardError, "iterated once"):
            list(st)

    def test_timeout_is_a_package_error(self):
        quick = switchyard.Client("http://127.0.0.1:%d" % self.httpd.server_port, "fake-key", timeout=0.1)
        self.assertGreater(switchyard.Client("http://127.0.0.1:1", "k").timeout, 300)  # above the server's 5 min
        with self.assertRaises(switchyard.RequestTimeoutError) as cm:
            switchyard.complete([{"role": "user", "content": "hi"}], "fake/slow", client=quick)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertIsInstance(cm.exception, switchyard.SwitchyardError)

    def test_predict_splits_over_500_in_order(self):
        FakeHandler.batches = []
        tr = switchyard.RouterTrainer(self.client, model_id="m1")
        inputs = [str(i) for i in range(1234)]
        res = tr.predict(inputs)
        self.assertEqual(FakeHandler.batches, [500, 500, 234])
        self.assertEqual([p["top_model"] for p in res["predictions"]], ["echo/" + s for s in inputs])

    def test_cancel_training(self):
        tr = switchyard.RouterTrainer(self.client)
        with self.assertRaises(switchyard.MissingIdError):
            tr.cancel()
        tr.job_id = "tj_1"
        st = tr.cancel()
        self.assertEqual((st["training_job_id"], st["status"]), ("tj_1", "failed"))
        self.assertIn("cancelled", st["error_message"])
        with self.assertRaises(switchyard.ConflictError):
            tr.cancel("tj_done")

    def test_optimize_submit_seed(self):
        opt = switchyard.AgentOptimizer(self.client)
        job = opt.submit("https://b.example/b.zip", "openai/gpt-4o-mini", n_iterations=3, seed=7)
        self.assertEqual(opt.job_id, "opt_1")
        self.assertEqual(json.loads(job["version"]), {"optimizer": "agentopt", "input_url": "https://b.example/b.zip",
                                                      "target_models": ["openai/gpt-4o-mini"], "n_iterations": 3, "seed": 7})
        job = opt.submit("https://b.example/b.zip", "openai/gpt-4o-mini", seed=0)
        self.assertEqual(json.loads(job["version"])["seed"], 0)
        job = opt.submit("https://b.example/b.zip", "openai/gpt-4o-mini")
        self.assertNotIn("seed", json.loads(job["version"]))

    def test_optimize_agent_code(self):
        import os, tempfile
        opt = switchyard.AgentOptimizer(self.client)
        base = self.client.base_url
        path = os.path.join(tempfile.mkdtemp(), "best.py")
        code = opt.agent_code({"model": "m", "agent_code_url": base + "/artifacts/a/agent.py"}, path=path)
        self.assertEqual(code, "SYSTEM_PROMPT = 'x'\n")
        with open(path) as f:
            self.assertEqual(f.read(), code)
        self.assertEqual(FakeHandler.artifact_auth, [None])  # the link is the credential: no key sent
        with self.assertRaises(switchyard.NotFoundError):
            opt.agent_code({"agent_code_url": base + "/artifacts/gone/agent.py"})
        with self.assertRaises(switchyard.MissingIdError):
            opt.agent_code({"model": "m", "agent_code_url": None})

    def test_missing_ids_and_typed_errors(self):
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.RouterTrainer(self.client).status()
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.AgentOptimizer(self.client).results()
        bad = switchyard.Client(self.client.base_url, "wrong")
        with self.assertRaises(switchyard.AuthenticationError) as cm:
            switchyard.RouterTrainer(bad, model_id="m1").predict(["x"])
        self.assertEqual(cm.exception.status, 401)
        self.assertEqual(cm.exception.kind, "Unauthorized")

    def test_environment(self):
        import os
        from unittest import mock
        with mock.patch.dict(os.environ, {"SWITCHYARD_BASE_URL": "https://sy.example.com/api/v1/", "SERVICE_API_KEY": "envkey"}):
            c = switchyard.Client()
        self.assertEqual(c.base_url, "https://sy.example.com")
        self.assertEqual(c.api_key, "envkey")
        with self.assertRaises(switchyard.SwitchyardError):
            switchyard.Client("ftp://x")


if __name__ == "__main__":
    unittest.main()
