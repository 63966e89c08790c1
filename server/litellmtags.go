package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// LiteLLM's tag management (/tag/new, /tag/update, /tag/info, /tag/list, /tag/delete)
// gives request tags budgets: every request naming a tag with one (its body's tags or
// metadata.tags, its x-litellm-tags header) also draws on the tag's account, shared by
// every key of the owner, and is refused once it is spent with LiteLLM's "Budget has been
// exceeded! Tag=…" (completions.Options.TagBudgets, StoredTagBudgets). The tags are kept
// in store.LiteLLMTags under "<owner>/<tag>", their accounts in store.Budgets under
// completions.TagBudgetID. A tag's models (as on LiteLLM, deployment ids — model_info.id —
// or model group names) are kept in its record, and the routing table's members of those
// deployments carry the tag beside their own litellm_params.tags (deployments.Options
// DeploymentTags, LiteLLMTagModels; applied at once on this replica and within the
// deployments' poll on the others), so tag routing selects them.

// maxLiteLLMTagsPerOwner bounds the tags one key may have.
const maxLiteLLMTagsPerOwner = 1000

// litellmTagRecord is a tag's record in store.LiteLLMTags.
type litellmTagRecord struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Limits holds the tag's budget fields (its BudgetID is unused).
	Limits litellmBudgetRecord `json:"limits"`
	// Models are the deployments (model_info.id, or a model group's name: each of its
	// deployments) that carry the tag for tag routing.
	Models    []string  `json:"models,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
	Owner     string    `json:"owner"`
}

// limits are the tag account's limits.
func (t litellmTagRecord) limits() completions.BudgetLimits {
	l := completions.BudgetLimits{MaxCostUSD: t.Limits.MaxBudgetUSD, SoftCostUSD: t.Limits.SoftBudgetUSD, TokensPerMinute: t.Limits.TokensPerMinute}
	if t.Limits.BudgetDuration != "" {
		l.ResetEvery, _ = parseBudgetDuration(t.Limits.BudgetDuration)
	}
	return l
}

// litellmTagRequest documents the body of POST /tag/new and /tag/update; other LiteLLM
// fields are refused when they ask for something.
type litellmTagRequest struct {
	Name           string   `json:"name" jsonschema:"description=The tag (1-64 letters\\, digits or . _ : / -): on /tag/new the tag to make; on /tag/update the tag to change (required)"`
	Description    *string  `json:"description,omitempty" jsonschema:"description=What the tag stands for; null removes it on /tag/update"`
	MaxBudget      *float64 `json:"max_budget,omitempty" jsonschema:"description=USD the requests naming the tag may spend together (per budget_duration) across every key of this one; past it they are refused (429 Budget has been exceeded! Tag=…); null for no bound"`
	SoftBudget     *float64 `json:"soft_budget,omitempty" jsonschema:"description=USD mark that sends a budget alert and never blocks; null or 0 for none"`
	BudgetDuration *string  `json:"budget_duration,omitempty" jsonschema:"description=Period after which the tag's spend starts again from zero (30d); null for all time"`
	TPMLimit       *int64   `json:"tpm_limit,omitempty" jsonschema:"description=Tokens per minute the requests naming the tag may use together; null or 0 for no bound"`
	Models         []string `json:"models,omitempty" jsonschema:"description=Deployments that carry the tag for tag routing (beside their own litellm_params.tags): deployment ids (model_info.id) or model group names (each of its deployments); on /tag/update the list replaces the tag's\\, [] or null removes them"`
}

// litellmTagConfig is a tag as LiteLLM's TagConfig describes one, with its budget and spend.
type litellmTagConfig struct {
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Models      []string       `json:"models" jsonschema:"description=The deployments (model_info.id or model group names) that carry the tag for tag routing"`
	ModelInfo   map[string]any `json:"model_info" jsonschema:"description=Always empty"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	CreatedBy   string         `json:"created_by" jsonschema:"description=The owner (calling key's id) that made the tag"`
	// BudgetTable is LiteLLM's litellm_budget_table: the tag's limits (null without any).
	BudgetTable *litellmBudget `json:"litellm_budget_table,omitempty" jsonschema:"description=The tag's limits (its budget_id is tag:<name>: the tag's own\\, not a budget of /budget/new); absent when it has none"`
	Spend       float64        `json:"spend" jsonschema:"description=USD the requests naming the tag spent (in the current period with budget_duration)"`
}

// litellmTagAnswer is the answer of POST /tag/new and /tag/update.
type litellmTagAnswer struct {
	Message string           `json:"message"`
	Tag     litellmTagConfig `json:"tag"`
}

// litellmTagNames is the body of POST /tag/info.
type litellmTagNames struct {
	Names []string `json:"names" jsonschema:"description=The tags (at most 100)"`
}

// litellmTagName is the body of POST /tag/delete.
type litellmTagName struct {
	Name string `json:"name" jsonschema:"description=The tag to delete"`
}

// litellmTagMessage is the answer of POST /tag/delete.
type litellmTagMessage struct {
	Message string `json:"message"`
}

// litellmTagPath reports the tag paths answered in LiteLLM's error envelope.
func litellmTagPath(path string) bool { return strings.HasPrefix(path, "/tag/") }

// litellmTagRoutes registers LiteLLM's tag management routes.
func (s *Server) litellmTagRoutes() {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	s.Handle(Route{Method: "POST", Path: "/tag/new", Summary: "LiteLLM's tag creation: a budget (max_budget per budget_duration, tpm_limit) every request naming the tag draws on, across this key's virtual keys",
		Tags: tags, Request: litellmTagRequest{}, Response: litellmTagAnswer{},
		Errors: map[int]string{400: "name missing or not a tag, past the key's 1000 tags, or a bad or unsupported field (budget_id, rpm_limit, …): the message names it", 403: scoped, 409: "the tag exists already"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, name, err := litellmTagBody(r)
			if err != nil {
				return err
			}
			now := time.Now().UTC()
			t := litellmTagRecord{Name: name, Owner: owner(r), CreatedAt: now, CreatedBy: owner(r), UpdatedAt: now, UpdatedBy: owner(r)}
			if err := applyLiteLLMTagFields(&t, fields); err != nil {
				return err
			}
			if err := s.createLiteLLMTag(r.Context(), t); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmTagAnswer{Message: "Tag " + name + " created successfully", Tag: s.litellmTagOf(r.Context(), t)})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/tag/update", Summary: "LiteLLM's tag update: sets the fields given (null removes a bound); the tag's spend is kept",
		Tags: tags, Request: litellmTagRequest{}, Response: litellmTagAnswer{},
		Errors: map[int]string{400: "name missing or a bad or unsupported field: the message names it", 403: scoped, 404: "no tag of this key has the name"}},
		func(w http.ResponseWriter, r *http.Request) error {
			fields, name, err := litellmTagBody(r)
			if err != nil {
				return err
			}
			t, err := s.updateLiteLLMTag(r.Context(), owner(r), name, fields)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmTagAnswer{Message: "Tag " + name + " updated successfully", Tag: s.litellmTagOf(r.Context(), *t)})
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/tag/info", Summary: "LiteLLM's tag info: the tags named, by name, with their budgets and spend",
		Tags: tags, Request: litellmTagNames{}, Response: map[string]litellmTagConfig{},
		Errors: map[int]string{400: "names missing, empty or past 100", 403: scoped, 404: "a name is no tag of this key: the message lists them"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmTagNames
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if len(req.Names) == 0 {
				return paramError("names", "names: give the tags, e.g. {\"names\": [\"engineering\"]}")
			}
			if len(req.Names) > maxLiteLLMBudgetsAtOnce {
				return paramError("names", "names: at most %d tags at once, got %d", maxLiteLLMBudgetsAtOnce, len(req.Names))
			}
			out := map[string]litellmTagConfig{}
			var missing []string
			for _, name := range req.Names {
				t, err := store.GetJSON[litellmTagRecord](r.Context(), s.cfg.Store, store.LiteLLMTags, owner(r)+"/"+name)
				switch {
				case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
					if !slices.Contains(missing, name) {
						missing = append(missing, name)
					}
				case err != nil:
					return fmt.Errorf("server: reading tag %s: %w", name, err)
				default:
					out[name] = s.litellmTagOf(r.Context(), t)
				}
			}
			if len(missing) > 0 {
				return litellmNotFound("names", "Tags not found: %s", pythonList(missing)) // LiteLLM's words
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/tag/list", Summary: "LiteLLM's tag list: every tag of this key made with /tag/new (with its budget and spend, by name), then the tags its requests named (from the daily spend: its description says so, its spend is the period's)",
		Tags: tags, Response: []litellmTagConfig{}, Errors: map[int]string{400: "start_date without end_date (or the other way), not YYYY-MM-DD, after end_date, or more than 366 days before it", 403: scoped},
		Query: []QueryParam{{Name: "start_date", Description: "With end_date: only the requests' tags of these days (YYYY-MM-DD, UTC) are listed (the tags made with /tag/new always are); without: the last 366 days"},
			{Name: "end_date", Description: "The last day of start_date's period (YYYY-MM-DD, UTC)"}}},
		func(w http.ResponseWriter, r *http.Request) error {
			from, to, err := litellmTagListDays(r.URL.Query())
			if err != nil {
				return err
			}
			es, err := s.cfg.Store.List(r.Context(), store.LiteLLMTags, store.ListOptions{Prefix: owner(r) + "/"})
			if err != nil {
				return fmt.Errorf("server: listing tags: %w", err)
			}
			out := make([]litellmTagConfig, 0, len(es))
			stored := map[string]bool{}
			for _, e := range es {
				var t litellmTagRecord
				if err := json.Unmarshal(e.Value, &t); err != nil {
					return fmt.Errorf("server: tag record %s: %w", e.Key, err)
				}
				stored[t.Name] = true
				out = append(out, s.litellmTagOf(r.Context(), t))
			}
			if s.spend != nil {
				seen, err := s.requestTags(r.Context(), owner(r), from, to, stored)
				if err != nil {
					return err
				}
				out = append(out, seen...)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/tag/delete", Summary: "LiteLLM's tag deletion: deletes the tag and its account; requests naming it no longer draw on a budget",
		Tags: tags, Request: litellmTagName{}, Response: litellmTagMessage{},
		Errors: map[int]string{400: "name missing", 403: scoped, 404: "no tag of this key has the name"}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req litellmTagName
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
				return err
			}
			if req.Name == "" {
				return paramError("name", "name: required: the tag to delete")
			}
			if err := s.deleteLiteLLMTag(r.Context(), owner(r), req.Name); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, litellmTagMessage{Message: "Tag " + req.Name + " deleted successfully"})
			return nil
		})
}

// litellmTagBody reads a /tag/new or /tag/update body: its fields and its checked name.
func litellmTagBody(r *http.Request) (map[string]json.RawMessage, string, error) {
	fields, err := litellmBody(r)
	if err != nil {
		return nil, "", err
	}
	name, err := litellmTagNameOf(fields)
	return fields, name, err
}

// litellmTagNameOf reads and checks the name of a /tag/new or /tag/update body.
func litellmTagNameOf(fields map[string]json.RawMessage) (string, error) {
	var name string
	if raw, ok := fields["name"]; !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		return "", paramError("name", "name: required, a string: the tag")
	}
	if err := completions.CheckDeploymentTags("name", []string{name}); err != nil {
		return "", paramError("name", "name: %q is not a tag requests can name: 1-64 letters, digits or . _ : / -", name)
	}
	if strings.HasPrefix(name, completions.BatchTagPrefix) {
		return "", paramError("name", "name: %q: tags starting %s are the batches' own", name, completions.BatchTagPrefix)
	}
	return name, nil
}

// applyLiteLLMTagFields sets t's description and budget fields to LiteLLM's fields given
// (null removes one), refusing a field with no equivalent unless it asks for nothing.
func applyLiteLLMTagFields(t *litellmTagRecord, fields map[string]json.RawMessage) error {
	budget := map[string]json.RawMessage{}
	for name, raw := range fields {
		switch name {
		case "name":
		case "description":
			t.Description = ""
			if !isJSONNull(raw) && json.Unmarshal(raw, &t.Description) != nil {
				return paramError(name, "description: must be a string or null, got %s", raw)
			}
		case "max_budget", "soft_budget", "budget_duration", "tpm_limit":
			var v float64
			if name == "max_budget" && !isJSONNull(raw) && json.Unmarshal(raw, &v) == nil && v == 0 {
				return paramError(name, "max_budget: 0 would be a budget of nothing, which a tag's account cannot be here: give more than 0, or null for no bound")
			}
			budget[name] = raw
		case "models":
			models, err := litellmTagModels(raw)
			if err != nil {
				return err
			}
			t.Models = models
		case "budget_id":
			if !emptyJSON(raw) {
				return paramError(name, "budget_id: not supported on a tag: give its max_budget, soft_budget, budget_duration and tpm_limit")
			}
		case "rpm_limit", "max_parallel_requests", "model_max_budget":
			if !emptyJSON(raw) {
				return paramError(name, "%s: not supported on a tag (its fields: name, description, max_budget, soft_budget, budget_duration, tpm_limit)", name)
			}
		default:
			if !emptyJSON(raw) && name != "model_info" && name != "created_at" && name != "updated_at" && name != "created_by" {
				return paramError(name, "%s: a tag has no %s (its fields: name, description, max_budget, soft_budget, budget_duration, tpm_limit)", name, name)
			}
		}
	}
	return applyLiteLLMBudgetFields(&t.Limits, budget, nil)
}

// maxLiteLLMTagModels bounds the models of one tag.
const maxLiteLLMTagModels = 100

// litellmTagModels reads a tag's models: a list of deployment ids or model group names
// (null or []: none), without repeats.
func litellmTagModels(raw json.RawMessage) ([]string, error) {
	if isJSONNull(raw) {
		return nil, nil
	}
	var models []string
	if json.Unmarshal(raw, &models) != nil {
		return nil, paramError("models", "models: must be a list of deployment ids (model_info.id) or model group names, got %s", raw)
	}
	if len(models) > maxLiteLLMTagModels {
		return nil, paramError("models", "models: at most %d, got %d", maxLiteLLMTagModels, len(models))
	}
	var out []string
	for i, m := range models {
		if strings.TrimSpace(m) == "" {
			return nil, paramError("models", "models[%d]: must be a deployment id (model_info.id) or a model group name, got %q", i, m)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// LiteLLMTagModels returns deployments.Options.DeploymentTags over st: the tags made with
// LiteLLM's /tag/new (every owner's) by the deployment id or model group name their models
// give. The routing table is the server's, one for every key: a tag one key gave a
// deployment selects it for every request carrying the tag.
func LiteLLMTagModels(st *store.Store) func(ctx context.Context) (map[string][]string, error) {
	return func(ctx context.Context) (map[string][]string, error) {
		es, err := st.List(ctx, store.LiteLLMTags, store.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("server: listing tags: %w", err)
		}
		var out map[string][]string
		for _, e := range es {
			var t litellmTagRecord
			if err := json.Unmarshal(e.Value, &t); err != nil {
				return nil, fmt.Errorf("server: tag record %s: %w", e.Key, err)
			}
			for _, m := range t.Models {
				if out == nil {
					out = map[string][]string{}
				}
				if !slices.Contains(out[m], t.Name) {
					out[m] = append(out[m], t.Name)
				}
			}
		}
		return out, nil
	}
}

// applyTagModels applies the tags' models to the routing table now (the stored
// deployments' Sync), on this replica; the others follow within their poll. A failure is
// logged: the tag is kept, and the next Sync applies it.
func (s *Server) applyTagModels(ctx context.Context) {
	if s.storedModels == nil {
		return
	}
	if err := s.storedModels.Sync(ctx); err != nil {
		s.log.WarnContext(ctx, "applying the tags' models to the deployments", "err", err)
	}
}

// createLiteLLMTag stores t with its account, unless owner has the tag already or its
// most tags.
func (s *Server) createLiteLLMTag(ctx context.Context, t litellmTagRecord) error {
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(completions.TagBudgetID(t.Owner, t.Name)), func(tx store.Tx) error {
		key := t.Owner + "/" + t.Name
		if _, err := tx.Get(ctx, store.LiteLLMTags, key); err == nil {
			e := Errorf(http.StatusConflict, KindConflict, "Tag %s already exists", t.Name)
			e.Param = "name"
			return e
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := tx.List(ctx, store.LiteLLMTags, store.ListOptions{Prefix: t.Owner + "/", Limit: maxLiteLLMTagsPerOwner})
		if err != nil {
			return err
		}
		if len(have) >= maxLiteLLMTagsPerOwner {
			return paramError("name", "this key has %d tags, the most it may have: delete some first (POST /tag/delete)", len(have))
		}
		if err := completions.PutSharedBudget(ctx, tx, completions.TagBudgetID(t.Owner, t.Name), t.limits()); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.LiteLLMTags, key, t)
	})
	if err != nil {
		return fmt.Errorf("server: creating tag %s: %w", t.Name, err)
	}
	s.log.InfoContext(ctx, "tag created", "owner", t.Owner, "tag", t.Name)
	if len(t.Models) > 0 {
		s.applyTagModels(ctx)
	}
	return nil
}

// updateLiteLLMTag applies fields to owner's tag name with its account's limits in one
// transaction: a failed update changes nothing, and the tag's spend is kept.
func (s *Server) updateLiteLLMTag(ctx context.Context, owner, name string, fields map[string]json.RawMessage) (*litellmTagRecord, error) {
	var t litellmTagRecord
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(completions.TagBudgetID(owner, name)), func(tx store.Tx) error {
		var err error
		if t, err = ownedRecord[litellmTagRecord](ctx, tx, store.LiteLLMTags, owner, name, "tag", func() error {
			return litellmNotFound("name", "Tag %s not found", name)
		}); err != nil {
			return err
		}
		if err := applyLiteLLMTagFields(&t, fields); err != nil {
			return err
		}
		t.UpdatedAt, t.UpdatedBy = time.Now().UTC(), owner
		if err := completions.SetSharedBudgetLimits(ctx, tx, completions.TagBudgetID(owner, name), t.limits()); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.LiteLLMTags, owner+"/"+name, t)
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating tag %s: %w", name, err)
	}
	s.log.InfoContext(ctx, "tag updated", "owner", owner, "tag", name)
	s.applyTagModels(ctx)
	return &t, nil
}

// deleteLiteLLMTag deletes owner's tag name with its account.
func (s *Server) deleteLiteLLMTag(ctx context.Context, owner, name string) error {
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(completions.TagBudgetID(owner, name)), func(tx store.Tx) error {
		if _, err := ownedRecord[litellmTagRecord](ctx, tx, store.LiteLLMTags, owner, name, "tag", func() error {
			return litellmNotFound("name", "Tag %s not found", name)
		}); err != nil {
			return err
		}
		if err := tx.Delete(ctx, store.Budgets, completions.TagBudgetID(owner, name)); err != nil {
			return err
		}
		return tx.Delete(ctx, store.LiteLLMTags, owner+"/"+name)
	})
	if err != nil {
		return fmt.Errorf("server: deleting tag %s: %w", name, err)
	}
	s.log.InfoContext(ctx, "tag deleted", "owner", owner, "tag", name)
	s.applyTagModels(ctx)
	return nil
}

// litellmTagOf describes t in LiteLLM's fields, with its account's spend (0, logged, when
// it cannot be read).
func (s *Server) litellmTagOf(ctx context.Context, t litellmTagRecord) litellmTagConfig {
	out := litellmTagConfig{Name: t.Name, Models: append([]string{}, t.Models...), ModelInfo: map[string]any{}, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, CreatedBy: t.CreatedBy}
	if t.Description != "" {
		out.Description = &t.Description
	}
	if l := t.Limits; l.MaxBudgetUSD > 0 || l.SoftBudgetUSD > 0 || l.TokensPerMinute > 0 || l.BudgetDuration != "" {
		l.CreatedAt, l.CreatedBy, l.UpdatedAt, l.UpdatedBy = t.CreatedAt, t.CreatedBy, t.UpdatedAt, t.UpdatedBy
		l.BudgetID = "tag:" + t.Name // the tag's own limits, not a /budget/new budget
		b := litellmBudgetOf(l)
		out.BudgetTable = &b
	}
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, completions.TagBudgetID(t.Owner, t.Name)); err == nil {
		out.Spend = b.Used(ctx).CostUSD
	} else {
		s.log.WarnContext(ctx, "reading a tag's account", "tag", t.Name, "err", err)
	}
	return out
}

// dynamicTagDescription is LiteLLM's description of a tag /tag/list found in the spend only.
const dynamicTagDescription = "This is just a spend tag that was passed dynamically in a request. It does not control any LLM models."

// litellmTagListDays reads /tag/list's start_date and end_date (both or neither: the last
// 366 days, UTC).
func litellmTagListDays(q url.Values) (from, to time.Time, err error) {
	start, end := q.Get("start_date"), q.Get("end_date")
	if (start == "") != (end == "") {
		return from, to, paramError("start_date", "start_date and end_date must be provided together")
	}
	to = time.Now().UTC()
	from = to.AddDate(0, 0, -(usagelog.MaxSpendDays - 1))
	if start == "" {
		return from, to, nil
	}
	if from, err = time.Parse(time.DateOnly, start); err != nil {
		return from, to, paramError("start_date", "start_date: Invalid date format, expected YYYY-MM-DD, got %q", start)
	}
	if to, err = time.Parse(time.DateOnly, end); err != nil {
		return from, to, paramError("end_date", "end_date: Invalid date format, expected YYYY-MM-DD, got %q", end)
	}
	if from.After(to) {
		return from, to, paramError("start_date", "start_date must be on or before end_date")
	}
	if to.Sub(from) >= usagelog.MaxSpendDays*24*time.Hour {
		return from, to, paramError("start_date", "start_date: at most %d days before end_date", usagelog.MaxSpendDays-1)
	}
	return from, to, nil
}

// requestTags lists the tags owner's requests named from day from to day to (the daily
// spend by tag) that are not stored tags, in LiteLLM's dynamic-tag shape: created_at their
// first day, updated_at their last, spend the period's. Batches' own tags are left out.
func (s *Server) requestTags(ctx context.Context, owner string, from, to time.Time, stored map[string]bool) ([]litellmTagConfig, error) {
	rows, err := s.spend.Spend(ctx, owner, from, to, usagelog.SpendByTag)
	if err != nil {
		return nil, fmt.Errorf("server: reading the spend by tag: %w", err)
	}
	byName := map[string]*litellmTagConfig{}
	var names []string
	for _, row := range rows {
		if stored[row.Tag] || strings.HasPrefix(row.Tag, completions.BatchTagPrefix) {
			continue
		}
		day, err := time.Parse(time.DateOnly, row.Day)
		if err != nil {
			continue
		}
		t := byName[row.Tag]
		if t == nil {
			d := dynamicTagDescription
			t = &litellmTagConfig{Name: row.Tag, Description: &d, Models: []string{}, ModelInfo: map[string]any{}, CreatedAt: day, UpdatedAt: day}
			byName[row.Tag] = t
			names = append(names, row.Tag)
		}
		if day.Before(t.CreatedAt) {
			t.CreatedAt = day
		}
		if day.After(t.UpdatedAt) {
			t.UpdatedAt = day
		}
		t.Spend += row.CostUSD
	}
	slices.Sort(names)
	out := make([]litellmTagConfig, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}
