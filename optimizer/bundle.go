package optimizer

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Bundle limits (see the spec's Optimization bundle).
const (
	// MaxBundleFiles is the most files a bundle may hold.
	MaxBundleFiles = 100
	// MaxBundleUncompressed caps the bundle's total uncompressed size.
	MaxBundleUncompressed = 50 << 20
	// MaxCompressionRatio is the largest uncompressed/compressed ratio accepted for a bundle
	// whose uncompressed size exceeds CompressionRatioFloor (a zip bomb signal).
	MaxCompressionRatio = 100
	// CompressionRatioFloor is the uncompressed size under which the ratio is not checked
	// (small text files can compress very well without being a threat).
	CompressionRatioFloor = 1 << 20
	// MinDatasetRows is the fewest rows dataset.json may hold.
	MinDatasetRows = 10
	// MinValsetRows is the fewest rows an optional valset.json may hold.
	MinValsetRows = 1
	// MaxBundleNameBytes is the longest file name (its whole path in the bundle, after a
	// single top-level folder is stripped) a bundle may hold, the sandbox's limit.
	MaxBundleNameBytes = 255
)

// Bundle is a checked optimization bundle.
type Bundle struct {
	// Files are the files given to the sandbox (everything except dataset.json, so the
	// agent never sees the answers or the held-out rows).
	Files map[string][]byte
	// Agent is the parsed agent.py.
	Agent *AgentSource
	// Rows is dataset.json, in file order.
	Rows []sandbox.Row
	// Valset is valset.json, in file order, when the bundle has one (DSPy's valset): the
	// held-out rows, and Rows is then all train rows instead of being split 70/30. nil
	// without it.
	Valset []sandbox.Row
	// Metric names eval.py's score: the METRIC string it declares, else DefaultMetric.
	Metric string
	// MetricDescription is the first paragraph of eval.py's module docstring (at most
	// MaxMetricDescription bytes, whitespace folded), which the proposer is shown beside
	// Metric; "" when eval.py has none.
	MetricDescription string
}

// DefaultMetric names the metric of an eval.py that declares no METRIC: its score function.
const DefaultMetric = "eval.py:score"

// MaxMetricName is the longest METRIC name kept; a longer one is cut.
const MaxMetricName = 100

// MaxMetricDescription is the longest metric description (eval.py's docstring) kept.
const MaxMetricDescription = 500

// metricDescription is the first paragraph of eval.py's module docstring (the string
// literal that is its first statement, after comments and blank lines), whitespace folded
// and cut at MaxMetricDescription bytes; "" when there is none.
func metricDescription(eval []byte) string {
	rest := eval
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			break
		}
		rest = after
	}
	doc, _, err := parsePythonString(rest)
	if err != nil {
		return ""
	}
	doc = strings.TrimSpace(doc)
	para, _, _ := strings.Cut(strings.ReplaceAll(doc, "\r\n", "\n"), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	return strings.ToValidUTF8(truncateText(para, MaxMetricDescription), "")
}

// metricAssign finds eval.py's top-level METRIC = "name" (optionally annotated).
var metricAssign = regexp.MustCompile(`(?m)^METRIC[ \t]*(?::[^=\n]*)?=[ \t]*`)

// metricName is the name eval.py gives its metric with a top-level METRIC = "exact_match"
// (a plain string literal, first line, at most MaxMetricName bytes), else DefaultMetric. A
// METRIC that is not a string literal (a DSPy metric function assigned to it) names nothing.
func metricName(eval []byte) string {
	loc := metricAssign.FindIndex(eval)
	if loc == nil {
		return DefaultMetric
	}
	v, _, err := parsePythonString(eval[loc[1]:])
	v, _, _ = strings.Cut(strings.TrimSpace(v), "\n")
	if v = strings.TrimSpace(strings.ToValidUTF8(v, "")); err != nil || v == "" {
		return DefaultMetric
	}
	return strings.ToValidUTF8(truncateText(v, MaxMetricName), "")
}

// ReadBundle checks a ZIP bundle and returns its parts. The ZIP is refused for entries that
// would leave the extraction directory (absolute paths, "..", backslashes), symlinks, more
// than MaxBundleFiles files, more than MaxBundleUncompressed bytes (counted while
// decompressing, not trusted from the headers), a compression ratio above
// MaxCompressionRatio, a name over MaxBundleNameBytes, or a file that is also a folder (lib
// and lib/x.py). agent.py must have the four marker lines, run_batch and a
// SYSTEM_PROMPT literal; eval.py must define score; dataset.json must be an array of at least
// MinDatasetRows objects with an input and an answer (strings, or other JSON values but
// null, given to the agent and to score as their JSON text: rowValue), and an optional valset.json
// (ValsetFile, the held-out rows) one of at least MinValsetRows. A single top-level folder (as made
// by zipping a directory) is stripped. Names are read cleaned ("./agent.py" and
// "lib/./x.py" as "agent.py" and "lib/x.py"; path.Clean, after the checks above). Errors
// are *BundleError values naming the file.
func ReadBundle(zipData []byte) (*Bundle, error) {
	// archive/zip reads the whole central directory before we can count anything; a ZIP of
	// millions of (directory) entries within the download cap costs a GiB of memory there.
	if n, ok := zipEntryCount(zipData); ok && n > maxBundleEntries {
		return nil, bundleErr("bundle", "holds %d entries; at most %d (files and folders) are allowed", n, maxBundleEntries)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
	if err != nil {
		return nil, bundleErr("bundle", "is not a readable ZIP archive: %v", err)
	}
	var entries []bundleEntry
	for _, f := range zr.File {
		name := f.Name
		if err := checkEntryName(name); err != nil {
			return nil, err
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return nil, bundleErr("bundle", "entry %q is a symbolic link; links are not allowed", name)
		}
		if f.FileInfo().IsDir() || strings.HasSuffix(name, "/") {
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, bundleErr("bundle", "entry %q is not a regular file", name)
		}
		// Checked above for "..", so cleaning only drops "." and empty segments.
		entries = append(entries, bundleEntry{name: path.Clean(name), f: f})
	}
	if len(entries) > MaxBundleFiles {
		return nil, bundleErr("bundle", "holds %d files; at most %d are allowed", len(entries), MaxBundleFiles)
	}
	var declared uint64
	for _, e := range entries {
		declared += e.f.UncompressedSize64
	}
	if declared > MaxBundleUncompressed {
		return nil, bundleErr("bundle", "uncompresses to %d bytes; at most %d (50 MiB) are allowed", declared, MaxBundleUncompressed)
	}
	prefix := commonFolder(entries)
	files := map[string][]byte{}
	var total, compressed int64
	for _, e := range entries {
		f, name := e.f, strings.TrimPrefix(e.name, prefix)
		if skippedEntry(name) {
			continue
		}
		if _, dup := files[name]; dup {
			return nil, bundleErr("bundle", "entry %q appears twice", name)
		}
		if len(name) > MaxBundleNameBytes {
			return nil, bundleErr("bundle", "entry %q has a name of %d bytes; at most %d are allowed", name, len(name), MaxBundleNameBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, bundleErr("bundle", "entry %q cannot be read: %v", f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, MaxBundleUncompressed-total+1))
		rc.Close()
		if err != nil {
			if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) {
				return nil, bundleErr("bundle", "entry %q is corrupt: %v", f.Name, err)
			}
			return nil, bundleErr("bundle", "entry %q cannot be read: %v", f.Name, err)
		}
		total += int64(len(data))
		compressed += int64(f.CompressedSize64)
		if total > MaxBundleUncompressed {
			return nil, bundleErr("bundle", "uncompresses to more than %d bytes (50 MiB), more than its headers declare", MaxBundleUncompressed)
		}
		files[name] = data
	}
	if total > CompressionRatioFloor && total > MaxCompressionRatio*max(compressed, 1) {
		return nil, bundleErr("bundle", "compression ratio %d:1 exceeds %d:1 (zip bomb?)", total/max(compressed, 1), MaxCompressionRatio)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, clash := files[dir]; clash {
				return nil, bundleErr("bundle", "entry %q is a file and also the folder of %q; a name cannot be both", dir, name)
			}
		}
	}
	for _, need := range []string{"agent.py", "eval.py", "dataset.json"} {
		if _, ok := files[need]; !ok {
			return nil, bundleErr(need, "is missing from the bundle (it needs agent.py, eval.py and dataset.json at its top level)")
		}
	}
	agent, err := ParseAgent(files["agent.py"])
	if err != nil {
		return nil, err
	}
	if _, err := sandbox.Dependencies(files["agent.py"]); err != nil {
		return nil, bundleErr("agent.py", "%v", strings.TrimPrefix(err.Error(), sandbox.ErrInvalid.Error()+": agent.py: "))
	}
	if !utf8.Valid(files["eval.py"]) {
		return nil, bundleErr("eval.py", "is not UTF-8 text")
	}
	if !scoreDef.Match(files["eval.py"]) {
		return nil, bundleErr("eval.py", "does not define score(expected, predicted) at top level")
	}
	rows, err := parseRows("dataset.json", files["dataset.json"], MinDatasetRows)
	if err != nil {
		return nil, err
	}
	var valset []sandbox.Row
	if data, ok := files[ValsetFile]; ok {
		if valset, err = parseRows(ValsetFile, data, MinValsetRows); err != nil {
			return nil, err
		}
		if n := len(rows) + len(valset); n > sandbox.MaxRows {
			return nil, bundleErr(ValsetFile, "has %d rows and dataset.json %d: %d in all; at most %d are allowed", len(valset), len(rows), n, sandbox.MaxRows)
		}
	}
	// Neither is given to the sandbox: the agent never sees the answers.
	delete(files, "dataset.json")
	delete(files, ValsetFile)
	return &Bundle{Files: files, Agent: agent, Rows: rows, Valset: valset, Metric: metricName(files["eval.py"]), MetricDescription: metricDescription(files["eval.py"])}, nil
}

// checkEntryName refuses names that could escape the extraction directory (zip slip).
func checkEntryName(name string) error {
	bad := func(rule string) error { return bundleErr("bundle", "entry %q %s", name, rule) }
	switch {
	case name == "":
		return bad("has an empty name")
	case strings.ContainsAny(name, "\\\x00"):
		return bad("contains a backslash or NUL")
	case strings.HasPrefix(name, "/"):
		return bad("has an absolute path")
	case len(name) >= 2 && name[1] == ':':
		return bad("has a drive-letter path")
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." {
			return bad(`contains ".." (path traversal)`)
		}
	}
	return nil
}

// skippedEntry reports files that archivers add and the sandbox refuses (hidden files,
// macOS resource forks); they are dropped.
func skippedEntry(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || strings.HasPrefix(part, ".") || part == "__MACOSX" || part == "__pycache__" {
			return true
		}
	}
	return false
}

// bundleEntry is a file entry of the bundle's ZIP and its clean name.
type bundleEntry struct {
	name string
	f    *zip.File
}

// commonFolder returns "dir/" when agent.py is not at the top level and every entry sits
// under one folder dir, else "".
func commonFolder(entries []bundleEntry) string {
	var top string
	for _, e := range entries {
		if e.name == "agent.py" {
			return ""
		}
		if skippedEntry(e.name) {
			continue
		}
		dir, _, ok := strings.Cut(e.name, "/")
		if !ok || (top != "" && dir != top) {
			return ""
		}
		top = dir
	}
	if top == "" {
		return ""
	}
	return top + "/"
}

// ValsetFile is the optional file of a bundle holding the held-out rows (DSPy's valset),
// in dataset.json's format.
const ValsetFile = "valset.json"

// parseRows reads file (dataset.json or valset.json): an array of at least minRows
// {input, answer} strings. Its errors name the file, the row and key at fault, and say what
// the file is when it is not an array: empty, JSON Lines (one object per line, as DSPy and
// Hugging Face exports often are), or an object holding the rows under a key. A UTF-8 byte
// order mark at its start is skipped (RFC 8259 lets a parser ignore one): Windows editors
// and PowerShell's Out-File write it, and the file is otherwise the JSON it looks like.
func parseRows(file string, data []byte, minRows int) ([]sandbox.Row, error) {
	const shape = "must be a JSON array of objects with \"input\" and \"answer\""
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, bundleErr(file, "is empty; it %s (at least %d rows)", shape, minRows)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case isJSONLines(data):
			return nil, bundleErr(file, "holds one JSON object per line (JSON Lines); it %s: put the rows in [ ] separated by commas", shape)
		case errors.As(err, &te) && te.Value == "object":
			return nil, bundleErr(file, "is a JSON object%s; it %s", objectKeys(data), shape)
		case errors.As(err, &te):
			return nil, bundleErr(file, "is a JSON %s; it %s", te.Value, shape)
		}
		return nil, bundleErr(file, "is not valid JSON: %v", err)
	}
	if len(raw) < minRows {
		return nil, bundleErr(file, "has %d rows; at least %d are required", len(raw), minRows)
	}
	if len(raw) > sandbox.MaxRows {
		return nil, bundleErr(file, "has %d rows; at most %d are allowed", len(raw), sandbox.MaxRows)
	}
	rows := make([]sandbox.Row, len(raw))
	for i, r := range raw {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, bundleErr(file, "row %d (counting from 0) must be an object with \"input\" and \"answer\", got %s", i, jsonKind(r))
		}
		for _, field := range []string{"input", "answer"} {
			v, ok := obj[field]
			if !ok {
				return nil, bundleErr(file, "row %d (counting from 0) has no %q%s", i, field, rowKeys(obj, field))
			}
			s, err := rowValue(v)
			if err != nil {
				return nil, bundleErr(file, "row %d (counting from 0): %q %v", i, field, err)
			}
			if field == "input" {
				rows[i].Input = s
			} else {
				rows[i].Answer = s
			}
		}
	}
	return rows, nil
}

// rowValue is the text a row's input or answer is given to the agent and to eval.py's score
// as: a string as it is; a number, boolean, object or array (a DSPy Example's field may be
// any of them) as its JSON text, compacted but otherwise as written in the file (keys in
// their order, numbers as written), which json.loads turns back into the value. null is
// refused: it is a missing value, not an example.
func rowValue(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return "", errors.New("must be a string, number, boolean, object or array, got null")
	case v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("is not a valid JSON string: %v", err)
		}
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return "", fmt.Errorf("is not valid JSON: %v", err)
	}
	return b.String(), nil
}

// jsonKind names the JSON type of v ("a number", "an array", "null", ...).
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// isJSONLines reports whether data is two or more JSON values, one per line.
func isJSONLines(data []byte) bool {
	n := 0
	for line := range bytes.Lines(data) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return false
		}
		n++
	}
	return n > 1
}

// objectKeys names the keys of a dataset.json that is an object, pointing at one holding an
// array (the rows, as in {"examples": [...]}).
func objectKeys(data []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || len(obj) == 0 {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if v := bytes.TrimSpace(obj[k]); len(v) > 0 && v[0] == '[' {
			return fmt.Sprintf(" (the rows look to be under %q: make that array the whole file)", truncateKey(k))
		}
	}
	return ""
}

// rowKeys says which keys a dataset row has, for the error of one without "input" or
// "answer" (missing): a DSPy example's question or a trainset's output shows at once (the
// first few, sorted; "" for an empty row). When the row has one usual name for the missing
// field (DSPy's question, output, ...), the hint names that key.
func rowKeys(obj map[string]json.RawMessage, missing string) string {
	if len(obj) == 0 {
		return " (the row is empty)"
	}
	keys := slices.Sorted(maps.Keys(obj))
	more := ""
	if len(keys) > 5 {
		keys, more = keys[:5], ", …"
	}
	for i, k := range keys {
		keys[i] = strconv.Quote(truncateKey(k))
	}
	hint := "rename them to input and answer"
	var found []string
	for k := range obj {
		// "Input" or "input " (a space no one sees): the field itself, misspelt.
		if k != missing && strings.EqualFold(strings.TrimSpace(k), missing) {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		for _, alias := range datasetAliases[missing] {
			if _, ok := obj[alias]; ok {
				found = append(found, alias)
			}
		}
	}
	if len(found) == 1 {
		hint = fmt.Sprintf("rename %q to %q", found[0], missing)
	}
	// A DSPy Example of several input fields (question, context, ...): they can be one
	// object under "input".
	if _, hasAnswer := obj["answer"]; missing == "input" && hasAnswer && len(obj) > 2 {
		hint += `, or put the input fields in one object: {"input": {…}, "answer": …}`
	}
	return " (its keys: " + strings.Join(keys, ", ") + more + "; " + hint + ")"
}

// datasetAliases are the usual names of a row's input and answer in DSPy examples and other
// trainsets, for rowKeys' hint.
var datasetAliases = map[string][]string{
	"input":  {"question", "query", "prompt", "text", "inputs", "input_text", "instruction"},
	"answer": {"output", "label", "response", "target", "expected", "completion", "outputs", "gold"},
}

// truncateKey shortens a key named in an error to 40 bytes.
func truncateKey(k string) string {
	if len(k) <= 40 {
		return k
	}
	return k[:40] + "…"
}

// maxBundleEntries bounds a bundle's ZIP entries, folders included, before the archive is
// read (MaxBundleFiles bounds its files).
const maxBundleEntries = 10 * MaxBundleFiles

// zipEntryCount reads the number of entries a ZIP declares in its end-of-central-directory
// record (or its ZIP64 record), without reading the directory; ok is false when no record
// is found (archive/zip then says what is wrong).
func zipEntryCount(data []byte) (n uint64, ok bool) {
	const eocdLen, zip64LocatorLen = 22, 20
	start := max(0, len(data)-eocdLen-0xFFFF)
	i := bytes.LastIndex(data[start:], []byte("PK\x05\x06"))
	if i < 0 || start+i+eocdLen > len(data) {
		return 0, false
	}
	eocd := start + i
	n = uint64(binary.LittleEndian.Uint16(data[eocd+10:]))
	if n != 0xFFFF {
		return n, true
	}
	// ZIP64: the locator just before the record points at the ZIP64 end record.
	loc := eocd - zip64LocatorLen
	if loc < 0 || !bytes.Equal(data[loc:loc+4], []byte("PK\x06\x07")) {
		return 0, false
	}
	off := binary.LittleEndian.Uint64(data[loc+8:])
	if len(data) < 56 || off > uint64(len(data)-56) || !bytes.Equal(data[off:off+4], []byte("PK\x06\x06")) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[off+32:]), true
}
