package main

import (
	"errors"
	"flag"

	"github.com/switchyard-ai/switchyard/batch"
)

// batchFlags are the serve flags of OpenAI's Files and Batch APIs (package batch).
type batchFlags struct {
	// FilesMaxBytes is --files-max-bytes: the largest file POST /v1/files takes.
	FilesMaxBytes int64
	// Concurrency is --batch-concurrency: how many lines of one batch run at once.
	Concurrency int
}

// register defines the flags on fs, with the package's defaults.
func (b *batchFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&b.FilesMaxBytes, "files-max-bytes", batch.DefaultMaxFileBytes,
		"largest file POST /v1/files takes, in bytes (a batch input; stored in the store in 1 MiB pieces); larger uploads get 413")
	fs.IntVar(&b.Concurrency, "batch-concurrency", batch.DefaultConcurrency,
		"lines of one batch (POST /v1/batches) answered at once; each process runs --workers batches at once")
}

// check validates the flags.
func (b *batchFlags) check() error {
	if b.FilesMaxBytes < 1 {
		return errors.New("--files-max-bytes must be at least 1")
	}
	if b.Concurrency < 1 {
		return errors.New("--batch-concurrency must be at least 1")
	}
	return nil
}
