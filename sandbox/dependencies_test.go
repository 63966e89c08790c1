package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDependencies(t *testing.T) {
	for src, want := range map[string][]string{
		"def run_batch(i, k): pass\n":                        nil,
		"DEPENDENCIES = []\n":                                {},
		"DEPENDENCIES = ['numpy>=1.26', \"requests\"]\n":     {"numpy>=1.26", "requests"},
		"DEPENDENCIES: list[str] = (\n  'a==1', # pin\n)\n":  {"a==1"},
		"x = 1\nDEPENDENCIES = [\n 'pkg[extra]>=1,<2',\n]\n": {"pkg[extra]>=1,<2"},
		"DEPENDENCIES = ['a']  # pinned below\n":             {"a"},
	} {
		got, err := Dependencies([]byte(src))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Dependencies(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
	for _, src := range []string{
		"DEPENDENCIES = ['--index-url=http://evil']\n",
		"DEPENDENCIES = ['pkg @ https://evil/x.whl']\n",
		"DEPENDENCIES = [name]\n",
		"DEPENDENCIES = ['a'\n",
		"DEPENDENCIES = ['a' 'b']\n",
		"DEPENDENCIES = \"requests\"\n",
		"DEPENDENCIES = 'numpy>=1.26'  # one package\n",
		"DEPENDENCIES = make_list()\n",
		"DEPENDENCIES =\n",
		"DEPENDENCIES = ['a'] + ['b']\n",
		"DEPENDENCIES = ['a']\nDEPENDENCIES += ['b']\n",
		"DEPENDENCIES = ['a']\nDEPENDENCIES = ['b']\n",
	} {
		_, err := Dependencies([]byte(src))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "DEPENDENCIES") {
			t.Errorf("Dependencies(%q) err = %v, want ErrInvalid naming DEPENDENCIES", src, err)
		}
	}
}
