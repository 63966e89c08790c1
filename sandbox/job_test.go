package sandbox

import (
	"errors"
	"testing"
)

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
	clash := Job{Files: map[string][]byte{"agent.py": nil, "eval.py": nil, "lib": nil, "lib/x.py": nil}, Rows: []Row{{}}}
	if err := clash.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("file/directory clash: err = %v, want ErrInvalid", err)
	}
	for _, name := range []string{"../x", "/abs", "a/../b", "a//b", ".hidden", "a\\b", ""} {
		j := base(name)
		if err := j.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err = %v, want ErrInvalid", name, err)
		}
	}
}
