"""Client-side parts of the Go client's parity API against a local scripted server: the
If-Match header and the ETag of key calls, a 412 after a resent attempt, and the multipart
form of an image edit. The same calls run against a real server in
test_server_parity.py."""

import email.parser
import email.policy
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import switchyard

KEY = {"id": "vk_0123456789abcdef", "name": "k"}
STALE = {"error": "Precondition Failed", "message": "If-Match: the key is no longer at version \"v1\""}


class Recorder(BaseHTTPRequestHandler):
    """Answers request i with step i of ``script`` — (status, body dict, headers), or
    "drop" to close the connection without an answer — and records (method, path,
    headers, body bytes)."""

    script = []
    calls = []
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _serve(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with self.lock:
            i = len(self.calls)
            self.calls.append((self.command, self.path, dict(self.headers), body))
            step = self.script[min(i, len(self.script) - 1)]
        if step == "drop":
            self.close_connection = True
            return
        status, obj, headers = step
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PATCH = do_DELETE = _serve


class ParityOfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.base = "http://127.0.0.1:%d" % cls.httpd.server_address[1]

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def setUp(self):
        Recorder.calls = []
        self.waits = []
        self.client = switchyard.Client(base_url=self.base, api_key="k", sleep=self.waits.append)

    def script(self, *steps):
        Recorder.script = list(steps)

    def test_etag_and_if_match(self):
        self.script((200, KEY, {"ETag": '"v2"'}))
        k = switchyard.key_info(KEY["id"], client=self.client)
        self.assertEqual(k["etag"], '"v2"')
        self.assertNotIn("If-Match", Recorder.calls[-1][2])
        k = switchyard.rotate_key(KEY["id"], if_match='"v2"', client=self.client)
        method, path, headers, _ = Recorder.calls[-1]
        self.assertEqual((method, path, headers.get("If-Match")), ("POST", "/api/v1/keys/" + KEY["id"] + "/rotate", '"v2"'))
        switchyard.update_key(KEY["id"], if_match='"v3"', name="n", client=self.client)
        method, _, headers, body = Recorder.calls[-1]
        self.assertEqual((method, headers.get("If-Match"), json.loads(body)), ("PATCH", '"v3"', {"name": "n"}))
        self.script((200, {"id": KEY["id"], "deleted": True}, {}))
        switchyard.revoke_key(KEY["id"], if_match='"v4"', client=self.client)
        self.assertEqual(Recorder.calls[-1][2].get("If-Match"), '"v4"')
        switchyard.revoke_key(KEY["id"], client=self.client)
        self.assertNotIn("If-Match", Recorder.calls[-1][2])

    def test_key_and_team_limit_fields(self):
        self.script((200, KEY, {}))
        switchyard.issue_key(name="k", max_parallel_requests=2, aliases={"my-model": "gpt-4o"},
                             model_max_budget={"gpt-4o": {"max_budget_usd": 10, "budget_duration": "1d"}},
                             model_rpm_limit={"gpt-4o": 5}, model_tpm_limit={"gpt-4o": 1000}, client=self.client)
        method, path, _, body = Recorder.calls[-1]
        self.assertEqual((method, path), ("POST", "/api/v1/keys"))
        self.assertEqual(json.loads(body), {
            "name": "k", "max_parallel_requests": 2, "aliases": {"my-model": "gpt-4o"},
            "model_max_budget": {"gpt-4o": {"max_budget_usd": 10, "budget_duration": "1d"}},
            "model_rpm_limit": {"gpt-4o": 5}, "model_tpm_limit": {"gpt-4o": 1000}})
        switchyard.issue_key(name="plain", client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"name": "plain"})  # none sent unless given
        switchyard.update_key(KEY["id"], aliases=None, model_rpm_limit={}, max_parallel_requests=0, client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"aliases": None, "model_rpm_limit": {}, "max_parallel_requests": 0})
        self.script((200, {"team_id": "t"}, {}))
        switchyard.create_team(team_id="t", max_parallel_requests=3, client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"team_id": "t", "max_parallel_requests": 3})
        switchyard.update_team("t", max_parallel_requests=None, client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"max_parallel_requests": None})

    def test_412(self):
        self.script((412, STALE, {}))
        with self.assertRaises(switchyard.PreconditionFailedError) as cm:
            switchyard.rotate_key(KEY["id"], if_match='"v1"', client=self.client)
        self.assertEqual((cm.exception.status, cm.exception.resent), (412, False))
        self.assertEqual(cm.exception.message, STALE["message"])
        self.assertEqual(len(Recorder.calls), 1)  # a 412 is not retried

    def test_412_after_a_resend_says_so(self):
        for first in ((502, {"error": "Bad Gateway", "message": "upstream"}, {}), "drop"):
            Recorder.calls = []
            self.script(first, (412, STALE, {}))
            with self.assertRaises(switchyard.PreconditionFailedError) as cm:
                switchyard.rotate_key(KEY["id"], if_match='"v1"', client=self.client)
            self.assertTrue(cm.exception.resent, first)
            self.assertIn("may be this call's own", str(cm.exception))
            self.assertEqual([c[2].get("If-Match") for c in Recorder.calls], ['"v1"', '"v1"'])
        # A 503 is refused before the server does anything: the 412 after it is plain.
        Recorder.calls = []
        self.script((503, {"error": "Service Unavailable", "message": "busy"}, {}), (412, STALE, {}))
        with self.assertRaises(switchyard.PreconditionFailedError) as cm:
            switchyard.rotate_key(KEY["id"], if_match='"v1"', client=self.client)
        self.assertFalse(cm.exception.resent)

    def test_edit_images_form(self):
        self.script((200, {"created": 1, "data": [{"b64_json": "aQ=="}]}, {}))
        switchyard.edit_images("a hat", [b"one", ("two.webp", b"2"), ("three", b"33", "image/jpeg")],
                               mask=("m.png", b"mask"), model="gpt-image-1", n=2, output_compression=0,
                               extra={"seed": "7"}, client=self.client)
        _, path, headers, body = Recorder.calls[-1]
        self.assertEqual(path, "/v1/images/edits")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        parts = [(p.get_param("name", header="content-disposition"), p.get_filename(), p.get_content_type(),
                  p.get_payload(decode=True)) for p in msg.iter_parts()]
        self.assertEqual(parts, [
            ("model", None, "text/plain", b"gpt-image-1"), ("prompt", None, "text/plain", b"a hat"),
            ("n", None, "text/plain", b"2"), ("output_compression", None, "text/plain", b"0"),
            ("seed", None, "text/plain", b"7"),
            ("image[]", "image.png", "image/png", b"one"), ("image[]", "two.webp", "image/webp", b"2"),
            ("image[]", "three", "image/jpeg", b"33"), ("mask", "m.png", "image/png", b"mask"),
        ])
        switchyard.edit_images("one", b"x", client=self.client)
        body = Recorder.calls[-1][3]
        self.assertIn(b'name="image"; filename="image.png"', body)
        self.assertNotIn(b"image[]", body)

    def test_customer_limit_fields(self):
        # As the Go client's CustomerRequest and CustomerUpdate: an end user's
        # requests_per_minute (LiteLLM's rpm_limit) and model_max_budget, sent only when given.
        self.script((200, {"end_user_id": "u1"}, {}))
        budgets = {"openai/gpt-4o": {"max_budget_usd": 10, "budget_duration": "30d"}}
        switchyard.create_customer("u1", requests_per_minute=3, model_max_budget=budgets, client=self.client)
        method, path, _, body = Recorder.calls[-1]
        self.assertEqual((method, path), ("POST", "/api/v1/customers"))
        self.assertEqual(json.loads(body), {"end_user_id": "u1", "requests_per_minute": 3, "model_max_budget": budgets})
        switchyard.create_customer("u2", client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"end_user_id": "u2"})
        switchyard.update_customer("u/1", requests_per_minute=0, model_max_budget={}, client=self.client)
        method, path, _, body = Recorder.calls[-1]
        self.assertEqual((method, path, json.loads(body)),
                         ("PATCH", "/api/v1/customers/u%2F1", {"requests_per_minute": 0, "model_max_budget": {}}))
        switchyard.update_customer("u1", model_max_budget=None, client=self.client)
        self.assertEqual(json.loads(Recorder.calls[-1][3]), {"model_max_budget": None})  # removes them

    def test_complete_logprobs_fields(self):
        # The native API's logprobs extension, as the Go client's CompletionRequest sends it.
        answer = {"type": "text", "text": "Yes", "message": {"role": "assistant", "type": "text",
                                                              "content": [{"type": "text", "text": "Yes"}]},
                  "logprobs": {"content": [{"token": "Yes", "logprob": -0.25, "bytes": [89, 101, 115],
                                            "top_logprobs": []}], "refusal": None}}
        self.script((200, answer, {}))
        res = switchyard.complete([{"role": "user", "content": "Is it?"}], "openai/gpt-4o-mini",
                                  logprobs=True, top_logprobs=2, client=self.client)
        body = json.loads(Recorder.calls[-1][3])
        self.assertEqual((body["logprobs"], body["top_logprobs"]), (True, 2))
        self.assertEqual(res["logprobs"]["content"][0]["logprob"], -0.25)
        switchyard.complete([{"role": "user", "content": "Is it?"}], "openai/gpt-4o-mini", client=self.client)
        body = json.loads(Recorder.calls[-1][3])
        self.assertNotIn("logprobs", body)
        self.assertNotIn("top_logprobs", body)
        # A server that answers a stream with one JSON body: its one chunk keeps the logprobs.
        st = switchyard.complete([{"role": "user", "content": "Is it?"}], "openai/gpt-4o-mini", stream=True,
                                 logprobs=True, client=self.client)
        chunks = list(st)
        self.assertEqual([c["logprobs"]["content"][0]["token"] for c in chunks], ["Yes"])


if __name__ == "__main__":
    unittest.main()
