"""chat_completion and ChatCompletionStream, and the request id of errors, against a small
fake OpenAI-compatible server in this process."""

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import switchyard

WHOLE = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "openai/gpt-4o",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hello"}}],
         "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
         "switchyard": {"provider": "openai", "costs": {"total_tokens_cost": 0.5, "price_known": True}, "attempts": []}}


def _chunk(delta, finish=None, usage=None):
    c = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "openai/gpt-4o",
         "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        c["usage"] = usage
    return "data: " + json.dumps(c) + "\n\n"


STREAM = (_chunk({"role": "assistant", "content": "Hel"}) + _chunk({"content": "lo"})
          + _chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": "{\"ci"}}]})
          + _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "ty\": \"Oslo\"}"}}]}, "tool_calls")
          + _chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})
          + "data: [DONE]\n\n")


class ChatHandler(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions by the body's model; records the bodies it got."""

    bodies = []

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, raw, rid="req_0123456789abcdef0123456789abcdef"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("X-Request-Id", rid)
        self.send_header("x-litellm-call-id", rid)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        type(self).bodies.append(body)
        model = body.get("model")
        if model == "bad":
            err = {"error": {"message": "messages: must not be empty", "type": "invalid_request_error",
                             "param": "messages", "code": None}}
            return self._send(400, "application/json", json.dumps(err).encode(), "trace-400")
        if model == "down":
            err = {"error": "Internal", "message": "every model failed"}
            return self._send(500, "application/json", json.dumps(err).encode(), "trace-500")
        if not body.get("stream") or model == "whole":
            return self._send(200, "application/json", json.dumps(WHOLE).encode())
        sse = {"ok": STREAM,
               "cut": _chunk({"content": "Hel"}),
               "fails": _chunk({"content": "Hel"}) + "event: error\ndata: " + json.dumps(
                   {"error": {"message": "upstream went away", "type": "api_error"}}) + "\n\n"}[model]
        self._send(200, "text/event-stream", sse.encode(), "trace-stream")


class ChatOfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.client = switchyard.Client("http://127.0.0.1:%d" % cls.httpd.server_port, "fake-key", retry=None)

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def test_whole_answer_and_body(self):
        ans = switchyard.chat_completion([{"role": "user", "content": "hi"}], "openai/gpt-4o", temperature=0.5,
                                         max_tokens=9, stop="END", user="end-user-1", extra={"seed": 7},
                                         client=self.client)
        self.assertEqual(ans["choices"][0]["message"]["content"], "Hello")
        sent = ChatHandler.bodies[-1]
        self.assertEqual(sent, {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}],
                                "temperature": 0.5, "max_tokens": 9, "stop": "END", "user": "end-user-1", "seed": 7})

    def test_stream_assembles_text_tool_calls_and_usage(self):
        st = switchyard.chat_completion([{"role": "user", "content": "hi"}], "ok", stream=True, include_usage=True,
                                        client=self.client)
        self.assertIsInstance(st, switchyard.ChatCompletionStream)
        chunks = list(st)
        self.assertEqual(len(chunks), 5)
        sent = ChatHandler.bodies[-1]
        self.assertEqual((sent["stream"], sent["stream_options"]), (True, {"include_usage": True}))
        self.assertEqual(st.text, "Hello")
        self.assertEqual(st.finish_reason, "tool_calls")
        self.assertEqual(st.tool_calls, [{"id": "call_1", "type": "function",
                                          "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}])
        self.assertEqual(st.usage["total_tokens"], 5)
        self.assertEqual(st.request_id, "trace-stream")
        with self.assertRaises(switchyard.SwitchyardError):
            list(st)  # once

    def test_stream_of_a_whole_answer(self):
        st = switchyard.chat_completion([{"role": "user", "content": "hi"}], "whole", stream=True, include_usage=True,
                                        client=self.client)
        chunks = list(st)
        self.assertEqual([c["object"] for c in chunks], ["chat.completion.chunk"] * 2)
        self.assertEqual((st.text, st.finish_reason, st.usage["total_tokens"]), ("Hello", "stop", 4))
        self.assertEqual(st.summary["costs"]["total_tokens_cost"], 0.5)

    def test_stream_failures(self):
        st = switchyard.chat_completion([{"role": "user", "content": "hi"}], "fails", stream=True, client=self.client)
        with self.assertRaises(switchyard.StreamError) as cm:
            list(st)
        self.assertEqual((cm.exception.kind, cm.exception.message), ("api_error", "upstream went away"))
        self.assertEqual(cm.exception.request_id, "trace-stream")
        self.assertIn("trace-stream", str(cm.exception))
        self.assertEqual(st.text, "Hel")
        st = switchyard.chat_completion([{"role": "user", "content": "hi"}], "cut", stream=True, client=self.client)
        with self.assertRaises(switchyard.StreamTruncatedError):
            list(st)

    def test_errors_carry_the_request_id(self):
        for stream in (False, True):
            with self.assertRaises(switchyard.BadRequestError) as cm:
                switchyard.chat_completion([], "bad", stream=stream, client=self.client)
            e = cm.exception
            self.assertEqual((e.status, e.kind, e.param, e.request_id), (400, "invalid_request_error", "messages", "trace-400"))
            self.assertTrue(str(e).endswith("(request id trace-400)"), str(e))
        with self.assertRaises(switchyard.ServerError) as cm:
            switchyard.chat_completion([{"role": "user", "content": "hi"}], "down", client=self.client)
        self.assertEqual(cm.exception.request_id, "trace-500")
        # A hand-made error without one has None.
        self.assertIsNone(switchyard.APIError(400, "x", "y").request_id)


if __name__ == "__main__":
    unittest.main()
