package routing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/store"
)

// PreferencePrefix starts every preference id ("pref_" and 24 hex digits). A
// preference_id without it names a trained router model (rm_...), as before.
const PreferencePrefix = "pref_"

// MaxPreferenceNameLength bounds a preference's name, in characters.
const MaxPreferenceNameLength = 256

// preferenceKind is the owner index kind of preferences.
const preferenceKind = "preference"

// Preference is a personalized routing preference (Not Diamond's user preference): model
// selection with preference_id set to its id ranks with its base router, then corrects
// the estimates by the feedback given on its sessions (POST /api/v1/feedback). Its
// counts are bounded: one entry per model that received feedback, at most
// MaxPreferenceModels.
type Preference struct {
	// ID is the preference id, "pref_..." (the wire's preference_id).
	ID string `json:"preference_id" jsonschema:"required"`
	// Name is the caller's label for it, if any.
	Name string `json:"name,omitempty"`
	// RouterModelID names the owner's trained router the corrections apply on top of;
	// empty: the learned default router.
	RouterModelID string `json:"router_model_id,omitempty"`
	// RouterTrainingJobID names the owner's training job whose router the corrections
	// apply on top of once it completes (a preference made by Not Diamond's
	// trainCustomRouter; see Selector.BindTrainingJob); until then, or when the job
	// failed, the learned default router ranks. RouterModelID wins when both are set.
	RouterTrainingJobID string `json:"router_training_job_id,omitempty"`
	// PreviousRouterModelID is the trained router the preference ranked with when its
	// current training job was bound (a retrain): it keeps ranking until that job
	// completes, and for good if the job fails; empty: the learned default router.
	PreviousRouterModelID string `json:"previous_router_model_id,omitempty"`
	// CreatedAt and UpdatedAt (the last feedback) are UTC times.
	CreatedAt time.Time `json:"created_at" jsonschema:"required"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// FeedbackCount is how many feedbacks the preference has learned from.
	FeedbackCount int `json:"feedback_count"`
	// Models holds the counts per model (sorted by model).
	Models []ModelFeedback `json:"models,omitempty"`
	// RouterFallback, in answers only (never stored), says the router the preference
	// follows is gone, as a selection under it would say (Response.RouterFallback):
	// FallbackRouterDeleted (its router model was deleted: the learned default router
	// ranks) or FallbackTrainingJobDeleted (its training job was deleted before it trained
	// a router: its earlier router ranks, else the learned default router); empty when
	// its router can rank, it is still training, or it has none.
	RouterFallback string `json:"router_fallback,omitempty" jsonschema:"enum=router_deleted,enum=training_job_deleted,description=Set when the router this preference follows is gone (as model selection under it says): router_deleted (its router model was deleted so the learned default router ranks) or training_job_deleted (its training job was deleted before it trained a router so its earlier router ranks or else the learned default router); absent when its router can rank or it has none yet"`
	// Owner is the caller the preference belongs to (stored; never in answers).
	Owner string `json:"owner,omitempty" jsonschema:"-"`
}

// public is the preference as answered to its owner: without Owner, with each model's
// current Adjustment.
func (p Preference) public() *Preference {
	p.Owner = ""
	p.RouterFallback = ""
	p.Models = append([]ModelFeedback(nil), p.Models...)
	for i := range p.Models {
		m := &p.Models[i]
		m.Adjustment = adjustment(m.Feedback, m.Successes, m.Expected)
	}
	return &p
}

// PreferenceRequest creates a preference. Both fields are optional.
type PreferenceRequest struct {
	// Name is a label for the preference.
	Name string `json:"name,omitempty" jsonschema:"description=A label for the preference (at most 256 characters)"`
	// RouterModelID names a trained router of the caller (a model_id) to personalize;
	// empty means the learned default router.
	RouterModelID string `json:"router_model_id,omitempty" jsonschema:"description=model_id of a trained router of yours to personalize on top of; absent: the learned default router"`
}

// PreferenceList is one page of an owner's preferences, newest first.
type PreferenceList struct {
	Data []Preference `json:"data" jsonschema:"required"`
	// NextCursor continues the listing; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

func newPreferenceID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("routing: preference id: %w", err)
	}
	return PreferencePrefix + hex.EncodeToString(b[:]), nil
}

// CreatePreference creates a preference for owner. A router_model_id that names no
// trained router of owner is a *NotFoundError (field router_model_id); a name over
// MaxPreferenceNameLength characters a *ValidationError.
func (s *Selector) CreatePreference(ctx context.Context, owner string, req PreferenceRequest) (*Preference, error) {
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	if n := utf8.RuneCountInString(req.Name); n > MaxPreferenceNameLength {
		return nil, invalid("name", "must be at most %d characters (got %d)", MaxPreferenceNameLength, n)
	}
	if id := req.RouterModelID; id != "" {
		if strings.HasPrefix(id, PreferencePrefix) {
			return nil, invalid("router_model_id", "must name a trained router model (model_id), not a preference")
		}
		if s.custom == nil {
			return nil, &NotFoundError{Field: "router_model_id", ID: id, Err: errors.New("no custom router models are configured")}
		}
		if _, err := s.custom.Rank(ctx, routerOwner(owner), id, []string{"preference check"}); err != nil {
			if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
				return nil, &NotFoundError{Field: "router_model_id", ID: id, Err: err}
			}
			return nil, fmt.Errorf("routing: check router model %q: %w", id, err)
		}
	}
	id, err := newPreferenceID()
	if err != nil {
		return nil, err
	}
	p := Preference{ID: id, Name: req.Name, RouterModelID: req.RouterModelID, CreatedAt: s.now().UTC(), Owner: owner}
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if err := store.PutJSON(ctx, tx, store.Preferences, id, p); err != nil {
			return err
		}
		return store.PutOwned(ctx, tx, store.OwnedRef{Kind: preferenceKind, Owner: owner, Created: p.CreatedAt, ID: id})
	})
	if err != nil {
		return nil, fmt.Errorf("routing: store preference: %w", err)
	}
	s.log.DebugContext(ctx, "preference created", "preference_id", id, "router_model_id", req.RouterModelID)
	return p.public(), nil
}

// Preference returns owner's preference id with its feedback counts. An unknown id, or
// one of another owner, is a *NotFoundError (field preference_id).
func (s *Selector) Preference(ctx context.Context, owner, id string) (*Preference, error) {
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	p, err := loadPreference(ctx, s.store, owner, id)
	if err != nil {
		return nil, err
	}
	return s.withRouterStatus(ctx, owner, p.public(), nil), nil
}

// withRouterStatus sets p.RouterFallback when the router p follows is gone, as a
// selection under p would find it (owner's routers, or its issuer's for a virtual key).
// A failure to tell (the store or the custom models failing) is logged and leaves it
// empty: reading a preference does not fail on its router. m, when not nil, remembers the
// answers for the other preferences of a listing.
func (s *Selector) withRouterStatus(ctx context.Context, owner string, p *Preference, m *routerMemo) *Preference {
	id, fallback, err := s.preferenceRouterMemo(ctx, owner, p, m)
	if err == nil && id != "" {
		switch err = m.checkRouterModel(ctx, s, routerOwner(owner), id); {
		case errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound):
			fallback, err = FallbackRouterDeleted, nil
		case err == nil:
			fallback = ""
		}
	}
	if err != nil {
		s.log.WarnContext(ctx, "routing: could not tell whether the preference's router can rank", "preference_id", p.ID, "error", err)
		return p
	}
	p.RouterFallback = fallback
	return p
}

// checkRouterModel returns an error matching ErrNotFound when owner's router model id
// cannot rank: asked of the custom models without running it when they can tell
// (ModelChecker), else by ranking one probe text (as CreatePreference checks it).
func (s *Selector) checkRouterModel(ctx context.Context, owner, id string) error {
	if s.custom == nil {
		return &NotFoundError{Field: "router_model_id", ID: id, Err: errors.New("no custom router models are configured")}
	}
	if mc, ok := s.custom.(ModelChecker); ok {
		return mc.CheckModel(ctx, owner, id)
	}
	_, err := s.custom.Rank(ctx, owner, id, []string{"preference check"})
	return err
}

func loadPreference(ctx context.Context, r store.Reader, owner, id string) (*Preference, error) {
	p, err := store.GetJSON[Preference](ctx, r, store.Preferences, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &NotFoundError{Field: "preference_id", ID: id, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("routing: read preference %q: %w", id, err)
	}
	if !store.Owns(owner, p.Owner) {
		return nil, &NotFoundError{Field: "preference_id", ID: id}
	}
	return &p, nil
}

// loadUsablePreference is loadPreference for selecting with the preference and learning
// from feedback on it: a key acting for its issuer ("<issuer>/<key>", a server's virtual
// key) uses its issuer's preferences too, but not a sibling's.
func loadUsablePreference(ctx context.Context, r store.Reader, owner, id string) (*Preference, error) {
	p, err := store.GetJSON[Preference](ctx, r, store.Preferences, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &NotFoundError{Field: "preference_id", ID: id, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("routing: read preference %q: %w", id, err)
	}
	if !store.Owns(owner, p.Owner) && p.Owner != routerOwner(owner) {
		return nil, &NotFoundError{Field: "preference_id", ID: id}
	}
	return &p, nil
}

// routerOwner is whose trained routers owner ranks with: owner's own, or for a key acting
// for its issuer ("<issuer>/<key>", a server's virtual key; store.Owns) the issuer's.
func routerOwner(owner string) string {
	issuer, _, _ := strings.Cut(owner, "/")
	return issuer
}

// ListPreferences returns one page of owner's preferences, newest first. A bad option is
// a *ValidationError naming it (limit, cursor, created_after, created_before); Status is
// not used.
func (s *Selector) ListPreferences(ctx context.Context, owner string, opts store.ListFilter) (PreferenceList, error) {
	if s.store == nil {
		return PreferenceList{}, ErrZeroSelector
	}
	if len(opts.Status) > 0 {
		return PreferenceList{}, invalid("status", "preferences have no states")
	}
	items, next, err := store.ListOwned(ctx, s.store, opts.Query(preferenceKind, owner), func(id string) (Preference, bool, error) {
		p, err := loadPreference(ctx, s.store, owner, id)
		if errors.Is(err, ErrNotFound) {
			return Preference{}, false, nil
		}
		if err != nil {
			return Preference{}, false, err
		}
		return *p.public(), true, nil
	})
	if err != nil {
		var qe *store.QueryError
		if errors.As(err, &qe) {
			return PreferenceList{}, invalid(qe.Field, "%s", qe.Message)
		}
		return PreferenceList{}, fmt.Errorf("routing: list preferences: %w", err)
	}
	if items == nil {
		items = []Preference{}
	}
	// The page's router status: the training jobs and router models its preferences
	// follow are read together once the page is known (routerMemo.prefill: one read of
	// each for the page, however many preferences), each router and job once, and the
	// owner's router models paged at most once (for the jobs that are gone).
	memo := &routerMemo{}
	memo.prefill(ctx, s, owner, items)
	for i := range items {
		s.withRouterStatus(ctx, owner, &items[i], memo)
	}
	return PreferenceList{Data: items, NextCursor: next}, nil
}

// DeletePreference deletes owner's preference id with its feedback counts; model
// selection naming it answers not found afterwards. An unknown id is a *NotFoundError.
func (s *Selector) DeletePreference(ctx context.Context, owner, id string) error {
	if s.store == nil {
		return ErrZeroSelector
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		p, err := loadPreference(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if err := tx.Delete(ctx, store.Preferences, id); err != nil {
			return fmt.Errorf("routing: delete preference %q: %w", id, err)
		}
		return store.DeleteOwned(ctx, tx, store.OwnedRef{Kind: preferenceKind, Owner: owner, Created: p.CreatedAt, ID: id})
	})
}

// PreferenceUpdate is the body of a preference update (Not Diamond's
// userPreferenceUpdate): the new name; a nil Name leaves it as it is.
type PreferenceUpdate struct {
	// Name replaces the preference's label; "" removes it.
	Name *string `json:"name" jsonschema:"description=The new label (at most 256 characters; empty removes it; null or absent keeps it)"`
}

// UpdatePreference renames owner's preference id and returns it; its router, training
// job and feedback counts are kept. An unknown id, or one of another owner, is a
// *NotFoundError (field preference_id); a name over MaxPreferenceNameLength characters a
// *ValidationError.
func (s *Selector) UpdatePreference(ctx context.Context, owner, id string, upd PreferenceUpdate) (*Preference, error) {
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	if upd.Name != nil {
		if n := utf8.RuneCountInString(*upd.Name); n > MaxPreferenceNameLength {
			return nil, invalid("name", "must be at most %d characters (got %d)", MaxPreferenceNameLength, n)
		}
	}
	var out *Preference
	err := s.store.Update(ctx, func(tx store.Tx) error {
		p, err := loadPreference(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if upd.Name != nil {
			p.Name = *upd.Name
			if err := store.PutJSON(ctx, tx, store.Preferences, id, *p); err != nil {
				return fmt.Errorf("routing: update preference %q: %w", id, err)
			}
		}
		out = p.public()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.withRouterStatus(ctx, owner, out, nil), nil
}

// TrainingJobModels is what a CustomModels may also do: say which router model an
// owner's training job produced. TrainerModels does; preferences bound to a training job
// need it.
type TrainingJobModels interface {
	// JobModel returns the model id the job produced, "" while it is queued or running or
	// when it failed; a job record deleted after it trained a model still answers that
	// model. An unknown job, or one of another owner, is ErrNotFound.
	JobModel(ctx context.Context, owner, jobID string) (string, error)
}

// ModelChecker is implemented by CustomModels that can tell, without running it, whether
// an owner's router model can rank (TrainerModels does). A bounded selection (one with a
// timeout) asks it before its timeout starts, so an unknown preference_id is the request's
// own error however short the timeout.
type ModelChecker interface {
	// CheckModel returns an error matching ErrNotFound for a model the owner cannot rank
	// with (unknown, archived or another owner's).
	CheckModel(ctx context.Context, owner, modelID string) error
}

// BindTrainingJob makes the owner's training job jobID the base router of a preference
// (Not Diamond's trainCustomRouter): a new one named name when id is "", else the owner's
// preference id, whose earlier router it replaces once the job completes — until then, and
// for good if the job fails, the earlier router keeps ranking (PreviousRouterModelID). Its
// feedback counts are kept: they compare outcomes with the estimates of the router that
// ranked each rated selection. It returns the preference. An unknown id is a *NotFoundError (field preference_id).
func (s *Selector) BindTrainingJob(ctx context.Context, owner, id, name, jobID string) (*Preference, error) {
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	if jobID == "" {
		return nil, invalid("training_job_id", "is required")
	}
	if id == "" {
		p, err := s.CreatePreference(ctx, owner, PreferenceRequest{Name: name})
		if err != nil {
			return nil, err
		}
		id = p.ID
	}
	b, err := s.PrepareTrainingBinding(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	var out *Preference
	err = s.store.Update(ctx, func(tx store.Tx) error {
		p, err := b.Bind(ctx, tx, jobID)
		out = p
		return err
	})
	if err != nil {
		return nil, err
	}
	s.log.DebugContext(ctx, "preference bound to a training job", "preference_id", id, "training_job_id", jobID)
	return out, nil
}

// preferenceRouter is the trained router model a preference ranks with, "" for the learned
// default router: its RouterModelID, else the model its training job produced once done.
func (s *Selector) preferenceRouter(ctx context.Context, owner string, p *Preference) (string, error) {
	id, _, err := s.preferenceRouterWhy(ctx, owner, p)
	return id, err
}

// preferenceRouterWhy is preferenceRouter saying, in fallback, why the preference does not
// rank with the router it follows: FallbackTrainingJobDeleted, or "".
func (s *Selector) preferenceRouterWhy(ctx context.Context, owner string, p *Preference) (id, fallback string, err error) {
	return s.preferenceRouterMemo(ctx, owner, p, nil)
}

// preferenceRouterMemo is preferenceRouterWhy asking m (nil: nobody) first.
func (s *Selector) preferenceRouterMemo(ctx context.Context, owner string, p *Preference, m *routerMemo) (id, fallback string, err error) {
	if p.RouterModelID != "" || p.RouterTrainingJobID == "" {
		return p.RouterModelID, "", nil
	}
	jm, ok := s.custom.(TrainingJobModels)
	if !ok {
		return p.PreviousRouterModelID, "", nil
	}
	id, err = m.jobModel(ctx, jm, routerOwner(owner), p.RouterTrainingJobID)
	if errors.Is(err, ErrNotFound) {
		// deleted before it trained a router: the router the preference had before ranks
		// (the learned default router for a new one)
		return p.PreviousRouterModelID, FallbackTrainingJobDeleted, nil
	}
	if err == nil && id == "" {
		// still training or failed: as when deleted, but nothing was lost
		return p.PreviousRouterModelID, "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("routing: preference %s: training job %s: %w", p.ID, p.RouterTrainingJobID, err)
	}
	return id, "", nil
}

// routerMemo remembers, within one listing of an owner's preferences, what the routers
// they follow answered: whether a router model can rank, which model a training job
// produced, and the owner's router models by the job that trained them (read at most once,
// for the preferences whose training job record is gone). A nil *routerMemo remembers
// nothing. It is not safe for concurrent use.
type routerMemo struct {
	checks    map[string]error
	jobs      map[string]memoJobModel
	byJob     map[string]string
	byJobErr  error
	byJobRead bool
}

type memoJobModel struct {
	id  string
	err error
}

// jobModelIndexer is what TrainerModels also does: answer JobModel with an index of the
// owner's router models by training job (modelsByJob) that the caller reads once for many
// jobs, instead of paging the models for each job whose record is gone.
type jobModelIndexer interface {
	// modelsByJob maps the training job of each of owner's router models to the model.
	modelsByJob(ctx context.Context, owner string) (map[string]string, error)
	// jobModelIndexed is JobModel finding a job that is gone in byJob's answer.
	jobModelIndexed(ctx context.Context, owner, jobID string, byJob func() (map[string]string, error)) (string, error)
}

// checkRouterModel is s.checkRouterModel, remembered by model id.
func (m *routerMemo) checkRouterModel(ctx context.Context, s *Selector, owner, id string) error {
	if m == nil {
		return s.checkRouterModel(ctx, owner, id)
	}
	if err, ok := m.checks[id]; ok {
		return err
	}
	err := s.checkRouterModel(ctx, owner, id)
	if m.checks == nil {
		m.checks = map[string]error{}
	}
	m.checks[id] = err
	return err
}

// jobModel is jm.JobModel, remembered by job id, with one index of the owner's models for
// every job that is gone when jm can use one.
func (m *routerMemo) jobModel(ctx context.Context, jm TrainingJobModels, owner, jobID string) (string, error) {
	if m == nil {
		return jm.JobModel(ctx, owner, jobID)
	}
	if a, ok := m.jobs[jobID]; ok {
		return a.id, a.err
	}
	var id string
	var err error
	if ix, ok := jm.(jobModelIndexer); ok {
		id, err = ix.jobModelIndexed(ctx, owner, jobID, func() (map[string]string, error) {
			if !m.byJobRead {
				m.byJob, m.byJobErr = ix.modelsByJob(ctx, owner)
				m.byJobRead = true
			}
			return m.byJob, m.byJobErr
		})
	} else {
		id, err = jm.JobModel(ctx, owner, jobID)
	}
	if m.jobs == nil {
		m.jobs = map[string]memoJobModel{}
	}
	m.jobs[jobID] = memoJobModel{id, err}
	return id, err
}
