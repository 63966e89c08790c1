package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Teams group virtual keys under one account, as LiteLLM's teams do: a team's models bound
// what its keys may call, its max_budget_usd (per budget_duration) is one account every key
// of the team spends from, its rates are shared by all its keys, and a blocked team's keys
// are all refused. A key's own limits still apply inside the team's: a request is refused
// when either account is spent (completions.Budget.SetParent).
//
// Records: the team's description in store.Teams under "<owner>/<team_id>" and its account
// in store.Budgets under teamBudgetID; a key of the team names it in its description and in
// its shared-key scope document, so every replica on the store resolves the key inside the
// one team account. Teams are the calling key's, as its virtual keys are.

// Bounds of a team.
const (
	// MaxTeamsPerOwner bounds the teams one key may have.
	MaxTeamsPerOwner = 1000
	// maxTeamIDLength bounds a team's id.
	maxTeamIDLength = 128
)

// teamRequest is the body of POST /api/v1/teams (and, fields given, of PATCH).
type teamRequest struct {
	TeamID            string   `json:"team_id,omitempty" jsonschema:"description=The team's id (at most 128 letters or digits or . _ - :); absent: one is made (team_ and 16 hex digits)"`
	Name              string   `json:"name,omitempty" jsonschema:"description=A label for the team (at most 256 characters): LiteLLM's team_alias"`
	Models            []string `json:"models,omitempty" jsonschema:"description=The models the team's keys may call (as models of POST /api/v1/keys); empty allows every model"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty" jsonschema:"description=USD all the team's keys together may spend (per budget_duration when set); 0 for no bound"`
	BudgetDuration    string   `json:"budget_duration,omitempty" jsonschema:"description=Period after which the team's spend starts again from zero (30d); empty for all time"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty" jsonschema:"description=POST requests per minute all the team's keys together may make; 0 for no bound"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty" jsonschema:"description=Tokens per minute all the team's keys' answers together may use; 0 for no bound"`
	// MaxParallelRequests bounds the team's keys' requests in flight together (LiteLLM's
	// team max_parallel_requests).
	MaxParallelRequests int            `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests all the team's keys together may have in flight at once (LiteLLM's team max_parallel_requests; counted as a key's max_parallel_requests is\\, each key's own bound still applying); one more is a 429 naming the team; 0 for no bound (at most 100000)"`
	Metadata            map[string]any `json:"metadata,omitempty" jsonschema:"description=Labels kept with the team (a JSON object of at most 16 KiB)"`
	Blocked             bool           `json:"blocked,omitempty" jsonschema:"description=true: every key of the team refuses every request until set false"`
	OrganizationID      string         `json:"organization_id,omitempty" jsonschema:"description=The organization the team is in (POST /organization/new makes one): its models bound the team's and its account holds the team's keys' spend too; empty for none"`
	// Tags are the team's tags, kept as metadata.tags (where LiteLLM's team-level tags are).
	Tags []string `json:"tags,omitempty" jsonschema:"description=The team's tags (LiteLLM's team-level tags\\, kept as metadata.tags): every request of the team's keys carries them after the key's own\\, for tag routing\\, tag budgets and spend per tag (at most 16 with a key's and the request's own); beside metadata with a tags label they win (the label is replaced by them); on PATCH they replace the team's tags alone (its other labels kept)\\, [] or null removes them"`
	// RouterSettings are the team's retries, timeout and fallbacks (routersettings.go).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The team's router settings (LiteLLM's team router_settings): num_retries and timeout and fallbacks applied to every request of a key of the team that has no router_settings of its own (a key's replace the team's whole); on PATCH they replace the team's whole\\, {} or null removes them"`
	// budgetBlock marks Blocked as LiteLLM's max_budget 0 (set by its routes only; blocked
	// given outright clears it), as a virtual key's budgetBlock.
	budgetBlock bool
	// authorize, when not nil, is checked first in the transaction that makes the team
	// (an org_admin's virtual key's right to make it: orgAdminCreation).
	authorize func(ctx context.Context, rd store.Reader) error
}

// team describes a team.
type team struct {
	TeamID            string   `json:"team_id"`
	Object            string   `json:"object" jsonschema:"description=Always team"`
	Name              string   `json:"name,omitempty"`
	Models            []string `json:"models,omitempty"`
	MaxBudgetUSD      float64  `json:"max_budget_usd,omitempty"`
	BudgetDuration    string   `json:"budget_duration,omitempty"`
	RequestsPerMinute int      `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64    `json:"tokens_per_minute,omitempty"`
	// MaxParallelRequests is the team's bound on its keys' requests in flight (0: none).
	MaxParallelRequests int            `json:"max_parallel_requests,omitempty" jsonschema:"description=Requests all the team's keys together may have in flight at once; absent for no bound"`
	Metadata            map[string]any `json:"metadata,omitempty"`
	Blocked             bool           `json:"blocked,omitempty"`
	BudgetBlock         bool           `json:"budget_block,omitempty" jsonschema:"description=The block is LiteLLM's max_budget 0 (a budget of nothing): a new max_budget on /team/update lifts it"`
	OrganizationID      string         `json:"organization_id,omitempty" jsonschema:"description=The organization the team is in; absent for none"`
	// RouterSettings are the team's retries, timeout and fallbacks (absent: the server's).
	RouterSettings *routerSettings `json:"router_settings,omitempty" jsonschema:"description=The team's router settings for its keys without their own; absent for none"`
	// Tags are the team's tags: its metadata.tags, answered apart and not stored apart.
	Tags      []string  `json:"tags,omitempty" jsonschema:"description=The team's tags (its metadata.tags): every request of its keys carries them; absent for none"`
	CreatedAt time.Time `json:"created_at"`
	Spend     keySpend  `json:"spend" jsonschema:"description=What the team's keys together used (in the current period with budget_duration)"`
	KeyIDs    []string  `json:"key_ids" jsonschema:"description=The ids of the team's virtual keys"`
}

// storedTeam is a team's record in store.Teams.
type storedTeam struct {
	team
	Owner string `json:"owner"`
}

// teamList is the answer of GET /api/v1/teams.
type teamList struct {
	Object string `json:"object" jsonschema:"description=Always list"`
	Data   []team `json:"data" jsonschema:"description=The teams of this key oldest first"`
}

// teamDeletion is the answer of DELETE /api/v1/teams/{team_id}.
type teamDeletion struct {
	TeamID      string   `json:"team_id"`
	Object      string   `json:"object" jsonschema:"description=Always team"`
	Deleted     bool     `json:"deleted" jsonschema:"description=Always true (a failed delete is an error)"`
	DeletedKeys []string `json:"deleted_keys" jsonschema:"description=The team's virtual keys: revoked with it (as LiteLLM's /team/delete deletes a team's keys)"`
}

// teamBudgetID is the store.Budgets id of owner's team id.
func teamBudgetID(owner, id string) string { return "team/" + owner + "/" + id }

// teamRoutes registers the native team endpoints; g checks the models a team names.
func (s *Server) teamRoutes(g *completions.Gateway) {
	tags := []string{"Teams"}
	notFound := "no team of this key has this id"
	s.Handle(Route{Method: "POST", Path: "/api/v1/teams", Summary: "Create a team: one budget and rate and model list shared by every virtual key given its team_id",
		Tags: tags, Request: teamRequest{}, Response: team{}, Status: http.StatusCreated,
		Errors: map[int]string{
			403: "the calling key is itself limited in scope (a virtual or job key)",
			409: "a team of this key has this team_id already or this key has " + fmt.Sprint(MaxTeamsPerOwner) + " teams",
			422: "validation error: the message names the field",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req teamRequest
			if err := decodeJSON(r, &req, decodeOptions{}); err != nil {
				return err
			}
			t, err := s.createTeam(r.Context(), g, owner(r), req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusCreated, t)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/teams", Summary: "The teams of this key with their spend and keys",
		Tags: tags, Response: teamList{}},
		func(w http.ResponseWriter, r *http.Request) error {
			ts, err := s.listTeams(r.Context(), owner(r))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, teamList{Object: "list", Data: ts})
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/teams/{team_id}", Summary: "One team of this key with its spend and keys",
		Tags: tags, Response: team{}, Errors: map[int]string{404: notFound}},
		getOwned("team_id", s.teamInfo))
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/teams/{team_id}", Summary: "Change a team's name or limits or block (the fields given); its spend and keys are kept",
		Tags: tags, Request: teamRequest{}, Response: team{}, Errors: map[int]string{
			404: notFound,
			422: "validation error: the message names the field",
		}},
		patchOwned("team_id", func(ctx context.Context, owner, id string) error {
			_, err := storedTeamOf(ctx, s.cfg.Store, owner, id)
			return err
		}, func(ctx context.Context, owner, id string, body json.RawMessage) (*team, error) {
			return s.updateTeam(ctx, g, owner, id, body)
		}))
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/teams/{team_id}", Summary: "Delete a team and revoke its virtual keys at once on every replica (as LiteLLM's /team/delete)",
		Tags: tags, Response: teamDeletion{}, Errors: map[int]string{404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("team_id")
			keys, err := s.deleteTeams(r.Context(), owner(r), []string{id})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, teamDeletion{TeamID: id, Object: "team", Deleted: true, DeletedKeys: keys})
			return nil
		})
}

// storedTeamOf reads owner's team id through rd, or answers 404 naming team_id.
func storedTeamOf(ctx context.Context, rd store.Reader, owner, id string) (storedTeam, error) {
	if id == "" {
		return storedTeam{}, paramNotFound("team_id", "team_id: no team given")
	}
	return ownedRecord[storedTeam](ctx, rd, store.Teams, owner, id, "team", func() error {
		return paramNotFound("team_id", "team_id: no team %q of this key (POST /api/v1/teams or /team/new makes one)", id)
	})
}

// checkTeamID refuses a team id that is too long or holds anything but letters, digits
// and . _ - : (it is part of store keys and URLs).
func checkTeamID(id string) error {
	if len(id) > maxTeamIDLength {
		return Validation(http.StatusUnprocessableEntity, "team_id: at most %d characters, got %d", maxTeamIDLength, len(id))
	}
	for _, c := range id {
		if !(c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-:", c))) {
			return Validation(http.StatusUnprocessableEntity, "team_id: letters, digits and . _ - : only, got %q", id)
		}
	}
	return nil
}

// checkNewTeamID is checkTeamID for the id of a team being made, which must also not be
// "." or "..": /api/v1/teams/{team_id} and its members' routes could not reach it (as
// users' and end users' ids). A team of such an id an earlier build made stays where it
// is: LiteLLM's team routes (the id in the query or body) and keys' team_id reach it.
func checkNewTeamID(id string) error {
	if err := checkTeamID(id); err != nil {
		return err
	}
	if e := unreachableIDProblem("team_id", id, "a team's", http.StatusUnprocessableEntity); e != nil {
		return e
	}
	return nil
}

// checkTeamRequest validates req (its checks are a key's, on the fields a team has) and
// returns the team account's limits.
func checkTeamRequest(g *completions.Gateway, req teamRequest, checkModels bool) (completions.BudgetLimits, error) {
	if _, err := teamTags(req.Metadata); err != nil {
		return completions.BudgetLimits{}, err
	}
	l, err := checkKeyRequest(g, keyRequest{Name: req.Name, Models: req.Models, MaxBudgetUSD: req.MaxBudgetUSD, BudgetDuration: req.BudgetDuration,
		RequestsPerMinute: req.RequestsPerMinute, TokensPerMinute: req.TokensPerMinute, Metadata: req.Metadata, Blocked: req.Blocked,
		MaxParallelRequests: req.MaxParallelRequests, RouterSettings: req.RouterSettings}, time.Now(), checkModels)
	if err != nil {
		return l, err
	}
	return l, nil
}

// applyTo sets t's fields to req's (limits is req checked).
func (req teamRequest) applyTo(t *team, limits completions.BudgetLimits) {
	t.Name, t.Models, t.MaxBudgetUSD, t.BudgetDuration = req.Name, limits.AllowedModels, req.MaxBudgetUSD, req.BudgetDuration
	t.RequestsPerMinute, t.TokensPerMinute, t.Metadata, t.Blocked = req.RequestsPerMinute, req.TokensPerMinute, req.Metadata, req.Blocked
	t.MaxParallelRequests = req.MaxParallelRequests
	t.RouterSettings = req.RouterSettings.normalized()
	t.BudgetBlock = req.Blocked && req.budgetBlock
	t.OrganizationID = req.OrganizationID
	if len(t.Models) == 0 {
		t.Models = nil
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	t.Tags, _ = teamTags(t.Metadata)
}

// putTeam writes owner's team t through tx, its tags kept only as its metadata.tags.
func putTeam(ctx context.Context, tx store.Tx, owner string, t team) error {
	t.Tags = nil
	return store.PutJSON(ctx, tx, store.Teams, owner+"/"+t.TeamID, storedTeam{team: t, Owner: owner})
}

// createTeam validates req and stores the team and its account in one transaction.
func (s *Server) createTeam(ctx context.Context, g *completions.Gateway, owner string, req teamRequest) (*team, error) {
	if req.TeamID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("server: making a team id: %w", err)
		}
		req.TeamID = "team_" + hex.EncodeToString(b[:])
	}
	if err := checkNewTeamID(req.TeamID); err != nil {
		return nil, err
	}
	if req.Tags != nil {
		if err := req.linkTags(); err != nil {
			return nil, err
		}
	}
	limits, err := checkTeamRequest(g, req, true)
	if err != nil {
		return nil, err
	}
	t := team{TeamID: req.TeamID, Object: "team", CreatedAt: time.Now().UTC()}
	req.applyTo(&t, limits)
	err = s.cfg.Store.UpdateLocked(ctx, accountLocks(teamBudgetID(owner, t.TeamID)), func(tx store.Tx) error {
		if req.authorize != nil {
			if err := req.authorize(ctx, tx); err != nil {
				return err
			}
		}
		if _, err := store.GetJSON[storedTeam](ctx, tx, store.Teams, owner+"/"+t.TeamID); err == nil {
			e := Errorf(http.StatusConflict, KindConflict, "team_id: this key has a team %q already", t.TeamID)
			e.Param = "team_id"
			return e
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := tx.List(ctx, store.Teams, store.ListOptions{Prefix: owner + "/", Limit: MaxTeamsPerOwner})
		if err != nil {
			return err
		}
		if len(have) >= MaxTeamsPerOwner {
			return Errorf(http.StatusConflict, KindConflict, "this key has %d teams, the most it may have: delete some first", len(have))
		}
		if err := checkTeamOrganization(ctx, g, tx, owner, t.OrganizationID, t.Models); err != nil {
			return err
		}
		if err := completions.PutSharedBudget(ctx, tx, teamBudgetID(owner, t.TeamID), limits); err != nil {
			return err
		}
		return putTeam(ctx, tx, owner, t)
	})
	if err != nil {
		return nil, fmt.Errorf("server: creating team %s: %w", t.TeamID, err)
	}
	s.log.InfoContext(ctx, "team created", "owner", owner, "team_id", t.TeamID)
	t.KeyIDs = []string{}
	return &t, nil
}

// teamInfo returns owner's team id with its spend and keys, or a 404.
func (s *Server) teamInfo(ctx context.Context, owner, id string) (*team, error) {
	rec, err := storedTeamOf(ctx, s.cfg.Store, owner, id)
	if err != nil {
		return nil, err
	}
	keys, err := s.listKeys(ctx, owner)
	if err != nil {
		return nil, err
	}
	t := s.teamWithSpend(ctx, owner, rec.team, keys)
	return &t, nil
}

// teamWithSpend fills in t's spend from its account and its keys from keys (owner's).
func (s *Server) teamWithSpend(ctx context.Context, owner string, t team, keys []virtualKey) team {
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, teamBudgetID(owner, t.TeamID)); err == nil {
		u := b.Used(ctx)
		t.Spend = keySpend{Requests: u.Calls, Tokens: u.Tokens, CostUSD: u.CostUSD}
		if !u.PeriodStart.IsZero() {
			t.Spend.PeriodStart = &u.PeriodStart
		}
	}
	t.Tags, _ = teamTags(t.Metadata) // checked when set; a label of a team made before tags were read is left out
	t.KeyIDs = []string{}
	for _, k := range keys {
		if k.TeamID == t.TeamID {
			t.KeyIDs = append(t.KeyIDs, k.ID)
		}
	}
	return t
}

// listTeams returns owner's teams, oldest first, with their spend and keys.
func (s *Server) listTeams(ctx context.Context, owner string) ([]team, error) {
	ts, err := storedTeamsOf(ctx, s.cfg.Store, owner)
	if err != nil {
		return nil, fmt.Errorf("server: listing teams: %w", err)
	}
	keys, err := s.listKeys(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := make([]team, 0, len(ts))
	for _, t := range ts {
		out = append(out, s.teamWithSpend(ctx, owner, t, keys))
	}
	slices.SortStableFunc(out, func(a, b team) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// updateTeam applies body (the fields to change) to owner's team id: read, merged, checked
// and written with its account's limits in one transaction, so a failed update changes
// nothing and the team's spend is kept.
//
// adjust, when given, changes the request against the stored team inside the transaction
// (LiteLLM's max_budget 0 and its lift).
func (s *Server) updateTeam(ctx context.Context, g *completions.Gateway, owner, id string, body json.RawMessage, adjust ...func(req *teamRequest, prev team)) (*team, error) {
	var given map[string]json.RawMessage
	if json.Unmarshal(body, &given) != nil || given == nil {
		return nil, Validation(http.StatusUnprocessableEntity, "the body must be a JSON object of the fields to change")
	}
	_, modelsGiven := given["models"]
	_, metadataGiven := given["metadata"]
	var t team
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(teamBudgetID(owner, id)), func(tx store.Tx) error {
		rec, err := storedTeamOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		req := teamRequest{TeamID: rec.TeamID, Name: rec.Name, Models: rec.Models, MaxBudgetUSD: rec.MaxBudgetUSD, BudgetDuration: rec.BudgetDuration,
			RequestsPerMinute: rec.RequestsPerMinute, TokensPerMinute: rec.TokensPerMinute, Metadata: rec.Metadata, Blocked: rec.Blocked, MaxParallelRequests: rec.MaxParallelRequests,
			OrganizationID: rec.OrganizationID, budgetBlock: rec.BudgetBlock, RouterSettings: rec.RouterSettings}
		if _, ok := given["blocked"]; ok {
			req.budgetBlock = false // blocked said outright (LiteLLM's max_budget 0 says it again in adjust)
		}
		if metadataGiven {
			req.Metadata = nil // replaced whole, not merged
		}
		if _, ok := given["router_settings"]; ok {
			req.RouterSettings = nil // replaced whole, not merged
		}
		if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
			return err
		}
		if req.TeamID != rec.TeamID {
			e := Validation(http.StatusUnprocessableEntity, "team_id: a team's id cannot be changed (it is %q)", rec.TeamID)
			e.Param = "team_id"
			return e
		}
		if _, ok := given["tags"]; ok { // null or []: the team's tags removed
			if err := req.linkTags(); err != nil {
				return err
			}
		}
		for _, a := range adjust {
			a(&req, rec.team)
		}
		check := req
		if _, given := given["router_settings"]; !given {
			check.RouterSettings = nil // kept as they are, even a fallback no longer served
		}
		limits, err := checkTeamRequest(g, check, modelsGiven)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(req.Metadata["tags"], rec.Metadata["tags"]) {
			// Its keys' requests carry its tags after their own: at most MaxTags together.
			tags, _ := teamTags(req.Metadata) // checked by checkTeamRequest
			if err := checkTeamKeysTags(ctx, tx, owner, id, tags); err != nil {
				return err
			}
		}
		t = rec.team
		req.applyTo(&t, limits)
		if err := checkTeamOrganization(ctx, g, tx, owner, t.OrganizationID, t.Models); err != nil {
			return err
		}
		if t.OrganizationID != "" && t.OrganizationID != rec.OrganizationID {
			// Moved into an organization: its keys' models must be within the organization's too.
			org, err := storedOrganizationOf(ctx, tx, owner, t.OrganizationID, "organization_id")
			if err != nil {
				return err
			}
			if err := checkTeamKeysInOrganization(ctx, g, tx, owner, id, org.organization); err != nil {
				return err
			}
		}
		if err := completions.SetSharedBudgetLimits(ctx, tx, teamBudgetID(owner, id), limits); err != nil {
			return err
		}
		return putTeam(ctx, tx, owner, t)
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating team %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "team updated", "owner", owner, "team_id", id)
	keys, err := s.listKeys(ctx, owner)
	if err != nil {
		return nil, err
	}
	t = s.teamWithSpend(ctx, owner, t, keys)
	return &t, nil
}

// deleteTeams deletes owner's teams ids, their accounts and their virtual keys (revoked at
// once on every replica, as LiteLLM's /team/delete deletes a team's keys) in one
// transaction: all or, when one is not found, none (404 naming it). It returns the ids of
// the keys revoked.
func (s *Server) deleteTeams(ctx context.Context, owner string, ids []string) ([]string, error) {
	var revoked []string
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(eachAccount(ids, func(id string) string { return teamBudgetID(owner, id) })...), func(tx store.Tx) error {
		for _, id := range ids {
			if _, err := storedTeamOf(ctx, tx, owner, id); err != nil {
				return err
			}
		}
		var err error
		revoked, err = deleteTeamsIn(ctx, tx, owner, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server: deleting teams %s: %w", strings.Join(ids, ", "), err)
	}
	s.log.InfoContext(ctx, "teams deleted", "owner", owner, "team_ids", ids, "revoked_keys", revoked)
	return revoked, nil
}

// deleteTeamsIn deletes, in tx, owner's teams ids (found: the caller checked), their
// accounts, memberships and virtual keys, and returns the ids of the keys revoked.
func deleteTeamsIn(ctx context.Context, tx store.Tx, owner string, ids []string) ([]string, error) {
	revoked, err := revokeKeysOf(ctx, tx, owner, func(vk virtualKey) bool {
		return vk.TeamID != "" && slices.Contains(ids, vk.TeamID)
	})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := deleteTeamMembers(ctx, tx, owner, id); err != nil {
			return nil, err
		}
		if err := tx.Delete(ctx, store.Budgets, teamBudgetID(owner, id)); err != nil {
			return nil, err
		}
		if err := tx.Delete(ctx, store.Teams, owner+"/"+id); err != nil {
			return nil, err
		}
	}
	return revoked, nil
}

// checkKeyTeam, for a key of owner's team id ("": none) asking for models, answers 404
// naming team_id when there is no such team, and 422 naming models when the key asks for a
// model outside the team's (a team without models allows every model), as g resolves
// them: a member of a team's model group, or a bare name of a team's provider/model, is
// the team's.
func checkKeyTeam(ctx context.Context, g *completions.Gateway, rd store.Reader, owner, id string, models []string) error {
	if id == "" {
		return nil
	}
	rec, err := storedTeamOf(ctx, rd, owner, id)
	if err != nil {
		return err
	}
	if rec.OrganizationID != "" {
		if err := checkOrganizationModels(ctx, g, rd, owner, rec.OrganizationID, models, "a key of a team in an organization"); err != nil {
			return err
		}
	}
	if len(rec.Models) == 0 {
		return nil
	}
	team := completions.Scope{Budget: completions.NewBudget(completions.BudgetLimits{AllowedModels: rec.Models})}
	for i, m := range models {
		if !g.Allows(team, m) {
			e := Validation(http.StatusUnprocessableEntity, "models[%d]: %q is not among the models of team %s (%s): a key of a team may call only the team's models", i, m, id, strings.Join(rec.Models, ", "))
			e.Param = "models"
			return e
		}
	}
	return nil
}

// joinTeam puts a virtual key's budget b inside the account of owner's team id, in st,
// and returns the team; a team deleted meanwhile matches store.ErrNotFound (the key is
// refused as revoked: deleting a team revokes its keys).
func joinTeam(ctx context.Context, st *store.Store, owner, id string, b *completions.Budget) (*storedTeam, error) {
	rec, err := store.GetJSON[storedTeam](ctx, st, store.Teams, owner+"/"+id)
	if err != nil {
		return nil, fmt.Errorf("team %s: %w", id, err)
	}
	tb, err := completions.LoadSharedBudget(ctx, st, teamBudgetID(owner, id))
	if err != nil {
		return nil, err
	}
	b.SetParent(tb, id)
	return &rec, nil
}

// joinOrganization puts a virtual key's budget b (of owner's organization id, or of a team
// in it)
// inside the organization's account too, in st, and returns the organization; one deleted
// meanwhile matches store.ErrNotFound (deleting an organization deletes its teams' keys).
func joinOrganization(ctx context.Context, st *store.Store, owner, id string, b *completions.Budget) (*storedOrganization, error) {
	rec, err := store.GetJSON[storedOrganization](ctx, st, store.Organizations, owner+"/"+id)
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", id, err)
	}
	ob, err := completions.LoadSharedBudget(ctx, st, organizationBudgetID(owner, id))
	if err != nil {
		return nil, err
	}
	b.AddParent(ob, organizationKind, id)
	return &rec, nil
}

// revokeKeysOf deletes, in tx, every virtual key of owner that of says is to go (its
// records and hash index) and returns their ids (none: an empty slice).
func revokeKeysOf(ctx context.Context, tx store.Tx, owner string, of func(virtualKey) bool) ([]string, error) {
	es, err := tx.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, err
	}
	revoked := []string{}
	for _, e := range es {
		var rec storedVirtualKey
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("key record %s: %w", e.Key, err)
		}
		if !of(rec.virtualKey) {
			continue
		}
		if err := deleteKeyRecords(ctx, tx, owner, rec.ID, rec.Hash); err != nil {
			return nil, err
		}
		revoked = append(revoked, rec.ID)
	}
	return revoked, nil
}
