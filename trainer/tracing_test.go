package trainer

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// stageTree returns span name → parent span name of what exp recorded.
func stageTree(exp *tracetest.InMemoryExporter) map[string]string {
	spans := exp.GetSpans()
	byID := map[string]string{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s.Name
	}
	out := map[string]string{}
	for _, s := range spans {
		out[s.Name] = byID[s.Parent.SpanID().String()]
	}
	return out
}

func TestJobStagesAreTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	recs := syntheticRecords(150, 1)
	srv := files(t, map[string]string{"/a.json": asJSON(recs)})
	s := newService(t, nil, WithTracer(tp.Tracer("test")))
	if st := train(t, s, "key-a", srv.URL+"/a.json"); st.Status != StateCompleted {
		t.Fatalf("job: %+v", st)
	}
	tree := stageTree(exp)
	for stage, parent := range map[string]string{
		"training_job": "", "fetch and parse dataset": "training_job", "fit held-out split": "training_job",
		"evaluate": "training_job", "fit all rows": "training_job",
	} {
		got, ok := tree[stage]
		if !ok || got != parent {
			t.Errorf("span %q: parent %q (recorded %v), want %q", stage, got, ok, parent)
		}
	}
}
