package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// batchFlags are the serve flags of OpenAI's Files and Batch APIs (package batch).
type batchFlags struct {
	// FilesMaxBytes is --files-max-bytes: the largest file POST /v1/files takes.
	FilesMaxBytes int64
	// Concurrency is --batch-concurrency: how many lines of one batch run at once.
	Concurrency int
	// PerKey is --batches-per-key: how many batches that have not ended one key may have.
	PerKey int
	// ExpireInterval is --batch-expire-interval: how often batches past their completion
	// window that no run has ended are looked for and ended as expired; 0 turns the check
	// off (a read of such a batch still ends it).
	ExpireInterval time.Duration
	// TimeoutRetries is --batch-timeout-retries: how often a line whose upstream call timed
	// out is sent again (batch.Options.MaxTimeoutRetries; 0 here: never).
	TimeoutRetries int
}

// register defines the flags on fs, with the package's defaults.
func (b *batchFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&b.FilesMaxBytes, "files-max-bytes", batch.DefaultMaxFileBytes,
		"largest file POST /v1/files takes, in bytes (a batch input; stored in the store in 1 MiB pieces); larger uploads get 413")
	fs.IntVar(&b.Concurrency, "batch-concurrency", batch.DefaultConcurrency,
		"lines of one batch (POST /v1/batches) answered at once; each process runs --workers batches at once")
	fs.IntVar(&b.PerKey, "batches-per-key", batch.DefaultMaxUnfinishedPerOwner,
		"batches that have not ended one API key may have (queued, running, finalizing); beyond, POST /v1/batches is a 429, so that one key cannot hold the others' batches back")
	fs.DurationVar(&b.ExpireInterval, "batch-expire-interval", batch.DefaultExpireInterval,
		"how often batches past their 24h completion window that no run has ended are ended as expired (their answered lines kept); 0 turns the check off (reading such a batch still ends it)")
	fs.IntVar(&b.TimeoutRetries, "batch-timeout-retries", batch.DefaultMaxTimeoutRetries,
		"how often a batch line whose upstream call timed out (the gateway's final failure after its retries and fallbacks) is sent again; each send waits out the timeouts, and a provider may still bill a call the gateway stopped waiting for (0: never, at most 6)")
}

// options is the part of batch.Options the flags set.
func (b *batchFlags) options() batch.Options {
	o := batch.Options{Concurrency: b.Concurrency, MaxUnfinishedPerOwner: b.PerKey, ExpireInterval: b.ExpireInterval}
	if b.ExpireInterval == 0 {
		o.ExpireInterval = -1 // batch.Options reads 0 as its default
	}
	o.MaxTimeoutRetries = b.TimeoutRetries
	if b.TimeoutRetries == 0 {
		o.MaxTimeoutRetries = -1 // never: batch.Options reads 0 as its default
	}
	return o
}

// check validates the flags.
func (b *batchFlags) check() error {
	if b.FilesMaxBytes < 1 {
		return errors.New("--files-max-bytes must be at least 1")
	}
	if b.Concurrency < 1 {
		return errors.New("--batch-concurrency must be at least 1")
	}
	if b.PerKey < 1 {
		return errors.New("--batches-per-key must be at least 1")
	}
	if b.TimeoutRetries < 0 || b.TimeoutRetries > 6 {
		return fmt.Errorf("--batch-timeout-retries must be between 0 (never) and 6 (as other server errors), got %d", b.TimeoutRetries)
	}
	if b.ExpireInterval < 0 {
		return errors.New("--batch-expire-interval must be 0 (off) or positive")
	}
	return nil
}
