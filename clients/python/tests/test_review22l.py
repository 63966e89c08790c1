"""Review 22l: the deadline of ``wait()`` and ``wait_batch()`` is measured with the
client's clock, so a fake ``sleep`` (one that returns at once) makes them exact instead of
polling until real time runs out. No test sleeps."""

import threading
import time
import unittest
from http.server import ThreadingHTTPServer

import switchyard
from tests.test_review22i import CountingHandler


class PendingHandler(CountingHandler):
    """Answers every GET with a job or batch still in progress, for ``limit`` requests;
    after that 404, so that a wait that does not stop by itself ends anyway (quickly)."""

    limit = 10
    calls = 0

    def answer(self, n):
        if self.path.startswith("/v1/batches/"):
            return 200, {"id": "batch_1", "object": "batch", "status": "in_progress"}
        return 200, {"status": "running", "training_job_id": "tj_1", "job_id": "oj_1"}


class FakeSleepDeadlineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), PendingHandler)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def client(self, **kw):
        PendingHandler.calls = 0
        self.waits = []
        return switchyard.Client("http://127.0.0.1:%d" % self.httpd.server_port, "k",
                                 sleep=self.waits.append, **kw)

    def test_fake_sleep_reaches_the_deadline(self):
        # A sleep that only records: the timeout is the seconds it was asked to wait, so
        # the wait ends after exactly those polls (it used to poll on until real time
        # passed the deadline: here, until the server answered 404).
        c = self.client()
        with self.assertRaises(TimeoutError):
            switchyard.RouterTrainer(c, job_id="tj_1").wait(poll_every=30, timeout=60)
        self.assertEqual((self.waits, PendingHandler.calls), ([30, 30], 3))

        c = self.client()
        with self.assertRaises(TimeoutError):
            switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=30, timeout=45)
        self.assertEqual((self.waits, PendingHandler.calls), ([30, 15], 3))

        c = self.client()
        with self.assertRaises(switchyard.SwitchyardError) as cm:
            switchyard.wait_batch("batch_1", poll_every=2, timeout=5, client=c)
        self.assertNotIsInstance(cm.exception, switchyard.NotFoundError)
        self.assertIn("still in_progress after 5 s", str(cm.exception))
        self.assertEqual((self.waits, PendingHandler.calls), ([2, 2, 1], 4))  # a last poll at 5 s

    def test_zero_poll_every_is_the_default(self):
        # poll_every=0 polled in a busy loop; it is the default interval, as the Go client's
        # 0 is.
        c = self.client()
        with self.assertRaises(TimeoutError):
            switchyard.RouterTrainer(c, job_id="tj_1").wait(poll_every=0, timeout=25)
        self.assertEqual((self.waits, PendingHandler.calls), ([10, 10, 5], 4))

        c = self.client()
        with self.assertRaises(TimeoutError):
            switchyard.AgentOptimizer(c, job_id="oj_1").wait(poll_every=-1, timeout=45)
        self.assertEqual((self.waits, PendingHandler.calls), ([30, 15], 3))

        c = self.client()
        with self.assertRaises(switchyard.SwitchyardError):
            switchyard.wait_batch("batch_1", poll_every=0, timeout=3, client=c)
        self.assertEqual((self.waits, PendingHandler.calls), ([2, 1], 3))

    def test_client_clock(self):
        # Client(clock=...) is the clock deadlines are measured with: here time passes
        # twice as fast as the sleeps asked for.
        now = [50.0]

        def sleep(s):
            self.waits.append(s)
            now[0] += 2 * s

        c = self.client(clock=lambda: now[0])
        c.sleep = sleep
        with self.assertRaises(TimeoutError):
            switchyard.RouterTrainer(c, job_id="tj_1").wait(poll_every=30, timeout=60)
        self.assertEqual((self.waits, PendingHandler.calls), ([30], 2))

        c = self.client(clock=lambda: now[0])
        c.sleep = sleep
        with self.assertRaises(switchyard.SwitchyardError):
            switchyard.wait_batch("batch_1", poll_every=2, timeout=5, client=c)
        self.assertEqual((self.waits, PendingHandler.calls), ([2, 1], 3))

    def test_defaults(self):
        # Unchanged: time.sleep, measured with time.monotonic.
        c = switchyard.Client("http://127.0.0.1:9", "k")
        self.assertIs(c.sleep, time.sleep)
        self.assertIsNone(c.clock)
        before = time.monotonic()
        self.assertGreaterEqual(c._now(), before)


if __name__ == "__main__":
    unittest.main()
