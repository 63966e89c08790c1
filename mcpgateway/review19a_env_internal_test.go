package mcpgateway

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A stdio child gets the listed variables and its env only, even when the gateway's
// environment has none of them and env is empty (exec.Cmd's nil Env is the whole
// environment: the gateway's secrets).
func TestReview19aStdioChildWithNothingToInheritGetsNoSecrets(t *testing.T) {
	t.Setenv("REVIEW19A_PROVIDER_SECRET", "sk-secret")
	for _, k := range inheritedEnv {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	g, err := New([]ServerConfig{{Name: "local", Transport: TransportStdio, Command: "/bin/true"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tr, ok := g.byName["local"].transport().(*stdioTransport)
	if !ok {
		t.Fatalf("transport %T", g.byName["local"].transport())
	}
	if env := tr.cmd.Environ(); slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "REVIEW19A_PROVIDER_SECRET=") }) {
		t.Fatalf("the child's environment holds the gateway's secret: %v", env)
	}
}
