"""Retries of transient failures (the Go client's rules, client/retry.go) against a local
HTTP server scripted per request. No test sleeps: the client's sleep function records the
waits instead."""

import email.utils
import json
import socket
import ssl
import threading
import time
import unittest
import urllib.error
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import switchyard
from switchyard._retry import parse_retry_after, retryable_reason

MSGS = [{"role": "user", "content": "hi"}]
SELECT_OK = {"llm_label": "openai/gpt-4o", "providers": [], "session_id": "s1"}
CHUNK = {"provider": "openai", "model": "gpt-4o", "type": "text", "text": "Hel"}
FINAL = {"type": "final", "provider": "openai", "model": "gpt-4o",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Hel"}]},
         "usage": {"totalTokens": 5}}
SSE_OK = "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n" % (json.dumps(CHUNK), json.dumps(FINAL))


def answer(status, body, retry_after=None, ctype="application/json"):
    """A scripted step: one HTTP answer (body: dict as JSON, or str as is)."""
    headers = {"Content-Type": ctype}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    raw = json.dumps(body) if isinstance(body, dict) else body
    return {"status": status, "headers": headers, "body": raw.encode()}


DROP = "drop"  # close the connection without any answer
HANG = "hang"  # answer nothing until the test releases it


class Scripted(BaseHTTPRequestHandler):
    """Answers request i with step i of ``script`` (the last step repeats) and records
    every request as (method, path, body)."""

    script = []
    calls = []
    lock = threading.Lock()
    release = threading.Event()

    def log_message(self, *args):
        pass

    def _serve(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode() if n else ""
        with self.lock:
            i = len(self.calls)
            self.calls.append((self.command, self.path, body))
            step = self.script[min(i, len(self.script) - 1)]
        if step == DROP:
            self.close_connection = True
            return
        if step == HANG:
            self.release.wait(5)
            self.close_connection = True
            return
        self.send_response(step["status"])
        for k, v in step["headers"].items():
            self.send_header(k, v)
        if step["headers"]["Content-Type"] != "text/event-stream":
            self.send_header("Content-Length", str(len(step["body"])))
        self.end_headers()
        self.wfile.write(step["body"])  # a stream ends when the connection closes (HTTP/1.0)

    do_GET = do_POST = _serve


class RetryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        cls.httpd.daemon_threads = True
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.base = "http://127.0.0.1:%d" % cls.httpd.server_port

    @classmethod
    def tearDownClass(cls):
        Scripted.release.set()
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def client(self, *steps, base=None, **kw):
        Scripted.script = list(steps)
        Scripted.calls = []
        self.waits = []
        return switchyard.Client(base or self.base, "k", sleep=self.waits.append, **kw)

    def select(self, c):
        return switchyard.select_model(MSGS, ["openai/gpt-4o"], client=c)

    def test_defaults(self):
        self.assertEqual(switchyard.Client(self.base, "k").retry,
                         switchyard.RetryPolicy(max_retries=2, initial=0.25, max=4.0, max_retry_after=30.0))
        self.assertIs(switchyard.Client(self.base, "k").sleep, time.sleep)
        for bad in ({"max_retries": -1}, {"max_retries": 1.5}, {"initial": -0.1}, {"max": float("nan")},
                    {"max_retry_after": -1}):
            with self.assertRaises(ValueError, msg=bad):
                switchyard.RetryPolicy(**bad)
        with self.assertRaises(TypeError):
            switchyard.Client(self.base, "k", retry=3)

    def test_429_retry_after_then_200(self):
        c = self.client(answer(429, {"error": "Too Many Requests", "message": "slow down"}, "0"),
                        answer(429, {"error": "Too Many Requests", "message": "slow down"}, "1"),
                        answer(200, SELECT_OK))
        self.assertEqual(self.select(c), SELECT_OK)
        self.assertEqual(self.waits, [0, 1])
        self.assertEqual(len(Scripted.calls), 3)
        bodies = {b for _, _, b in Scripted.calls}
        self.assertEqual(len(bodies), 1, "every attempt sends the same body")
        self.assertIn('"messages"', bodies.pop())

    def test_503_backs_off_exponentially_with_jitter(self):
        c = self.client(answer(503, {"error": "Service Unavailable", "message": "busy"}),
                        answer(503, {"error": "Service Unavailable", "message": "busy"}),
                        answer(200, SELECT_OK))
        self.assertEqual(self.select(c), SELECT_OK)
        self.assertEqual(len(Scripted.calls), 3)
        self.assertEqual(len(self.waits), 2)
        self.assertTrue(0.125 <= self.waits[0] <= 0.25, self.waits)  # b = 0.25
        self.assertTrue(0.25 <= self.waits[1] <= 0.5, self.waits)    # b = 0.5
        # Capped by max: b is 0.1, then 0.2 capped at 0.15.
        c = self.client(answer(503, {"error": "Service Unavailable"}), answer(503, {"error": "Service Unavailable"}),
                        answer(200, SELECT_OK), retry=switchyard.RetryPolicy(initial=0.1, max=0.15))
        self.select(c)
        self.assertTrue(0.05 <= self.waits[0] <= 0.1, self.waits)
        self.assertTrue(0.075 <= self.waits[1] <= 0.15, self.waits)

    def test_backoff_bounds(self):
        p = switchyard.RetryPolicy()
        bounds = [p.backoff(n, rand=lambda a, b: (a, b)) for n in range(7)]
        self.assertEqual(bounds, [(0.125, 0.25), (0.25, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (2.0, 4.0), (2.0, 4.0)])
        self.assertEqual(switchyard.RetryPolicy(initial=1, max=0.5).backoff(3, rand=lambda a, b: (a, b)), (0.5, 1))
        self.assertEqual(switchyard.RetryPolicy().backoff(10_000, rand=lambda a, b: b), 4.0)

    def test_exhausted_raises_last_error(self):
        c = self.client(answer(502, {"error": "Bad Gateway", "message": "first"}),
                        answer(504, {"error": "Gateway Timeout", "message": "last"}),
                        retry=switchyard.RetryPolicy(max_retries=3))
        with self.assertRaises(switchyard.ServerError) as cm:
            self.select(c)
        self.assertEqual((cm.exception.status, cm.exception.message), (504, "last"))
        self.assertEqual(len(Scripted.calls), 4)
        self.assertEqual(len(self.waits), 3)
        # The default: 2 retries, then the typed error callers already catch.
        c = self.client(answer(429, {"error": "Too Many Requests", "message": "slow down"}, "2"))
        with self.assertRaises(switchyard.RateLimitError) as cm:
            self.select(c)
        self.assertEqual(cm.exception.retry_after, 2)
        self.assertEqual(len(Scripted.calls), 3)
        self.assertEqual(self.waits, [2, 2])

    def test_retry_after_above_bound_is_not_waited(self):
        future = email.utils.formatdate(time.time() + 3600, usegmt=True)
        for ra in ("31", future):
            c = self.client(answer(429, {"error": "Too Many Requests", "message": "budget exceeded"}, ra),
                            answer(200, SELECT_OK))
            with self.assertRaises(switchyard.RateLimitError) as cm:
                self.select(c)
            self.assertGreater(cm.exception.retry_after, 30, ra)
            self.assertEqual(len(Scripted.calls), 1, ra)
            self.assertEqual(self.waits, [], ra)
        # A lower bound of the caller's choosing; 0 honours only "Retry-After: 0".
        c = self.client(answer(503, {"error": "Service Unavailable"}, "5"), answer(200, SELECT_OK),
                        retry=switchyard.RetryPolicy(max_retry_after=0))
        with self.assertRaises(switchyard.ServerError):
            self.select(c)
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))
        # An HTTP date in the past means "now".
        past = email.utils.formatdate(time.time() - 3600, usegmt=True)
        c = self.client(answer(503, {"error": "Service Unavailable"}, past), answer(200, SELECT_OK))
        self.assertEqual(self.select(c), SELECT_OK)
        self.assertEqual((len(Scripted.calls), self.waits), (2, [0]))

    def test_parse_retry_after(self):
        now = 1_445_412_470.0  # 10 s before Wed, 21 Oct 2015 07:28:00 GMT
        self.assertEqual(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), 10)
        self.assertEqual(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), 0)
        self.assertEqual(parse_retry_after(" 7 ", now), 7)
        self.assertEqual(parse_retry_after("99999999999", now), 365 * 24 * 3600)
        for bad in (None, "", "-1", "soon", "1e3", "nan"):
            self.assertIsNone(parse_retry_after(bad, now), bad)

    def test_gateway_exhausted_502_is_not_retried(self):
        attempts = [{"provider": "openai", "model": "gpt-4o", "error": "boom"}]
        c = self.client(answer(502, {"error": "Bad Gateway", "message": "all models failed", "attempts": attempts}),
                        answer(200, SELECT_OK))
        with self.assertRaises(switchyard.ServerError) as cm:
            switchyard.complete(MSGS, "openai/gpt-4o", client=c)
        self.assertEqual(cm.exception.body["attempts"], attempts)
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))
        # A 502 without attempts (a proxy in front) is retried.
        c = self.client(answer(502, "<html>bad gateway</html>", ctype="text/html"), answer(200, SELECT_OK))
        self.assertEqual(self.select(c), SELECT_OK)
        self.assertEqual(len(Scripted.calls), 2)

    def test_should_retry_false_is_honoured(self):
        # OpenAI's envelope with x-should-retry: false: raised at once, code and param read.
        step = answer(503, {"error": {"message": "every model failed", "type": "api_error",
                                      "param": None, "code": "upstream_error"}})
        step["headers"]["X-Should-Retry"] = "false"
        c = self.client(step, answer(200, SELECT_OK))
        with self.assertRaises(switchyard.ServerError) as cm:
            self.select(c)
        e = cm.exception
        self.assertEqual((e.status, e.kind, e.code, e.should_retry), (503, "api_error", "upstream_error", False))
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))

    def test_client_errors_are_not_retried(self):
        for status, cls in ((400, switchyard.BadRequestError), (401, switchyard.AuthenticationError),
                            (403, switchyard.APIError), (404, switchyard.NotFoundError),
                            (409, switchyard.ConflictError), (422, switchyard.ValidationError),
                            (500, switchyard.ServerError)):
            c = self.client(answer(status, {"error": "x", "message": "no"}, "0"), answer(200, SELECT_OK),
                            retry=switchyard.RetryPolicy(max_retries=5))
            with self.assertRaises(cls) as cm:
                self.select(c)
            self.assertEqual(cm.exception.status, status)
            self.assertEqual((len(Scripted.calls), self.waits), (1, []), status)

    def test_disabled(self):
        for retry in (None, switchyard.RetryPolicy(max_retries=0)):
            c = self.client(answer(503, {"error": "Service Unavailable"}, "0"), answer(200, SELECT_OK), retry=retry)
            with self.assertRaises(switchyard.ServerError):
                self.select(c)
            self.assertEqual((len(Scripted.calls), self.waits), (1, []), retry)
            c = self.client(DROP, answer(200, SELECT_OK), retry=retry)
            with self.assertRaises(switchyard.ConnectionFailedError):
                self.select(c)
            self.assertEqual((len(Scripted.calls), self.waits), (1, []), retry)

    def test_get_is_retried(self):
        c = self.client(answer(504, {"error": "Gateway Timeout"}), answer(200, {"status": "running"}))
        self.assertEqual(switchyard.RouterTrainer(c, job_id="j1").status()["status"], "running")
        self.assertEqual([(m, p) for m, p, _ in Scripted.calls],
                         [("GET", "/api/v1/routers/train/status?task_id=j1")] * 2)

    def test_connection_refused_is_retried_then_raised(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        c = self.client(base="http://127.0.0.1:%d" % port, retry=switchyard.RetryPolicy(max_retries=3))
        with self.assertRaises(switchyard.ConnectionFailedError) as cm:
            self.select(c)
        self.assertEqual(len(self.waits), 3)  # 4 attempts
        for n, w in enumerate(self.waits):
            b = min(0.25 * 2 ** n, 4.0)
            self.assertTrue(b / 2 <= w <= b, (n, w))
        self.assertIsInstance(cm.exception, switchyard.SwitchyardError)
        self.assertIsInstance(cm.exception, ConnectionError)
        self.assertIsInstance(cm.exception.__cause__, urllib.error.URLError)
        self.assertIsInstance(cm.exception.__cause__.reason, ConnectionRefusedError)

    def test_connection_closed_without_answer_is_retried(self):
        c = self.client(DROP, DROP, answer(200, SELECT_OK))
        self.assertEqual(self.select(c), SELECT_OK)
        self.assertEqual(len(Scripted.calls), 3)
        self.assertEqual(len(self.waits), 2)
        c = self.client(DROP)
        with self.assertRaises(switchyard.ConnectionFailedError):
            self.select(c)
        self.assertEqual((len(Scripted.calls), len(self.waits)), (3, 2))

    def test_timeout_is_not_retried(self):
        Scripted.release.clear()
        c = self.client(HANG, answer(200, SELECT_OK), timeout=0.2)
        try:
            with self.assertRaises((TimeoutError, switchyard.SwitchyardError)) as cm:
                self.select(c)
            self.assertNotIsInstance(cm.exception, switchyard.ConnectionFailedError)
        finally:
            Scripted.release.set()
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))

    def test_transport_rule(self):
        self.assertTrue(retryable_reason(ConnectionRefusedError()))
        self.assertTrue(retryable_reason(ConnectionResetError()))
        self.assertTrue(retryable_reason(socket.gaierror(-2, "Name or service not known")))
        self.assertFalse(retryable_reason(ssl.SSLCertVerificationError(1, "certificate verify failed")))
        self.assertFalse(retryable_reason(TimeoutError("timed out")))
        self.assertFalse(retryable_reason(socket.timeout("timed out")))
        self.assertFalse(retryable_reason("unknown url type: ftp"))

    def test_stream_retried_on_initial_status(self):
        c = self.client(answer(429, {"error": "Too Many Requests", "message": "slow down"}, "0"),
                        answer(503, {"error": "Service Unavailable"}),
                        answer(200, SSE_OK, ctype="text/event-stream"))
        st = switchyard.complete(MSGS, "openai/gpt-4o", stream=True, client=c)
        self.assertEqual([ch["text"] for ch in st], ["Hel"])
        self.assertEqual(st.final["usage"]["totalTokens"], 5)
        self.assertEqual(len(Scripted.calls), 3)
        self.assertEqual(self.waits[0], 0)
        self.assertTrue(0.25 <= self.waits[1] <= 0.5, self.waits)
        self.assertEqual(len(json.loads(Scripted.calls[0][2])["messages"]), 1)
        self.assertEqual(Scripted.calls[0][2], Scripted.calls[2][2])

    def test_stream_not_retried_after_it_started(self):
        cut = "data: %s\n\n" % json.dumps(CHUNK)  # then the connection closes: no [DONE]
        c = self.client(answer(200, cut, ctype="text/event-stream"), answer(200, SSE_OK, ctype="text/event-stream"))
        st = switchyard.complete(MSGS, "openai/gpt-4o", stream=True, client=c)
        got = []
        with self.assertRaises(switchyard.StreamTruncatedError):
            for ch in st:
                got.append(ch["text"])
        self.assertEqual(got, ["Hel"])
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))
        # An error event after the first chunk is raised, not resent either.
        err = cut + "event: error\ndata: %s\n\n" % json.dumps({"type": "error", "error": "Service Unavailable",
                                                               "message": "upstream 503"})
        c = self.client(answer(200, err, ctype="text/event-stream"), answer(200, SSE_OK, ctype="text/event-stream"))
        with self.assertRaises(switchyard.StreamError):
            list(switchyard.complete(MSGS, "openai/gpt-4o", stream=True, client=c))
        self.assertEqual((len(Scripted.calls), self.waits), (1, []))


if __name__ == "__main__":
    unittest.main()
