package console

import (
	"strings"
	"testing"
)

// TestPageWeight reports what a browser downloads for the console (every embedded file,
// plain and gzipped as served) and holds it to a budget: the console stays a light page.
func TestPageWeight(t *testing.T) {
	files, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var raw, gz int
	for _, f := range files {
		z := len(f.Body)
		if f.Gzip != nil {
			z = len(f.Gzip)
		}
		raw += len(f.Body)
		gz += z
		t.Logf("%-12s %6d bytes, %6d gzipped  %s", f.Name, len(f.Body), z, f.ContentType)
		if f.ETag == "" || f.ContentType == "" {
			t.Errorf("%s: no ETag or content type", f.Name)
		}
	}
	t.Logf("total        %6d bytes, %6d gzipped (%d files)", raw, gz, len(files))
	if len(files) < 5 || gz > 40<<10 {
		t.Fatalf("%d files, %d bytes gzipped: over the 40 KiB budget", len(files), gz)
	}
}

// TestNothingFromElsewhere checks the files load nothing from another origin and hold no
// inline script or style (the Content-Security-Policy would block them).
func TestNothingFromElsewhere(t *testing.T) {
	files, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// The SVG namespace name is an identifier, not a URL that is loaded.
		body := strings.ReplaceAll(string(f.Body), "'http://www.w3.org/2000/svg'", "")
		for _, bad := range []string{"http://", "https://", "//cdn", "innerHTML", "eval(", "style=\"", "<script>"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", f.Name, bad)
			}
		}
	}
}
