package deployments

import (
	"fmt"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestAddDeploymentTags: the tags given by a member's deployment id (a stored one's, the
// config's model_info.id, else its DeploymentID hash) or by its group's name are added to
// its own; the groups given are not changed in place (their Tags may be shared); a member
// that would carry more than completions.MaxTags keeps its own, with a warning.
func TestAddDeploymentTags(t *testing.T) {
	own := [][]string{{"free"}, nil, nil}
	shared := completions.ModelGroup{Models: []string{"p/a", "p/b", "p/c"}, Tags: own, TagFiltering: true}
	groups := map[string]completions.ModelGroup{"gpt": shared, "other": {Models: []string{"p/z"}}}
	stored := map[string]string{completions.DeploymentID("gpt", "p/a"): "stored-a"}
	ids := map[string]string{completions.DeploymentID("gpt", "p/b"): "file-b"}
	many := make([]string, completions.MaxTags)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	extra := map[string][]string{"stored-a": {"x"}, "file-b": {"y"}, "other": {"z"},
		completions.DeploymentID("gpt", "p/c"): many, "gpt": {"g"}}
	warnings := addDeploymentTags(groups, stored, ids, extra)
	got := groups["gpt"].Tags
	if !slices.Equal(got[0], []string{"free", "x", "g"}) || !slices.Equal(got[1], []string{"y", "g"}) || got[2] != nil {
		t.Errorf("gpt's tags: %q", got)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings %q: want one for p/c past %d tags", warnings, completions.MaxTags)
	}
	if z := groups["other"].Tags; len(z) != 1 || !slices.Equal(z[0], []string{"z"}) {
		t.Errorf("other's tags: %q", z)
	}
	if !slices.Equal(own[0], []string{"free"}) || own[1] != nil || len(shared.Tags) != 3 {
		t.Errorf("the group given was changed: %q", own)
	}
}
