package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestInflightWaitWithNoBudgetLeft: with --shutdown-timeout 0 the wait for the handlers had
// an ended context and could report handlers still running when none was (a false warning);
// with none running it now says so whatever the context, and with one running it still
// reports it.
func TestInflightWaitWithNoBudgetLeft(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	release, entered := make(chan struct{}), make(chan struct{})
	f := &inflightHandlers{h: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		close(entered)
		<-release
	})}
	for range 100 { // the old select picked at random between two ready cases
		if !f.wait(ended) {
			t.Fatal("no handler running, but wait reported one")
		}
	}
	go f.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	<-entered
	if f.wait(ended) {
		t.Error("a handler running, but wait reported none")
	}
	close(release)
	if !f.wait(context.Background()) {
		t.Error("the handler returned, but wait did not see it")
	}
}
