package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// LiteLLM's proxy manages end users ("customers") through /customer/new, /customer/info,
// /customer/list, /customer/update, /customer/delete, /customer/block and
// /customer/unblock, each also under its older /end_user/ name; the routes here answer
// those requests as translations onto the end users of endusers.go (the same records,
// checks and owner scoping as /api/v1/customers), in LiteLLM's shapes, messages and error
// envelope. budget_id names a budget of /budget/new (litellmbudgets.go) whose limits the
// end user takes. A LiteLLM field with no equivalent here (allowed_model_region,
// default_model, object_permission) is refused with a 400 naming it unless it asks for
// nothing.

// litellmCustomerFieldNames maps LiteLLM's customer fields onto endUserRequest's.
var litellmCustomerFieldNames = map[string]string{
	"user_id":         "end_user_id",
	"alias":           "alias",
	"blocked":         "blocked",
	"max_budget":      "max_budget_usd",
	"soft_budget":     "soft_budget_usd",
	"budget_duration": "budget_duration",
	"models":          "models",
	"budget_id":       "budget_id",
	"tpm_limit":       "tokens_per_minute",
	"rpm_limit":       "requests_per_minute",
	// model_max_budget, in LiteLLM's shape, is translated (litellmModelMaxBudget).
	"model_max_budget": "model_max_budget",
}

// litellmCustomerNativeNames are endUserRequest's field names and LiteLLM's, for failures.
var litellmCustomerNativeNames = []litellmName{
	{"max_budget_usd", "max_budget"}, {"soft_budget_usd", "soft_budget"}, {"budget_duration", "budget_duration"},
	{"end_user_id", "user_id"}, {"alias", "alias"}, {"models", "models"}, {"blocked", "blocked"},
	{"tokens_per_minute", "tpm_limit"}, {"requests_per_minute", "rpm_limit"}, {"budget_id", "budget_id"},
	{"model_max_budget", "model_max_budget"},
}

// litellmCustomer is an end user as LiteLLM's LiteLLM_EndUserTable describes one.
type litellmCustomer struct {
	UserID             string                `json:"user_id"`
	Alias              *string               `json:"alias"`
	Spend              float64               `json:"spend" jsonschema:"description=USD the end user's requests spent (in the current period with budget_duration)"`
	Blocked            bool                  `json:"blocked"`
	AllowedModelRegion *string               `json:"allowed_model_region" jsonschema:"description=Always null (not supported)"`
	DefaultModel       *string               `json:"default_model" jsonschema:"description=Always null (not supported)"`
	BudgetID           *string               `json:"budget_id" jsonschema:"description=The budget of /budget/new the end user takes; else its own budget (end user id) when it has one"`
	Budget             *litellmCustomerLimit `json:"litellm_budget_table" jsonschema:"description=The end user's budget; null when it has none"`
	Models             []string              `json:"models" jsonschema:"description=Switchyard's extension: the models its requests may call; empty for every model"`
	CreatedAt          time.Time             `json:"created_at"`
}

// litellmCustomerLimit is LiteLLM's LiteLLM_BudgetTable of an end user.
type litellmCustomerLimit struct {
	MaxBudget      *float64   `json:"max_budget"`
	SoftBudget     *float64   `json:"soft_budget"`
	BudgetDuration *string    `json:"budget_duration"`
	BudgetResetAt  *time.Time `json:"budget_reset_at"`
	TPMLimit       *int64     `json:"tpm_limit"`
	RPMLimit       *int       `json:"rpm_limit"`
	// ModelMaxBudget is the end user's per-model budgets in LiteLLM's shape ({} for none).
	ModelMaxBudget map[string]litellmModelBudget `json:"model_max_budget" jsonschema:"description=USD budgets of single models ({gpt-4o: {budget_limit: 10\\, time_period: 1d}}); {} for none"`
	// ModelMaxBudgetUsage is what each model of ModelMaxBudget spent (Switchyard's extension).
	ModelMaxBudgetUsage map[string]litellmModelBudgetUsage `json:"model_max_budget_usage,omitempty" jsonschema:"description=Switchyard's extension: what each model of model_max_budget spent in its current time_period"`
}

// litellmCustomerRequest documents LiteLLM's customer request body (POST /customer/new,
// and POST /customer/update); other LiteLLM fields are refused when they ask for something.
type litellmCustomerRequest struct {
	UserID         string                        `json:"user_id" jsonschema:"description=The id the app gives the end user (required)"`
	Alias          *string                       `json:"alias,omitempty" jsonschema:"description=A label for the end user"`
	Blocked        *bool                         `json:"blocked,omitempty" jsonschema:"description=true: its requests are refused"`
	MaxBudget      *float64                      `json:"max_budget,omitempty" jsonschema:"description=USD its requests may spend (per budget_duration)"`
	SoftBudget     *float64                      `json:"soft_budget,omitempty" jsonschema:"description=USD mark that sends a budget alert and never blocks"`
	BudgetDuration *string                       `json:"budget_duration,omitempty" jsonschema:"description=Period after which its spend starts again from zero (30d)"`
	Models         []string                      `json:"models,omitempty" jsonschema:"description=Switchyard's extension: the models its requests may call"`
	TPMLimit       *int64                        `json:"tpm_limit,omitempty" jsonschema:"description=Tokens its answers may use per minute"`
	RPMLimit       *int                          `json:"rpm_limit,omitempty" jsonschema:"description=Requests naming the end user per minute (past it a 429 with Retry-After); 0 for no bound"`
	ModelMaxBudget map[string]litellmModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models across every key ({gpt-4o: {budget_limit: 10\\, time_period: 1d}}; a plain number: for all time): a model whose budget is spent is skipped for the request's next model and a request all of whose models are refused gets LiteLLM's 400 budget_exceeded; the model that answers is charged"`
	BudgetID       *string                       `json:"budget_id,omitempty" jsonschema:"description=A budget of /budget/new whose max_budget and soft_budget and budget_duration and tpm_limit and rpm_limit and model_max_budget the end user takes: now and on every /budget/update (those fields given with it must have the budget's values)"`
}

// litellmCustomerIDs is the body of POST /customer/delete, /customer/block and
// /customer/unblock.
type litellmCustomerIDs struct {
	UserIDs []string `json:"user_ids" jsonschema:"description=The end users' ids"`
}

// litellmCustomerList is the answer of GET /customer/list with page or page_size.
type litellmCustomerList struct {
	Customers   []litellmCustomer `json:"customers" jsonschema:"description=The page's end users oldest first"`
	TotalCount  int               `json:"total_count"`
	CurrentPage int               `json:"current_page"`
	TotalPages  int               `json:"total_pages"`
}

// litellmCustomerDeletion is the answer of POST /customer/delete.
type litellmCustomerDeletion struct {
	DeletedCustomers int    `json:"deleted_customers" jsonschema:"description=How many were deleted"`
	Message          string `json:"message"`
}

// litellmCustomersBlocked is the answer of POST /customer/block.
type litellmCustomersBlocked struct {
	BlockedUsers []litellmCustomer `json:"blocked_users" jsonschema:"description=The end users blocked (made when not seen yet)"`
}

// litellmCustomersUnblocked is the answer of POST /customer/unblock: as LiteLLM's, the
// ids still blocked.
type litellmCustomersUnblocked struct {
	BlockedUsers []string `json:"blocked_users" jsonschema:"description=The ids of this key's end users still blocked (LiteLLM's answer)"`
}

// litellmCustomerPath reports the customer paths answered in LiteLLM's error envelope.
func litellmCustomerPath(path string) bool {
	return strings.HasPrefix(path, "/customer/") || strings.HasPrefix(path, "/end_user/")
}

// litellmCustomerRoutes registers LiteLLM's customer management routes, under /customer/
// and /end_user/.
func (s *Server) litellmCustomerRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	scoped := "the calling key is itself limited in scope (a virtual or job key)"
	for _, prefix := range []string{"/customer", "/end_user"} {
		alias := ""
		if prefix == "/end_user" {
			alias = " (LiteLLM's older name of /customer" + "/…)"
		}
		s.Handle(Route{Method: "POST", Path: prefix + "/new", Summary: "LiteLLM's customer creation: an end user with a budget and block (as POST /api/v1/customers)" + alias,
			Tags: tags, Request: litellmCustomerRequest{}, Response: litellmCustomer{},
			Errors: map[int]string{400: "user_id missing or taken or a bad or unsupported field: the message names it", 403: scoped, 404: "budget_id names no budget of this key (param budget_id)"}},
			func(w http.ResponseWriter, r *http.Request) error {
				fields, err := litellmBody(r)
				if err != nil {
					return err
				}
				body, err := litellmCustomerFields(fields, false)
				if err != nil {
					return err
				}
				var req endUserRequest
				if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
					return litellmCustomerNames(err)
				}
				req.budgetBlock, req.fields = req.Blocked && litellmZeroBudget(fields), bodyFields(body)
				if req.EndUserID == "" {
					return paramError("user_id", "user_id: required: the id the app gives the end user")
				}
				e, err := s.createEndUser(r.Context(), g, owner(r), req, "user_id")
				var ae *APIError
				if asAPIError(err, &ae) && ae.Status == http.StatusConflict {
					return paramError("user_id", "Customer already exists, passed user_id=%s. Please pass a new user_id.", req.EndUserID)
				}
				if err != nil {
					return litellmCustomerNames(err)
				}
				writeJSON(w, http.StatusOK, litellmCustomerOf(*e))
				return nil
			})
		s.Handle(Route{Method: "GET", Path: prefix + "/info", Summary: "LiteLLM's customer info: an end user with its spend" + alias,
			Tags: tags, Response: litellmCustomer{}, Query: []QueryParam{{Name: "end_user_id", Description: "The end user's id (required)"}},
			Errors: map[int]string{400: "end_user_id missing", 403: scoped, 404: "no end user of this key has the id"}},
			func(w http.ResponseWriter, r *http.Request) error {
				id := r.URL.Query().Get("end_user_id")
				if id == "" {
					return paramError("end_user_id", "end_user_id: required: GET %s/info?end_user_id=…", prefix)
				}
				e, err := s.endUserInfo(r.Context(), owner(r), id)
				if err != nil {
					return litellmCustomerMissing("end_user_id", id, err)
				}
				writeJSON(w, http.StatusOK, litellmCustomerOf(*e))
				return nil
			})
		s.Handle(Route{Method: "GET", Path: prefix + "/list", Summary: "LiteLLM's customer list: the end users of this key with their spend, oldest first; with page or page_size one page of them (as /key/list pages)" + alias,
			Tags: tags, Response: []litellmCustomer{}, Query: []QueryParam{
				{Name: "page", Description: "Page number from 1: answers one page {customers, total_count, current_page, total_pages} in place of the whole list", Type: "integer", Minimum: Bound(1), Maximum: Bound(1 << 30)},
				{Name: "page_size", Description: "End users per page, 1 to 100 (default 10); size is taken too", Type: "integer", Minimum: Bound(1), Maximum: Bound(store.MaxPageLimit)},
			}, Errors: map[int]string{400: "a bad page or page_size", 403: scoped}},
			s.litellmCustomerList)
		s.Handle(Route{Method: "POST", Path: prefix + "/update", Summary: "LiteLLM's customer update: changes the fields given of an end user; as LiteLLM's it ignores null, false, 0, [] and {} (/customer/unblock unblocks)" + alias,
			Tags: tags, Request: litellmCustomerRequest{}, Response: litellmCustomer{},
			Errors: map[int]string{400: "user_id missing or a bad or unsupported field: the message names it", 403: scoped, 404: "no end user of this key has the user_id, or budget_id names no budget of this key (param names which)"}},
			func(w http.ResponseWriter, r *http.Request) error {
				fields, err := litellmBody(r)
				if err != nil {
					return err
				}
				var id string
				if raw, ok := fields["user_id"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
					return paramError("user_id", "user_id: required, a string: the end user to change")
				}
				delete(fields, "user_id")
				body, err := litellmCustomerFields(fields, true)
				if err != nil {
					return err
				}
				if _, err := storedEndUserOf(r.Context(), s.cfg.Store, owner(r), id); err != nil {
					return litellmCustomerMissing("user_id", id, err)
				}
				var native map[string]json.RawMessage
				_ = json.Unmarshal(body, &native)
				_, budgetGiven := native["max_budget_usd"]
				if _, ok := native["budget_id"]; ok {
					budgetGiven = true
				}
				e, err := s.updateEndUser(r.Context(), g, owner(r), id, body, func(req *endUserRequest, prev endUser) {
					// req.budgetBlock is prev's unless the update says blocked outright.
					if budgetGiven && prev.Blocked && prev.BudgetBlock && req.budgetBlock {
						req.Blocked, req.budgetBlock = false, false // the budget of nothing, replaced
					}
				})
				if err != nil {
					return litellmCustomerMissing("user_id", id, litellmCustomerNames(err))
				}
				writeJSON(w, http.StatusOK, litellmCustomerOf(*e))
				return nil
			})
		s.Handle(Route{Method: "POST", Path: prefix + "/delete", Summary: "LiteLLM's customer deletion: deletes the end users and their spend; all or none" + alias,
			Tags: tags, Request: litellmCustomerIDs{}, Response: litellmCustomerDeletion{},
			Errors: map[int]string{400: "user_ids missing or empty", 403: scoped, 404: "an id is no end user of this key: the message lists them"}},
			func(w http.ResponseWriter, r *http.Request) error {
				ids, err := litellmCustomerIDsOf(r)
				if err != nil {
					return err
				}
				err = s.deleteEndUsers(r.Context(), owner(r), ids)
				var m *endUsersMissing
				var ae *APIError
				switch {
				case asEndUsersMissing(err, &m):
					return litellmNotFound("user_ids", "End User Id(s)=%s do not exist in db", strings.Join(m.ids, ", "))
				case asAPIError(err, &ae) && ae.Status == http.StatusNotFound:
					return litellmNotFound("user_ids", "End User Id(s)=%s do not exist in db", strings.Join(ids, ", "))
				case err != nil:
					return err
				}
				writeJSON(w, http.StatusOK, litellmCustomerDeletion{DeletedCustomers: len(ids), Message: "Successfully deleted customers with ids: " + pythonList(ids)})
				return nil
			})
		block := func(blocked bool) HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) error {
				ids, err := litellmCustomerIDsOf(r)
				if err != nil {
					return err
				}
				es, err := s.setEndUsersBlocked(r.Context(), owner(r), ids, blocked)
				var m *endUsersMissing
				if asEndUsersMissing(err, &m) {
					return litellmNotFound("user_ids", "End User Id(s)=%s do not exist in db", strings.Join(m.ids, ", "))
				}
				if err != nil {
					return litellmCustomerNames(err)
				}
				if !blocked {
					all, err := s.endUserRecords(r.Context(), owner(r))
					if err != nil {
						return err
					}
					out := litellmCustomersUnblocked{BlockedUsers: []string{}}
					for _, e := range all {
						if e.Blocked {
							out.BlockedUsers = append(out.BlockedUsers, e.EndUserID)
						}
					}
					writeJSON(w, http.StatusOK, out)
					return nil
				}
				out := make([]litellmCustomer, 0, len(es))
				for _, e := range es {
					out = append(out, litellmCustomerOf(e))
				}
				writeJSON(w, http.StatusOK, litellmCustomersBlocked{BlockedUsers: out})
				return nil
			}
		}
		blockErrors := map[int]string{400: "user_ids missing or empty or an id too long", 403: scoped}
		s.Handle(Route{Method: "POST", Path: prefix + "/block", Summary: "LiteLLM's customer block: every request naming these end users is refused (400) until unblocked; end users not seen yet are made blocked" + alias,
			Tags: tags, Request: litellmCustomerIDs{}, Response: litellmCustomersBlocked{}, Errors: blockErrors}, block(true))
		s.Handle(Route{Method: "POST", Path: prefix + "/unblock", Summary: "LiteLLM's customer unblock: lifts the end users' block and answers the ids still blocked; all or none" + alias,
			Tags: tags, Request: litellmCustomerIDs{}, Response: litellmCustomersUnblocked{},
			Errors: map[int]string{400: "user_ids missing or empty or an id too long", 403: scoped, 404: "an id is no end user of this key: the message lists them"}}, block(false))
	}
}

// litellmCustomerList answers GET /customer/list: LiteLLM's array of every end user, or
// with page, page_size or size one page of them.
func (s *Server) litellmCustomerList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	sizeName := "page_size"
	if !q.Has(sizeName) && q.Has("size") {
		sizeName = "size"
	}
	paged := q.Has("page") || q.Has(sizeName)
	page, err := litellmQueryInt(q.Get("page"), "page", 1, 1, 1<<30)
	if err != nil {
		return err
	}
	size, err := litellmQueryInt(q.Get(sizeName), sizeName, 10, 1, store.MaxPageLimit)
	if err != nil {
		return err
	}
	var es []endUser
	if paged {
		es, err = s.endUserRecords(r.Context(), owner(r))
	} else {
		es, err = s.listEndUsers(r.Context(), owner(r))
	}
	if err != nil {
		return err
	}
	if !paged {
		out := make([]litellmCustomer, 0, len(es))
		for _, e := range es {
			out = append(out, litellmCustomerOf(e))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	out := litellmCustomerList{Customers: []litellmCustomer{}, TotalCount: len(es), CurrentPage: page, TotalPages: (len(es) + size - 1) / size}
	for i := (page - 1) * size; i < len(es) && i < page*size; i++ {
		out.Customers = append(out.Customers, litellmCustomerOf(s.endUserWithSpend(r.Context(), owner(r), es[i])))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// litellmCustomerIDsOf reads and checks the user_ids of a body: given, at most
// maxEndUsersAtOnce, each once.
func litellmCustomerIDsOf(r *http.Request) ([]string, error) {
	var req litellmCustomerIDs
	if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest}); err != nil {
		return nil, err
	}
	if len(req.UserIDs) == 0 {
		return nil, paramError("user_ids", "user_ids: give the ids of the end users")
	}
	if len(req.UserIDs) > maxEndUsersAtOnce {
		return nil, paramError("user_ids", "user_ids: at most %d end users at once, got %d", maxEndUsersAtOnce, len(req.UserIDs))
	}
	out := make([]string, 0, len(req.UserIDs))
	for _, id := range req.UserIDs {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// litellmCustomerFields turns LiteLLM's customer fields into a body of endUserRequest's.
// A null field is "not given"; on update, as LiteLLM's, so are false, 0, "", [] and {}
// (its clients send every field with its default), and on /customer/new so are soft_budget,
// tpm_limit, rpm_limit and budget_duration 0 or "" beside a budget_id. max_budget 0 on /customer/new is
// LiteLLM's budget of nothing: the end user is made blocked (whatever blocked says, false
// being its clients' default) and remembers it as its budget_block, which a later
// max_budget on /customer/update lifts, as a team's.
func litellmCustomerFields(fields map[string]json.RawMessage, update bool) (json.RawMessage, error) {
	native := map[string]json.RawMessage{}
	var budgetID string
	_ = json.Unmarshal(fields["budget_id"], &budgetID)
	for name, raw := range fields {
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		to := litellmCustomerFieldNames[name]
		switch {
		case budgetID != "" && (name == "soft_budget" || name == "tpm_limit" || name == "rpm_limit" || name == "budget_duration" || name == "model_max_budget") && emptyJSON(raw):
			// Beside a budget_id, 0 or "" asks for nothing on /customer/new as on
			// /customer/update (which ignores every default): the budget sets the field.
		case to == "" && (isNull || emptyJSON(raw) || bytes.Equal(bytes.TrimSpace(raw), []byte("false"))):
			// budget_id null, object_permission {}, spend 0, …: LiteLLM's clients' defaults.
		case to == "":
			return nil, paramError(name, "%s: Switchyard's end users have no %s (an end user is a budget, block and model list for the requests naming it)", name, name)
		case isNull:
		case update && (emptyJSON(raw) || bytes.Equal(bytes.TrimSpace(raw), []byte("false"))):
			// LiteLLM's /customer/update ignores its fields' defaults.
		case name == "model_max_budget":
			m, err := litellmModelMaxBudget(raw)
			if err != nil {
				return nil, err
			}
			native[to] = m
		default:
			native[to] = raw
		}
	}
	if !update && litellmZeroBudget(fields) {
		native["blocked"] = json.RawMessage(`true`) // a budget of nothing
	}
	return json.Marshal(native)
}

// litellmCustomerNames rewrites a failure of the end user checks to name LiteLLM's fields.
func litellmCustomerNames(err error) error { return litellmRenamed(err, litellmCustomerNativeNames) }

// litellmCustomerMissing answers a 404 of end user id as LiteLLM's (param names the
// field); other errors (the 404 of a budget_id naming no budget among them) pass unchanged.
func litellmCustomerMissing(param, id string, err error) error {
	var ae *APIError
	if asAPIError(err, &ae) && ae.Status == http.StatusNotFound && ae.Param != "budget_id" {
		return litellmNotFound(param, "End User Id=%s does not exist in db", id)
	}
	return err
}

// litellmNotFound is a 404 naming param.
func litellmNotFound(param, format string, args ...any) *APIError {
	e := NotFound(format, args...)
	e.Param = param
	return e
}

// litellmCustomerOf describes e in LiteLLM's fields.
func litellmCustomerOf(e endUser) litellmCustomer {
	out := litellmCustomer{UserID: e.EndUserID, Spend: e.Spend.CostUSD, Blocked: e.Blocked, Models: e.Models, CreatedAt: e.CreatedAt}
	if out.Models == nil {
		out.Models = []string{}
	}
	if e.Alias != "" {
		out.Alias = &e.Alias
	}
	if e.MaxBudgetUSD > 0 || e.SoftBudgetUSD > 0 || e.BudgetDuration != "" || e.TokensPerMinute > 0 || e.RequestsPerMinute > 0 || len(e.ModelMaxBudget) > 0 || e.BudgetID != "" {
		id := e.EndUserID
		if e.BudgetID != "" {
			id = e.BudgetID
		}
		out.BudgetID = &id
		l := &litellmCustomerLimit{ModelMaxBudget: litellmModelBudgets(e.ModelMaxBudget)}
		if len(l.ModelMaxBudget) > 0 {
			l.ModelMaxBudgetUsage = map[string]litellmModelBudgetUsage{}
			for m, b := range l.ModelMaxBudget {
				l.ModelMaxBudgetUsage[m] = litellmModelBudgetUsage{CurrentSpend: e.Spend.Models[m].CostUSD, BudgetLimit: b.BudgetLimit, TimePeriod: b.TimePeriod}
			}
		}
		if e.TokensPerMinute > 0 {
			l.TPMLimit = &e.TokensPerMinute
		}
		if e.RequestsPerMinute > 0 {
			l.RPMLimit = &e.RequestsPerMinute
		}
		if e.MaxBudgetUSD > 0 {
			l.MaxBudget = &e.MaxBudgetUSD
		}
		if e.SoftBudgetUSD > 0 {
			l.SoftBudget = &e.SoftBudgetUSD
		}
		if e.BudgetDuration != "" {
			l.BudgetDuration = &e.BudgetDuration
			if d, err := parseBudgetDuration(e.BudgetDuration); err == nil && e.Spend.PeriodStart != nil {
				reset := e.Spend.PeriodStart.Add(d)
				l.BudgetResetAt = &reset
			}
		}
		out.Budget = l
	}
	return out
}

// pythonList formats ids as Python's str of a list of strings does (LiteLLM's messages).
func pythonList(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + strings.ReplaceAll(id, "'", `\'`) + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// asEndUsersMissing is errors.As for *endUsersMissing.
func asEndUsersMissing(err error, m **endUsersMissing) bool { return err != nil && errors.As(err, m) }

// asAPIError is errors.As for *APIError.
func asAPIError(err error, ae **APIError) bool { return err != nil && errors.As(err, ae) }

// litellmZeroBudget reports whether LiteLLM customer fields ask for max_budget 0, its
// budget of nothing.
func litellmZeroBudget(fields map[string]json.RawMessage) bool {
	raw, ok := fields["max_budget"]
	return ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) && emptyJSON(raw)
}
