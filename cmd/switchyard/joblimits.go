package main

import (
	"flag"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/trainer"
)

// jobLimits are the serve flags that keep one key from starving the others: how many
// training and optimization jobs a key may have queued or running, and how long a dataset
// or bundle download may go without receiving a byte.
type jobLimits struct {
	// TrainJobsPerKey bounds one key's queued plus running training jobs.
	TrainJobsPerKey int
	// OptimizeJobsPerKey bounds one key's queued plus running optimization jobs.
	OptimizeJobsPerKey int
	// FetchIdleTimeout fails a download that sends nothing for this long.
	FetchIdleTimeout time.Duration
}

// register defines the flags on fs, with the packages' defaults.
func (l *jobLimits) register(fs *flag.FlagSet) {
	fs.IntVar(&l.TrainJobsPerKey, "train-jobs-per-key", trainer.DefaultJobsPerOwner,
		"most router training jobs one API key may have queued or running at once; more get 429 with Retry-After")
	fs.IntVar(&l.OptimizeJobsPerKey, "optimize-jobs-per-key", optimizer.DefaultJobsPerOwner,
		"most optimization jobs one API key may have queued or running at once; more get 429 with Retry-After")
	fs.DurationVar(&l.FetchIdleTimeout, "fetch-idle-timeout", fetch.DefaultIdleTimeout,
		"fail a dataset or bundle download that receives no bytes for this long (the whole download is capped at 2m)")
}
