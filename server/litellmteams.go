package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// LiteLLM's proxy manages teams through /team/new, /team/update, /team/info, /team/list,
// /team/delete, /team/block and /team/unblock; the routes here answer those requests for
// scripts and admin tools moved from it, as translations onto the teams of teams.go (the
// same records, checks and owner scoping as /api/v1/teams). LiteLLM's field names become
// Switchyard's on the way in and back on the way out, failures name LiteLLM's fields in its
// error envelope, and a LiteLLM field with no equivalent here (members, per-model limits)
// is refused with a 400 naming it unless it asks for nothing.

// litellmTeamFieldNames maps LiteLLM's team fields onto teamRequest's.
var litellmTeamFieldNames = map[string]string{
	"team_id":         "team_id",
	"team_alias":      "name",
	"models":          "models",
	"max_budget":      "max_budget_usd",
	"budget_duration": "budget_duration",
	"tpm_limit":       "tokens_per_minute",
	"rpm_limit":       "requests_per_minute",
	"metadata":        "metadata",
	"blocked":         "blocked",
	"organization_id": "organization_id",
	"tags":            "tags",
	// LiteLLM's team max_parallel_requests (its team_max_parallel_requests of a key).
	"max_parallel_requests": "max_parallel_requests",
	// LiteLLM's team router_settings (its key's when the key has none).
	"router_settings": "router_settings",
}

// litellmTeamNativeNames are teamRequest's field names and LiteLLM's, for the failures.
var litellmTeamNativeNames = []litellmName{
	{"max_budget_usd", "max_budget"}, {"name", "team_alias"}, {"tokens_per_minute", "tpm_limit"},
	{"requests_per_minute", "rpm_limit"}, {"budget_duration", "budget_duration"},
	{"models", "models"}, {"metadata", "metadata"}, {"team_id", "team_id"}, {"blocked", "blocked"},
	{"organization_id", "organization_id"}, {"tags", "tags"}, {"max_parallel_requests", "max_parallel_requests"},
	{"router_settings", "router_settings"},
}

// litellmTeam is a team as LiteLLM's /team/new, /team/update and /team/block describe one
// (/team/list adds its keys' objects: litellmListedTeam).
type litellmTeam struct {
	TeamID         string     `json:"team_id"`
	TeamAlias      *string    `json:"team_alias"`
	Models         []string   `json:"models" jsonschema:"description=Empty: every model"`
	MaxBudget      *float64   `json:"max_budget"`
	BudgetDuration *string    `json:"budget_duration"`
	BudgetResetAt  *time.Time `json:"budget_reset_at"`
	TPMLimit       *int64     `json:"tpm_limit"`
	RPMLimit       *int       `json:"rpm_limit"`
	// MaxParallelRequests is the team's bound on its keys' requests in flight.
	MaxParallelRequests *int                    `json:"max_parallel_requests" jsonschema:"description=Requests all the team's keys together may have in flight at once; null for no bound"`
	Metadata            map[string]any          `json:"metadata"`
	Blocked             bool                    `json:"blocked"`
	Spend               float64                 `json:"spend" jsonschema:"description=USD the team's keys spent (in the current period with budget_duration)"`
	CreatedAt           time.Time               `json:"created_at"`
	Keys                []string                `json:"keys" jsonschema:"description=The tokens (vk_…) of the team's virtual keys"`
	MembersWithRoles    []litellmMemberWithRole `json:"members_with_roles" jsonschema:"description=The team's members (POST /team/member_add) with their roles"`
	OrganizationID      *string                 `json:"organization_id" jsonschema:"description=The organization the team is in; null for none"`
	// RouterSettings are the team's retries, timeout and fallbacks.
	RouterSettings *routerSettings `json:"router_settings" jsonschema:"description=The team's router settings for its keys without their own ({} for none)"`
}

// litellmListedTeam is a team of GET /team/list as LiteLLM lists one: its keys are the key
// objects (as /key/info describes them), beside its team_memberships.
type litellmListedTeam struct {
	litellmTeam
	Keys            []litellmKeyInfo        `json:"keys" jsonschema:"description=The team's virtual keys"`
	TeamMemberships []litellmTeamMembership `json:"team_memberships" jsonschema:"description=The team's memberships with each member's spend and max_budget_in_team"`
}

// litellmTeamInfo is the answer of GET /team/info.
type litellmTeamInfo struct {
	TeamID          string                  `json:"team_id"`
	TeamInfo        litellmTeam             `json:"team_info"`
	Keys            []litellmKeyInfo        `json:"keys" jsonschema:"description=The team's virtual keys"`
	TeamMemberships []litellmTeamMembership `json:"team_memberships" jsonschema:"description=The team's memberships with each member's spend and max_budget_in_team"`
}

// litellmTeamUpdated is the answer of POST /team/update.
type litellmTeamUpdated struct {
	TeamID string      `json:"team_id"`
	Data   litellmTeam `json:"data"`
}

// litellmTeamRef is the body of POST /team/block and /team/unblock.
type litellmTeamRef struct {
	TeamID string `json:"team_id" jsonschema:"description=The team's id"`
}

// litellmTeamDeleteRequest is the body of POST /team/delete.
type litellmTeamDeleteRequest struct {
	TeamIDs []string `json:"team_ids" jsonschema:"description=The teams to delete: all or none are found"`
}

// litellmTeamDeletion is the answer of POST /team/delete.
type litellmTeamDeletion struct {
	DeletedTeams []string `json:"deleted_teams" jsonschema:"description=The team_ids given"`
	DeletedKeys  []string `json:"deleted_keys" jsonschema:"description=The tokens of the teams' virtual keys: deleted with them as LiteLLM deletes a team's keys"`
}

// litellmTeamRequest documents LiteLLM's team request body (POST /team/new, and with
// team_id POST /team/update); other LiteLLM fields are refused when they ask for something.
type litellmTeamRequest struct {
	TeamID         string   `json:"team_id,omitempty" jsonschema:"description=The team's id: on /team/new optional (one is made); on /team/update the team to change"`
	TeamAlias      *string  `json:"team_alias,omitempty" jsonschema:"description=A label for the team"`
	Models         []string `json:"models,omitempty" jsonschema:"description=The models the team's keys may call; empty for every model"`
	MaxBudget      *float64 `json:"max_budget,omitempty" jsonschema:"description=USD all the team's keys together may spend (per budget_duration); null for no bound"`
	BudgetDuration *string  `json:"budget_duration,omitempty" jsonschema:"description=Period after which the team's spend starts again from zero (30d)"`
	TPMLimit       *int64   `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute of all the team's keys"`
	RPMLimit       *int     `json:"rpm_limit,omitempty" jsonschema:"description=Requests per minute of all the team's keys"`
	// MaxParallelRequests is LiteLLM's team max_parallel_requests.
	MaxParallelRequests *int           `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests all the team's keys together may have in flight at once (each key's own max_parallel_requests still applying); one more is a 429 (Rate limit exceeded for team: … Limit type: max_parallel_requests …); null for no bound (0 is refused: LiteLLM's 0 blocks the team)"`
	Metadata            map[string]any `json:"metadata,omitempty" jsonschema:"description=Labels kept with the team (at most 16 KiB of JSON)"`
	Blocked             *bool          `json:"blocked,omitempty" jsonschema:"description=true: every key of the team refuses every request"`
	OrganizationID      *string        `json:"organization_id,omitempty" jsonschema:"description=The organization the team is in (its models bound the team's; its account holds the team's keys' spend too); null on /team/update takes the team out"`
	Tags                []string       `json:"tags,omitempty" jsonschema:"description=The team's tags (LiteLLM's team-level tags\\, kept as metadata.tags and answered there): every request of the team's keys carries them after the key's own\\, for tag routing\\, tag budgets and spend per tag; beside metadata with a tags label they win (the label is replaced by them\\, as on LiteLLM); null on /team/update removes them"`
	// RouterSettings are LiteLLM's team router_settings (routersettings.go).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The team's router settings (LiteLLM's team router_settings): num_retries (or max_retries) and timeout (seconds) and fallbacks ([{gpt-4o: [claude-sonnet-4-5]}]) and context_window_fallbacks for every request of a key of the team that has no router_settings of its own; null or {} on /team/update removes them"`
}

// litellmTeamPath reports the team paths answered in LiteLLM's error envelope.
func litellmTeamPath(path string) bool { return strings.HasPrefix(path, "/team/") }

// litellmTeamRoutes registers LiteLLM's team management routes.
func (s *Server) litellmTeamRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	notFound := "no team of this key has the team_id given"
	s.Handle(Route{Method: "POST", Path: "/team/new", Summary: "LiteLLM's team creation (as POST /api/v1/teams): a budget and rate and model list shared by every key given its team_id",
		Tags: tags, Request: litellmTeamRequest{}, Response: litellmTeam{}, VirtualKeys: true,
		Errors: map[int]string{400: "a bad or unsupported field: the message names it", 403: scoped + ", or a virtual key not an org_admin's of organization_id, or giving a field or limit an org_admin may not (the message names it)", 409: "team_id is another team's"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			c, err := orgCallerOf(r)
			if err != nil {
				return err
			}
			var org string
			if c.virtual {
				if org, err = orgAdminFields("/team/new", fields, orgAdminTeamFields); err != nil {
					return err
				}
			}
			body, block, err := litellmTeamFields(fields, false)
			if err != nil {
				return err
			}
			var req teamRequest
			if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
				return litellmTeamNames(err)
			}
			req.budgetBlock = block == budgetBlockSet
			if c.virtual {
				req.authorize = orgAdminCreation{caller: c, owner: owner(r), org: org, maxBudget: req.MaxBudgetUSD, tpm: req.TokensPerMinute, rpm: req.RequestsPerMinute}.check
			}
			t, err := s.createTeam(r.Context(), g, owner(r), req)
			if err != nil {
				return litellmTeamNames(err)
			}
			writeJSON(w, http.StatusOK, litellmTeamOf(*t))
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/team/update", Summary: "LiteLLM's team update: changes the fields given of a team (as PATCH /api/v1/teams/{team_id}); null removes a limit",
		Tags: tags, Request: litellmTeamRequest{}, Response: litellmTeamUpdated{},
		Errors: map[int]string{400: "team_id missing or a bad or unsupported field: the message names it", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, err := litellmBody(r)
			if err != nil {
				return err
			}
			var id string
			if raw, ok := fields["team_id"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
				return paramError("team_id", "team_id: required, a string: the team to change")
			}
			delete(fields, "team_id")
			body, block, err := litellmTeamFields(fields, true)
			if err != nil {
				return err
			}
			// Decided against the stored team, inside the update's transaction.
			adjust := func(req *teamRequest, prev team) {
				switch {
				case block == budgetBlockSet:
					req.budgetBlock = true
				case block == budgetBlockLift && prev.Blocked && prev.BudgetBlock && req.budgetBlock:
					// req.budgetBlock is prev's unless the update says blocked outright.
					req.Blocked, req.budgetBlock = false, false // the budget of nothing, replaced
				}
			}
			t, err := s.updateTeam(r.Context(), g, owner(r), id, body, adjust)
			if err != nil {
				return litellmTeamNames(err)
			}
			out := litellmTeamUpdated{TeamID: id, Data: litellmTeamOf(*t)}
			s.withMembers(r.Context(), owner(r), &out.Data)
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/team/info", Summary: "LiteLLM's team info: a team with its spend and its keys",
		Tags: tags, Response: litellmTeamInfo{}, Query: []QueryParam{{Name: "team_id", Description: "The team's id (required)"}},
		Errors: map[int]string{400: "team_id missing", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.URL.Query().Get("team_id")
			if id == "" {
				return paramError("team_id", "team_id: required: GET /team/info?team_id=…")
			}
			t, err := s.teamInfo(r.Context(), owner(r), id)
			if err != nil {
				return err
			}
			keys, err := s.listKeys(r.Context(), owner(r))
			if err != nil {
				return err
			}
			out := litellmTeamInfo{TeamID: id, TeamInfo: litellmTeamOf(*t), Keys: []litellmKeyInfo{}}
			out.TeamMemberships = s.withMembers(r.Context(), owner(r), &out.TeamInfo).memberships
			for _, k := range keys {
				if k.TeamID == id {
					out.Keys = append(out.Keys, litellmInfoOf(k, map[string]string{id: t.OrganizationID}))
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/team/list", Summary: "LiteLLM's team list: the teams of this key with their spend and keys",
		Tags: tags, Response: []litellmListedTeam{}, Errors: map[int]string{400: "an unknown query parameter: the message names it", 403: scoped},
		Query: []QueryParam{{Name: "organization_id", Description: "Only the teams of this organization (/organization/new)"},
			{Name: "user_id", Description: "Only the teams this user is a member of (/team/member_add)"}}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			for name, vs := range q {
				if name != "organization_id" && name != "user_id" && slices.ContainsFunc(vs, func(v string) bool { return v != "" }) {
					return paramError(name, "unknown query parameter %s: /team/list takes organization_id and user_id", name)
				}
			}
			ts, err := s.listTeams(r.Context(), owner(r))
			if err != nil {
				return err
			}
			// LiteLLM's filters: a filter left out would list every team of the key.
			if org := q.Get("organization_id"); org != "" {
				ts = slices.DeleteFunc(ts, func(t team) bool { return t.OrganizationID != org })
			}
			if user := q.Get("user_id"); user != "" {
				in, err := teamsOfUser(r.Context(), s.cfg.Store, owner(r), user)
				if err != nil {
					return err
				}
				ts = slices.DeleteFunc(ts, func(t team) bool { return !slices.Contains(in, t.TeamID) })
			}
			keys, err := s.listKeys(r.Context(), owner(r))
			if err != nil {
				return err
			}
			byTeam, teamOrgs := map[string][]litellmKeyInfo{}, map[string]string{}
			for _, t := range ts {
				teamOrgs[t.TeamID] = t.OrganizationID
			}
			for _, k := range keys {
				if k.TeamID != "" {
					byTeam[k.TeamID] = append(byTeam[k.TeamID], litellmInfoOf(k, teamOrgs))
				}
			}
			out := make([]litellmListedTeam, 0, len(ts))
			for _, t := range ts {
				lt := litellmListedTeam{litellmTeam: litellmTeamOf(t), Keys: byTeam[t.TeamID]}
				lt.TeamMemberships = s.withMembers(r.Context(), owner(r), &lt.litellmTeam).memberships
				if lt.Keys == nil {
					lt.Keys = []litellmKeyInfo{}
				}
				out = append(out, lt)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/team/delete", Summary: "LiteLLM's team deletion: deletes the teams and their virtual keys (revoked at once on every replica); all or none",
		Tags: tags, Request: litellmTeamDeleteRequest{}, Response: litellmTeamDeletion{},
		Errors: map[int]string{400: "team_ids missing or empty", 403: scoped, 404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmTeamDeleteRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.TeamIDs) == 0 {
				return paramError("team_ids", "team_ids: give the ids of the teams to delete")
			}
			if len(req.TeamIDs) > MaxTeamsPerOwner {
				return paramError("team_ids", "team_ids: at most %d teams at once, got %d", MaxTeamsPerOwner, len(req.TeamIDs))
			}
			ids := slices.Compact(slices.Sorted(slices.Values(req.TeamIDs)))
			keys, err := s.deleteTeams(r.Context(), owner(r), ids)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmTeamDeletion{DeletedTeams: req.TeamIDs, DeletedKeys: keys})
			return nil
		})
	block := func(blocked bool) HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			var req litellmTeamRef
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.TeamID == "" {
				return paramError("team_id", "team_id: required: the team to block or unblock")
			}
			body, _ := json.Marshal(map[string]bool{"blocked": blocked})
			t, err := s.updateTeam(r.Context(), g, owner(r), req.TeamID, body)
			if err != nil {
				return litellmTeamNames(err)
			}
			out := litellmTeamOf(*t)
			s.withMembers(r.Context(), owner(r), &out)
			writeJSON(w, http.StatusOK, out)
			return nil
		}
	}
	blockErrors := map[int]string{400: "team_id missing or a field besides team_id", 403: scoped, 404: notFound}
	s.Handle(Route{Method: "POST", Path: "/team/block", Summary: "LiteLLM's team block: every key of the team refuses every request until unblocked; the team's limits and spend are kept",
		Tags: tags, Request: litellmTeamRef{}, Response: litellmTeam{}, Errors: blockErrors}, block(true))
	s.Handle(Route{Method: "POST", Path: "/team/unblock", Summary: "LiteLLM's team unblock: lifts a team's block",
		Tags: tags, Request: litellmTeamRef{}, Response: litellmTeam{}, Errors: blockErrors}, block(false))
}

// budgetBlockChange is what a LiteLLM team request's max_budget does to a block that is a
// budget of nothing (litellmTeamFields).
type budgetBlockChange int

const (
	budgetBlockKeep budgetBlockChange = iota // no max_budget given
	budgetBlockSet                           // max_budget 0: the team is blocked
	budgetBlockLift                          // another max_budget, or null, on update: lifts it
)

// litellmTeamFields turns LiteLLM's team fields into a body of teamRequest's. A null
// field is "not given" on /team/new; on /team/update it removes the limit or label
// (models null is refused: [] allows every model). max_budget 0 blocks the team, as it
// does a virtual key (LiteLLM's budget of nothing, which refuses every request): the team
// remembers the block as its budget_block, which another max_budget lifts on
// /team/update; a team blocked by /team/block or blocked true stays blocked until
// unblocked. tpm_limit and rpm_limit 0 are refused, as they are for a key.
func litellmTeamFields(fields map[string]json.RawMessage, update bool) (json.RawMessage, budgetBlockChange, error) {
	native := map[string]json.RawMessage{}
	block := budgetBlockKeep
	var blocked *bool
	for name, raw := range fields {
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if name == "budget_duration" {
			var v string
			if json.Unmarshal(raw, &v) == nil && (v == "" || strings.EqualFold(v, "none") || strings.EqualFold(v, "null")) {
				raw, isNull = json.RawMessage("null"), true
			}
		}
		var number float64
		isZero := !isNull && json.Unmarshal(raw, &number) == nil && number == 0
		to := litellmTeamFieldNames[name]
		switch {
		case to == "" && emptyJSON(raw):
			// members_with_roles [], organization_id null, …: LiteLLM's clients' defaults.
		case name == "members_with_roles" || name == "members":
			return nil, block, paramError(name, "%s: add members after making the team, with POST /team/member_add", name)
		case to == "":
			return nil, block, paramError(name, "%s: Switchyard's teams have no %s (a team is a shared budget, rate and model list for virtual keys; keep labels in metadata)", name, name)
		case name == "max_budget" && isZero:
			native["max_budget_usd"], native["blocked"] = json.RawMessage(`0`), json.RawMessage(`true`)
			block = budgetBlockSet
		case name == "max_budget" && update:
			block = budgetBlockLift
			if isNull {
				native[to] = json.RawMessage(`0`)
			} else {
				native[to] = raw
			}
		case name == "blocked" && !isNull:
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				return nil, block, paramError(name, "blocked: must be true or false, got %s", raw)
			}
			blocked = &v
			native[to] = raw
		case isZero && (name == "rpm_limit" || name == "tpm_limit" || name == "max_parallel_requests"):
			return nil, block, paramError(name, "%s: 0 blocks every request on LiteLLM, which Switchyard's limit cannot express: to block the team send max_budget 0 or POST /team/block; null for no bound", name)
		case name == "tags" && !isNull && !isStringList(raw):
			return nil, block, paramError(name, "tags: must be a list of tags (strings), got %s", raw)
		case name == "router_settings" && isNull && update:
			native[to] = json.RawMessage(`null`) // the team's router settings removed
		case name == "tags" && isNull && update:
			native[to] = json.RawMessage(`null`) // the team's tags removed
		case name == "models" && isNull && update:
			return nil, block, paramError(name, "models: must be a list of models ([] allows every model), got null")
		case name == "models" && litellmAllModels(raw):
			native[to] = json.RawMessage(`[]`)
		case !isNull:
			native[to] = raw
		case !update:
		case name == "team_alias" || name == "budget_duration" || name == "organization_id":
			native[to] = json.RawMessage(`""`)
		case name == "blocked":
		case name == "metadata":
			native[to] = json.RawMessage(`null`)
		default:
			native[to] = json.RawMessage(`0`)
		}
	}
	if block == budgetBlockSet && blocked != nil && !*blocked {
		return nil, block, paramError("blocked", "blocked: false contradicts max_budget 0 (a budget of nothing blocks the team)")
	}
	body, err := json.Marshal(native)
	return body, block, err
}

// isStringList reports whether raw is a JSON list of strings.
func isStringList(raw json.RawMessage) bool {
	var list []string
	return json.Unmarshal(raw, &list) == nil && list != nil
}

// litellmTeamNames rewrites a failure of the team checks to name LiteLLM's fields.
func litellmTeamNames(err error) error { return litellmRenamed(err, litellmTeamNativeNames) }

// litellmTeamOf describes t in LiteLLM's fields.
func litellmTeamOf(t team) litellmTeam {
	out := litellmTeam{TeamID: t.TeamID, Models: t.Models, Metadata: t.Metadata, Blocked: t.Blocked, Spend: t.Spend.CostUSD,
		CreatedAt: t.CreatedAt, Keys: t.KeyIDs, MembersWithRoles: []litellmMemberWithRole{}}
	if out.Models == nil {
		out.Models = []string{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if out.Keys == nil {
		out.Keys = []string{}
	}
	out.RouterSettings = t.RouterSettings
	if out.RouterSettings == nil {
		out.RouterSettings = &routerSettings{}
	}
	if t.Name != "" {
		out.TeamAlias = &t.Name
	}
	if t.OrganizationID != "" {
		out.OrganizationID = &t.OrganizationID
	}
	if t.Blocked && t.BudgetBlock {
		out.MaxBudget = new(float64) // a budget of nothing: LiteLLM's max_budget 0
	} else if t.MaxBudgetUSD > 0 {
		out.MaxBudget = &t.MaxBudgetUSD
	}
	if t.TokensPerMinute > 0 {
		out.TPMLimit = &t.TokensPerMinute
	}
	if t.RequestsPerMinute > 0 {
		out.RPMLimit = &t.RequestsPerMinute
	}
	if t.MaxParallelRequests > 0 {
		out.MaxParallelRequests = &t.MaxParallelRequests
	}
	if t.BudgetDuration != "" {
		out.BudgetDuration = &t.BudgetDuration
		if d, err := parseBudgetDuration(t.BudgetDuration); err == nil && t.Spend.PeriodStart != nil {
			reset := t.Spend.PeriodStart.Add(d)
			out.BudgetResetAt = &reset
		}
	}
	return out
}

// teamRefusal is a team account's refusal in LiteLLM's words (which name the team).
func teamRefusal(e *completions.BudgetExceededError) string {
	return accountRefusal("Team", "/team/unblock", e)
}

// accountRefusal is LiteLLM's refusal by the account of an entity ("Team",
// "Organization", "Tag") named e.Name: blocked (unblock names the route that lifts it), or
// spent ("Budget has been exceeded! Team=… Current cost: …, Max budget: …"), with the
// bound that refused when it was not the cost (the spend gate's projection of requests in
// flight, tokens, calls).
func accountRefusal(entity, unblock string, e *completions.BudgetExceededError) string {
	if e.Limits.Blocked {
		return entity + "=" + e.Name + " is blocked. Update via `" + unblock + "` if you're an admin."
	}
	msg := "Budget has been exceeded! " + entity + "=" + e.Name + " Current cost: " + pythonFloat(e.Used.CostUSD) + ", Max budget: " + pythonFloat(e.Limits.MaxCostUSD)
	if !(e.Limits.MaxCostUSD > 0 && e.Used.CostUSD >= e.Limits.MaxCostUSD) {
		msg += " (" + strings.TrimPrefix(e.Reason.Error(), completions.ErrBudgetExceeded.Error()+": ") + ")"
	}
	return msg
}

// pythonFloat formats f as Python's str(float) does for the values a budget holds: the
// shortest decimal, with .0 when whole.
func pythonFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
