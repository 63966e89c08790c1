package inference

import (
	"context"
	"os"
	"testing"
)

// FuzzLoadModel feeds LoadModel damaged routers: the seeds are the saved routers of every
// format in testdata/compat (with task experts among them). A blob that loads must predict
// without panicking; one that does not must say so with an error.
func FuzzLoadModel(f *testing.F) {
	for _, name := range []string{"router-2026-11-24.bin", "router-2026-11-25.bin", "router-2026-11-25-experts.bin", "router-2026-11-25-experts-half.bin"} {
		blob, err := os.ReadFile("testdata/compat/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
		// A few deterministic damages of each, so that plain `go test` runs them too.
		for _, at := range []int{len(blob) / 3, len(blob) / 2, len(blob) - 40} {
			bad := append([]byte(nil), blob...)
			bad[at] ^= 0x5a
			f.Add(bad)
			f.Add(blob[:at])
		}
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		m, err := LoadModel(blob, LoadOptions{})
		if err != nil {
			return
		}
		if _, err := m.Predict(context.Background(), []string{"alpha w1y solve the equation for x and simplify w2z", ""}); err != nil {
			t.Fatalf("a router that loaded fails to predict: %v", err)
		}
	})
}
