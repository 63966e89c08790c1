package server

import (
	"fmt"
	"net/http"
	"testing"
)

// TestReview11ListingWindowOutsideNanosecondRange: created_after / created_before are
// accepted as any Unix seconds or RFC 3339 time, but the owner index compares them as
// UnixNano, undefined outside 1678-2262: created_after=-1 (a second before 1970) and
// created_before=18446744074 (year 2554) both answer 200 with an empty list although every
// job qualifies.
func TestReview11ListingWindowOutsideNanosecondRange(t *testing.T) {
	e := routersServer(t)
	r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, fmt.Sprintf(`{"Data_URLs": [%q]}`, e.files.URL+"/train.json"))
	if r.status != http.StatusAccepted {
		t.Fatalf("train: %d %s", r.status, r.raw)
	}
	id := r.body["training_job_id"].(string)
	if all := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, ""), "training_job_id"); len(all) != 1 || all[0] != id {
		t.Fatalf("unfiltered listing %v", all)
	}
	for _, q := range []string{"created_after=-1", "created_after=1600-01-01T00:00:00Z", "created_before=18446744074"} {
		got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?"+q, testKey, ""), "training_job_id")
		if len(got) != 1 {
			t.Errorf("GET /api/v1/routers/train/jobs?%s = %v, want [%s] (the job was created inside the window)", q, got, id)
		}
	}
}
