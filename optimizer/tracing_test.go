package optimizer

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestJobStagesAreTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	e := newEnv(t, &fakeRunner{}, nil, WithTracer(tp.Tracer("test")))
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
	if err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status = %+v", st)
	}
	spans := exp.GetSpans()
	name := map[string]string{}
	count := map[string]int{}
	for _, s := range spans {
		name[s.SpanContext.SpanID().String()] = s.Name
		count[s.Name]++
	}
	parent := map[string]string{}
	for _, s := range spans {
		parent[s.Name] = name[s.Parent.SpanID().String()]
	}
	for stage, want := range map[string]string{
		"optimization_job": "", "fetch bundle": "optimization_job", "optimize scripted/task": "optimization_job",
		"baseline": "optimize scripted/task", "propose": "optimize scripted/task", "test split": "optimize scripted/task",
	} {
		if got, ok := parent[stage]; !ok || got != want {
			t.Errorf("span %q: parent %q (recorded %v), want %q", stage, got, ok, want)
		}
	}
	if count["propose"] != 2 || count["sandbox run"] < 4 {
		t.Errorf("spans %v: want a proposal per iteration and a sandbox run per benchmark", count)
	}
}
