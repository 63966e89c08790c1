"""Tests against a running `switchyard serve`.

Environment:
  SWITCHYARD_BASE_URL, SERVICE_API_KEY  the server and a key it accepts (required; without
                                        them these tests are skipped)
  SWITCHYARD_TEST_DATA_URL              base URL serving routing_train.json and
                                        routing_train.csv (examples/data); the server must
                                        be allowed to fetch it (--allow-local-urls)
  SWITCHYARD_TEST_MODEL                 a completions model the server can reach
                                        (e.g. one backed by a scripted upstream)
  SWITCHYARD_TEST_BUNDLE_URL            base URL serving bundle.zip (an agent bundle the
                                        server's optimizer can complete quickly) and
                                        slow.zip (one whose runs last until cancelled)
  SWITCHYARD_TEST_SKIP                  comma-separated capabilities the server does not
                                        have: select, completions, trainer, optimizer,
                                        batches

The Go tests in cmd/switchyard set these: TestPythonClient against `switchyard serve`,
TestPythonClientAllCapabilities against the server package with every capability (the
optimizer with a scripted sandbox and proposer).
"""

import json
import os
import time
import unittest
import uuid

import switchyard

BASE = os.environ.get("SWITCHYARD_BASE_URL")
KEY = os.environ.get("SERVICE_API_KEY")
DATA = os.environ.get("SWITCHYARD_TEST_DATA_URL", "").rstrip("/")
MODEL = os.environ.get("SWITCHYARD_TEST_MODEL", "")
BUNDLES = os.environ.get("SWITCHYARD_TEST_BUNDLE_URL", "").rstrip("/")
SKIP = {s.strip() for s in os.environ.get("SWITCHYARD_TEST_SKIP", "").split(",") if s.strip()}


def needs(capability):
    return unittest.skipIf(capability in SKIP, "server has no %s capability (SWITCHYARD_TEST_SKIP)" % capability)


@unittest.skipUnless(BASE and KEY, "set SWITCHYARD_BASE_URL and SERVICE_API_KEY to test against a server")
class ServerTest(unittest.TestCase):
    def setUp(self):
        self.client = switchyard.Client()  # from the environment, as users do

    def test_wrong_key(self):
        bad = switchyard.Client(api_key="not-a-key")
        with self.assertRaises(switchyard.AuthenticationError) as cm:
            switchyard.select_model([{"role": "user", "content": "hi"}], ["openai/gpt-4o"], client=bad)
        self.assertEqual(cm.exception.status, 401)
        self.assertEqual(cm.exception.kind, "Unauthorized")

    @needs("select")
    def test_select_model(self):
        res = switchyard.select_model(
            [{"role": "user", "content": "Prove that the square root of 2 is irrational."}],
            [{"name": "small", "attributes": {"quality": 0.3}}, {"name": "big", "attributes": {"quality": 0.9}}],
            client=self.client)
        self.assertEqual(res["llm_label"], "big")
        self.assertTrue(res["session_id"])
        # by attribute too, as Not Diamond's SDK answers
        self.assertEqual((res.session_id, res.providers[0].name, res.providers[0].rank), (res["session_id"], "big", 1))
        res2 = switchyard.select_model([{"role": "user", "content": "thanks"}], ["openai/gpt-4o-mini"],
                                       previous_session=res["session_id"], client=self.client)
        self.assertEqual(res2["llm_label"], "openai/gpt-4o-mini")

    @needs("select")
    def test_preferences_feedback_and_latency(self):
        pref = switchyard.create_preference("support", client=self.client)
        self.assertTrue(pref["preference_id"].startswith("pref_"))
        cands = [{"provider": "openai", "model": "gpt-4o", "input_price": 2.5, "output_price": 10},
                 {"provider": "acme", "model": "support-ft", "is_custom": True}]
        res = switchyard.select_model([{"role": "user", "content": "How do I reset my password?"}], cands,
                                      preference_id=pref["preference_id"], metric="accuracy", timeout=5,
                                      default="openai/gpt-4o", client=self.client)
        fb = switchyard.report_feedback(res["session_id"], "acme/support-ft", 1, client=self.client)
        self.assertTrue(fb["personalized"])
        lat = switchyard.report_latency(res["session_id"], {"provider": "openai", "model": "gpt-4o"}, 61.5,
                                        client=self.client)
        self.assertTrue(lat["personalized"])
        # past its timeout the default answers alone
        res = switchyard.select_model([{"role": "user", "content": "hi"}], cands, timeout=1e-9, default=1,
                                      client=self.client)
        self.assertEqual(res["llm_label"], "acme/support-ft")
        self.assertEqual(res["providers"][0]["score_source"], "default")

    @needs("trainer")
    @needs("select")
    def test_train_custom_router_by_preference(self):
        # Not Diamond's CustomRouter.fit: a new preference, then its router retrained.
        rows = ["prompt,openai/gpt-4o/score,openai/gpt-4o-mini/score"]
        rows += ["question %d about %s,%d,%d" % (i, "xyz"[i % 3], i % 2, 1 - i % 2) for i in range(20)]
        csv = "\n".join(rows).encode() + b"\n"
        tr = switchyard.RouterTrainer(self.client)
        first = tr.train_custom_router(csv, "prompt", llm_providers=["openai/gpt-4o", "openai/gpt-4o-mini"])
        pref = first["preference_id"]
        self.assertTrue(pref.startswith("pref_"))
        self.assertEqual(tr.job_id, first["training_job_id"])
        again = tr.train_custom_router(csv, "prompt", preference_id=pref)
        self.assertEqual(again["preference_id"], pref)
        self.assertNotEqual(again["training_job_id"], first["training_job_id"])
        self.assertEqual(switchyard.get_preference(pref, client=self.client)["router_training_job_id"], again["training_job_id"])
        with self.assertRaises(switchyard.BadRequestError) as cm:
            tr.train_custom_router(csv, "prompt", preference_id="pref_" + "0" * 32)
        self.assertIn("preference_id", str(cm.exception))
        self.assertEqual(tr.job_id, again["training_job_id"])
        for job in (first, again):  # leave the trainer's queue as it was
            try:
                tr.cancel(job["training_job_id"])
            except switchyard.ConflictError:
                pass  # already ended

    @needs("trainer")
    def test_train_upload_joint_csv(self):
        # Not Diamond's joint CSV uploaded from the client (no URL to serve it from).
        rows = ["prompt,openai/gpt-4o/score,openai/gpt-4o-mini/score"]
        rows += ["question %d about %s,%d,%d" % (i, "xyz"[i % 3], i % 2, 1 - i % 2) for i in range(20)]
        tr = switchyard.RouterTrainer(self.client)
        job = tr.train_upload("\n".join(rows).encode() + b"\n", filename="joint.csv", prompt_column="prompt",
                              maximize=True, llm_providers=["openai/gpt-4o", {"provider": "openai", "model": "gpt-4o-mini"}])
        self.assertTrue(job["training_job_id"].startswith("tj_"))
        self.assertEqual(tr.job_id, job["training_job_id"])
        with self.assertRaises(switchyard.ValidationError) as cm:
            tr.train_upload(b"prompt,openai/gpt-4o/score\nx,1\n", filename="short.csv", prompt_column="prompt")
        self.assertIn("file", str(cm.exception))
        self.assertEqual(tr.job_id, job["training_job_id"])

    @needs("select")
    def test_select_errors(self):
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.select_model([{"role": "robot", "content": "hi"}], ["openai/gpt-4o"], client=self.client)
        self.assertIn("role", cm.exception.message)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.select_model([{"role": "user", "content": "hi"}], ["openai/gpt-4o"],
                                    previous_session="no-such-session", client=self.client)

    @needs("completions")
    def test_completion_validation(self):
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.complete([{"role": "user", "content": "hi"}], [], client=self.client)
        self.assertEqual(cm.exception.kind, "Validation Error")
        self.assertIn("models", cm.exception.message)

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_complete_plain_and_stream(self):
        res = switchyard.complete([{"role": "user", "content": "Say hello"}], MODEL, client=self.client)
        self.assertEqual(res["message"]["role"], "assistant")
        text = "".join(b["text"] for b in res["message"]["content"])
        self.assertTrue(text)
        u = res["usage"]
        self.assertEqual(u["totalTokens"], u["promptTokens"] + u["completionTokens"])

        st = switchyard.complete([{"role": "user", "content": "Say hello"}], MODEL, stream=True, client=self.client)
        chunks = [c["text"] for c in st]
        self.assertGreater(len(chunks), 0)
        self.assertEqual("".join(chunks), st.text)
        self.assertEqual("".join(b["text"] for b in st.final["message"]["content"]), st.text)
        self.assertIn("usage", st.final)

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_chat_completion_and_request_ids(self):
        msgs = [{"role": "user", "content": "Say hello"}]
        res = switchyard.chat_completion(msgs, MODEL, max_tokens=20, client=self.client)
        self.assertEqual(res["object"], "chat.completion")
        self.assertTrue(res["choices"][0]["message"]["content"])
        st = switchyard.chat_completion(msgs, MODEL, stream=True, include_usage=True, client=self.client)
        chunks = list(st)
        self.assertGreater(len(chunks), 0)
        self.assertEqual("".join((c["choices"][0]["delta"].get("content") or "") for c in chunks if c["choices"]), st.text)
        self.assertTrue(st.text)
        self.assertEqual(st.usage["total_tokens"], st.usage["prompt_tokens"] + st.usage["completion_tokens"])
        # The usage chunk's summary says what the answer cost and who answered.
        self.assertTrue(st.summary["costs"]["price_known"])
        self.assertGreater(st.summary["costs"]["total_tokens_cost"], 0)
        self.assertEqual(st.summary["attempts"][-1]["outcome"], "ok")
        self.assertRegex(st.request_id or "", r"^req_[0-9a-f]{32}$")
        cs = switchyard.complete(msgs, MODEL, stream=True, client=self.client)
        list(cs)
        self.assertRegex(cs.request_id or "", r"^req_[0-9a-f]{32}$")
        # A refused request: its error names the id it is in the usage history under.
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.chat_completion([], MODEL, client=self.client)
        rid = cm.exception.request_id
        self.assertRegex(rid or "", r"^req_[0-9a-f]{32}$")
        self.assertIn(rid, str(cm.exception))
        try:
            history = self.client.request("GET", "/api/v1/usage/requests", query={"limit": "500"})
        except switchyard.NotFoundError:
            self.skipTest("the server keeps no usage history")
        found = [r for r in history["data"] if r.get("request_id") == rid]
        self.assertEqual(len(found), 1, history)
        self.assertEqual(found[0]["outcome"], "error")

    def has_spend(self):
        try:
            switchyard.spend(client=self.client)
            return True
        except switchyard.NotFoundError:
            return False

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_complete_cache(self):
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.complete([{"role": "user", "content": "x"}], MODEL, cache={"ttl": -1}, client=self.client)
        self.assertIn("cache.ttl", cm.exception.message)
        ns = "py-%d" % time.time_ns()
        msgs = [{"role": "user", "content": "Cache this answer"}]
        first = switchyard.complete(msgs, MODEL, cache={"namespace": ns}, client=self.client)
        if "cache" not in first:
            self.skipTest("the server has no response cache (switchyard serve --cache memory)")
        self.assertEqual(first["cache"]["result"], "miss")
        for _ in range(200):  # the answer is kept in the background
            again = switchyard.complete(msgs, MODEL, cache={"namespace": ns, "no-store": True}, client=self.client)
            if again["cache"]["result"] == "hit":
                break
            time.sleep(0.01)
        self.assertEqual(again["cache"]["result"], "hit")
        self.assertEqual(again["message"], first["message"])
        self.assertEqual(again["usage"]["costs"]["total_tokens_cost"], 0)
        self.assertEqual(again["attempts"], [])
        if self.has_spend():
            tagged = switchyard.complete(msgs, MODEL, tags=["py:spend"], cache={"no-cache": True, "no-store": True},
                                         client=self.client)
            self.assertNotIn("cache", tagged)
            rows = switchyard.spend(by="tag", client=self.client)["data"]
            self.assertIn("py:spend", [r["tag"] for r in rows])
        switchyard.delete_cached(again["cache"]["key"], client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_cached(again["cache"]["key"], client=self.client)
        self.assertEqual(switchyard.purge_cache(namespace=ns, client=self.client), 0)

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_conversations_list_show_delete(self):
        cid = switchyard.complete([{"role": "user", "content": "Remember me"}], MODEL,
                                  client=self.client)["conversationId"]
        ids = [c["id"] for c in switchyard.iterate("conversations", limit=1, client=self.client)]
        self.assertIn(cid, ids)
        self.assertEqual(ids[0], cid)  # newest first
        self.assertEqual(switchyard.conversation(cid, client=self.client)["message_count"], 2)
        msgs = list(switchyard.conversation_messages(cid, client=self.client))
        self.assertEqual([m["role"] for m in msgs], ["user", "assistant"])
        d = switchyard.delete("conversation", cid, client=self.client)
        self.assertTrue(d["deleted"])
        self.assertEqual(d["messages"], 2)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.conversation(cid, client=self.client)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.list_page("conversations", limit=0, client=self.client)
        self.assertIn("limit", str(cm.exception))

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_virtual_keys(self):
        vk = switchyard.issue_key(name="py", models=[MODEL], max_requests=1, budget_duration="30d",
                                  client=self.client)
        self.assertTrue(vk["key"].startswith("sy-vk-"))
        app = switchyard.Client(base_url=BASE, api_key=vk["key"], retry=None)
        switchyard.complete([{"role": "user", "content": "hi"}], MODEL, client=app)
        with self.assertRaises(switchyard.RateLimitError) as cm:  # max_requests 1
            switchyard.complete([{"role": "user", "content": "hi"}], MODEL, client=app)
        self.assertIn("budget", str(cm.exception))
        with self.assertRaises(switchyard.PermissionDeniedError):
            switchyard.list_keys(client=app)  # a virtual key issues and lists none
        self.assertEqual(switchyard.key_info(client=app)["spend"]["requests"], 1)
        self.assertIn(vk["id"], [k["id"] for k in switchyard.list_keys(client=self.client)])
        up = switchyard.update_key(vk["id"], max_requests=5, client=self.client)
        self.assertEqual(up["max_requests"], 5)
        self.assertEqual(up["name"], "py")
        switchyard.complete([{"role": "user", "content": "hi"}], MODEL, client=app)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_key(vk["id"], max_budget_usd=-1, client=self.client)
        self.assertIn("max_budget_usd", str(cm.exception))
        with self.assertRaises(switchyard.ValidationError) as cm:  # none configured on the test server
            switchyard.issue_key(name="guarded", guardrails=["no-such-guardrail"], client=self.client)
        self.assertIn("guardrails[0]", str(cm.exception))
        with self.assertRaises(switchyard.ValidationError) as cm:  # no MCP servers on the test server
            switchyard.issue_key(name="tools", mcp_servers=["docs"], client=self.client)
        self.assertIn("mcp_servers[0]", str(cm.exception))
        soft = switchyard.issue_key(name="soft", soft_budget_usd=2.5, client=self.client)
        self.assertEqual(soft["soft_budget_usd"], 2.5)
        self.assertEqual(switchyard.update_key(soft["id"], soft_budget_usd=4, client=self.client)["soft_budget_usd"], 4)
        switchyard.revoke_key(soft["id"], client=self.client)
        blocked = switchyard.issue_key(name="off", blocked=True, metadata={"env": "test"}, client=self.client)
        self.assertTrue(blocked["blocked"])
        self.assertEqual(blocked["metadata"], {"env": "test"})
        switchyard.revoke_key(blocked["id"], client=self.client)
        rotated = switchyard.rotate_key(vk["id"], client=self.client)
        self.assertEqual(rotated["id"], vk["id"])
        self.assertNotEqual(rotated["key"], vk["key"])
        with self.assertRaises(switchyard.AuthenticationError):
            switchyard.key_info(client=app)  # the value rotated away
        app = switchyard.Client(base_url=BASE, api_key=rotated["key"], retry=None)
        self.assertEqual(switchyard.key_info(client=app)["id"], vk["id"])
        self.assertTrue(switchyard.revoke_key(vk["id"], client=self.client)["deleted"])
        with self.assertRaises(switchyard.AuthenticationError):
            switchyard.key_info(client=app)

    @needs("completions")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_key_parallel_aliases_and_model_limits(self):
        vk = switchyard.issue_key(name="py-limits", models=[MODEL], max_parallel_requests=2,
                                  aliases={"my-model": MODEL},
                                  model_max_budget={MODEL: {"max_budget_usd": 5, "budget_duration": "1d"}},
                                  model_rpm_limit={MODEL: 1}, model_tpm_limit={MODEL: 100000},
                                  client=self.client)
        self.assertEqual(vk["max_parallel_requests"], 2)
        self.assertEqual(vk["aliases"], {"my-model": MODEL})
        self.assertEqual(vk["model_max_budget"], {MODEL: {"max_budget_usd": 5, "budget_duration": "1d"}})
        self.assertEqual((vk["model_rpm_limit"], vk["model_tpm_limit"]), ({MODEL: 1}, {MODEL: 100000}))
        app = switchyard.Client(base_url=BASE, api_key=vk["key"], retry=None)
        # The alias, on the OpenAI-compatible route, answers as the model it stands for
        # (questions of their own: the server's cache answers a question asked before).
        ask = [{"role": "user", "content": "limits " + uuid.uuid4().hex}]
        out = switchyard.chat_completion(ask, "my-model", client=app)
        self.assertTrue(out["choices"][0]["message"]["content"])
        with self.assertRaises(switchyard.RateLimitError) as cm:  # model_rpm_limit 1 of the model it stands for
            switchyard.chat_completion([{"role": "user", "content": "again " + uuid.uuid4().hex}], MODEL, client=app)
        self.assertIn("model_per_key", str(cm.exception))
        info = switchyard.key_info(client=app)
        self.assertGreater(info["spend"]["models"][MODEL]["cost_usd"], 0)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_key(vk["id"], aliases={"x": "no-such/model-anywhere"}, client=self.client)
        self.assertIn("aliases", str(cm.exception))
        up = switchyard.update_key(vk["id"], max_parallel_requests=0, aliases=None, model_rpm_limit={},
                                   client=self.client)
        for field in ("max_parallel_requests", "aliases", "model_rpm_limit"):
            self.assertNotIn(field, up)
        self.assertEqual(up["model_tpm_limit"], {MODEL: 100000})  # the fields not given are kept
        switchyard.revoke_key(vk["id"], client=self.client)

    @needs("trainer")
    @unittest.skipUnless(DATA, "set SWITCHYARD_TEST_DATA_URL to where examples/data is served")
    def test_training_jobs_and_models_list_delete(self):
        tr = switchyard.RouterTrainer(self.client)
        tr.train([DATA + "/routing_train.json"])
        st = tr.wait(poll_every=0.1, timeout=120)
        self.assertEqual(st["status"], "completed", st.get("error_message"))
        jobs = switchyard.list_page("training_jobs", status=["completed"], client=self.client)
        self.assertIn(st["training_job_id"], [j["training_job_id"] for j in jobs["data"]])
        models = [m["model_id"] for m in switchyard.iterate("router_models", status="active", client=self.client)]
        self.assertIn(st["model_id"], models)
        self.assertEqual(switchyard.delete("router_model", st["model_id"], client=self.client)["object"], "router_model")
        self.assertEqual(switchyard.delete("training_job", st["training_job_id"], client=self.client)["object"], "training_job")
        with self.assertRaises(switchyard.NotFoundError):
            tr.model()
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete("training_job", st["training_job_id"], client=self.client)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.list_page("training_jobs", status="sleeping", client=self.client)
        self.assertIn("status", str(cm.exception))

    @needs("trainer")
    @unittest.skipUnless(DATA, "set SWITCHYARD_TEST_DATA_URL to where examples/data is served")
    def test_router_trainer_flow(self):
        tr = switchyard.RouterTrainer(self.client)
        job = tr.train([DATA + "/routing_train.json", DATA + "/routing_train.csv"])
        self.assertIn(job["status"], ("queued", "running", "completed"))
        self.assertTrue(job["version"])
        seen = []
        st = tr.wait(poll_every=0.2, timeout=120, on_status=lambda s: seen.append(s["status"]))
        self.assertEqual(st["status"], "completed", st.get("error_message"))
        self.assertEqual(seen[-1], "completed")
        self.assertEqual(tr.model_id, st["model_id"])
        timing = st["training_config"]["timing"]
        self.assertGreaterEqual(timing["total_time_seconds"], timing["training_time_seconds"])

        model = tr.model()
        self.assertEqual(model["model_id"], st["model_id"])
        self.assertEqual(model["status"], "active")
        self.assertGreaterEqual(model["num_classes"], 2)
        for k in ("top1_hit_rate", "top3_hit_rate", "accuracy"):
            self.assertTrue(0 <= model["metrics"][k] <= 1, k)

        inputs = ["What is 17 * 23?", "Write a haiku about rain.", "Which word is a verb: run, blue, table?"]
        res = tr.predict(inputs)
        self.assertEqual(len(res["predictions"]), 3)
        for p in res["predictions"]:
            ranks = [m["rank"] for m in p["models"]]
            self.assertEqual(ranks, list(range(1, len(ranks) + 1)))
            self.assertEqual(p["top_model"], p["models"][0]["model"])
            self.assertAlmostEqual(p["top_prob"], p["models"][0]["confidence"])

        # More than 500 inputs are split by the client and answered in order.
        many = ["question %d" % i for i in range(501)]
        self.assertEqual(len(tr.predict(many)["predictions"]), 501)

    @needs("trainer")
    @needs("select")
    @unittest.skipUnless(DATA, "set SWITCHYARD_TEST_DATA_URL to where examples/data is served")
    def test_not_diamond_journey(self):
        # train a router, personalize it, select with Not Diamond's names, rate the pick; once
        # the router is deleted the preference and its selections say so
        tr = switchyard.RouterTrainer(self.client)
        tr.train([DATA + "/routing_train.json"])
        self.assertEqual(tr.wait(poll_every=0.2, timeout=120)["status"], "completed")
        pref = switchyard.create_preference("journey", router_model_id=tr.model_id, client=self.client)
        cands = [m["model"] for m in tr.predict("What is 17 * 23?")["predictions"][0]["models"][:3]]
        msgs = [{"role": "user", "content": "What is 17 * 23?"}]
        session_id, provider = switchyard.model_select(msgs, cands, preference_id=pref["preference_id"],
                                                       client=self.client)
        self.assertIn(str(provider), cands)
        fb = switchyard.report_feedback(session_id, provider, 1, client=self.client)
        self.assertTrue(fb["personalized"])
        self.assertEqual(fb["provider"], str(provider))
        got = switchyard.get_preference(pref["preference_id"], client=self.client)
        self.assertEqual(got["feedback_count"], 1)
        self.assertNotIn("router_fallback", got)
        # no latency known for these: the tradeoff says it kept the quality order
        res = switchyard.select_model(msgs, cands, tradeoff="latency", client=self.client)
        self.assertEqual(res.get("tradeoff_fallback"), "no_latency_data")

        switchyard.delete("router_model", tr.model_id, client=self.client)
        got = switchyard.get_preference(pref["preference_id"], client=self.client)
        self.assertEqual(got.get("router_fallback"), "router_deleted")
        self.assertEqual(got["router_model_id"], tr.model_id)
        res = switchyard.select_model(msgs, cands, preference_id=pref["preference_id"], client=self.client)
        self.assertEqual(res.get("router_fallback"), "router_deleted")
        with self.assertRaises(switchyard.NotFoundError):  # the deleted router named directly
            switchyard.model_select(msgs, cands, preference_id=tr.model_id, client=self.client)
        pid = switchyard.create_preference_id("second", client=self.client)
        self.assertTrue(pid.startswith("pref_"))

    @needs("trainer")
    def test_router_trainer_errors(self):
        tr = switchyard.RouterTrainer(self.client)
        with self.assertRaises(switchyard.ValidationError) as cm:
            tr.train([])
        self.assertIn("Data_URLs", cm.exception.message)
        with self.assertRaises(switchyard.NotFoundError):
            tr.model("no-such-model")
        with self.assertRaises(switchyard.NotFoundError):
            tr.status("no-such-job")
        with self.assertRaises(switchyard.NotFoundError):
            tr.cancel("no-such-job")

    @needs("optimizer")
    def test_optimizer_validation(self):
        opt = switchyard.AgentOptimizer(self.client)
        with self.assertRaises(switchyard.ValidationError) as cm:
            opt.submit("", "openai/gpt-4o-mini")
        self.assertEqual(cm.exception.message, "agentopt requires input_url")
        with self.assertRaises(switchyard.ValidationError) as cm:
            opt.submit("https://example.com/b.zip", "openai/gpt-4o-mini", n_iterations=51)
        self.assertEqual(cm.exception.message, "n_iterations must be 1-50")
        with self.assertRaises(switchyard.ValidationError) as cm:
            opt.submit("https://example.com/b.zip", [])
        self.assertEqual(cm.exception.message, "agentopt requires target_models")
        with self.assertRaises(switchyard.NotFoundError):
            opt.status("no-such-job")

    @needs("optimizer")
    @unittest.skipUnless(DATA, "set SWITCHYARD_TEST_DATA_URL to a base URL the server can fetch from")
    def test_optimizer_failed_bundle(self):
        # The server fetches and checks the bundle at submit: one it cannot fetch is a 400
        # naming input_url, no job is made and the remembered id stays.
        opt = switchyard.AgentOptimizer(self.client, job_id="opt_previous")
        with self.assertRaises(switchyard.BadRequestError) as cm:
            opt.submit(DATA + "/no-such-bundle.zip", "openai/gpt-4o-mini", n_iterations=1)
        self.assertEqual(cm.exception.status, 400)
        self.assertTrue(cm.exception.message.startswith("input_url: the bundle could not be fetched"), cm.exception.message)
        self.assertEqual(opt.job_id, "opt_previous")

    @needs("optimizer")
    @unittest.skipUnless(BUNDLES, "set SWITCHYARD_TEST_BUNDLE_URL to where test bundles are served")
    def test_optimizer_flow(self):
        opt = switchyard.AgentOptimizer(self.client)
        job = opt.submit(BUNDLES + "/bundle.zip", "openai/gpt-4o-mini", n_iterations=2, seed=5)
        seen = []
        st = opt.wait(poll_every=0.1, timeout=60, on_status=lambda s: seen.append(s["status"]))
        self.assertEqual(st["status"], "completed", st.get("error_message"))
        self.assertEqual(st["n_iterations"], 2)
        res = opt.results()
        self.assertEqual(res["job_id"], job["job_id"])
        r = res["results"][0]
        self.assertEqual(r["model"], "openai/gpt-4o-mini")
        self.assertEqual(r["iterations_run"], 2)
        self.assertEqual(len(r["history"]), 3)  # the baseline and two variants
        self.assertGreaterEqual(r["train_score"], r["baseline_score"])
        self.assertTrue(r["agent_code_url"])
        self.assertEqual((r["seed"], r["metric"]), (5, "exact_match"))  # the example eval.py's METRIC
        code = opt.agent_code()  # the job's first result's best agent.py
        self.assertIn("def run_batch", code)
        self.assertIn(r["optimized_prompt"].splitlines()[-1], code)

        # A job still running: results are a 409; cancel interrupts it.
        opt.submit(BUNDLES + "/slow.zip", "openai/gpt-4o-mini", n_iterations=1)
        with self.assertRaises(switchyard.ConflictError):
            opt.results()
        opt.cancel()
        st = opt.wait(poll_every=0.1, timeout=60)
        self.assertEqual(st["status"], "interrupted")
        self.assertTrue(st["error_message"])
        self.assertEqual(opt.results()["status"], "interrupted")

    @needs("batches")
    @unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
    def test_batch_flow(self):
        lines = [{"custom_id": f"q{i}", "method": "POST", "url": "/v1/chat/completions",
                  "body": {"model": MODEL, "messages": [{"role": "user", "content": f"question {i}"}]}} for i in range(3)]
        lines.append({"custom_id": "streamed", "method": "POST", "url": "/v1/chat/completions",
                      "body": {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}})
        data = "".join(json.dumps(l) + "\n" for l in lines).encode()
        f = switchyard.upload_file(data, filename="questions.jsonl", client=self.client)
        self.assertEqual((f["purpose"], f["filename"], f["bytes"], f["status"]), ("batch", "questions.jsonl", len(data), "processed"))
        self.assertEqual(switchyard.get_file(f["id"], client=self.client)["id"], f["id"])
        b = switchyard.create_batch(f["id"], metadata={"suite": "python"}, client=self.client)
        self.assertEqual(b["status"], "validating")
        b = switchyard.wait_batch(b["id"], poll_every=0.05, timeout=30, client=self.client)
        self.assertEqual(b["status"], "completed")
        self.assertEqual(b["request_counts"], {"total": 4, "completed": 3, "failed": 1})
        self.assertEqual(b["metadata"], {"suite": "python"})
        out = switchyard.batch_results(b["output_file_id"], client=self.client)
        self.assertEqual([l["custom_id"] for l in out], ["q0", "q1", "q2"])
        self.assertEqual(out[0]["response"]["status_code"], 200)
        self.assertTrue(out[0]["response"]["body"]["choices"][0]["message"]["content"])
        errs = switchyard.batch_results(b["error_file_id"], client=self.client)
        self.assertEqual(errs[0]["custom_id"], "streamed")
        self.assertEqual(errs[0]["response"]["body"]["error"]["param"], "stream")
        self.assertIn(b["id"], [x["id"] for x in switchyard.list_batches(limit=100, client=self.client)["data"]])
        outputs = switchyard.list_files(purpose="batch_output", client=self.client)["data"]
        self.assertIn(b["output_file_id"], [x["id"] for x in outputs])
        with self.assertRaises(switchyard.ConflictError):
            switchyard.cancel_batch(b["id"], client=self.client)
        self.assertTrue(switchyard.delete_file(f["id"], client=self.client)["deleted"])
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_file(f["id"], client=self.client)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.upload_file(b'{"custom_id": "x"}\n', client=self.client)
        self.assertIn("line 1", cm.exception.message)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.upload_file(data, purpose="fine-tune", client=self.client)
        self.assertIn("purpose", cm.exception.message)
