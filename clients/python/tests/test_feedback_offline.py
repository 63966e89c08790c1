"""report_feedback's body, checked with a fake client that records the request."""

import unittest

import switchyard


class FakeRecordingClient:
    """Records the request instead of sending it (a fake for tests)."""

    def __init__(self):
        self.calls = []

    def request(self, method, path, body=None, **kwargs):
        self.calls.append((method, path, body))
        return {}


class ReportFeedbackTest(unittest.TestCase):
    def test_bool_accuracy_is_sent_as_a_number(self):
        fake = FakeRecordingClient()
        switchyard.report_feedback("sess_1", "openai/gpt-4o", True, client=fake)
        switchyard.report_feedback("sess_1", "my-local-llm", False, client=fake)
        (_, path, up), (_, _, down) = fake.calls
        self.assertEqual(path, "/api/v1/feedback")
        self.assertIs(type(up["feedback"]["accuracy"]), int)
        self.assertEqual(up["feedback"], {"accuracy": 1})
        self.assertEqual(down["feedback"], {"accuracy": 0})
        self.assertEqual(up["provider"], {"provider": "openai", "model": "gpt-4o"})
        self.assertEqual(down["provider"], "my-local-llm")


if __name__ == "__main__":
    unittest.main()
