// Package console is Switchyard's web console: hand-written HTML, CSS and JavaScript
// modules embedded in the binary (no build step, nothing fetched from elsewhere at run
// time). The files are public; the page asks for an API key, keeps it in the tab's
// sessionStorage and reads everything through the authenticated JSON API with
// Authorization: Bearer. Opening /console/#key=KEY logs in with KEY: the page moves it into
// sessionStorage and removes it from the address bar.
//
// Handler serves the files with a strict Content-Security-Policy (default-src 'self'), an
// ETag per file and a gzip copy made once at start for clients that accept it.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every console file: scripts, styles and API calls
// only from this origin, no inline script or style, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Files returns the console's files (index.html at the root).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("console: " + err.Error()) // the embedded tree always has static/
	}
	return sub
}

// File is one console file as served.
type File struct {
	Name        string
	ContentType string
	Body        []byte
	// Gzip is Body gzipped (nil when that is not smaller).
	Gzip []byte
	ETag string
}

// Load reads and compresses every console file.
func Load() ([]File, error) {
	var out []File
	err := fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return fmt.Errorf("console: reading %s: %w", p, err)
		}
		f := File{Name: p, Body: b, ContentType: mime.TypeByExtension(path.Ext(p))}
		if f.ContentType == "" {
			f.ContentType = "application/octet-stream"
		}
		switch path.Ext(p) { // the system's MIME table may lack or differ on these
		case ".js":
			f.ContentType = "text/javascript; charset=utf-8"
		case ".css":
			f.ContentType = "text/css; charset=utf-8"
		case ".html":
			f.ContentType = "text/html; charset=utf-8"
		case ".svg":
			f.ContentType = "image/svg+xml"
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		if gz.Len() < len(b) {
			f.Gzip = gz.Bytes()
		}
		sum := sha256.Sum256(b)
		f.ETag = `"` + hex.EncodeToString(sum[:12]) + `"`
		out = append(out, f)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Handler serves the console under prefix (e.g. "/console/"): prefix itself is
// index.html; unknown files are 404.
func Handler(prefix string) (http.Handler, error) {
	files, err := Load()
	if err != nil {
		return nil, err
	}
	byName := map[string]*File{}
	for i := range files {
		byName[files[i].Name] = &files[i]
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, prefix)
		if name == "" {
			name = "index.html"
		}
		f := byName[name]
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if f == nil {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		h.Set("Content-Type", f.ContentType)
		// Revalidated on every load, so a new binary's files are picked up at once.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.ETag)
		h.Add("Vary", "Accept-Encoding")
		body := f.Body
		if f.Gzip != nil && acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			body = f.Gzip
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}), nil
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
