package completions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGroupsAndGuardrailsSavedOnWindowsLoad: a --model-groups or --guardrails file saved
// by Notepad or PowerShell (a UTF-8 byte order mark, CRLF) loads as the same file without
// them; the mark used to stop serve with "invalid character 'ï' looking for beginning of
// value".
func TestGroupsAndGuardrailsSavedOnWindowsLoad(t *testing.T) {
	write := func(name, doc string) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte("\ufeff"+strings.ReplaceAll(doc, "\n", "\r\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	groups, err := LoadModelGroups(write("groups.json", "{\n  \"fast\": {\"models\": [\"openai/gpt-4o-mini\"]}\n}\n"))
	if err != nil || len(groups["fast"].Models) != 1 {
		t.Fatalf("LoadModelGroups = %+v, %v; want group fast", groups, err)
	}
	gs, err := LoadGuardrails(write("guardrails.json", "[\n  {\"name\": \"m\", \"kind\": \"moderation\", \"mode\": \"pre_call\", \"default_on\": true, \"on_error\": \"allow\", \"categories\": [\"hate\"]}\n]\n"))
	if err != nil || len(gs) != 1 || gs[0].Name != "m" {
		t.Fatalf("LoadGuardrails = %+v, %v; want guardrail m", gs, err)
	}
}

// TestEmptyGroupsAndGuardrailsSaySo: a --model-groups or --guardrails file holding nothing
// is refused naming the file as empty (ErrInvalid), where it said "invalid JSON: EOF".
func TestEmptyGroupsAndGuardrailsSaySo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(path, []byte(" \r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadModelGroups(path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+" is empty") {
		t.Errorf("LoadModelGroups(empty) = %v, want ErrInvalid naming the file as empty", err)
	}
	if _, err := LoadGuardrails(path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+" is empty") {
		t.Errorf("LoadGuardrails(empty) = %v, want ErrInvalid naming the file as empty", err)
	}
}
