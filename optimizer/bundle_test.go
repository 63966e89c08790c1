package optimizer

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBundle(t *testing.T) {
	files := bundleFiles(t)
	files["helpers/util.py"] = []byte("X = 1\n")
	b, err := ReadBundle(zipFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 32 || b.Rows[0].Input != "upper: apple pie 0" {
		t.Fatalf("rows %d %+v", len(b.Rows), b.Rows[0])
	}
	if _, ok := b.Files["dataset.json"]; ok {
		t.Error("dataset.json must not be given to the sandbox")
	}
	if string(b.Files["helpers/util.py"]) != "X = 1\n" {
		t.Error("extra files are kept")
	}
	if !strings.HasPrefix(b.Agent.Prompt(), "You are a precise assistant.\nRULE upper") {
		t.Errorf("prompt %q", b.Agent.Prompt())
	}
	// A folder zipped as is: the single top-level directory is stripped.
	nested := map[string][]byte{}
	for k, v := range bundleFiles(t) {
		nested["my-agent/"+k] = v
	}
	nested["__MACOSX/my-agent/._agent.py"] = []byte("junk")
	if _, err := ReadBundle(zipFiles(t, nested)); err != nil {
		t.Errorf("nested bundle: %v", err)
	}
}

func TestExampleBundleIsValid(t *testing.T) {
	dir := "../examples/agent-bundle"
	files := map[string][]byte{}
	for _, n := range []string{"agent.py", "eval.py", "dataset.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	if _, err := ReadBundle(zipFiles(t, files)); err != nil {
		t.Fatal(err)
	}
}

// rawZip writes entries with full control over headers.
type rawEntry struct {
	name string
	data []byte
	mode fs.FileMode
}

func rawZip(t *testing.T, entries []rawEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	zw.Close()
	return buf.Bytes()
}

func TestReadBundleRefuses(t *testing.T) {
	good := bundleFiles(t)
	base := func() []rawEntry {
		var es []rawEntry
		for _, n := range []string{"agent.py", "eval.py", "dataset.json"} {
			es = append(es, rawEntry{name: n, data: good[n]})
		}
		return es
	}
	with := func(extra ...rawEntry) []byte { return rawZip(t, append(base(), extra...)) }
	replace := func(name string, data []byte) []byte {
		es := base()
		for i := range es {
			if es[i].name == name {
				es[i].data = data
			}
		}
		return rawZip(t, es)
	}
	without := func(name string) []byte {
		var es []rawEntry
		for _, e := range base() {
			if e.name != name {
				es = append(es, e)
			}
		}
		return rawZip(t, es)
	}
	var many []rawEntry
	for i := 0; i < 100; i++ {
		many = append(many, rawEntry{name: fmt.Sprintf("f%03d.txt", i), data: []byte("x")})
	}
	// Folders count before the archive is read: a flood of them costs memory in archive/zip.
	folders := func(n int) []rawEntry {
		es := make([]rawEntry, n)
		for i := range es {
			es[i] = rawEntry{name: fmt.Sprintf("d%05d/", i)}
		}
		return es
	}
	agent := string(good["agent.py"])
	rows := func(n int) []byte {
		var rs []map[string]any
		for i := 0; i < n; i++ {
			rs = append(rs, map[string]any{"input": fmt.Sprint(i), "answer": "a"})
		}
		b, _ := json.Marshal(rs)
		return b
	}
	cases := []struct {
		name, file, want string
		zip              []byte
	}{
		{"not a zip", "bundle", "not a readable ZIP", []byte("hello")},
		{"zip slip", "bundle", "path traversal", with(rawEntry{name: "../../etc/cron.d/x", data: []byte("x")})},
		{"zip slip nested", "bundle", "path traversal", with(rawEntry{name: "a/../../x", data: []byte("x")})},
		{"absolute", "bundle", "absolute path", with(rawEntry{name: "/etc/passwd", data: []byte("x")})},
		{"backslash", "bundle", "backslash", with(rawEntry{name: "..\\x.py", data: []byte("x")})},
		{"symlink", "bundle", "symbolic link", with(rawEntry{name: "link.py", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777})},
		{"too many files", "bundle", "at most 100", with(many...)},
		{"too many folders", "bundle", "holds 1004 entries; at most 1000", with(folders(1001)...)},
		{"too many folders, zip64", "bundle", "holds 70003 entries; at most 1000", with(folders(70000)...)},
		{"too big", "bundle", "50 MiB", with(rawEntry{name: "big.bin", data: bytes.Repeat([]byte{'a'}, 51<<20)})},
		{"bomb ratio", "bundle", "compression ratio", with(rawEntry{name: "pad.txt", data: bytes.Repeat([]byte{0}, 20<<20)})},
		{"no agent", "agent.py", "missing", without("agent.py")},
		{"no dataset", "dataset.json", "missing", without("dataset.json")},
		{"no markers", "agent.py", "EDITABLE START", replace("agent.py", []byte(strings.ReplaceAll(agent, MarkerEditableStart, "")))},
		{"no fixed end", "agent.py", "FIXED END", replace("agent.py", []byte(strings.ReplaceAll(agent, MarkerFixedEnd, "")))},
		{"marker twice", "agent.py", "exactly once", replace("agent.py", []byte(agent+"\n"+MarkerFixedEnd+"\n"))},
		{"no run_batch", "agent.py", "run_batch", replace("agent.py", []byte(strings.ReplaceAll(agent, "def run_batch(", "def go(")))},
		{"no prompt", "agent.py", "SYSTEM_PROMPT", replace("agent.py", []byte(strings.Replace(agent, "SYSTEM_PROMPT = ", "PROMPT = ", 1)))},
		{"f-string prompt", "agent.py", "plain string literal", replace("agent.py", []byte(strings.Replace(agent, `SYSTEM_PROMPT = """`, `SYSTEM_PROMPT = f"""`, 1)))},
		{"bad deps", "agent.py", "DEPENDENCIES", replace("agent.py", []byte("DEPENDENCIES = ['--index-url http://evil']\n"+agent))},
		// Issue 19 items 10 and 11: an expression for the prompt, a string for the dependencies.
		{"prompt concatenation", "agent.py", `SYSTEM_PROMPT in the EDITABLE section must be one plain string literal with nothing after it on its line, found "+ \"b\""`,
			replace("agent.py", []byte(strings.Replace(agent, `capital letters."""`, `capital letters.""" + "b"`, 1)))},
		{"prompt implicit concatenation", "agent.py", "SYSTEM_PROMPT in the EDITABLE section must be one plain string literal",
			replace("agent.py", []byte(strings.Replace(agent, `capital letters."""`, `capital letters.""" "b"`, 1)))},
		{"prompt reassigned", "agent.py", "SYSTEM_PROMPT is assigned 2 times", replace("agent.py", []byte(agent+"\nSYSTEM_PROMPT += 'more'\n"))},
		{"deps string", "agent.py", `DEPENDENCIES must be a literal list of strings such as ["requests"], not "requests"`,
			replace("agent.py", []byte("DEPENDENCIES = \"requests\"\n"+agent))},
		{"no score", "eval.py", "score", replace("eval.py", []byte("def grade(a, b):\n    return 1\n"))},
		{"few rows", "dataset.json", "at least 10", replace("dataset.json", rows(9))},
		{"not array", "dataset.json", "array", replace("dataset.json", []byte(`{"input":"a"}`))},
		{"bad json", "dataset.json", "not valid JSON", replace("dataset.json", []byte(`[{"input":`))},
		{"answer null", "dataset.json", `"answer" must be a string, number, boolean, object or array, got null`, replace("dataset.json", []byte(strings.Replace(string(rows(10)), `"answer":"a"`, `"answer":null`, 1)))},
		{"missing input", "dataset.json", `has no "input"`, replace("dataset.json", []byte(strings.Replace(string(rows(10)), `,"input":"0"`, ``, 1)))},
		// A usual name for the missing field is named in the hint (it said "rename them to
		// input and answer", leaving the user to work out which key is which).
		{"DSPy's question", "dataset.json", `row 0 (counting from 0) has no "input" (its keys: "answer", "question"; rename "question" to "input")`,
			replace("dataset.json", []byte(strings.Replace(string(rows(10)), `"input":"0"`, `"question":"0"`, 1)))},
		{"output and extra keys", "dataset.json", `row 0 (counting from 0) has no "answer" (its keys: "difficulty", "input", "output"; rename "output" to "answer")`,
			replace("dataset.json", []byte(strings.Replace(string(rows(10)), `"answer":"a"`, `"output":"a","difficulty":"easy"`, 1)))},
		{"no usual name", "dataset.json", `row 0 (counting from 0) has no "input" (its keys: "answer", "q"; rename them to input and answer)`,
			replace("dataset.json", []byte(strings.Replace(string(rows(10)), `"input":"0"`, `"q":"0"`, 1)))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadBundle(c.zip)
			var be *BundleError
			if !errors.As(err, &be) || !errors.Is(err, ErrBundle) {
				t.Fatalf("err = %v, want a BundleError", err)
			}
			if be.File != c.file || !strings.Contains(be.Error(), c.want) {
				t.Errorf("err = %q (file %q), want file %q and %q", be.Error(), be.File, c.file, c.want)
			}
		})
	}
}

func TestAgentPromptRewrite(t *testing.T) {
	src := []byte("import os\n" + MarkerEditableStart + "\n# the prompt\nSYSTEM_PROMPT = r'''a\\nb\n''' # keep\nOTHER = 1\n" + MarkerEditableEnd +
		"\n" + MarkerFixedStart + "\ndef run_batch(inputs, api_key):\n    return [SYSTEM_PROMPT] * len(inputs), {}\n" + MarkerFixedEnd + "\n")
	a, err := ParseAgent(src)
	if err != nil {
		t.Fatal(err)
	}
	if a.Prompt() != "a\\nb\n" {
		t.Fatalf("raw prompt %q", a.Prompt())
	}
	tricky := "Line 1\n\"quoted\" \\ back\ttab '''triple''' \x01 é 中 \u2028\n" + MarkerFixedEnd + "\n"
	v, err := a.WithPrompt(tricky)
	if err != nil {
		t.Fatal(err)
	}
	if v.Prompt() != tricky {
		t.Fatalf("round trip %q != %q", v.Prompt(), tricky)
	}
	if !bytes.Equal(v.Fixed(), a.Fixed()) || !strings.Contains(string(v.Editable()), "# keep\nOTHER = 1\n") {
		t.Fatalf("variant:\n%s", v.Source())
	}
	// Python reads the literal back as the same string.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found; skipping the Python cross-check")
		return
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "agent.py"), v.Source(), 0o600)
	out, err := exec.Command(py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import agent; sys.stdout.write(agent.SYSTEM_PROMPT)", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != tricky {
		t.Errorf("python read %q, want %q", out, tricky)
	}
	for _, lit := range []string{`"a\x41\u00e9\101\n"`, `'it\'s'`, `"""x"y"""`, `u"z"`} {
		p, _, err := parsePythonString([]byte(lit))
		if err != nil {
			t.Errorf("%s: %v", lit, err)
			continue
		}
		want, _ := exec.Command(py, "-c", "import sys; sys.stdout.write("+lit+")").Output()
		if p != string(want) {
			t.Errorf("%s: got %q, python %q", lit, p, want)
		}
	}
}

func TestAcceptanceRule(t *testing.T) {
	r := DefaultAcceptance
	ones := func(n int, v float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	cases := []struct {
		name          string
		best, variant []float64
		accept        bool
	}{
		{"4 wins no loss", ones(10, 0), append(ones(4, 1), ones(6, 0)...), true},
		{"3 wins no loss", ones(10, 0), append(ones(3, 1), ones(7, 0)...), true},
		{"7 rows: 1 win no loss (a strict improvement)", ones(7, 0), append(ones(1, 1), ones(6, 0)...), true},
		{"7 rows: 3 wins 1 loss", append(ones(6, 0), 1), append(ones(3, 1), 0, 0, 0, 0), false},
		{"100 rows: 1 win no loss (effect 0.01)", ones(100, 0), append(ones(1, 1), ones(99, 0)...), false},
		{"100 rows: 2 wins no loss", ones(100, 0), append(ones(2, 1), ones(98, 0)...), true},
		{"1000 rows: 19 wins no loss", ones(1000, 0), append(ones(19, 1), ones(981, 0)...), false},
		{"1000 rows: 60 wins 40 losses", append(ones(60, 0), append(ones(40, 1), ones(900, 0)...)...), append(ones(60, 1), ones(940, 0)...), true},
		{"6 wins 1 loss", append(ones(6, 0), 1, 0, 0), append(ones(6, 1), 0, 0, 0), true},
		{"same mean", []float64{1, 0, 1, 0}, []float64{0, 1, 0, 1}, false},
		{"all ties", ones(20, 0.5), ones(20, 0.5), false},
		{"tiny effect", ones(200, 0.5), append(ones(100, 0.51), ones(100, 0.5)...), false},
		{"regression", ones(10, 1), ones(10, 0), false},
	}
	for _, c := range cases {
		got := r.Compare(c.best, c.variant)
		if got.Accepted != c.accept {
			t.Errorf("%s: %+v, want accepted=%v", c.name, got, c.accept)
		}
	}
	if p := signTestP(4, 4); p != 1.0/16 {
		t.Errorf("p(4 of 4) = %v", p)
	}
	if p := signTestP(6, 7); p < 0.0624 || p > 0.0626 {
		t.Errorf("p(6 of 7) = %v", p)
	}
}

func TestSplitIsFixedAndDisjoint(t *testing.T) {
	rows := scriptedDataset()
	tr1, te1 := Split(rows, DefaultSeed)
	tr2, te2 := Split(rows, DefaultSeed)
	if len(tr1) != 22 || len(te1) != 10 {
		t.Fatalf("split %d/%d", len(tr1), len(te1))
	}
	seen := map[string]bool{}
	for i := range tr1 {
		if tr1[i] != tr2[i] {
			t.Fatal("split is not deterministic")
		}
		seen[tr1[i].Input] = true
	}
	for i := range te1 {
		if te1[i] != te2[i] || seen[te1[i].Input] {
			t.Fatal("test split overlaps train or varies")
		}
	}
	if tr, te := Split(rows[:10], DefaultSeed); len(tr) != 7 || len(te) != 3 {
		t.Errorf("10 rows split %d/%d", len(tr), len(te))
	}
}

func TestRequestValidation(t *testing.T) {
	ok := Request{InputURL: "https://x.example/b.zip", TargetModels: []string{"openai/gpt-4o"}}
	cases := []struct {
		mod  func(*Request)
		want string
	}{
		{func(r *Request) { r.InputURL = "" }, "agentopt requires input_url"},
		{func(r *Request) { r.InputURL = " \t" }, "agentopt requires input_url"}, // blank is missing
		{func(r *Request) { r.TargetModels = nil }, "agentopt requires target_models"},
		{func(r *Request) { r.NIterations = 51 }, "n_iterations must be 1-50"},
		{func(r *Request) { r.NIterations = -1 }, "n_iterations must be 1-50"},
		{func(r *Request) { r.Optimizer = "dspy" }, `optimizer must be "agentopt"`},
		{func(r *Request) { r.TargetModels = []string{"gpt-4o"} }, "target_models[0] must be provider/model"},
		{func(r *Request) { r.TargetModels = []string{"a/b", "a/b"} }, "repeats"},
	}
	for _, c := range cases {
		r := ok
		c.mod(&r)
		err := r.normalize()
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || !strings.Contains(ve.Message, c.want) {
			t.Errorf("%q: err = %v", c.want, err)
		}
	}
	r := ok
	if err := r.normalize(); err != nil || r.NIterations != 15 || r.OverallTimeout != DefaultOverallTimeout ||
		r.LLMCallTimeout != DefaultLLMCallTimeout || r.SandboxTimeout != DefaultSandboxTimeout || r.Optimizer != "agentopt" {
		t.Errorf("defaults: %+v %v", r, err)
	}
}
