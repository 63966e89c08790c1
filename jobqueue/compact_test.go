package jobqueue

import (
	"slices"
	"testing"
)

func TestCompactKeepsLiveIDsInOrder(t *testing.T) {
	q := make(chan string, 5)
	for _, id := range []string{"a", "dead1", "b", "dead2", "c"} {
		q <- id
	}
	unsent := Compact(q, func(id string) bool { return id[0] != 'd' })
	if len(unsent) != 0 {
		t.Fatalf("unsent %v", unsent)
	}
	close(q)
	var got []string
	for id := range q {
		got = append(got, id)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("queue after Compact: %v", got)
	}
}

func TestCompactReturnsWhatItCannotPutBack(t *testing.T) {
	q := make(chan string, 2)
	q <- "a"
	q <- "b"
	// live fills the room as another sender would while Compact holds the ids.
	unsent := Compact(q, func(id string) bool {
		if id == "b" {
			q <- "x"
			q <- "y"
		}
		return true
	})
	if !slices.Equal(unsent, []string{"a", "b"}) {
		t.Fatalf("unsent %v, want [a b]", unsent)
	}
}
