"""The native API the Python client shares with the Go client — teams, users, end users, key
versions (ETag / If-Match), preferences, embeddings, rerank, moderations and images —
against a running server (see test_server.py for the environment). The Go tests' scripted
upstream (fakeClientsUpstream in cmd/switchyard) answers from what it was sent: an
embedding is [index, length, 1]; a moderation flags a text with "kill"; a rerank scores a
document by the query words it contains; an image edit's revised_prompt counts the images,
the mask and their bytes."""

import os
import tempfile
import unittest
import uuid

import switchyard

from tests.test_server import BASE, KEY, MODEL, needs

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 56  # 64 bytes: a PNG's signature and padding


def _uid(prefix):
    return prefix + uuid.uuid4().hex[:10]


@unittest.skipUnless(BASE and KEY, "set SWITCHYARD_BASE_URL and SERVICE_API_KEY to test against a server")
@unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
@needs("completions")
class ParityServerTest(unittest.TestCase):
    def setUp(self):
        self.client = switchyard.Client()

    def test_teams(self):
        tid = _uid("team-")
        t = switchyard.create_team(team_id=tid, name="Search", models=[MODEL], max_budget_usd=5,
                                   budget_duration="30d", requests_per_minute=100, metadata={"cost_center": "42"},
                                   client=self.client)
        self.assertEqual((t["team_id"], t["name"], t["models"], t["max_budget_usd"], t["budget_duration"]),
                         (tid, "Search", [MODEL], 5, "30d"))
        self.assertEqual(t["key_ids"], [])
        vk = switchyard.issue_key(name="in-team", team_id=tid, client=self.client)
        self.assertEqual(vk["team_id"], tid)
        got = switchyard.get_team(tid, client=self.client)
        self.assertEqual(got["key_ids"], [vk["id"]])
        self.assertEqual(got["metadata"], {"cost_center": "42"})
        self.assertIn(tid, [x["team_id"] for x in switchyard.list_teams(client=self.client)])
        up = switchyard.update_team(tid, name="Search 2", blocked=True, client=self.client)
        self.assertEqual((up["name"], up["blocked"], up["max_budget_usd"]), ("Search 2", True, 5))
        self.assertEqual(switchyard.update_team(tid, max_parallel_requests=4, client=self.client)["max_parallel_requests"], 4)
        self.assertNotIn("max_parallel_requests", switchyard.update_team(tid, max_parallel_requests=0, client=self.client))
        par = switchyard.create_team(team_id=_uid("par-"), max_parallel_requests=3, client=self.client)
        self.assertEqual(par["max_parallel_requests"], 3)
        switchyard.delete_team(par["team_id"], client=self.client)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_team(tid, max_budget_usd=-1, client=self.client)
        self.assertIn("max_budget_usd", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_team(tid, colour="red", client=self.client)
        self.assertIn("colour", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_team(name="x", requests_per_minute=-5, client=self.client)
        self.assertIn("requests_per_minute", cm.exception.message)
        with self.assertRaises(switchyard.ConflictError):
            switchyard.create_team(team_id=tid, client=self.client)
        made = switchyard.create_team(client=self.client)  # the server names it
        self.assertTrue(made["team_id"])
        gone = switchyard.delete_team(tid, client=self.client)
        self.assertEqual((gone["team_id"], gone["deleted"], gone["deleted_keys"]), (tid, True, [vk["id"]]))
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.key_info(vk["id"], client=self.client)  # revoked with its team
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_team(tid, client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.update_team(tid, name="again", client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_team(tid, client=self.client)
        switchyard.delete_team(made["team_id"], client=self.client)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.get_team("", client=self.client)

    def test_users(self):
        tid, uid = _uid("team-"), _uid("user-")
        switchyard.create_team(team_id=tid, client=self.client)
        u = switchyard.create_user(user_id=uid, email=uid + "@example.com", max_budget_usd=4, budget_duration="30d",
                                   metadata={"dept": "eng"}, teams=[tid], client=self.client)
        self.assertEqual((u["user_id"], u["email"], u["role"], u["max_budget_usd"], u["teams"], u["key_ids"]),
                         (uid, uid + "@example.com", "internal_user", 4, [tid], []))
        other = switchyard.create_user(client=self.client)  # the server names it
        self.assertTrue(other["user_id"])
        vk = switchyard.issue_key(name="for-user", metadata={"user_id": uid}, client=self.client)
        self.assertEqual(switchyard.get_user(uid, client=self.client)["key_ids"], [vk["id"]])
        first = switchyard.list_users(limit=1, client=self.client)
        self.assertEqual(len(first["data"]), 1)
        self.assertTrue(first["next_cursor"])
        everyone = [x["user_id"] for x in switchyard.iterate_users(limit=1, client=self.client)]
        self.assertLess(everyone.index(uid), everyone.index(other["user_id"]))  # oldest first
        up = switchyard.update_user(uid, alias="Ann", blocked=True, client=self.client)
        self.assertEqual((up["alias"], up["blocked"], up["max_budget_usd"]), ("Ann", True, 4))
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_user(uid, max_budget_usd=-1, client=self.client)
        self.assertIn("max_budget_usd", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_user(uid, colour="red", client=self.client)
        self.assertIn("colour", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_user(role="wizard", client=self.client)
        self.assertIn("role", cm.exception.message)
        with self.assertRaises(switchyard.ConflictError):
            switchyard.create_user(user_id=uid, client=self.client)
        with self.assertRaises(switchyard.ConflictError):
            switchyard.update_user(other["user_id"], email=uid + "@example.com", client=self.client)
        m = switchyard.add_team_member(tid, other["user_id"], role="admin", max_budget_usd=2, client=self.client)
        self.assertEqual((m["team_id"], m["user_id"], m["role"], m["max_budget_usd"]), (tid, other["user_id"], "admin", 2))
        with self.assertRaises(switchyard.ConflictError):
            switchyard.add_team_member(tid, other["user_id"], client=self.client)
        self.assertEqual(switchyard.update_team_member(tid, other["user_id"], role="user", client=self.client)["role"], "user")
        self.assertEqual(sorted(x["user_id"] for x in switchyard.list_team_members(tid, client=self.client)),
                         sorted([uid, other["user_id"]]))
        self.assertTrue(switchyard.remove_team_member(tid, other["user_id"], client=self.client)["deleted"])
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.remove_team_member(tid, other["user_id"], client=self.client)
        gone = switchyard.delete_user(uid, client=self.client)
        self.assertEqual((gone["user_id"], gone["deleted"], gone["deleted_keys"]), (uid, True, [vk["id"]]))
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.key_info(vk["id"], client=self.client)  # revoked with its user
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_user(uid, client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.update_user(uid, alias="x", client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_user(uid, client=self.client)
        self.assertEqual(switchyard.list_team_members(tid, client=self.client), [])
        switchyard.delete_user(other["user_id"], client=self.client)
        switchyard.delete_team(tid, client=self.client)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.get_user("", client=self.client)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.add_team_member(tid, "", client=self.client)

    def test_key_user(self):
        uid, other = _uid("user-"), _uid("user-")
        switchyard.create_user(user_id=uid, client=self.client)
        switchyard.create_user(user_id=other, client=self.client)
        vk = switchyard.issue_key(name="for-user", user_id=uid, client=self.client)
        self.assertEqual((vk["user_id"], vk["metadata"]["user_id"]), (uid, uid))
        self.assertEqual(switchyard.get_user(uid, client=self.client)["key_ids"], [vk["id"]])
        with self.assertRaises(switchyard.NotFoundError) as cm:
            switchyard.issue_key(user_id=_uid("nobody-"), client=self.client)
        self.assertIn("user_id", cm.exception.message)
        moved = switchyard.update_key(vk["id"], user_id=other, client=self.client)
        self.assertEqual(moved["user_id"], other)
        self.assertEqual(switchyard.get_user(uid, client=self.client)["key_ids"], [])
        gone = switchyard.update_key(vk["id"], user_id=None, client=self.client)
        self.assertNotIn("user_id", gone)
        self.assertEqual(switchyard.get_user(other, client=self.client)["key_ids"], [])
        switchyard.revoke_key(vk["id"], client=self.client)
        switchyard.delete_user(uid, client=self.client)
        switchyard.delete_user(other, client=self.client)

    def test_customers(self):
        uid = _uid("user-")
        c = switchyard.create_customer(uid, alias="Ada", models=[MODEL], max_budget_usd=3, soft_budget_usd=1,
                                       budget_duration="7d", client=self.client)
        self.assertEqual((c["end_user_id"], c["alias"], c["models"], c["max_budget_usd"], c["soft_budget_usd"]),
                         (uid, "Ada", [MODEL], 3, 1))
        self.assertFalse(c.get("created_by_request", False))
        self.assertEqual(switchyard.get_customer(uid, client=self.client)["spend"]["requests"], 0)
        other = switchyard.create_customer(_uid("user-"), client=self.client)
        first = switchyard.list_customers(limit=1, client=self.client)
        self.assertEqual(len(first["data"]), 1)
        self.assertTrue(first["next_cursor"])
        everyone = [x["end_user_id"] for x in switchyard.iterate_customers(limit=1, client=self.client)]
        self.assertIn(uid, everyone)
        self.assertIn(other["end_user_id"], everyone)
        self.assertLess(everyone.index(uid), everyone.index(other["end_user_id"]))  # oldest first
        up = switchyard.update_customer(uid, blocked=True, alias="Ada L.", client=self.client)
        self.assertEqual((up["blocked"], up["alias"], up["max_budget_usd"]), (True, "Ada L.", 3))
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.update_customer(uid, max_budget_usd=-2, client=self.client)
        self.assertIn("max_budget_usd", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_customer(_uid("user-"), budget_duration="fortnight", client=self.client)
        self.assertIn("budget_duration", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.list_customers(limit=0, client=self.client)
        self.assertIn("limit", cm.exception.message)
        with self.assertRaises(switchyard.ConflictError):
            switchyard.create_customer(uid, client=self.client)
        gone = switchyard.delete_customer(uid, client=self.client)
        self.assertEqual((gone["end_user_id"], gone["deleted"]), (uid, True))
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_customer(uid, client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.update_customer(uid, alias="x", client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_customer(uid, client=self.client)
        switchyard.delete_customer(other["end_user_id"], client=self.client)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.create_customer("", client=self.client)

    def test_customer_budget_id(self):
        bid = _uid("budget-")
        self.client.request("POST", "/budget/new", body={"budget_id": bid, "max_budget": 7, "tpm_limit": 1000})
        uid = _uid("user-")
        c = switchyard.create_customer(uid, budget_id=bid, client=self.client)
        self.assertEqual((c["budget_id"], c["max_budget_usd"], c["tokens_per_minute"]), (bid, 7, 1000))
        with self.assertRaises(switchyard.NotFoundError) as cm:
            switchyard.create_customer(_uid("user-"), budget_id=_uid("none-"), client=self.client)
        self.assertIn("budget_id", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_customer(_uid("user-"), budget_id=bid, tokens_per_minute=5, client=self.client)
        self.assertIn("tokens_per_minute", cm.exception.message)
        other = switchyard.create_customer(_uid("user-"), tokens_per_minute=500, client=self.client)
        self.assertEqual(other["tokens_per_minute"], 500)
        self.assertNotIn("budget_id", other)
        up = switchyard.update_customer(other["end_user_id"], tokens_per_minute=800, client=self.client)
        self.assertEqual(up["tokens_per_minute"], 800)
        paced = switchyard.create_customer(_uid("user-"), requests_per_minute=3, client=self.client)
        self.assertEqual(paced["requests_per_minute"], 3)
        switchyard.delete_customer(paced["end_user_id"], client=self.client)
        up = switchyard.update_customer(uid, budget_id="", client=self.client)
        self.assertEqual((up.get("budget_id"), up["tokens_per_minute"]), (None, 1000))
        switchyard.delete_customer(uid, client=self.client)
        switchyard.delete_customer(other["end_user_id"], client=self.client)

    def test_customer_model_max_budget_and_rpm(self):
        # As the Go client's CustomerRequest/CustomerUpdate: an end user's per-model budgets
        # and requests per minute round-trip, are replaced whole, and a bad one is refused.
        uid = _uid("user-")
        budgets = {MODEL: {"max_budget_usd": 2.5, "budget_duration": "30d"}}
        c = switchyard.create_customer(uid, model_max_budget=budgets, requests_per_minute=7, client=self.client)
        self.assertEqual((c["model_max_budget"], c["requests_per_minute"]), (budgets, 7))
        got = switchyard.get_customer(uid, client=self.client)
        self.assertEqual((got["model_max_budget"], got["requests_per_minute"]), (budgets, 7))
        other = {MODEL: {"max_budget_usd": 1}}
        up = switchyard.update_customer(uid, model_max_budget=other, requests_per_minute=0, client=self.client)
        self.assertEqual(up["model_max_budget"], other)
        self.assertNotIn("requests_per_minute", up)  # 0: no bound
        up = switchyard.update_customer(uid, model_max_budget={}, client=self.client)
        self.assertNotIn("model_max_budget", up)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_customer(_uid("user-"), model_max_budget={MODEL: {"max_budget_usd": -1}}, client=self.client)
        self.assertIn("model_max_budget", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_customer(_uid("user-"), requests_per_minute=-1, client=self.client)
        self.assertIn("requests_per_minute", cm.exception.message)
        switchyard.delete_customer(uid, client=self.client)

    def test_complete_logprobs(self):
        # The native API's logprobs extension: the answer has a logprobs object (the
        # scripted upstream gives no tokens: an empty content), a bad top_logprobs is refused.
        res = switchyard.complete([{"role": "user", "content": "Is it?"}], MODEL, logprobs=True, top_logprobs=2,
                                  client=self.client)
        self.assertEqual(res["logprobs"]["content"], [])
        plain = switchyard.complete([{"role": "user", "content": "Is it?"}], MODEL, client=self.client)
        self.assertNotIn("logprobs", plain)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.complete([{"role": "user", "content": "Is it?"}], MODEL, logprobs=True, top_logprobs=21,
                                client=self.client)
        self.assertIn("top_logprobs", cm.exception.message)

    def test_key_budget_id(self):
        bid = _uid("budget-")
        self.client.request("POST", "/budget/new", body={"budget_id": bid, "max_budget": 7, "tpm_limit": 1000})
        vk = switchyard.issue_key(name="tier", budget_id=bid, client=self.client)
        self.assertEqual((vk["budget_id"], vk["max_budget_usd"], vk["tokens_per_minute"]), (bid, 7, 1000))
        with self.assertRaises(switchyard.NotFoundError) as cm:
            switchyard.issue_key(budget_id=_uid("none-"), client=self.client)
        self.assertIn("budget_id", cm.exception.message)
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.issue_key(budget_id=bid, max_budget_usd=5, client=self.client)
        self.assertIn("max_budget_usd", cm.exception.message)
        up = switchyard.update_key(vk["id"], budget_id="", client=self.client)
        self.assertEqual((up.get("budget_id"), up["max_budget_usd"]), (None, 7))
        switchyard.revoke_key(vk["id"], client=self.client)
        self.client.request("POST", "/budget/delete", body={"id": bid})

    def test_key_versions(self):
        vk = switchyard.issue_key(name="versioned", client=self.client)
        v1 = vk["etag"]
        self.assertTrue(v1)
        self.assertEqual(switchyard.key_info(vk["id"], client=self.client)["etag"], v1)
        rotated = switchyard.rotate_key(vk["id"], if_match=v1, client=self.client)
        v2 = rotated["etag"]
        self.assertNotEqual(v2, v1)
        self.assertNotEqual(rotated["key"], vk["key"])
        # The version rotated away: each conditional call is refused, and nothing changes.
        with self.assertRaises(switchyard.PreconditionFailedError) as cm:
            switchyard.rotate_key(vk["id"], if_match=v1, client=self.client)
        self.assertEqual(cm.exception.status, 412)
        self.assertFalse(cm.exception.resent)
        with self.assertRaises(switchyard.PreconditionFailedError):
            switchyard.update_key(vk["id"], if_match=v1, name="stale", client=self.client)
        with self.assertRaises(switchyard.PreconditionFailedError):
            switchyard.revoke_key(vk["id"], if_match=v1, client=self.client)
        now = switchyard.key_info(vk["id"], client=self.client)
        self.assertEqual((now["name"], now["etag"]), ("versioned", v2))
        app = switchyard.Client(base_url=BASE, api_key=rotated["key"], retry=None)
        self.assertEqual(switchyard.key_info(client=app)["id"], vk["id"])  # the rotated key still works
        up = switchyard.update_key(vk["id"], if_match=v2, name="renamed", client=self.client)
        self.assertEqual(up["name"], "renamed")
        self.assertNotEqual(up["etag"], v2)
        # A spend does not change the version.
        spent = switchyard.key_info(vk["id"], client=self.client)["etag"]
        self.assertEqual(spent, up["etag"])
        self.assertTrue(switchyard.revoke_key(vk["id"], if_match=up["etag"], client=self.client)["deleted"])
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.key_info(vk["id"], client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.rotate_key(vk["id"], if_match=up["etag"], client=self.client)

    @needs("select")
    def test_preferences_get_list_delete(self):
        a = switchyard.create_preference("first", client=self.client)
        b = switchyard.create_preference("second", client=self.client)
        got = switchyard.get_preference(a["preference_id"], client=self.client)
        self.assertEqual((got["preference_id"], got["name"], got["feedback_count"]), (a["preference_id"], "first", 0))
        page = switchyard.list_preferences(limit=1, client=self.client)
        self.assertEqual(len(page["data"]), 1)
        self.assertTrue(page["next_cursor"])
        ids = [p["preference_id"] for p in switchyard.iterate_preferences(limit=1, client=self.client)]
        self.assertLess(ids.index(b["preference_id"]), ids.index(a["preference_id"]))  # newest first
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.list_preferences(limit=1000, client=self.client)
        self.assertIn("limit", cm.exception.message)
        renamed = switchyard.rename_preference(a["preference_id"], "first v2", client=self.client)
        self.assertEqual((renamed["preference_id"], renamed["name"]), (a["preference_id"], "first v2"))
        gone = switchyard.delete_preference(a["preference_id"], client=self.client)
        self.assertEqual((gone["preference_id"], gone["deleted"]), (a["preference_id"], True))
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_preference(a["preference_id"], client=self.client)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_preference(a["preference_id"], client=self.client)
        switchyard.delete_preference(b["preference_id"], client=self.client)

    def test_embeddings(self):
        res = switchyard.embed(["ab", "abcd", "abc"], model="openai/text-embedding-3-small", client=self.client)
        self.assertEqual(switchyard.vectors(res), [[0, 2, 1], [1, 4, 1], [2, 3, 1]])
        self.assertEqual(res["model"], "openai/text-embedding-3-small")
        self.assertEqual(res["usage"]["prompt_tokens"], 9)
        one = switchyard.embed("hello", model="openai/text-embedding-3-small", client=self.client)
        self.assertEqual(switchyard.vectors(one), [[0, 5, 1]])
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.embed(["ok", ""], model="openai/text-embedding-3-small", client=self.client)
        self.assertIn("input", cm.exception.message)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.embed("x", model="nosuchprovider/some-model", client=self.client)
        self.assertTrue(cm.exception.message.startswith("model: unknown provider"), cm.exception.message)
        with self.assertRaises(switchyard.NotFoundError):  # a bare name no provider catalogues
            switchyard.embed("x", model="no-such-embedding-model", client=self.client)

    def test_rerank(self):
        docs = ["a red car", "the blue sky today", "sky", "blue"]
        res = switchyard.rerank("blue sky", docs, model="cohere/rerank-v3.5", top_n=3, return_documents=True,
                                client=self.client)
        self.assertEqual(switchyard.indexes(res), [1, 2, 3])
        self.assertEqual(res["results"][0]["document"]["text"], "the blue sky today")
        self.assertAlmostEqual(res["results"][0]["relevance_score"], 0.2)
        self.assertEqual(res["model"], "cohere/rerank-v3.5")
        all_of_them = switchyard.rerank("blue sky", docs, model="cohere/rerank-v3.5", client=self.client)
        self.assertEqual(switchyard.indexes(all_of_them), [1, 2, 3, 0])
        self.assertNotIn("document", all_of_them["results"][0])
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.rerank("blue sky", [], model="cohere/rerank-v3.5", client=self.client)
        self.assertIn("documents", cm.exception.message)

    def test_moderate(self):
        res = switchyard.moderate(["hello there", "I will kill the process"], model="openai/omni-moderation-latest",
                                  client=self.client)
        self.assertEqual([r["flagged"] for r in res["results"]], [False, True])
        self.assertEqual(res["results"][1]["categories"]["violence"], True)
        self.assertAlmostEqual(res["results"][1]["category_scores"]["violence"], 0.9)
        one = switchyard.moderate("a calm sentence", client=self.client)  # the gateway's default model
        self.assertEqual(len(one["results"]), 1)
        self.assertFalse(one["results"][0]["flagged"])
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.moderate([], client=self.client)
        self.assertIn("input", cm.exception.message)

    def test_generate_images(self):
        res = switchyard.generate_images("a lighthouse at dusk", model="openai/dall-e-2", n=2, size="256x256",
                                         client=self.client)
        self.assertEqual([d["url"] for d in res["data"]], ["https://images.example/0.png", "https://images.example/1.png"])
        self.assertEqual(res["data"][0]["revised_prompt"], "drawn: a lighthouse at dusk")
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.generate_images("too many", model="openai/dall-e-2", n=11, client=self.client)
        self.assertIn("n", (cm.exception.param, cm.exception.message.split(":")[0]))
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.generate_images("", model="openai/dall-e-2", client=self.client)
        self.assertIn("prompt", cm.exception.message)

    def test_edit_images(self):
        res = switchyard.edit_images("add a hat", PNG, mask=("mask.png", PNG[:32]), model="openai/dall-e-2",
                                     client=self.client)
        self.assertEqual(res["data"][0]["revised_prompt"], "edited: add a hat (1 images, mask true, bytes 96)")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "photo.png")
            with open(path, "wb") as f:
                f.write(PNG)
            with open(path, "rb") as opened:
                res = switchyard.edit_images("two of them", [path, opened, ("third.png", PNG[:16], "image/png")],
                                             model="openai/gpt-image-1", client=self.client)
        self.assertEqual(res["data"][0]["revised_prompt"], "edited: two of them (3 images, mask false, bytes 144)")
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.edit_images("", PNG, model="openai/dall-e-2", client=self.client)
        self.assertIn("prompt", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
