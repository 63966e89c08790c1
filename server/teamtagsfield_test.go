package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// teamMetadataTags returns the metadata.tags of the team answered in raw at path (a
// dot-separated walk of objects, or "[i]" of a list), nil when absent.
func teamMetadataTags(t *testing.T, raw string, path ...any) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	list, _ := v.(map[string]any)["metadata"].(map[string]any)["tags"].([]any)
	var out []string
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

// TestTeamTagsField: LiteLLM's /team/new and /team/update take a top-level tags list and
// keep it as the team's metadata.tags (as LiteLLM's management endpoints set the premium
// metadata fields), answered there by /team/info and /team/list; the team's keys' requests
// carry them; tags null on /team/update removes them (the other labels kept); not a list
// of tags, a 400 naming tags (TestTeamTagsWinOverMetadataTags: beside metadata.tags). The native
// /api/v1/teams takes and answers tags as the native keys API does.
func TestTeamTagsField(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	created := litellmTeamNew(t, s, `{"team_id":"search","tags":["team:search"],"metadata":{"owner":"ann"}}`)
	if !slices.Equal(created.Metadata["tags"].([]any), []any{"team:search"}) || created.Metadata["owner"] != "ann" {
		t.Fatalf("/team/new tags: metadata %v", created.Metadata)
	}
	info := do(t, s, "GET", "/team/info?team_id=search", testKey, "")
	if got := teamMetadataTags(t, info.raw, "team_info"); info.status != http.StatusOK || !slices.Equal(got, []string{"team:search"}) {
		t.Fatalf("/team/info: %d %s", info.status, info.raw)
	}
	list := do(t, s, "GET", "/team/list", testKey, "")
	if got := teamMetadataTags(t, list.raw, 0); list.status != http.StatusOK || !slices.Equal(got, []string{"team:search"}) {
		t.Fatalf("/team/list: %d %s", list.status, list.raw)
	}
	k := litellmGenerate(t, s, `{"team_id":"search","tags":["env:prod"]}`)
	if st, b := tagChat(t, hs.URL, k.Key, "", ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if rows := spendLogs(t, s, testKey, "api_key="+k.Token); len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"env:prod", "team:search"}) {
		t.Fatalf("the request's tags: %+v", rows)
	}

	// /team/update: tags replace the team's tags alone.
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","tags":["team:ads","team:search"]}`); r.status != http.StatusOK ||
		!slices.Equal(teamMetadataTags(t, r.raw, "data"), []string{"team:ads", "team:search"}) || !strings.Contains(r.raw, `"owner":"ann"`) {
		t.Fatalf("/team/update tags: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","tags":["a"],"metadata":{"tags":["a"],"owner":"bob"}}`); r.status != http.StatusOK ||
		!slices.Equal(teamMetadataTags(t, r.raw, "data"), []string{"a"}) || !strings.Contains(r.raw, `"owner":"bob"`) {
		t.Fatalf("/team/update tags beside the same metadata.tags: %d %s", r.status, r.raw)
	}
	wantParam(t, do(t, s, "POST", "/team/new", testKey, `{"tags":"team:x"}`), http.StatusBadRequest, "tags", "list of tags")
	wantParam(t, do(t, s, "POST", "/team/new", testKey, `{"tags":[1]}`), http.StatusBadRequest, "tags", "list of tags")
	wantParam(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","tags":["has space"]}`), http.StatusBadRequest, "tags", "the team's tags")
	many := make([]string, 16)
	for i := range many {
		many[i] = `"t` + string(rune('a'+i)) + `"`
	}
	// With the key's own env:prod, 17 tags: every request of the key would be refused.
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","tags":[`+strings.Join(many, ",")+`]}`); r.status < 400 || r.status >= 500 || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("/team/update 16 tags beside a key's own: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","tags":null}`); r.status != http.StatusOK ||
		teamMetadataTags(t, r.raw, "data") != nil || !strings.Contains(r.raw, `"owner":"bob"`) {
		t.Fatalf("/team/update tags null: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k.Key, "", ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if rows := spendLogs(t, s, testKey, "api_key="+k.Token); len(rows) != 2 || !slices.ContainsFunc(rows, func(r spendLogRowT) bool { return slices.Equal(r.RequestTags, []string{"env:prod"}) }) {
		t.Fatalf("the request's tags after tags null: %+v", rows)
	}

	// The native API.
	r := do(t, s, "POST", "/api/v1/teams", testKey, `{"team_id":"native","tags":["x","y"],"metadata":{"owner":"cy"}}`)
	if r.status != http.StatusCreated || !slices.Equal(teamMetadataTags(t, r.raw), []string{"x", "y"}) || !strings.Contains(r.raw, `"tags":["x","y"],`) {
		t.Fatalf("POST /api/v1/teams tags: %d %s", r.status, r.raw)
	}
	r = do(t, s, "GET", "/api/v1/teams/native", testKey, "")
	var nt team
	if json.Unmarshal([]byte(r.raw), &nt) != nil || !slices.Equal(nt.Tags, []string{"x", "y"}) {
		t.Fatalf("GET /api/v1/teams/native: %d %s", r.status, r.raw)
	}
	r = do(t, s, "PATCH", "/api/v1/teams/native", testKey, `{"tags":["z"]}`)
	if json.Unmarshal([]byte(r.raw), &nt) != nil || r.status != http.StatusOK || !slices.Equal(nt.Tags, []string{"z"}) || nt.Metadata["owner"] != "cy" {
		t.Fatalf("PATCH tags: %d %s", r.status, r.raw)
	}
	r = do(t, s, "PATCH", "/api/v1/teams/native", testKey, `{"tags":[]}`)
	nt = team{}
	if json.Unmarshal([]byte(r.raw), &nt) != nil || r.status != http.StatusOK || nt.Tags != nil || nt.Metadata["tags"] != nil || nt.Metadata["owner"] != "cy" {
		t.Fatalf("PATCH tags []: %d %s", r.status, r.raw)
	}
}

// TestTeamTagsWinOverMetadataTags: a team's top-level tags given beside a metadata.tags
// label of other tags win and replace the label (as LiteLLM's /team/new and /team/update
// set them into the metadata after it, and as /key/generate does here), on the LiteLLM
// routes and the native /api/v1/teams alike, creating and updating; the other labels are
// kept, and tags [] beside a label leave the team without tags. A label that is not a list
// of tags is replaced too; tags that are not tags are still refused naming tags.
func TestTeamTagsWinOverMetadataTags(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	created := litellmTeamNew(t, s, `{"team_id":"lt","tags":["a"],"metadata":{"tags":["b"],"owner":"ann"}}`)
	if !slices.Equal(created.Metadata["tags"].([]any), []any{"a"}) || created.Metadata["owner"] != "ann" {
		t.Fatalf("/team/new: metadata %v", created.Metadata)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"lt","tags":["c"],"metadata":{"tags":["d"],"owner":"bob"}}`); r.status != http.StatusOK ||
		!slices.Equal(teamMetadataTags(t, r.raw, "data"), []string{"c"}) || !strings.Contains(r.raw, `"owner":"bob"`) {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"lt","tags":["e"],"metadata":{"tags":"not a list"}}`); r.status != http.StatusOK ||
		!slices.Equal(teamMetadataTags(t, r.raw, "data"), []string{"e"}) {
		t.Fatalf("/team/update beside a label that is not a list: %d %s", r.status, r.raw)
	}
	info := do(t, s, "GET", "/team/info?team_id=lt", testKey, "")
	if got := teamMetadataTags(t, info.raw, "team_info"); info.status != http.StatusOK || !slices.Equal(got, []string{"e"}) {
		t.Fatalf("/team/info: %d %s", info.status, info.raw)
	}
	wantParam(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"lt","tags":["has space"],"metadata":{"tags":["ok"]}}`), http.StatusBadRequest, "tags", "the team's tags")

	var nt team
	r := do(t, s, "POST", "/api/v1/teams", testKey, `{"team_id":"nt","tags":["x"],"metadata":{"tags":["y"],"owner":"cy"}}`)
	if json.Unmarshal([]byte(r.raw), &nt) != nil || r.status != http.StatusCreated || !slices.Equal(nt.Tags, []string{"x"}) || !slices.Equal(teamMetadataTags(t, r.raw), []string{"x"}) || nt.Metadata["owner"] != "cy" {
		t.Fatalf("POST /api/v1/teams: %d %s", r.status, r.raw)
	}
	nt = team{}
	r = do(t, s, "PATCH", "/api/v1/teams/nt", testKey, `{"tags":["z"],"metadata":{"tags":["w"],"owner":"dee"}}`)
	if json.Unmarshal([]byte(r.raw), &nt) != nil || r.status != http.StatusOK || !slices.Equal(nt.Tags, []string{"z"}) || !slices.Equal(teamMetadataTags(t, r.raw), []string{"z"}) || nt.Metadata["owner"] != "dee" {
		t.Fatalf("PATCH: %d %s", r.status, r.raw)
	}
	nt = team{}
	r = do(t, s, "PATCH", "/api/v1/teams/nt", testKey, `{"tags":[],"metadata":{"tags":["w"],"owner":"dee"}}`)
	if json.Unmarshal([]byte(r.raw), &nt) != nil || r.status != http.StatusOK || nt.Tags != nil || nt.Metadata["tags"] != nil || nt.Metadata["owner"] != "dee" {
		t.Fatalf("PATCH tags [] beside metadata.tags: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/teams/nt", testKey, `{"tags":["ok"],"metadata":{"tags":["bad tag"]}}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"tags":["ok"]`) {
		t.Fatalf("PATCH beside a bad label: %d %s", r.status, r.raw)
	}
}
