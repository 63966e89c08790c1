package providers_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// windowsFile writes doc to a file in dir as a Windows editor saves it: a UTF-8 byte order
// mark first and CRLF line ends.
func windowsFile(t *testing.T, name, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("\ufeff"+strings.ReplaceAll(doc, "\n", "\r\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFilesSavedOnWindowsLoad: a --providers-config or --prices-file saved by
// Notepad or PowerShell (a byte order mark, CRLF) loads as the same file without them;
// the mark used to stop serve with "invalid character 'ï' looking for beginning of value".
func TestConfigFilesSavedOnWindowsLoad(t *testing.T) {
	fc, err := providers.LoadConfig(windowsFile(t, "providers.json", "{\n  \"providers\": [\n    {\"name\": \"local\", \"format\": \"openai\", \"base_url\": \"http://127.0.0.1:8000/v1\", \"key_optional\": true}\n  ]\n}\n"))
	if err != nil || len(fc.Providers) != 1 || fc.Providers[0].Name != "local" {
		t.Fatalf("LoadConfig = %+v, %v; want the one provider", fc, err)
	}
	c, err := providers.LoadCatalog(windowsFile(t, "prices.json", "{\n  \"my-model\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 2e-6, \"mode\": \"chat\"}\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := c.Lookup("custom/my-model"); !ok || p.InputPerToken != 1e-6 {
		t.Errorf("Lookup(custom/my-model) = %+v, %v; want the file's price", p, ok)
	}
}

// TestEmptyConfigFilesSaySo: a --providers-config or --prices-file holding nothing (a
// ConfigMap's empty key, a redirect that failed) is refused saying the file is empty, where
// it said "invalid JSON: EOF".
func TestEmptyConfigFilesSaySo(t *testing.T) {
	path := windowsFile(t, "providers.json", "\n")
	if _, err := providers.LoadConfig(path); err == nil || !strings.Contains(err.Error(), path+" is empty") {
		t.Errorf("LoadConfig(empty) = %v, want it naming the file as empty", err)
	}
	_, err := providers.LoadCatalog(path)
	if !errors.Is(err, providers.ErrInvalidCatalog) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "the file is empty") {
		t.Errorf("LoadCatalog(empty) = %v, want ErrInvalidCatalog naming the file as empty", err)
	}
}
