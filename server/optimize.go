package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/store"
)

// optimizeRequest is the body of POST /api/v1/optimize (the spec's submit body).
type optimizeRequest struct {
	// Optimizer must be "agentopt" (required, as in the spec's wire example).
	Optimizer string `json:"optimizer" jsonschema:"required,enum=agentopt"`
	// InputURL is the public URL of the ZIP bundle (agent.py, eval.py, dataset.json and,
	// optionally, valset.json: the held-out rows, DSPy's valset).
	InputURL string `json:"input_url" jsonschema:"required,description=public URL of the ZIP bundle: agent.py\\, eval.py\\, dataset.json (the rows; 70/30 train/held-out) and optionally valset.json (the held-out rows in dataset.json's format; dataset.json is then all train rows)"`
	// TargetModels are "provider/model" identifiers to optimize for (at least one).
	TargetModels []string `json:"target_models" jsonschema:"required,minItems=1"`
	// The bounded integers are decoded as numbers so that any number outside its bounds,
	// however large (1e400 too), gets the spec's message ("n_iterations must be 1-50") from
	// the range check rather than a decoder's complaint; a fraction is refused as not an
	// integer.

	// NIterations is the number of proposals per target model (default 15).
	NIterations *specNumber `json:"n_iterations,omitempty" jsonschema:"minimum=1,maximum=50,default=15"`
	// OverallTimeoutSeconds bounds the whole job (default 3600).
	OverallTimeoutSeconds *specNumber `json:"overall_timeout_seconds,omitempty" jsonschema:"minimum=300,maximum=7200,default=3600"`
	// LLMCallTimeoutSeconds bounds each proposer call (default 300).
	LLMCallTimeoutSeconds *specNumber `json:"llm_call_timeout_seconds,omitempty" jsonschema:"minimum=30,maximum=600,default=300"`
	// SandboxTimeoutSeconds bounds each sandbox benchmark run (default 600).
	SandboxTimeoutSeconds *specNumber `json:"sandbox_timeout_seconds,omitempty" jsonschema:"minimum=60,maximum=1800,default=600"`
	// Seed draws the job's train/held-out split and minibatches (extension; DSPy's
	// optimizers take one too); absent: the server's (42). Results report it.
	Seed *seedNumber `json:"seed,omitempty" jsonschema:"minimum=0,description=extension: seed of the job's 70/30 split and minibatch draws (default 42); the same bundle and seed give the same split; with a valset.json in the bundle it draws the minibatches only"`
}

// seedNumber is the JSON number given as seed, as written: the handler checks it is an
// integer 0 to 2^64-1 (a float64 would round large seeds).
type seedNumber string

// UnmarshalJSON implements json.Unmarshaler: any JSON number; anything else is a
// *json.UnmarshalTypeError, worded as every field's wrong type.
func (n *seedNumber) UnmarshalJSON(b []byte) error {
	if k := jsontext.Value(b).Kind(); k != '0' {
		return &json.UnmarshalTypeError{Value: kindName(k), Type: reflect.TypeFor[uint64]()}
	}
	*n = seedNumber(b)
	return nil
}

// value is the seed, or a 422 naming seed for a number that is not one.
func (n seedNumber) value() (uint64, error) {
	v, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, Validation(http.StatusUnprocessableEntity, "seed must be an integer from 0 to %d, got %s", uint64(math.MaxUint64), string(n))
	}
	return v, nil
}

// specNumber is a JSON number of any size: one beyond float64 decodes as ±Inf (or 0), for
// the range check to refuse with the spec's message.
type specNumber float64

// optimizationJobErrors are the failures of the operations on one optimization job.
var optimizationJobErrors = map[int]string{
	http.StatusNotFound:            "no optimization job with that job_id for this key",
	http.StatusUnprocessableEntity: "job_id missing",
}

// UnmarshalJSON implements json.Unmarshaler: any JSON number; anything else is a
// *json.UnmarshalTypeError for an integer, which the decoder words as it does every
// field's wrong type (`field "n_iterations" must be an integer, got string`).
func (n *specNumber) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return &json.UnmarshalTypeError{Value: kindName(jsontext.Value(b).Kind()), Type: reflect.TypeFor[int]()}
	}
	*n = specNumber(f)
	return nil
}

// JSONSchemaExtend documents the bounded numbers as the integers they must be.
func (optimizeRequest) JSONSchemaExtend(s *jsonschema.Schema) {
	for _, name := range []string{"n_iterations", "overall_timeout_seconds", "llm_call_timeout_seconds", "sandbox_timeout_seconds", "seed"} {
		if p, ok := s.Properties.Get(name); ok {
			p.Type = "integer"
		}
	}
}

// boundedInt checks an integer field of the submit body against [lo, hi], with the spec's
// message "<name> must be <lo>-<hi>" for any number outside, and returns it.
func boundedInt(name string, v float64, lo, hi int) (int, error) {
	if v < float64(lo) || v > float64(hi) {
		return 0, Validation(http.StatusUnprocessableEntity, "%s must be %d-%d", name, lo, hi)
	}
	if v != math.Trunc(v) {
		return 0, Validation(http.StatusUnprocessableEntity, "%s must be an integer, got %g", name, v)
	}
	return int(v), nil
}

// Optimizer plugs agent prompt optimization jobs (package optimizer) into the server:
//
//   - POST /api/v1/optimize — submit; 202 {job_id, status: "queued", version}; 422 with the
//     spec's messages for a bad body; 429 with Retry-After when the key already has its
//     limit of jobs queued or running (optimizer.WithJobsPerOwner); 503 with Retry-After
//     when the server's queue is full (optimizer.WithQueueSize), as for training jobs;
//   - GET /api/v1/optimize/status?job_id=ID — progress; 404 for an unknown job or another
//     key's;
//   - GET /api/v1/optimize/results?job_id=ID — results of a completed, failed or interrupted
//     job; 409 {"status": ...} while it is queued or running;
//   - POST /api/v1/optimize/cancel?job_id=ID — stop a queued or running job (it ends
//     interrupted, best result so far kept) and answer its status once the run stopped
//     (optimizer.CancelWait at most); 409 when it already ended;
//   - GET /api/v1/artifacts/{token}/agent.py — the best agent.py of a job, with no key (the
//     128-bit token in the URL is the credential);
//   - GET /api/v1/optimize/jobs — the key's jobs, newest first (limit, cursor,
//     created_after, created_before, status); DELETE /api/v1/optimize/jobs/{job_id} —
//     delete a job with its artifacts (a queued or running job is cancelled first; 409 with
//     Retry-After when a running one has not stopped within 30 s).
//
// Unless the service was given its own key minter, the option makes the server mint the
// per-job gateway keys: a temporary API key for the job's owner whose Principal.Scope is a
// completions.Scope tagged "optimize:<job id>" with a Budget allowing only the target
// model; the Budget meters the tokens and USD the agent spends through
// POST /v1/chat/completions. The caller starts the service (svc.Start) after New; the
// server's Close closes it.
func Optimizer(svc *optimizer.Service) Option {
	return func(s *Server) error {
		if svc == nil {
			return errors.New("server: Optimizer needs an *optimizer.Service")
		}
		if !svc.HasKeyMinter() {
			svc.SetKeyMinter(jobKeyMinter{auth: s.Auth()})
		}
		jobID := []QueryParam{{Name: "job_id", Required: true, Description: "optimization job id returned by POST /api/v1/optimize"}}
		tags := []string{"Agent optimization"}
		s.Handle(Route{Method: "POST", Path: "/api/v1/optimize", Summary: "Submit an agent prompt optimization job",
			Request: optimizeRequest{}, Response: optimizer.Submitted{}, Status: http.StatusAccepted, Tags: tags,
			Errors: map[int]string{
				422: "validation error: agentopt requires input_url / agentopt requires target_models / n_iterations must be 1-50 / overall_timeout_seconds must be 300-7200 / …",
				400: "the bundle at input_url could not be fetched or is unusable (the message names the file and the row: input_url: invalid bundle: dataset.json: row 3 (counting from 0) has no \"answer\" …); no job is made",
				429: "this key has its limit of optimization jobs queued or running (Retry-After)",
			}},
			func(w http.ResponseWriter, r *http.Request) error { return handleOptimize(svc, w, r) })
		s.Handle(Route{Method: "GET", Path: "/api/v1/optimize/status", Summary: "Status of an optimization job",
			Query: jobID, Response: optimizer.JobStatus{}, Tags: tags, Errors: optimizationJobErrors},
			func(w http.ResponseWriter, r *http.Request) error {
				st, err := svc.Status(r.Context(), owner(r), r.URL.Query().Get("job_id"))
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, st)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/api/v1/optimize/results", Summary: "Results of a finished optimization job (409 while it runs)",
			Query: jobID, Response: optimizer.Results{}, Tags: tags, Errors: withError(optimizationJobErrors, http.StatusConflict, "the job has not ended yet")},
			func(w http.ResponseWriter, r *http.Request) error {
				res, err := svc.Results(r.Context(), owner(r), r.URL.Query().Get("job_id"))
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, res)
				return nil
			})
		s.Handle(Route{Method: "POST", Path: "/api/v1/optimize/cancel", Summary: "Cancel a queued or running optimization job (it ends interrupted)",
			Query: jobID, Response: optimizer.JobStatus{}, Tags: tags, Errors: withError(optimizationJobErrors, http.StatusConflict, "the job has already ended")},
			func(w http.ResponseWriter, r *http.Request) error {
				st, err := svc.Cancel(r.Context(), owner(r), r.URL.Query().Get("job_id"))
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, st)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/api/v1/optimize/jobs", Summary: "List this key's optimization jobs, newest first",
			Query: listParams("queued, running, completed, interrupted, failed"), Response: optimizer.JobList{}, Tags: tags},
			listing(svc.ListJobs))
		s.Handle(Route{Method: "DELETE", Path: "/api/v1/optimize/jobs/{job_id}", Summary: "Delete an optimization job and its best-agent files (a running job is cancelled first)",
			Response: optimizer.Deletion{}, Tags: tags, Errors: map[int]string{http.StatusNotFound: "no optimization job with that id for this key"}},
			deletion("job_id", svc.DeleteJob))
		s.Handle(Route{Method: "GET", Path: "/api/v1/artifacts/{token}/agent.py", Summary: "Best agent.py of an optimization job (no key: the URL is the credential)",
			Public: true, Tags: tags, Errors: map[int]string{http.StatusNotFound: "no artifact has this token: it expired or was never issued"}},
			func(w http.ResponseWriter, r *http.Request) error {
				code, err := svc.Artifact(r.Context(), r.PathValue("token"))
				if err != nil {
					return err
				}
				h := w.Header()
				h.Set("Content-Type", "text/x-python; charset=utf-8")
				h.Set("Content-Disposition", `attachment; filename="agent.py"`)
				h.Set("X-Content-Type-Options", "nosniff")
				h.Set("Cache-Control", "private, no-store")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(code)
				return nil
			})
		s.AddErrorMapper(optimizerError)
		s.OnClose(svc.Close)
		return nil
	}
}

// handleOptimize checks the spec's bounds (in seconds) and submits.
func handleOptimize(svc *optimizer.Service, w http.ResponseWriter, r *http.Request) error {
	var body optimizeRequest
	if err := decodeJSON(r, &body, decodeOptions{EmptyIsObject: true}); err != nil {
		return err
	}
	if body.Optimizer != "" && body.Optimizer != optimizer.OptimizerAgentOpt {
		return Validation(http.StatusUnprocessableEntity, "optimizer must be %q, got %q", optimizer.OptimizerAgentOpt, body.Optimizer)
	}
	if strings.TrimSpace(body.InputURL) == "" { // blank is missing too
		return Validation(http.StatusUnprocessableEntity, "agentopt requires input_url")
	}
	if len(body.TargetModels) == 0 {
		return Validation(http.StatusUnprocessableEntity, "agentopt requires target_models")
	}
	req := optimizer.Request{Optimizer: body.Optimizer, InputURL: body.InputURL, TargetModels: body.TargetModels}
	if body.NIterations != nil {
		n, err := boundedInt("n_iterations", float64(*body.NIterations), 1, optimizer.MaxNIterations)
		if err != nil {
			return err
		}
		req.NIterations = n
	}
	for _, b := range []struct {
		name     string
		v        *specNumber
		lo, hi   int
		into     *time.Duration
		fallback time.Duration
	}{
		{"overall_timeout_seconds", body.OverallTimeoutSeconds, 300, 7200, &req.OverallTimeout, optimizer.DefaultOverallTimeout},
		{"llm_call_timeout_seconds", body.LLMCallTimeoutSeconds, 30, 600, &req.LLMCallTimeout, optimizer.DefaultLLMCallTimeout},
		{"sandbox_timeout_seconds", body.SandboxTimeoutSeconds, 60, 1800, &req.SandboxTimeout, optimizer.DefaultSandboxTimeout},
	} {
		*b.into = b.fallback
		if b.v == nil {
			continue
		}
		n, err := boundedInt(b.name, float64(*b.v), b.lo, b.hi)
		if err != nil {
			return err
		}
		*b.into = time.Duration(n) * time.Second
	}
	if body.Seed != nil {
		v, err := body.Seed.value()
		if err != nil {
			return err
		}
		req.Seed = &v
	}
	// The spec's messages for the other fields come first; a body that is otherwise valid
	// must still name its optimizer.
	if err := req.Validate(); err != nil {
		return err
	}
	if body.Optimizer == "" {
		return Validation(http.StatusUnprocessableEntity, "optimizer is required: %q", optimizer.OptimizerAgentOpt)
	}
	sub, err := svc.Submit(r.Context(), owner(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, sub)
	return nil
}

// optimizerError maps the optimizer's errors onto statuses.
func optimizerError(err error) *APIError {
	var ve *optimizer.ValidationError
	var nf *optimizer.NotFinishedError
	var fe *optimizer.FinishedError
	var se *optimizer.SubmitError
	switch {
	case errors.Is(err, optimizer.ErrInvalid) && errors.As(err, &ve):
		return Validation(http.StatusUnprocessableEntity, "%s", ve.Message)
	case errors.As(err, &se):
		// The body is well formed; the bundle it points at is not usable: 400, as for a bad
		// uploaded file, naming input_url, the file and the row.
		e := Validation(http.StatusBadRequest, "%s", userMessage(se))
		e.Param = se.Field()
		return e
	case errors.As(err, &nf):
		e := Errorf(http.StatusConflict, KindConflict, "%s", userMessage(nf))
		e.Extra = map[string]any{"status": nf.Status, "job_id": nf.JobID}
		return e
	case errors.Is(err, optimizer.ErrNotFound):
		return NotFound("%s", userMessage(err))
	case errors.As(err, &fe):
		e := Errorf(http.StatusConflict, KindConflict, "%s", userMessage(fe))
		e.Extra = map[string]any{"status": fe.Status, "job_id": fe.JobID}
		return e
	case errors.Is(err, optimizer.ErrFinished):
		return Errorf(http.StatusConflict, KindConflict, "%s", userMessage(err))
	case errors.Is(err, optimizer.ErrStillRunning):
		e := Errorf(http.StatusConflict, KindConflict, "%s", userMessage(err))
		e.Header = http.Header{"Retry-After": []string{"5"}}
		return e
	case errors.Is(err, optimizer.ErrTooManyJobs):
		e := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userMessage(err))
		e.Header = http.Header{"Retry-After": []string{"60"}}
		return e
	case errors.Is(err, optimizer.ErrQueueFull):
		// The server's queue, not this key's share of it: 503, as for a full training queue.
		e := Errorf(http.StatusServiceUnavailable, KindUnavailable, "too many optimization jobs are waiting; retry later")
		e.Header = http.Header{"Retry-After": []string{"60"}}
		return e
	case errors.Is(err, optimizer.ErrClosed):
		return Errorf(http.StatusServiceUnavailable, KindUnavailable, "the optimizer is shutting down")
	}
	return nil
}

// jobKeyMinter mints the per-job gateway keys of optimization jobs: shared scoped keys of
// the job's owner (valid on every replica of the store, see Auth.AddSharedKey), limited to
// the target model and to the grant's call and token budget, and metered by a shared
// completions.Budget kept in the store.
type jobKeyMinter struct{ auth *Auth }

// keyScopeDoc is the stored scope document of a shared scoped key: a job key or a virtual
// key (see keyScopes).
type keyScopeDoc struct {
	Tag    string `json:"tag"`
	Budget string `json:"budget"`
	// CallTimeoutMS is the job's llm_call_timeout_seconds, in milliseconds (0: none).
	CallTimeoutMS int64 `json:"call_timeout_ms,omitempty"`
	// KeyID marks a virtual key (keys.go): its id.
	KeyID string `json:"key_id,omitempty"`
	// RequestsPerMinute is a virtual key's own rate bound (0: the server's).
	RequestsPerMinute int `json:"rpm,omitempty"`
	// Guardrails are a virtual key's guardrails (completions.Scope.Guardrails).
	Guardrails []string `json:"guardrails,omitempty"`
	// TeamID is a virtual key's team (teams.go): its budget sits inside the team's.
	TeamID string `json:"team_id,omitempty"`
	// MCPServers are the MCP servers a virtual key may use (empty: every one).
	MCPServers []string `json:"mcp_servers,omitempty"`
	// UserID is the user a virtual key was made for (users.go): its budget sits inside the
	// user's, and inside the user's membership of TeamID, when they exist.
	UserID string `json:"user_id,omitempty"`
	// OrganizationID is the organization of a virtual key without a team (organizations.go):
	// its budget sits inside the organization's, and inside its user's membership of it.
	OrganizationID string `json:"organization_id,omitempty"`
	// Tags are a virtual key's tags (keytags.go), added to every request it makes.
	Tags []string `json:"tags,omitempty"`
	// TagsRead says Tags were read from the key's metadata when the document was written;
	// a virtual key's document written by a build before key tags lacks it, and its tags are
	// read from the key's record on each request until the key is next written.
	TagsRead bool `json:"tags_read,omitempty"`
	// KeyAlias is a virtual key's name (LiteLLM's key_alias) when the document was written
	// (a /key/update rewrites it); one written by a build before it lacks it, and the key's
	// name is read with its tags (TagsRead) or else left empty until the key is next written.
	KeyAlias string `json:"key_alias,omitempty"`
	// MaxParallel is a virtual key's bound on its requests in flight (0: none).
	MaxParallel int `json:"max_parallel,omitempty"`
	// Aliases are a virtual key's own model names (LiteLLM's key aliases).
	Aliases map[string]string `json:"aliases,omitempty"`
	// RouterSettings are a virtual key's own retries, timeout and fallbacks (nil: its
	// team's, read with the team on every request).
	RouterSettings *routerSettings `json:"router_settings,omitempty"`
}

// MintKey implements optimizer.KeyMinter.
func (m jobKeyMinter) MintKey(ctx context.Context, g optimizer.KeyGrant) (*optimizer.JobKey, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("server: minting a job key: %w", err)
	}
	key := "sy-job-" + base64.RawURLEncoding.EncodeToString(b[:])
	budgetID := "job/" + base64.RawURLEncoding.EncodeToString(b[:9])
	budget, err := completions.CreateSharedBudget(ctx, m.auth.store, budgetID,
		completions.BudgetLimits{AllowedModels: []string{g.Model}, MaxCalls: g.MaxCalls, MaxTokens: g.MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("server: minting a job key: %w", err)
	}
	ttl := g.TTL
	if ttl <= 0 {
		ttl = 2 * time.Hour
	}
	tag := "optimize:" + g.JobID
	doc, _ := json.Marshal(keyScopeDoc{Tag: tag, Budget: budgetID, CallTimeoutMS: g.CallTimeout.Milliseconds()})
	scope := completions.Scope{Owner: g.Owner, Tag: tag, Budget: budget, CallTimeout: g.CallTimeout}
	revoke, err := m.auth.AddSharedKey(ctx, key, g.Owner, scope, doc, ttl+10*time.Minute)
	if err != nil {
		_ = completions.DeleteSharedBudget(context.WithoutCancel(ctx), m.auth.store, budgetID)
		return nil, fmt.Errorf("server: minting a job key: %w", err)
	}
	var final completions.BudgetUsage
	h := sha256.Sum256([]byte(key))
	return &optimizer.JobKey{Key: key, Ref: hex.EncodeToString(h[:]) + " " + budgetID,
		Revoke: func() {
			bg := context.Background()
			final = budget.Used(bg) // Usage is read once more after the revoke
			_ = revoke(bg)
			_ = completions.DeleteSharedBudget(bg, m.auth.store, budgetID)
		},
		Usage: func() optimizer.Usage {
			u := final
			if reflect.DeepEqual(u, completions.BudgetUsage{}) {
				u = budget.Used(context.Background())
			}
			return optimizer.Usage{Tokens: u.Tokens, CostUSD: u.CostUSD}
		}}, nil
}

// ReclaimKey implements optimizer.KeyReclaimer: it removes the shared key record (no
// replica accepts the key after this) and the key's budget, and returns what the budget
// metered. ref is "<hex SHA-256 of the key> <budget id>", as MintKey made it.
func (m jobKeyMinter) ReclaimKey(ctx context.Context, ref string) (optimizer.Usage, error) {
	hash, budgetID, ok := strings.Cut(ref, " ")
	if !ok || len(hash) != 2*sha256.Size || !strings.HasPrefix(budgetID, "job/") {
		return optimizer.Usage{}, fmt.Errorf("server: malformed job key reference %q", ref)
	}
	if err := m.auth.store.Delete(ctx, store.ScopedKeys, hash); err != nil && !errors.Is(err, store.ErrNotFound) {
		return optimizer.Usage{}, fmt.Errorf("server: reclaiming a job key: %w", err)
	}
	budget, err := completions.LoadSharedBudget(ctx, m.auth.store, budgetID)
	if errors.Is(err, store.ErrNotFound) {
		return optimizer.Usage{}, fmt.Errorf("%w: budget %s", optimizer.ErrKeyGone, budgetID)
	}
	if err != nil {
		return optimizer.Usage{}, fmt.Errorf("server: reclaiming a job key: %w", err)
	}
	u := budget.Used(ctx)
	if err := completions.DeleteSharedBudget(ctx, m.auth.store, budgetID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return optimizer.Usage{}, fmt.Errorf("server: reclaiming a job key: %w", err)
	}
	return optimizer.Usage{Tokens: u.Tokens, CostUSD: u.CostUSD}, nil
}

// keyScopes returns the resolver that rebuilds a shared key's scope in a process that did
// not mint it: a job key's completions.Scope (its tag, the shared budget in st, its call
// timeout), a virtual key's virtualKeyScope.
func keyScopes(st *store.Store) ScopeResolver {
	return func(ctx context.Context, owner string, doc json.RawMessage) (any, error) {
		var s keyScopeDoc
		if err := json.Unmarshal(doc, &s); err != nil {
			return nil, fmt.Errorf("scoped key document: %w", err)
		}
		b, err := completions.LoadSharedBudget(ctx, st, s.Budget)
		if err != nil {
			return nil, err
		}
		scope := completions.Scope{Owner: owner, Tag: s.Tag, Budget: b, CallTimeout: time.Duration(s.CallTimeoutMS) * time.Millisecond, Guardrails: s.Guardrails}
		if s.KeyID != "" {
			if !s.TagsRead {
				// Written by an earlier build: the key's metadata.tags label is its tags
				// (LiteLLM reads them there), checked as they are when set; a key revoked
				// meanwhile, or an invalid label, has none.
				if rec, err := storedKeyOf(ctx, st, owner, s.KeyID); err == nil {
					s.Tags, _ = keyTags(rec.Metadata)
					s.KeyAlias = rec.Name
				}
			}
			scope.MCPServers = s.MCPServers // Scope's MCP servers: /mcp and the mcp tools of /v1/responses
			vk := virtualKeyScope{Scope: scope, KeyID: s.KeyID, RequestsPerMinute: s.RequestsPerMinute, TeamID: s.TeamID, UserID: s.UserID, Tags: s.Tags, KeyAlias: s.KeyAlias,
				MaxParallel: s.MaxParallel, Aliases: s.Aliases}
			var teamSettings *routerSettings
			org := s.OrganizationID // a key without a team; a team's key is in the team's
			if s.TeamID != "" {
				t, err := joinTeam(ctx, st, owner, s.TeamID, b)
				if err != nil {
					return nil, err
				}
				vk.Team, vk.TeamRPM, vk.TeamMaxParallel = teamBudgetID(owner, s.TeamID), t.RequestsPerMinute, t.MaxParallelRequests
				vk.TeamAlias = t.Name // read with the team on every request: a rename applies at once
				// The team's tags after the key's, read with the team on every request: a
				// /team/update applies at once. A label an earlier build kept unchecked is left out.
				if tt, err := teamTags(t.Metadata); err == nil && len(tt) > 0 {
					vk.Tags = completions.AddTags(slices.Clone(vk.Tags), tt...)
				}
				org = t.OrganizationID
				teamSettings = t.RouterSettings // read with the team: a /team/update applies at once
			}
			keyRouterSettings(s.RouterSettings, teamSettings).applyTo(&vk.Scope)
			if org != "" {
				o, err := joinOrganization(ctx, st, owner, org, b)
				if err != nil {
					return nil, err
				}
				vk.Org, vk.OrgRPM = organizationBudgetID(owner, org), o.RequestsPerMinute
				if s.UserID != "" {
					if err := joinOrganizationMember(ctx, st, owner, org, s.UserID, b); err != nil {
						return nil, err
					}
				}
			}
			if s.UserID != "" {
				if err := joinUser(ctx, st, owner, s.UserID, s.TeamID, b); err != nil {
					return nil, err
				}
			}
			return vk, nil
		}
		return scope, nil
	}
}
