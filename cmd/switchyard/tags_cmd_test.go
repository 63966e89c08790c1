package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTagsCommand: create a tag budget, list and show it, refuse a bad name and a flag on
// show, change its limits (0 removing the budget), and delete it.
func TestTagsCommand(t *testing.T) {
	gatewayCLIServer(t)

	if code, out, errOut := cli(t, "tags"); code != 0 || !strings.Contains(out, "no tag budgets") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "tags", "create", "engineering", "--max-budget-usd", "500", "--budget-duration", "30d", "--description", "Eng", "--tpm", "1000"); code != 0 ||
		!strings.Contains(out, "tag:       engineering") || !strings.Contains(out, "$500/30d") || !strings.Contains(out, "1000 tokens per minute") || !strings.Contains(out, "about:     Eng") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "tags", "create", "engineering"); code == 0 || !strings.Contains(errOut, "409") {
		t.Fatalf("a tag made twice: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "tags", "create", "has space"); code == 0 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "name") {
		t.Fatalf("a bad name: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "tags"); code != 0 || !regexp.MustCompile(`engineering\s+\$0\.0000\s+\$500/30d\s+Eng`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "tags", "show", "engineering", "--tpm", "5"); code == 0 || !strings.Contains(errOut, "--tpm is for tags create and tags update") {
		t.Fatalf("a setting on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "tags", "update", "engineering", "--max-budget-usd", "0", "--description", ""); code != 0 || !strings.Contains(out, "budget:    -") || strings.Contains(out, "about:") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "tags", "delete", "engineering"); code != 0 || !strings.Contains(out, "deleted tag engineering") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "tags", "show", "engineering"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("a deleted tag: %d %s", code, errOut)
	}
}

// TestTagsCommandModels: a tag's models (the deployments that carry it for tag routing)
// are set on create, replaced and removed on update, refused on show, and shown.
func TestTagsCommandModels(t *testing.T) {
	gatewayCLIServer(t)

	if code, out, errOut := cli(t, "tags", "create", "routed", "--models", "dep-a, dep-b"); code != 0 || !strings.Contains(out, "models:    dep-a,dep-b") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "tags", "show", "routed", "--json"); code != 0 || !strings.Contains(strings.Join(strings.Fields(out), ""), `"models":["dep-a","dep-b"]`) {
		t.Fatalf("show: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "tags", "update", "routed", "--models", "dep-c", "--tpm", "10"); code != 0 || !strings.Contains(out, "models:    dep-c\n") || !strings.Contains(out, "10 tokens per minute") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	// Another setting alone keeps the models.
	if code, out, errOut := cli(t, "tags", "update", "routed", "--description", "R"); code != 0 || !strings.Contains(out, "models:    dep-c\n") {
		t.Fatalf("update without --models: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "tags", "update", "routed", "--models", ""); code != 0 || strings.Contains(out, "models:") {
		t.Fatalf("remove: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "tags", "show", "routed", "--models", "x"); code == 0 || !strings.Contains(errOut, "--models is for tags create and tags update") {
		t.Fatalf("--models on show: %d %s", code, errOut)
	}
}
