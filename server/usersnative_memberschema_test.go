package server

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"
)

// TestTeamMemberRequestSchemaRequiresUserID: the OpenAPI document's body of POST
// /api/v1/teams/{team_id}/members lists user_id as required (the route refuses a member
// without one), while the PATCH of a membership requires nothing.
func TestTeamMemberRequestSchemaRequiresUserID(t *testing.T) {
	hs, _ := keysServer(t, nil, 0)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Required   []string                   `json:"required"`
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	post := doc.Paths["/api/v1/teams/{team_id}/members"]["post"].RequestBody.Content["application/json"].Schema
	if !slices.Contains(post.Required, "user_id") || post.Properties["user_id"] == nil {
		t.Errorf("POST members body: required %v, properties %v", post.Required, slices.Sorted(maps.Keys(post.Properties)))
	}
	patch := doc.Paths["/api/v1/teams/{team_id}/members/{user_id}"]["patch"].RequestBody.Content["application/json"].Schema
	if len(patch.Required) != 0 || patch.Properties["role"] == nil {
		t.Errorf("PATCH membership body: required %v, properties %v", patch.Required, slices.Sorted(maps.Keys(patch.Properties)))
	}
}
