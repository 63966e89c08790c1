package optimizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
)

// BundleChunkSize is the size of the pieces a job's bundle is kept in
// (store.OptimizationBundles): a bundle at the fetcher's 200 MiB cap is 200 records, none
// too large for a PostgreSQL row or a bbolt value.
const BundleChunkSize = 1 << 20

// bundleCopy is what a job record keeps about the bundle Submit downloaded and checked; its
// bytes are in store.OptimizationBundles under bundleKey(job id, 0…Chunks-1) until the job
// ends. The job runs that copy, not the URL again: a presigned input_url may expire while
// the job is queued, and a bundle changed after the check is not the one that was checked.
type bundleCopy struct {
	Bytes  int    `json:"bytes"`
	Chunks int    `json:"chunks"`
	SHA256 string `json:"sha256"`
}

func bundleKey(jobID string, seq int) string { return fmt.Sprintf("%s/%06d", jobID, seq) }

// bundleIndexPrefix starts the keys of the stored bundles' index in
// store.OptimizationBundles: one small entry per bundle ("!" + job id), stored and deleted
// with its pieces, so that a restart finds the bundles by listing the index rather than by
// reading a piece of each (1 MiB of a job still waiting, for nothing). Job ids start with
// a letter, so every index key sorts before every piece's key.
const bundleIndexPrefix = "!"

func bundleIndexKey(jobID string) string { return bundleIndexPrefix + jobID }

// bundleIndexMigration names, in store.Migrations, the walk that finds the bundles stored
// without an index entry (by a build before the index, or a replica of one during a
// rolling upgrade).
const bundleIndexMigration = "optimizer_bundle_index"

// newBundleCopy describes data as a job's stored bundle.
func newBundleCopy(data []byte) *bundleCopy {
	sum := sha256.Sum256(data)
	return &bundleCopy{Bytes: len(data), Chunks: (len(data) + BundleChunkSize - 1) / BundleChunkSize, SHA256: hex.EncodeToString(sum[:])}
}

// putBundleTx stores data as job id's bundle, in pieces, with its index entry.
func putBundleTx(ctx context.Context, tx store.Writer, id string, data []byte) error {
	if err := tx.Put(ctx, store.OptimizationBundles, bundleIndexKey(id), []byte("1")); err != nil {
		return err
	}
	for i := 0; i*BundleChunkSize < len(data); i++ {
		piece := data[i*BundleChunkSize : min((i+1)*BundleChunkSize, len(data))]
		if err := tx.Put(ctx, store.OptimizationBundles, bundleKey(id, i), piece); err != nil {
			return err
		}
	}
	return nil
}

// dropBundleTx deletes job j's stored bundle, if it has one (idempotent: a driver may run
// an Update more than once). The record keeps its description.
func dropBundleTx(ctx context.Context, tx store.Writer, j *job) error {
	if j.Bundle == nil {
		return nil
	}
	for i := range max(j.Bundle.Chunks, (j.Bundle.Bytes+BundleChunkSize-1)/BundleChunkSize) {
		if err := tx.Delete(ctx, store.OptimizationBundles, bundleKey(j.ID, i)); err != nil {
			return err
		}
	}
	return tx.Delete(ctx, store.OptimizationBundles, bundleIndexKey(j.ID))
}

// errNoBundleCopy means a job's stored bundle is not (or no longer) in the store.
var errNoBundleCopy = errors.New("the bundle downloaded at submit is not in the store")

// readBundleCopy reads job j's stored bundle and checks it against its checksum; it
// answers an error matching errNoBundleCopy when a piece is missing.
func (s *Service) readBundleCopy(ctx context.Context, j *job) ([]byte, error) {
	c := j.Bundle
	data := make([]byte, 0, c.Bytes)
	for i := range c.Chunks {
		piece, err := s.store.Get(ctx, store.OptimizationBundles, bundleKey(j.ID, i))
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w (piece %d of %d)", errNoBundleCopy, i+1, c.Chunks)
		}
		if err != nil {
			return nil, fmt.Errorf("optimizer: read the bundle of job %s: %w", j.ID, err)
		}
		data = append(data, piece...)
	}
	if sum := sha256.Sum256(data); len(data) != c.Bytes || hex.EncodeToString(sum[:]) != c.SHA256 {
		return nil, fmt.Errorf("optimizer: the stored bundle of job %s holds %d bytes that do not match the %d checked at submit", j.ID, len(data), c.Bytes)
	}
	return data, nil
}

// bundleData returns the bytes job j runs: the copy Submit stored, or, for a job stored
// without one (before copies were kept) or whose copy is gone, input_url downloaded again.
func (s *Service) bundleData(ctx context.Context, j *job) ([]byte, error) {
	if j.Bundle != nil {
		data, err := s.readBundleCopy(ctx, j)
		if !errors.Is(err, errNoBundleCopy) {
			return data, err
		}
		s.log.Warn("optimizer: downloading the bundle again", "job", j.ID, "reason", err)
	}
	f := s.fetcher
	if j.GuardedURLs {
		f = f.Guarded() // accepted by a process without --allow-local-urls
	}
	data, err := f.Get(ctx, j.InputURL)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failf("input_url: could not fetch the bundle: %v", err)
	}
	return data, nil
}

// sweepBundles deletes the stored bundles whose job is gone or has ended. A job's end and
// its deletion drop its bundle in the transaction that stores them (save, putEnded,
// Delete), so only an earlier build (which dropped it in a second transaction, after the
// end was stored) or a store written by hand leaves one; the sweep is idempotent. It lists the
// bundles' index once, and reads nothing of the bundles of unfinished (jobs the caller
// knows to be queued or running, from the listing of the jobs it made): their bundles are
// in use. A bundle is stored in the transaction that stores its job, so a piece without a
// job record is an orphan, never a submission in progress. The bundles stored without an
// index entry are found by walking the pieces while bundleIndexMigration is due (its two
// runs: the first start of this build, and one a day later for those the replicas of the
// earlier build stored meanwhile).
func (s *Service) sweepBundles(ctx context.Context, unfinished map[string]bool) {
	const page = 256
	after := ""
	for {
		es, err := s.store.List(ctx, store.OptimizationBundles, store.ListOptions{Prefix: bundleIndexPrefix, After: after, Limit: page})
		if err != nil {
			s.log.Warn("optimizer: list stored bundles", "err", err)
			return
		}
		for _, e := range es {
			if id := strings.TrimPrefix(e.Key, bundleIndexPrefix); !unfinished[id] {
				if !s.sweepBundle(ctx, id) {
					return
				}
			}
		}
		if len(es) < page {
			break
		}
		after = es[len(es)-1].Key
	}
	due, err := store.MigrationDue(ctx, s.store, bundleIndexMigration, s.now())
	if err != nil {
		s.log.Warn("optimizer: stored bundles without an index entry", "err", err)
		return
	}
	if !due || !s.sweepUnindexedBundles(ctx, unfinished) {
		return
	}
	if err := store.MigrationRan(ctx, s.store, bundleIndexMigration, s.now()); err != nil {
		s.log.Warn("optimizer: stored bundles without an index entry", "err", err)
	}
}

// sweepUnindexedBundles walks the pieces' keys, one job's at a time (each step reads one
// piece), and deletes the bundles of jobs gone or ended; it reports whether it walked to
// the end.
func (s *Service) sweepUnindexedBundles(ctx context.Context, unfinished map[string]bool) bool {
	after := bundleIndexPrefix + "\xff" // past the index
	for {
		es, err := s.store.List(ctx, store.OptimizationBundles, store.ListOptions{After: after, Limit: 1})
		if err != nil {
			s.log.Warn("optimizer: list stored bundles", "err", err)
			return false
		}
		if len(es) == 0 {
			return true
		}
		id, _, _ := strings.Cut(es[0].Key, "/")
		after = id + "/\xff"
		if !unfinished[id] && !s.sweepBundle(ctx, id) {
			return false
		}
	}
}

// sweepBundle deletes job id's stored bundle, pieces and index entry, unless the job is
// queued or running (it reads the job's record: it may have been submitted since the
// caller's listing). It reports false when the store failed (logged), to stop the sweep.
func (s *Service) sweepBundle(ctx context.Context, id string) bool {
	j, err := store.GetJSON[job](ctx, s.store, store.OptimizationJobs, id)
	if err == nil && j.Unfinished() {
		return true
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Warn("optimizer: read job", "job", id, "err", err)
		return true
	}
	for {
		es, err := s.store.List(ctx, store.OptimizationBundles, store.ListOptions{Prefix: id + "/", Limit: 16})
		if err != nil {
			s.log.Warn("optimizer: list the stored bundle of an ended job", "job", id, "err", err)
			return false
		}
		err = s.store.Update(ctx, func(tx store.Tx) error {
			for _, e := range es {
				if err := tx.Delete(ctx, store.OptimizationBundles, e.Key); err != nil {
					return err
				}
			}
			if len(es) == 0 { // the pieces are gone: the index entry goes last
				return tx.Delete(ctx, store.OptimizationBundles, bundleIndexKey(id))
			}
			return nil
		})
		if err != nil {
			s.log.Warn("optimizer: delete the stored bundle of an ended job", "job", id, "err", err)
			return false
		}
		if len(es) == 0 {
			return true
		}
	}
}
