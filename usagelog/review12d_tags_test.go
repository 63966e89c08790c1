package usagelog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

func review12dTagTotals(r *Recorder, owner string) map[string]int {
	out := map[string]int{}
	for _, m := range r.TagSeries(owner, time.Hour, time.Minute).Models {
		out[m.Tag] = m.Total.Requests
	}
	return out
}

// A request whose tags repeat one ("tags":["a","a"], metadata.tags "a,a" — CheckTags lets
// duplicates through) is one request of tag a, not two.
func TestReview12dDuplicateTagCountsOnce(t *testing.T) {
	r := New(Options{})
	rec := record("o", "p/m", completions.RequestOK, time.Millisecond, 1, 10)
	rec.Tags = []string{"team:a", "team:a"}
	r.ObserveRequest(context.Background(), rec)
	s := r.TagSeries("o", time.Hour, time.Minute)
	if len(s.Models) != 1 || s.Models[0].Total.Requests != 1 || s.Models[0].Total.CostUSD != 1 {
		t.Fatalf("one request tagged team:a twice: %+v, want 1 request costing 1", s.Models)
	}
}

// The per-minute bound on tag series is shared by every owner: tags are the caller's to
// choose, so one key sending many distinct tags pushes every other key's tags into
// "(other)".
func TestReview12dTagSeriesBoundIsNotSharedAcrossOwners(t *testing.T) {
	r := New(Options{SeriesPerMinute: 8})
	ctx := context.Background()
	for i := range 8 {
		rec := record("mallory", "p/m", completions.RequestOK, time.Millisecond, 0, 1)
		rec.Tags = []string{fmt.Sprint("junk:", i)}
		r.ObserveRequest(ctx, rec)
	}
	rec := record("alice", "p/m", completions.RequestOK, time.Millisecond, 1, 1)
	rec.Tags = []string{"team:search"}
	r.ObserveRequest(ctx, rec)
	if got := review12dTagTotals(r, "alice"); got["team:search"] != 1 {
		t.Fatalf("alice's tags %v: another owner's tags pushed hers into %s", got, OtherModel)
	}
}

// The recorder keeps the caller's Tags slice itself (Attempts are copied, Tags not): a
// library caller reusing its Request rewrites history, and Requests hands the same
// backing array to every reader.
func TestReview12dRecordedTagsAreNotAliased(t *testing.T) {
	r := New(Options{})
	tags := []string{"team:a"}
	rec := record("o", "p/m", completions.RequestOK, time.Millisecond, 1, 1)
	rec.Tags = tags
	r.ObserveRequest(context.Background(), rec)
	tags[0] = "team:b"
	if got := r.Requests("o", 0, 0)[0].Tags; got[0] != "team:a" {
		t.Fatalf("recorded tags %v after the caller reused its slice, want [team:a]", got)
	}
	out := r.Requests("o", 0, 0)
	out[0].Tags[0] = "mutated"
	if got := r.Requests("o", 0, 0)[0].Tags; got[0] == "mutated" {
		t.Fatalf("a reader's copy shares the ring's tags: %v", got)
	}
}
