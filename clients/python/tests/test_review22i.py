"""Review 22i: polling of RouterTrainer/AgentOptimizer, timeouts on every supported Python,
and the parsing of failed streams, against a small fake server in this process. No test
sleeps: waits go through a recording ``sleep``."""

import email.message
import io
import json
import threading
import unittest
import urllib.error
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import switchyard


class CountingHandler(BaseHTTPRequestHandler):
    """Counts the GETs it answers and, past ``limit`` of them, answers 404, so that a wait
    that does not stop by itself ends anyway; below that, ``answer(n)`` says what the n-th
    GET gets. Subclasses keep their own ``calls`` and ``limit``."""

    limit = 20
    calls = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def answer(self, n):
        raise NotImplementedError

    def do_GET(self):
        cls = type(self)
        with cls.lock:
            cls.calls += 1
            n = cls.calls
        if n > cls.limit:
            status, body = 404, {"error": "Not Found", "message": "gone"}
        else:
            status, body = self.answer(n)
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class StatusHandler(CountingHandler):
    """Answers the status routes with ``states`` in turn (the last one repeating) until
    ``limit`` requests were answered; after that 404."""

    states = ["running"]
    limit = 20
    calls = 0

    def answer(self, n):
        state = self.states[min(n, len(self.states)) - 1]
        body = {"status": state, "training_job_id": "tj_1", "job_id": "oj_1"}
        if state == "completed":
            body["model_id"] = "rm_1"
        return 200, body


class PollTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), StatusHandler)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def script(self, states, limit=20):
        StatusHandler.states, StatusHandler.limit, StatusHandler.calls = list(states), limit, 0
        self.waits = []
        return switchyard.Client("http://127.0.0.1:%d" % self.httpd.server_port, "k", sleep=self.waits.append)

    def test_unknown_state_ends_the_wait(self):
        # A state the client does not know (a newer server's, or none) is not polled forever.
        for state in ("cancelled", "archived", "", None):
            c = self.script([state])
            tr = switchyard.RouterTrainer(c, job_id="tj_1")
            with self.assertRaises(switchyard.UnknownStateError) as cm:
                tr.wait(poll_every=0)
            self.assertEqual((cm.exception.state, cm.exception.last["status"], StatusHandler.calls), (state, state, 1))
            self.assertIsInstance(cm.exception, switchyard.SwitchyardError)

            c = self.script([state])
            with self.assertRaises(switchyard.UnknownStateError):
                switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=0)
            self.assertEqual(StatusHandler.calls, 1)

    def test_known_states(self):
        # queued and running are polled again; completed, failed and interrupted end it.
        c = self.script(["queued", "running", "completed"])
        tr = switchyard.RouterTrainer(c, job_id="tj_1")
        self.assertEqual(tr.wait(poll_every=0)["status"], "completed")
        self.assertEqual((StatusHandler.calls, tr.model_id), (3, "rm_1"))
        for state in ("completed", "failed", "interrupted"):
            c = self.script(["running", state])
            self.assertEqual(switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=0)["status"], state)
            self.assertEqual(StatusHandler.calls, 2)
        c = self.script(["running"], limit=3)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.RouterTrainer(c, job_id="tj_1").wait(poll_every=0)
        self.assertEqual(StatusHandler.calls, 4)

    def test_waits_use_the_client_sleep_and_the_whole_timeout(self):
        # The waits between polls go through Client(sleep=...), as wait_batch's and the
        # retries' do; a timeout shorter than poll_every is waited out (one more poll at
        # its end) rather than raised right after the first status.
        clock = [1000.0]

        def sleep(s):
            self.waits.append(s)
            clock[0] += s

        c = self.script(["running"])
        c.sleep = sleep
        c.clock = lambda: clock[0]
        with self.assertRaises(TimeoutError):
            switchyard.RouterTrainer(c, job_id="tj_1").wait(poll_every=30, timeout=25)
        self.assertEqual((self.waits, StatusHandler.calls), ([25], 2))

        c = self.script(["running", "running", "completed"])
        c.sleep, c.clock = sleep, lambda: clock[0]
        st = switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=30, timeout=60)
        self.assertEqual((st["status"], self.waits, StatusHandler.calls), ("completed", [30, 30], 3))

        c = self.script(["running"])
        c.sleep, c.clock = sleep, lambda: clock[0]
        with self.assertRaises(TimeoutError):
            switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=30, timeout=60)
        self.assertEqual((self.waits, StatusHandler.calls), ([30, 30], 3))


class Py39Timeout(OSError):
    """What socket.timeout is before Python 3.10 (3.7 to 3.9): an OSError that is not a TimeoutError
    (it became an alias of TimeoutError in 3.10)."""


class FakeResponse:
    """A response whose reads (or lines) raise ``exc``."""

    def __init__(self, exc, ctype="application/json"):
        self.exc = exc
        self.headers = {"Content-Type": ctype}

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def read(self, *a):
        raise self.exc

    def __iter__(self):
        return self

    def __next__(self):
        raise self.exc

    def close(self):
        pass


class OldPythonTimeoutTest(unittest.TestCase):
    """Before Python 3.10 (3.7 to 3.9) a socket timeout is socket.timeout, not TimeoutError; it must
    still come out as RequestTimeoutError (never retried), wherever it happens."""

    def setUp(self):
        patcher = mock.patch("socket.timeout", Py39Timeout)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.waits = []
        self.client = switchyard.Client("http://127.0.0.1:9", "k", timeout=5, sleep=self.waits.append)

    def urlopen(self, outcome):
        calls = []

        def fake(req, timeout=None):
            calls.append(req.full_url)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        patcher = mock.patch("urllib.request.urlopen", fake)
        patcher.start()
        self.addCleanup(patcher.stop)
        return calls

    def test_no_answer_head(self):
        calls = self.urlopen(Py39Timeout("timed out"))
        with self.assertRaises(switchyard.RequestTimeoutError):
            switchyard.RouterTrainer(self.client, job_id="tj_1").status()
        self.assertEqual((len(calls), self.waits), (1, []))

    def test_no_connection(self):
        calls = self.urlopen(urllib.error.URLError(Py39Timeout("timed out")))
        with self.assertRaises(switchyard.RequestTimeoutError):
            switchyard.AgentOptimizer(self.client, job_id="oj_1").status()
        self.assertEqual((len(calls), self.waits), (1, []))

    def test_body_stops(self):
        self.urlopen(FakeResponse(Py39Timeout("timed out")))
        with self.assertRaises(switchyard.RequestTimeoutError):
            switchyard.AgentOptimizer(self.client, job_id="oj_1").results()
        with self.assertRaises(switchyard.RequestTimeoutError):
            switchyard.file_content("file-1", client=self.client)

    def test_stream_stops(self):
        self.urlopen(FakeResponse(Py39Timeout("timed out"), ctype="text/event-stream"))
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=self.client)
        with self.assertRaises(switchyard.RequestTimeoutError):
            list(st)


class EventStream(FakeResponse):
    """An event-stream answer with the given body."""

    def __init__(self, body):
        super().__init__(None, ctype="text/event-stream")
        self.lines = iter(body.encode().splitlines(keepends=True))

    def __next__(self):
        return next(self.lines)


class StreamErrorPayloadTest(unittest.TestCase):
    """An error event is a StreamError carrying what it says, whatever its payload's shape;
    an event that is JSON but not an object is a SwitchyardError, never an AttributeError."""

    CHUNK = 'data: {"type": "text", "text": "Hel"}\n\n'

    def stream(self, body):
        with mock.patch("urllib.request.urlopen", lambda req, timeout=None: EventStream(self.CHUNK + body)):
            return switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True,
                                       client=switchyard.Client("http://127.0.0.1:9", "k"))

    def test_error_payloads(self):
        for name, body, kind, message in [
            ("native", 'event: error\ndata: {"type": "text", "text": "", "error": "Stream Error", "message": "upstream cut"}\n\n',
             "Stream Error", "upstream cut"),
            ("object", 'event: error\ndata: {"error": {"message": "boom", "type": "server_error"}}\n\n', "server_error", "boom"),
            ("object without event name", 'data: {"error": {"message": "boom", "type": "server_error"}}\n\n', "server_error", "boom"),
            ("JSON string", 'event: error\ndata: "boom"\n\n', "Stream Error", "boom"),
            ("text", "event: error\ndata: upstream died\ndata: at byte 12\n\n", "Stream Error", "upstream died\nat byte 12"),
        ]:
            got = []
            with self.assertRaises(switchyard.StreamError, msg=name) as cm:
                for ch in self.stream(body):
                    got.append(ch["text"])
            self.assertEqual((got, cm.exception.kind, cm.exception.message), (["Hel"], kind, message), name)

    def test_non_object_event(self):
        for body in ('data: 42\n\n', 'data: ["a"]\n\n', 'data: "x"\n\n'):
            with self.assertRaises(switchyard.SwitchyardError, msg=body) as cm:
                list(self.stream(body))
            self.assertNotIsInstance(cm.exception, switchyard.StreamError)


class FailedSubmitTest(unittest.TestCase):
    """A submission the server refuses (422, or 429/503 with a Retry-After longer than the
    client waits) raises the typed error with status, kind, message and the hint, and
    leaves the remembered ids as they were: the job submitted before is still the latest
    one that exists."""

    REFUSALS = [(422, "Validation Error", None, switchyard.ValidationError),
                (429, "Too Many Requests", "60", switchyard.RateLimitError),
                (503, "Service Unavailable", "60", switchyard.ServerError)]

    def refuse(self, status, kind, retry_after):
        def fake(req, timeout=None):
            hdrs = email.message.Message()
            hdrs["Content-Type"] = "application/json"
            if retry_after:
                hdrs["Retry-After"] = retry_after
            body = json.dumps({"error": kind, "message": "refused: " + kind}).encode()
            raise urllib.error.HTTPError(req.full_url, status, kind, hdrs, io.BytesIO(body))
        return mock.patch("urllib.request.urlopen", fake)

    def test_ids_kept(self):
        c = switchyard.Client("http://127.0.0.1:9", "k", sleep=lambda s: self.fail("waited %s s" % s))
        tr = switchyard.RouterTrainer(c, job_id="tj_1", model_id="rm_1")
        opt = switchyard.AgentOptimizer(c, job_id="oj_1")
        for status, kind, ra, cls in self.REFUSALS:
            with self.refuse(status, kind, ra):
                with self.assertRaises(cls) as cm:
                    tr.train(["https://example.com/b.json"])
                self.assertEqual((cm.exception.status, cm.exception.kind, cm.exception.message),
                                 (status, kind, "refused: " + kind))
                self.assertEqual(cm.exception.retry_after, float(ra) if ra else None)
                with self.assertRaises(cls):
                    opt.submit("https://example.com/b.zip", "openai/gpt-4o")
            self.assertEqual((tr.job_id, tr.model_id, opt.job_id), ("tj_1", "rm_1", "oj_1"))


if __name__ == "__main__":
    unittest.main()


class ModelAccessDeniedTest(unittest.TestCase):
    """The /v1/ routes' 401 of type key_model_access_denied (LiteLLM's answer to a model
    outside the key's models) is a PermissionDeniedError, as the 403 it was; another 401
    stays an AuthenticationError."""

    def test_model_access_denied_is_permission_denied(self):
        body = {"message": "model not allowed for this key: x", "type": "key_model_access_denied", "param": "model", "code": "401"}
        err = switchyard.errors.error_for(401, "key_model_access_denied", body["message"], body)
        self.assertIsInstance(err, switchyard.PermissionDeniedError)
        self.assertEqual(err.param, "model")
        self.assertIsInstance(switchyard.errors.error_for(401, "invalid_request_error", "bad key"), switchyard.AuthenticationError)
