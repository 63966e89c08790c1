package trainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// CleanupReport counts what a Cleanup did (or, with DryRun, would do).
type CleanupReport struct {
	// Archived models had not been used for the archive period.
	Archived int
	// Removed models (records and weights) had been archived for the removal delay, or
	// were orphaned weights without a record.
	Removed int
	// ArchivedIDs and RemovedIDs name them.
	ArchivedIDs, RemovedIDs []string
	// UploadsRemoved names the jobs whose uploaded dataset was removed: the job had ended
	// or was deleted, and the process that ended it stopped before removing it.
	UploadsRemoved []string
	// DryRun is true when nothing was changed.
	DryRun bool
}

// CleanupDryRun reports what Cleanup would archive and remove now, changing nothing.
func (s *Service) CleanupDryRun(ctx context.Context) (CleanupReport, error) {
	return s.cleanup(ctx, true)
}

// Cleanup runs the router model lifecycle once, at the service clock's now: active models
// unused (no prediction, counted from creation otherwise) for the archive period (1 year)
// become archived and stop answering predictions; archived models older than the removal
// delay (7 days, so a weekly cleanup removes what the previous one archived) lose their
// weights and record, reclaiming storage. Weights with no model record are removed too, and
// so are uploaded datasets (SubmitUpload) whose job has ended or is gone.
func (s *Service) Cleanup(ctx context.Context) (CleanupReport, error) {
	return s.cleanup(ctx, false)
}

func (s *Service) cleanup(ctx context.Context, dry bool) (CleanupReport, error) {
	rep := CleanupReport{DryRun: dry}
	now := s.now()
	entries, err := s.store.List(ctx, store.RouterModels, store.ListOptions{})
	if err != nil {
		return rep, fmt.Errorf("trainer: list models: %w", err)
	}
	known := map[string]bool{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		known[e.Key] = true
		var m modelRecord
		if err := decodeJSON(e.Value, &m); err != nil {
			s.log.Warn("trainer: skipping unreadable model record", "key", e.Key, "err", err)
			continue
		}
		if m.State == ModelActive && s.archiveDue(m.LastUsedAt, now) {
			archived := dry
			if !dry {
				if archived, err = s.archive(ctx, m.ID); err != nil {
					return rep, err
				}
			}
			if archived {
				rep.Archived++
				rep.ArchivedIDs = append(rep.ArchivedIDs, m.ID)
				if !dry {
					m.State, m.ArchivedAt = ModelArchived, now
					s.log.Info("trainer: archived unused router model", "model", m.ID, "last_used_at", m.LastUsedAt)
				}
			}
		}
		if m.State == ModelArchived && now.Sub(m.ArchivedAt) >= s.removeAfter {
			rep.Removed++
			rep.RemovedIDs = append(rep.RemovedIDs, m.ID)
			if dry {
				continue
			}
			err := s.store.Update(ctx, func(tx store.Tx) error { return deleteModelTx(ctx, tx, &m) })
			if err != nil {
				return rep, fmt.Errorf("trainer: remove model %s: %w", m.ID, err)
			}
			s.models.remove(m.ID)
			s.log.Info("trainer: removed archived router model", "model", m.ID, "archived_at", m.ArchivedAt)
		}
	}
	weights, err := s.store.List(ctx, store.RouterWeights, store.ListOptions{})
	if err != nil {
		return rep, fmt.Errorf("trainer: list weights: %w", err)
	}
	for _, w := range weights {
		if known[w.Key] {
			continue
		}
		// Re-check: the model may have been saved since the listing.
		if _, err := s.store.Get(ctx, store.RouterModels, w.Key); !errors.Is(err, store.ErrNotFound) {
			continue
		}
		rep.Removed++
		rep.RemovedIDs = append(rep.RemovedIDs, w.Key)
		if dry {
			continue
		}
		if err := s.store.Delete(ctx, store.RouterWeights, w.Key); err != nil {
			return rep, fmt.Errorf("trainer: remove orphaned weights %s: %w", w.Key, err)
		}
		s.models.remove(w.Key)
		s.log.Info("trainer: removed orphaned router weights", "model", w.Key)
	}
	rep.UploadsRemoved, err = s.sweepUploads(ctx, dry)
	return rep, err
}

// archiveDue reports whether a model last used at lastUsed has been idle long enough at
// now to be archived: the period WithLifecycle set, or by default one calendar year (366
// days across a 29 February), the spec's "1 year of inactivity". The period counts from
// touchEvery after the recorded use: a prediction within touchEvery of it is not written,
// so the model may have been used until then.
func (s *Service) archiveDue(lastUsed, now time.Time) bool {
	lastUsed = lastUsed.Add(touchEvery)
	if s.archiveAfter <= 0 {
		return !now.Before(lastUsed.AddDate(1, 0, 0))
	}
	return now.Sub(lastUsed) >= s.archiveAfter
}

// archive marks id archived if it is still active and unused; it reports whether it did.
func (s *Service) archive(ctx context.Context, id string) (bool, error) {
	now := s.now()
	done := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		m, err := store.GetJSON[modelRecord](ctx, tx, store.RouterModels, id)
		if err != nil {
			return err
		}
		if m.State != ModelActive || !s.archiveDue(m.LastUsedAt, now) {
			return nil // used meanwhile
		}
		m.State, m.ArchivedAt = ModelArchived, now
		done = true
		return store.PutJSON(ctx, tx, store.RouterModels, id, m)
	})
	if err != nil {
		return false, fmt.Errorf("trainer: archive model %s: %w", id, err)
	}
	if done {
		s.models.remove(id)
	}
	return done, nil
}
