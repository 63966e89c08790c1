"""Not Diamond's names (model_select, create_preference_id, LLMProvider) over a fake client
that records the request and answers a scripted body."""

import copy
import json
import pickle
import unittest

import switchyard


class FakeScriptedClient:
    """Records each request and answers the next scripted body (a fake for tests)."""

    def __init__(self, *answers):
        self.calls, self.answers = [], list(answers)

    def request(self, method, path, body=None, **kwargs):
        self.calls.append((method, path, body))
        return self.answers.pop(0) if self.answers else {}


class FakeLLMConfig:
    """Shaped like Not Diamond's LLMConfig: provider and model attributes (a fake)."""

    def __init__(self, provider, model):
        self.provider, self.model = provider, model


class FakeCustomLLMConfig(FakeLLMConfig):
    """Shaped like a Not Diamond LLMConfig of a custom model with its own figures (a fake)."""

    def __init__(self, provider, model, **figures):
        super().__init__(provider, model)
        self.is_custom = figures.get("is_custom", False)
        self.context_length = figures.get("context_length")
        self.input_price = figures.get("input_price")
        self.output_price = figures.get("output_price")
        self.latency = figures.get("latency")


class ModelSelectTest(unittest.TestCase):
    def test_llm_config_figures_reach_the_selection(self):
        # Not Diamond sends an LLMConfig's prices, latency, context length and is_custom
        # with the candidate; tradeoff="cost" on custom models ranks by them.
        fake = FakeScriptedClient({"llm_label": "custom/a", "session_id": "s", "providers": [{"provider": "custom", "model": "a"}]}, {})
        cfgs = [FakeCustomLLMConfig("custom", "a", is_custom=True, input_price=0.1, output_price=0.2, latency=0.5, context_length=8000),
                FakeCustomLLMConfig("openai", "gpt-4o")]
        session_id, chosen = switchyard.model_select([{"role": "user", "content": "hi"}], cfgs, tradeoff="cost", client=fake)
        switchyard.report_feedback(session_id, cfgs[0], 1, client=fake)
        (_, _, sel), (_, _, fb) = fake.calls
        self.assertEqual(sel["llm_providers"], [
            {"provider": "custom", "model": "a", "is_custom": True, "context_length": 8000,
             "input_price": 0.1, "output_price": 0.2, "latency": 0.5},
            {"provider": "openai", "model": "gpt-4o"}])
        self.assertEqual(fb["provider"], {"provider": "custom", "model": "a"})  # feedback names the candidate only


    def test_returns_session_and_provider(self):
        fake = FakeScriptedClient({"llm_label": "openai/gpt-4o-mini", "session_id": "sess_1", "providers": [
            {"provider": "openai", "model": "gpt-4o-mini", "rank": 1}, {"provider": "openai", "model": "gpt-4o", "rank": 2}]})
        session_id, provider = switchyard.model_select([{"role": "user", "content": "hi"}],
                                                       ["openai/gpt-4o", "openai/gpt-4o-mini"], tradeoff="cost", client=fake)
        self.assertEqual(session_id, "sess_1")
        self.assertEqual((provider.provider, provider.model, provider.name), ("openai", "gpt-4o-mini", None))
        self.assertEqual(str(provider), "openai/gpt-4o-mini")
        (_, path, body), = fake.calls
        self.assertEqual(path, "/api/v1/model-select")
        self.assertEqual(body["tradeoff"], "cost")
        self.assertEqual(body["llm_providers"], [{"provider": "openai", "model": "gpt-4o"}, {"provider": "openai", "model": "gpt-4o-mini"}])

    def test_name_shape_and_label_alone(self):
        fake = FakeScriptedClient({"llm_label": "house/bot", "session_id": "s", "providers": [{"name": "house/bot", "rank": 1}]},
                                  {"llm_label": "anthropic/claude-3-5-haiku-20241022", "session_id": "t"})
        _, named = switchyard.model_select([{"role": "user", "content": "hi"}], [{"name": "house/bot"}], client=fake)
        self.assertEqual(named.to_dict(), {"name": "house/bot"})  # a name with a slash stays a name
        _, parsed = switchyard.model_select([{"role": "user", "content": "hi"}], ["x/y"], client=fake)
        self.assertEqual(parsed, switchyard.LLMProvider("anthropic", "claude-3-5-haiku-20241022"))

    def test_unknown_option_is_refused(self):
        with self.assertRaises(TypeError):
            switchyard.model_select([{"role": "user", "content": "hi"}], ["a/b"], tradoff="cost", client=FakeScriptedClient())

    def test_feedback_takes_the_provider_and_llm_configs(self):
        fake = FakeScriptedClient()
        switchyard.report_feedback("sess_1", switchyard.LLMProvider("openai", "gpt-4o"), 1, client=fake)
        switchyard.report_feedback("sess_1", switchyard.LLMProvider(name="my-llm"), 0, client=fake)
        switchyard.report_latency("sess_1", FakeLLMConfig("openai", "gpt-4o"), 50, client=fake)
        switchyard.select_model([{"role": "user", "content": "hi"}], [FakeLLMConfig("openai", "gpt-4o")], client=fake)
        bodies = [b for _, _, b in fake.calls]
        self.assertEqual(bodies[0]["provider"], {"provider": "openai", "model": "gpt-4o"})
        self.assertEqual(bodies[1]["provider"], {"name": "my-llm"})
        self.assertEqual(bodies[2]["provider"], {"provider": "openai", "model": "gpt-4o"})
        self.assertEqual(bodies[3]["llm_providers"], [{"provider": "openai", "model": "gpt-4o"}])

    def test_create_preference_id_returns_the_id(self):
        fake = FakeScriptedClient({"preference_id": "pref_1", "name": "n"})
        self.assertEqual(switchyard.create_preference_id("n", client=fake), "pref_1")
        self.assertEqual(fake.calls, [("POST", "/api/v1/preferences", {"name": "n"})])

    def test_answer_reads_by_attribute_and_by_key(self):
        # Not Diamond's SDK answers an object (result.providers[0].model, result.session_id);
        # the dict access users already rely on keeps working on the same answer.
        answer = {"llm_label": "openai/gpt-4o-mini", "session_id": "sess_1", "providers": [
            {"provider": "openai", "model": "gpt-4o-mini", "rank": 1, "score": 0.8},
            {"name": "house/bot", "rank": 2, "score": 0.5}]}
        res = switchyard.select_model([{"role": "user", "content": "hi"}], ["openai/gpt-4o-mini", {"name": "house/bot"}],
                                      client=FakeScriptedClient(json.loads(json.dumps(answer))))
        self.assertIsInstance(res, switchyard.SelectModelResult)
        self.assertEqual((res.session_id, res.llm_label), ("sess_1", "openai/gpt-4o-mini"))
        self.assertEqual((res.providers[0].provider, res.providers[0].model, res.providers[0].rank), ("openai", "gpt-4o-mini", 1))
        self.assertEqual((res.providers[1].name, res.providers[1].provider, res.providers[1].model), ("house/bot", None, None))
        self.assertIsNone(res.router_fallback)  # optional fields the server left out read None
        self.assertIsNone(res.tradeoff_fallback)
        with self.assertRaises(AttributeError):
            res.sesion_id  # a misspelt field is not silently None
        self.assertFalse(hasattr(res, "nothing"))
        # still a dict: keys, get, equality, JSON, isinstance
        self.assertIsInstance(res, dict)
        self.assertEqual(res["providers"][0]["model"], "gpt-4o-mini")
        self.assertEqual(res.get("router_fallback", "none"), "none")
        self.assertEqual(res, answer)
        self.assertEqual(json.loads(json.dumps(res)), answer)
        self.assertIn("session_id", dir(res))
        # copies and pickles keep the class
        for copied in (copy.deepcopy(res), pickle.loads(pickle.dumps(res))):
            self.assertIsInstance(copied, switchyard.SelectModelResult)
            self.assertEqual(copied.providers[0].model, "gpt-4o-mini")
            self.assertEqual(copied, answer)

    def test_answer_fields_present_read_by_attribute(self):
        res = switchyard.select_model([{"role": "user", "content": "hi"}], ["a/b"], tradeoff="latency", client=FakeScriptedClient(
            {"llm_label": "a/b", "session_id": "s", "providers": [], "router_fallback": "router_deleted",
             "tradeoff_fallback": "no_latency_data"}))
        self.assertEqual((res.router_fallback, res.tradeoff_fallback, res.providers), ("router_deleted", "no_latency_data", []))


class FakeFormClient:
    """Records each request with its raw body and answers a scripted body (a fake for tests)."""

    def __init__(self, *answers):
        self.calls, self.answers = [], list(answers)

    def request(self, method, path, query=None, body=None, raw=None, content_type=None, **kwargs):
        self.calls.append((method, path, raw, content_type))
        return self.answers.pop(0)


class TrainCustomRouterTest(unittest.TestCase):
    CSV = b"prompt,openai/gpt-4o/score,openai/gpt-4o-mini/score\nhi,1,0\n"

    def test_new_router_then_retrain_by_preference_id(self):
        # Not Diamond's CustomRouter.fit: the first call makes a preference, a later one with
        # its preference_id retrains that preference's router.
        fake = FakeFormClient({"preference_id": "pref_1", "training_job_id": "tj_1", "status": "queued", "version": "v"},
                              {"preference_id": "pref_1", "training_job_id": "tj_2", "status": "queued", "version": "v"})
        tr = switchyard.RouterTrainer(fake)
        first = tr.train_custom_router(self.CSV, "prompt", llm_providers=["openai/gpt-4o", "openai/gpt-4o-mini"], maximize=False)
        self.assertEqual((first["preference_id"], tr.job_id), ("pref_1", "tj_1"))
        tr.train_custom_router(self.CSV, "prompt", preference_id=first["preference_id"], filename="joint.csv")
        self.assertEqual(tr.job_id, "tj_2")
        (m1, p1, raw1, ct1), (m2, p2, raw2, ct2) = fake.calls
        self.assertEqual((m1, p1, m2, p2), ("POST", "/v2/pzn/trainCustomRouter", "POST", "/v2/pzn/trainCustomRouter"))
        self.assertTrue(ct1.startswith("multipart/form-data; boundary="))
        self.assertIn(b'name="dataset_file"; filename="dataset.csv"', raw1)
        self.assertIn(b'name="prompt_column"\r\n\r\nprompt\r\n', raw1)
        self.assertIn(b'name="maximize"\r\n\r\nfalse\r\n', raw1)
        self.assertIn(b'name="llm_providers"\r\n\r\n["openai/gpt-4o", "openai/gpt-4o-mini"]\r\n', raw1)
        self.assertNotIn(b"preference_id", raw1)  # absent: a new preference
        self.assertIn(b'name="preference_id"\r\n\r\npref_1\r\n', raw2)
        self.assertIn(b'filename="joint.csv"', raw2)
        self.assertIn(self.CSV, raw2)

    def test_train_upload_sends_no_preference_field(self):
        # The upload route trains a router model of no preference; it takes no preference_id.
        fake = FakeFormClient({"training_job_id": "tj_3", "status": "queued", "version": "v"})
        switchyard.RouterTrainer(fake).train_upload(self.CSV, prompt_column="prompt")
        (_, path, raw, _), = fake.calls
        self.assertEqual(path, "/api/v1/routers/train/upload")
        self.assertIn(b'name="file"; filename="dataset.csv"', raw)
        with self.assertRaises(TypeError):
            switchyard.RouterTrainer(fake).train_upload(self.CSV, preference_id="pref_1")


if __name__ == "__main__":
    unittest.main()
