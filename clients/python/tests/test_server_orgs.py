"""Organizations and deployments, as the Go client has them (client/organizations.go,
client/deployments.go), against a running server (see test_server.py for the environment):
an organization bounding its teams' models, members with their spend and
max_budget_in_organization, deployments added, served as a model group, changed and
removed."""

import unittest
import uuid

import switchyard

from tests.test_server import BASE, KEY, MODEL, needs


def _uid(prefix):
    return prefix + uuid.uuid4().hex[:10]


@unittest.skipUnless(BASE and KEY, "set SWITCHYARD_BASE_URL and SERVICE_API_KEY to test against a server")
@unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
@needs("completions")
class OrganizationsServerTest(unittest.TestCase):
    def setUp(self):
        self.client = switchyard.Client()

    def test_organizations(self):
        c = self.client
        oid = _uid("org-")
        org = switchyard.create_organization("Acme", organization_id=oid, models=[MODEL], max_budget=50,
                                             budget_duration="30d", client=c)
        self.assertEqual((org["organization_id"], org["organization_alias"], org["models"]), (oid, "Acme", [MODEL]))
        self.assertEqual(org["litellm_budget_table"]["max_budget"], 50)
        with self.assertRaises(switchyard.ConflictError):
            switchyard.create_organization("again", organization_id=oid, client=c)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.create_organization("", organization_id=_uid("org-"), client=c)
        self.assertIn("organization_alias", cm.exception.message)

        # A team's models must be within the organization's.
        with self.assertRaises(switchyard.ValidationError):
            switchyard.create_team(team_id=_uid("wide-"), models=["openai/gpt-4o"], organization_id=oid, client=c)
        tid = _uid("team-")
        team = switchyard.create_team(team_id=tid, models=[MODEL], organization_id=oid, client=c)
        self.assertEqual(team["organization_id"], oid)

        # A member bounded in the organization; its key of the team spends.
        ann = _uid("ann-")
        ms = switchyard.add_organization_members(oid, [{"user_id": ann, "role": "internal_user"}],
                                                 max_budget_in_organization=5, client=c)
        self.assertEqual([(m["user_id"], m["user_role"], m["litellm_budget_table"]["max_budget"], m["spend"])
                          for m in ms], [(ann, "internal_user", 5, 0)])
        with self.assertRaises(switchyard.BadRequestError):
            switchyard.add_organization_members(oid, [{"user_id": ann, "role": "org_admin"}], client=c)
        vk = switchyard.issue_key(name="ann's", team_id=tid, user_id=ann, client=c)
        as_ann = switchyard.Client(api_key=vk["key"], retry=None)
        switchyard.chat_completion([{"role": "user", "content": "hi"}], MODEL, client=as_ann)
        got = switchyard.get_organization(oid, client=c)
        self.assertEqual([m["user_id"] for m in got["members"]], [ann])
        spent = got["members"][0]["spend"]
        self.assertGreater(spent, 0)
        self.assertGreater(got["spend"], 0)
        self.assertEqual([t["team_id"] for t in got["teams"]], [tid])

        m = switchyard.update_organization_member(oid, ann, max_budget_in_organization=0, client=c)
        self.assertEqual((m["litellm_budget_table"]["max_budget"], m["spend"]), (0, spent))
        with self.assertRaises(switchyard.APIError):
            switchyard.chat_completion([{"role": "user", "content": "hi"}], MODEL, client=as_ann)
        # None leaves the bound as it is (LiteLLM reads null so); a raised bound lets the key in.
        m = switchyard.update_organization_member(oid, ann, max_budget_in_organization=None, role="org_admin", client=c)
        self.assertEqual((m["litellm_budget_table"]["max_budget"], m["user_role"], m["spend"]), (0, "org_admin", spent))
        m = switchyard.update_organization_member(oid, ann, max_budget_in_organization=100, client=c)
        self.assertEqual(m["litellm_budget_table"]["max_budget"], 100)
        switchyard.chat_completion([{"role": "user", "content": "hi"}], MODEL, client=as_ann)

        up = switchyard.update_organization(oid, organization_alias="Acme 2", max_budget=None, client=c)
        self.assertEqual((up["organization_alias"], up["litellm_budget_table"]["max_budget"]), ("Acme 2", None))
        self.assertIn(oid, [o["organization_id"] for o in switchyard.list_organizations(client=c)])
        self.assertEqual([o["organization_id"] for o in switchyard.list_organizations(org_id=oid, client=c)], [oid])
        self.assertIn(oid, [o["organization_id"] for o in switchyard.list_organizations(org_alias="acme 2", client=c)])
        self.assertEqual(switchyard.list_organizations(org_id=_uid("nope-"), client=c), [])

        # A key of the organization without a team, then out of it.
        own = switchyard.issue_key(name="org's", organization_id=oid, client=c)
        self.assertEqual(own["organization_id"], oid)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.issue_key(organization_id=_uid("nope-"), client=c)
        out = switchyard.update_key(own["id"], organization_id=None, client=c)
        self.assertNotIn("organization_id", out)

        gone = switchyard.remove_organization_member(oid, ann, client=c)
        self.assertEqual(gone["user_id"], ann)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.remove_organization_member(oid, ann, client=c)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_organizations(oid, _uid("nope-"), client=c)
        deleted = switchyard.delete_organizations(oid, client=c)
        self.assertEqual([o["organization_id"] for o in deleted], [oid])
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_organization(oid, client=c)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_team(tid, client=c)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.get_organization("", client=c)

    def test_deployments(self):
        c = self.client
        name = _uid("dep-")
        dep = switchyard.add_deployment(name, MODEL, rpm=100, params={"timeout": 30}, info={"mode": "chat"}, client=c)
        did = dep["model_id"]
        self.assertTrue(did)
        self.assertEqual((dep["model_name"], dep["litellm_params"]["model"], dep["litellm_params"]["rpm"],
                          dep["litellm_params"]["timeout"], dep["model_info"]["db_model"]), (name, MODEL, 100, 30, True))
        self.assertNotIn("api_key", dep["litellm_params"])
        infos = [d for d in switchyard.deployment_infos(client=c) if d["model_info"]["id"] == did]
        self.assertEqual([(d["model_name"], d["litellm_params"]["model"], d["model_info"]["db_model"]) for d in infos],
                         [(name, MODEL, True)])
        # Its model_name is a model group, served at once.
        res = switchyard.chat_completion([{"role": "user", "content": "hi"}], name, client=c)
        self.assertTrue(res["choices"][0]["message"]["content"])
        self.assertEqual(res["switchyard"]["model_group"], name)

        up = switchyard.update_deployment(did, rpm=200, client=c)
        self.assertEqual((up["model_name"], up["litellm_params"]["rpm"], up["litellm_params"]["timeout"]), (name, 200, 30))
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.add_deployment(_uid("dep-"), "nope/model", client=c)
        self.assertIn("litellm_params.model", cm.exception.message)
        switchyard.delete_deployment(did, client=c)
        self.assertEqual([d for d in switchyard.deployment_infos(client=c) if d["model_info"]["id"] == did], [])
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.delete_deployment(did, client=c)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.update_deployment(did, rpm=1, client=c)
        with self.assertRaises(switchyard.MissingIdError):
            switchyard.delete_deployment("", client=c)


@unittest.skipUnless(BASE and KEY, "set SWITCHYARD_BASE_URL and SERVICE_API_KEY to test against a server")
@unittest.skipUnless(MODEL, "set SWITCHYARD_TEST_MODEL to a model the server can reach")
@needs("completions")
class TagsServerTest(unittest.TestCase):
    def test_tag_models(self):
        c = switchyard.Client()
        name = _uid("routed-")
        tag = switchyard.create_tag(name, models=("dep-a", "dep-b"), client=c)
        self.assertEqual(tag["models"], ["dep-a", "dep-b"])
        self.assertEqual(switchyard.get_tag(name, client=c)["models"], ["dep-a", "dep-b"])
        self.assertEqual(switchyard.update_tag(name, models=["dep-c"], client=c)["models"], ["dep-c"])
        self.assertEqual(switchyard.update_tag(name, tpm_limit=5, client=c)["models"], ["dep-c"])
        self.assertEqual(switchyard.update_tag(name, models=[], client=c)["models"], [])
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.create_tag(_uid("routed-"), models=[""], client=c)
        self.assertIn("models", cm.exception.message)
        switchyard.delete_tag(name, client=c)

    def test_team_tags(self):
        c = switchyard.Client()
        tid = _uid("tagged-")
        team = switchyard.create_team(team_id=tid, tags=("env:prod", "team:eng"), metadata={"owner": "ann"}, client=c)
        self.assertEqual(team["tags"], ["env:prod", "team:eng"])
        self.assertEqual(team["metadata"], {"owner": "ann", "tags": ["env:prod", "team:eng"]})
        self.assertEqual(switchyard.get_team(tid, client=c)["tags"], ["env:prod", "team:eng"])
        up = switchyard.update_team(tid, tags=["env:dev"], client=c)
        self.assertEqual((up["tags"], up["metadata"]), (["env:dev"], {"owner": "ann", "tags": ["env:dev"]}))
        up = switchyard.update_team(tid, tags=None, client=c)
        self.assertNotIn("tags", up)
        self.assertEqual(up["metadata"], {"owner": "ann"})
        with self.assertRaises(switchyard.ValidationError) as cm:
            switchyard.create_team(team_id=_uid("tagged-"), tags=["batch:1"], client=c)
        self.assertIn("tags", cm.exception.message)
        switchyard.delete_team(tid, client=c)

    def test_tag_budget(self):
        c = switchyard.Client()
        name = _uid("tag-")
        # Whether a tagged request is refused depends on the test server's prices and usage
        # (its scripted models may report neither): the server's Go tests check that.
        tag = switchyard.create_tag(name, description="Engineering", tpm_limit=1000, budget_duration="30d", client=c)
        self.assertEqual((tag["name"], tag["description"], tag["litellm_budget_table"]["tpm_limit"]),
                         (name, "Engineering", 1000))
        with self.assertRaises(switchyard.ConflictError):
            switchyard.create_tag(name, client=c)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.create_tag("has space", client=c)
        self.assertIn("name", cm.exception.message)
        vk = switchyard.issue_key(name="tagged", tags=["team:py"], metadata={"owner": "ann"}, client=c)
        self.assertEqual(vk["metadata"], {"owner": "ann", "tags": ["team:py"]})
        self.assertEqual(vk["tags"], ["team:py"])
        moved = switchyard.update_key(vk["id"], tags=["team:py", "env:test"], client=c)
        self.assertEqual(moved["metadata"], {"owner": "ann", "tags": ["team:py", "env:test"]})
        as_vk = switchyard.Client(api_key=vk["key"], retry=None)
        switchyard.complete([{"role": "user", "content": "hi"}], models=[MODEL], tags=[name], client=as_vk)
        self.assertGreaterEqual(switchyard.get_tag(name, client=c)["spend"], 0)
        up = switchyard.update_tag(name, tpm_limit=None, max_budget=100, client=c)
        self.assertEqual((up["litellm_budget_table"]["tpm_limit"], up["litellm_budget_table"]["max_budget"]), (None, 100))
        switchyard.complete([{"role": "user", "content": "hi"}], models=[MODEL], tags=[name], client=as_vk)
        self.assertIn(name, [t["name"] for t in switchyard.list_tags(client=c)])
        switchyard.delete_tag(name, client=c)
        with self.assertRaises(switchyard.NotFoundError):
            switchyard.get_tag(name, client=c)
        # The daily activity (its days appear once the server's rollup has flushed).
        import datetime
        today = datetime.datetime.now(datetime.timezone.utc).date()
        span = ((today - datetime.timedelta(days=1)).isoformat(), (today + datetime.timedelta(days=1)).isoformat())
        for fn in (switchyard.user_daily_activity, switchyard.team_daily_activity, switchyard.tag_daily_activity):
            act = fn(*span, page_size=10, client=c)
            self.assertIsInstance(act["results"], list)
            self.assertIn("total_spend", act["metadata"])
        self.assertIsInstance(switchyard.tag_daily_activity(*span, tags=[name, "team:py"], client=c)["results"], list)
        with self.assertRaises(switchyard.BadRequestError) as cm:
            switchyard.user_daily_activity(*span, nope=1, client=c)
        self.assertIn("nope", cm.exception.message)
        with self.assertRaises(switchyard.PermissionDeniedError):
            switchyard.user_daily_activity(*span, client=as_vk)  # a virtual key of no user
        self.assertEqual(switchyard.user_daily_activity(*span, user_id=_uid("nobody-"), client=c)["results"], [])
