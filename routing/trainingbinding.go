package routing

import (
	"context"
	"errors"

	"github.com/switchyard-ai/switchyard/store"
)

// TrainingBinding binds an existing preference to a training job inside the store
// transaction that queues the job, so that checking the preference and binding it are one
// step: a preference deleted meanwhile refuses the job (nothing is queued) instead of
// leaving a job bound to nothing. Make one with Selector.PrepareTrainingBinding and call
// Bind from the transaction (trainer.JobOptions.InTx).
type TrainingBinding struct {
	sel       *Selector
	owner, id string
	seen      Preference // the preference as read by PrepareTrainingBinding
	prev      string     // the router it ranked with then
	// before is the preference's router fields as Bind found them in its transaction,
	// restored by Unbind.
	beforeModel, beforeJob, beforePrev string
}

// Store is the store the selector keeps preferences in: a TrainingBinding's Bind must run
// in a transaction of this store.
func (s *Selector) Store() *store.Store { return s.store }

// PrepareTrainingBinding reads owner's preference id and the router it ranks with now
// (which keeps ranking until the new job completes; the trainer's job records are read
// through their own store calls, so before the transaction). An unknown id is a
// *NotFoundError (field preference_id).
func (s *Selector) PrepareTrainingBinding(ctx context.Context, owner, id string) (*TrainingBinding, error) {
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	cur, err := loadPreference(ctx, s.store, owner, id)
	if err != nil {
		return nil, err
	}
	prev, err := s.preferenceRouter(ctx, owner, cur)
	if err != nil {
		return nil, err
	}
	return &TrainingBinding{sel: s, owner: owner, id: id, seen: *cur, prev: prev}, nil
}

// Bind binds the preference to training job jobID within tx, a transaction of the
// selector's Store, and returns the preference as bound. The preference is read again in
// tx: gone (deleted since PrepareTrainingBinding) it is a *NotFoundError (field
// preference_id), and tx's writes should be discarded. Should its router have changed
// meanwhile (another bind), its stored router, else the one it had before, keeps ranking
// until the new job completes. Bind is idempotent, as a store.Driver may run a
// transaction more than once.
func (b *TrainingBinding) Bind(ctx context.Context, tx store.Tx, jobID string) (*Preference, error) {
	if jobID == "" {
		return nil, invalid("training_job_id", "is required")
	}
	p, err := loadPreference(ctx, tx, b.owner, b.id)
	if err != nil {
		return nil, err
	}
	prev := b.prev
	if p.RouterModelID != b.seen.RouterModelID || p.RouterTrainingJobID != b.seen.RouterTrainingJobID {
		prev = p.RouterModelID
		if prev == "" {
			prev = p.PreviousRouterModelID
		}
	}
	b.beforeModel, b.beforeJob, b.beforePrev = p.RouterModelID, p.RouterTrainingJobID, p.PreviousRouterModelID
	p.RouterModelID, p.RouterTrainingJobID, p.PreviousRouterModelID = "", jobID, prev
	if err := store.PutJSON(ctx, tx, store.Preferences, b.id, *p); err != nil {
		return nil, err
	}
	return p.public(), nil
}

// Unbind undoes Bind for a job that was stored but then not queued (the trainer deleted
// it: its queue was full or down): when the preference is still bound to jobID, its
// router fields go back to what Bind found; otherwise (never bound, the transaction
// discarded, deleted, or bound again since) nothing changes.
func (b *TrainingBinding) Unbind(ctx context.Context, jobID string) error {
	if jobID == "" {
		return nil
	}
	return b.sel.store.Update(ctx, func(tx store.Tx) error {
		p, err := loadPreference(ctx, tx, b.owner, b.id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if p.RouterTrainingJobID != jobID {
			return nil
		}
		p.RouterModelID, p.RouterTrainingJobID, p.PreviousRouterModelID = b.beforeModel, b.beforeJob, b.beforePrev
		return store.PutJSON(ctx, tx, store.Preferences, b.id, *p)
	})
}
