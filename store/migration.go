package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MigrationRescanAfter is how long after a one-time data migration (recorded in
// Migrations) it is run once more: during a rolling upgrade, replicas of the earlier build
// still running keep writing records the migration has to see, and a day outlasts any
// upgrade's rollout.
const MigrationRescanAfter = 24 * time.Hour

// againSuffix names, in Migrations, the record of a migration's second run.
const againSuffix = "#again"

// MigrationDue reports whether the data migration name should run at now: it never ran to
// its end, or it did once at least MigrationRescanAfter before now and has not run again
// since. A record it cannot read as a time counts as long ago.
func MigrationDue(ctx context.Context, s *Store, name string, now time.Time) (bool, error) {
	first, err := s.Get(ctx, Migrations, name)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: read migration %s: %w", name, err)
	}
	if _, err := s.Get(ctx, Migrations, name+againSuffix); err == nil {
		return false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return false, fmt.Errorf("store: read migration %s: %w", name, err)
	}
	at, err := time.Parse(time.RFC3339, string(first))
	return err != nil || !now.Before(at.Add(MigrationRescanAfter)), nil
}

// MigrationRan records that the data migration name ran to its end at now: its first run,
// or, once that is recorded, its second. A run that ends within MigrationRescanAfter of the
// recorded first run is another first run (replicas that found it due at once both run
// it): it records nothing, and the second run is still due a day after the first.
func MigrationRan(ctx context.Context, s *Store, name string, now time.Time) error {
	err := s.Update(ctx, func(tx Tx) error {
		first, err := tx.Get(ctx, Migrations, name)
		if errors.Is(err, ErrNotFound) {
			return tx.Put(ctx, Migrations, name, []byte(now.UTC().Format(time.RFC3339)))
		}
		if err != nil {
			return err
		}
		if at, err := time.Parse(time.RFC3339, string(first)); err == nil && now.Before(at.Add(MigrationRescanAfter)) {
			return nil
		}
		return tx.Put(ctx, Migrations, name+againSuffix, []byte(now.UTC().Format(time.RFC3339)))
	})
	if err != nil {
		return fmt.Errorf("store: record migration %s: %w", name, err)
	}
	return nil
}

// MigrationDone reports whether the data migration name ran both its runs (the first, and
// the one MigrationRescanAfter later): the records it migrates are then all migrated,
// those of the replicas of an earlier build too. Until then a reader that relies on the
// migration reads as the earlier build did.
func MigrationDone(ctx context.Context, s *Store, name string) (bool, error) {
	for _, key := range []string{name, name + againSuffix} {
		if _, err := s.Get(ctx, Migrations, key); errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("store: read migration %s: %w", name, err)
		}
	}
	return true, nil
}
