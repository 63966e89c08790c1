package sandbox

import (
	"errors"
	"slices"
	"testing"
)

func TestDependencies(t *testing.T) {
	for src, want := range map[string][]string{
		"def run_batch(i, k): pass\n":                        nil,
		"DEPENDENCIES = []\n":                                {},
		"DEPENDENCIES = ['numpy>=1.26', \"requests\"]\n":     {"numpy>=1.26", "requests"},
		"DEPENDENCIES: list[str] = (\n  'a==1', # pin\n)\n":  {"a==1"},
		"x = 1\nDEPENDENCIES = [\n 'pkg[extra]>=1,<2',\n]\n": {"pkg[extra]>=1,<2"},
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
	} {
		if _, err := Dependencies([]byte(src)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Dependencies(%q) err = %v, want ErrInvalid", src, err)
		}
	}
}

func TestJobErrorMatchesErrJob(t *testing.T) {
	var err error = &JobError{Reason: ReasonTimeout, Message: "slow"}
	if !errors.Is(err, ErrJob) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("JobError must match ErrJob only")
	}
	if err.Error() != "sandbox: job failed: slow" {
		t.Fatalf("Error() = %q", err.Error())
	}
}

func TestValidateFileNames(t *testing.T) {
	base := func(extra string) Job {
		return Job{Files: map[string][]byte{"agent.py": nil, "eval.py": nil, extra: nil}, Rows: []Row{{}}}
	}
	for _, name := range []string{"lib/util.py", "data.json"} {
		j := base(name)
		if err := j.Validate(); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	for _, name := range []string{"../x", "/abs", "a/../b", "a//b", ".hidden", "a\\b", ""} {
		j := base(name)
		if err := j.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err = %v, want ErrInvalid", name, err)
		}
	}
}
