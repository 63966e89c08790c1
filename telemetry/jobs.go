package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/jobqueue"
)

// JobStat is one job as a JobSource reports it.
type JobStat = jobqueue.JobStat

// JobSource lists a kind of job (trainer.Service.JobStats, optimizer.Service.JobStats).
type JobSource func(ctx context.Context) ([]JobStat, error)

// jobsRefresh bounds how often a scrape re-reads the jobs.
const jobsRefresh = 15 * time.Second

// queuedStates are the states that count as the queue's depth.
var queuedStates = map[string]bool{"queued": true}

// Jobs reports a kind of job ("training", "optimization") at scrape time:
// switchyard_jobs{kind, state} (how many are in each state) and switchyard_job_queue_depth
// {kind} (queued ones). Each source is read at most every 15 s. Both count the store's jobs,
// so every process sharing a store reports the same figures (aggregate replicas with max,
// not sum). Run times come from JobEnded.
func (m *Metrics) Jobs(kind string, src JobSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs == nil {
		m.jobs = &jobsCollector{}
		m.reg.MustRegister(m.jobs)
	}
	m.jobs.mu.Lock()
	m.jobs.kinds = append(m.jobs.kinds, &jobCollector{kind: kind, src: src})
	m.jobs.mu.Unlock()
}

// jobsCollector collects every registered kind of job.
type jobsCollector struct {
	mu    sync.Mutex
	kinds []*jobCollector
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- queueDesc
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	kinds := append([]*jobCollector(nil), c.kinds...)
	c.mu.Unlock()
	for _, k := range kinds {
		k.Collect(ch)
	}
}

var (
	jobsDesc  = prometheus.NewDesc("switchyard_jobs", "Jobs in the store by kind and state.", []string{"kind", "state"}, nil)
	queueDesc = prometheus.NewDesc("switchyard_job_queue_depth", "Jobs waiting for a worker, by kind.", []string{"kind"}, nil)
)

type jobCollector struct {
	kind string
	src  JobSource

	mu     sync.Mutex
	at     time.Time
	counts map[string]int
	// states seen since start: one that empties reads 0 instead of its series vanishing
	// (an alert on it would otherwise never resolve).
	states map[string]bool
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || time.Since(c.at) > jobsRefresh {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		jobs, err := c.src(ctx)
		cancel()
		if err == nil {
			c.at, c.counts = time.Now(), map[string]int{}
			if c.states == nil {
				c.states = map[string]bool{"queued": true, "running": true}
			}
			for st := range c.states {
				c.counts[st] = 0
			}
			for _, j := range jobs {
				c.counts[j.State]++
				c.states[j.State] = true
			}
		}
	}
	queued := 0
	for state, n := range c.counts {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), c.kind, state)
		if queuedStates[state] {
			queued += n
		}
	}
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(queued), c.kind)
}

// JobEnded returns the function a job service calls when a job of kind ends in this process
// (trainer.WithJobEnded, optimizer.WithJobEnded): it observes the job's run time in
// switchyard_job_duration_seconds{kind, state} at once. Each job is observed by the one
// process that ran it, so the histogram sums across replicas.
func (m *Metrics) JobEnded(kind string) func(JobStat) {
	return func(j JobStat) {
		if j.Seconds > 0 {
			m.jobDur.WithLabelValues(kind, j.State).Observe(j.Seconds)
		}
	}
}
