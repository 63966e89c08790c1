package optimizer

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The marker lines of agent.py. Each must appear exactly once, alone on its line (leading
// and trailing blanks are ignored), EDITABLE START before EDITABLE END and FIXED START
// before FIXED END, and the two sections must not overlap. Code outside both sections is
// kept as is too; only the EDITABLE section is ever rewritten.
const (
	MarkerEditableStart = "# === EDITABLE START ==="
	MarkerEditableEnd   = "# === EDITABLE END ==="
	MarkerFixedStart    = "# === FIXED START ==="
	MarkerFixedEnd      = "# === FIXED END ==="
	// PromptVariable is the name the EDITABLE section assigns the system prompt to, as one
	// Python string literal: SYSTEM_PROMPT = """...""" (or '...', "...", r"...").
	PromptVariable = "SYSTEM_PROMPT"
)

var (
	promptAssign = regexp.MustCompile(`(?m)^` + PromptVariable + `[ \t]*(?::[^=\n]*)?=[ \t]*`)
	// promptAnyAssign finds any top-level assignment to SYSTEM_PROMPT, augmented ones too.
	promptAnyAssign = regexp.MustCompile(`(?m)^` + PromptVariable + `[ \t]*(?::[^=\n]*)?([-+*/%@&|^]|//|>>|<<|\*\*)?=[^=]`)
	runBatchDef     = regexp.MustCompile(`(?m)^def[ \t]+run_batch[ \t]*\(`)
	scoreDef        = regexp.MustCompile(`(?m)^def[ \t]+score[ \t]*\(`)
)

// AgentSource is a parsed agent.py: where its sections are and which system prompt its
// EDITABLE section holds.
type AgentSource struct {
	src []byte
	// byte ranges of the section bodies (between the marker lines)
	editStart, editEnd   int
	fixedStart, fixedEnd int
	// byte range (within src) of the prompt literal
	litStart, litEnd int
	prompt           string
}

// ParseAgent checks agent.py's markers, its run_batch definition and the SYSTEM_PROMPT
// literal of its EDITABLE section. Errors are *BundleError values naming agent.py.
func ParseAgent(src []byte) (*AgentSource, error) {
	if !utf8.Valid(src) {
		return nil, bundleErr("agent.py", "is not UTF-8 text")
	}
	type found struct{ lineStart, lineEnd, count int }
	markers := map[string]*found{
		MarkerEditableStart: {}, MarkerEditableEnd: {}, MarkerFixedStart: {}, MarkerFixedEnd: {},
	}
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(src)
		}
		if m, ok := markers[strings.TrimSpace(string(src[off:end]))]; ok {
			m.count++
			m.lineStart, m.lineEnd = off, next
		}
		off = next
	}
	for _, name := range []string{MarkerEditableStart, MarkerEditableEnd, MarkerFixedStart, MarkerFixedEnd} {
		switch c := markers[name].count; {
		case c == 0:
			return nil, bundleErr("agent.py", "the marker line %q is missing (agent.py needs %q ... %q around the system prompt and %q ... %q around the code that must not change)",
				name, MarkerEditableStart, MarkerEditableEnd, MarkerFixedStart, MarkerFixedEnd)
		case c > 1:
			return nil, bundleErr("agent.py", "the marker line %q appears %d times; it must appear exactly once", name, c)
		}
	}
	es, ee := markers[MarkerEditableStart], markers[MarkerEditableEnd]
	fs, fe := markers[MarkerFixedStart], markers[MarkerFixedEnd]
	if ee.lineStart < es.lineStart {
		return nil, bundleErr("agent.py", "%q comes before %q", MarkerEditableEnd, MarkerEditableStart)
	}
	if fe.lineStart < fs.lineStart {
		return nil, bundleErr("agent.py", "%q comes before %q", MarkerFixedEnd, MarkerFixedStart)
	}
	if !(ee.lineStart < fs.lineStart || fe.lineStart < es.lineStart) {
		return nil, bundleErr("agent.py", "the EDITABLE and FIXED sections overlap")
	}
	if !runBatchDef.Match(src) {
		return nil, bundleErr("agent.py", "does not define run_batch(inputs, api_key) at top level")
	}
	a := &AgentSource{src: src, editStart: es.lineEnd, editEnd: ee.lineStart, fixedStart: fs.lineEnd, fixedEnd: fe.lineStart}
	body := src[a.editStart:a.editEnd]
	locs := promptAssign.FindAllIndex(body, -1)
	if len(locs) != 1 {
		return nil, bundleErr("agent.py", "the EDITABLE section must assign the system prompt exactly once as %s = \"...\" (found %d assignments)", PromptVariable, len(locs))
	}
	if all := promptAnyAssign.FindAllIndex(src, -1); len(all) != 1 {
		return nil, bundleErr("agent.py", "%s is assigned %d times at top level; it must be assigned exactly once, in the EDITABLE section, as one string literal (the optimizer reports and rewrites that literal)", PromptVariable, len(all))
	}
	lit := a.editStart + locs[0][1]
	prompt, n, err := parsePythonString(src[lit:a.editEnd])
	if err != nil {
		return nil, bundleErr("agent.py", "%s in the EDITABLE section: %v", PromptVariable, err)
	}
	if rest := restOfLine(src[lit+n : a.editEnd]); !onlyComment(rest) {
		return nil, bundleErr("agent.py", "%s in the EDITABLE section must be one plain string literal with nothing after it on its line, found %q after the literal (no concatenation, operators or calls: write the whole prompt as one literal, e.g. %s = \"\"\"...\"\"\")",
			PromptVariable, truncateText(strings.TrimSpace(rest), 60), PromptVariable)
	}
	a.litStart, a.litEnd, a.prompt = lit, lit+n, prompt
	return a, nil
}

// restOfLine returns src up to its first newline.
func restOfLine(src []byte) string {
	if end := bytes.IndexByte(src, '\n'); end >= 0 {
		src = src[:end]
	}
	return string(src)
}

// onlyComment reports whether a line's rest is blank or a comment.
func onlyComment(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\r")
	return rest == "" || rest[0] == '#'
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Prompt returns the system prompt of the EDITABLE section.
func (a *AgentSource) Prompt() string { return a.prompt }

// Source returns the whole agent.py.
func (a *AgentSource) Source() []byte { return a.src }

// Editable returns the body of the EDITABLE section (between its marker lines).
func (a *AgentSource) Editable() []byte { return a.src[a.editStart:a.editEnd] }

// Fixed returns the body of the FIXED section (between its marker lines).
func (a *AgentSource) Fixed() []byte { return a.src[a.fixedStart:a.fixedEnd] }

// WithPrompt returns agent.py with the SYSTEM_PROMPT literal replaced by prompt (written as
// a double-quoted Python string) and everything else byte for byte unchanged.
func (a *AgentSource) WithPrompt(prompt string) (*AgentSource, error) {
	var b bytes.Buffer
	b.Write(a.src[:a.litStart])
	b.WriteString(pythonString(prompt))
	b.Write(a.src[a.litEnd:])
	return a.checkVariant(b.Bytes())
}

// WithEditable returns agent.py with the EDITABLE section's body replaced, for proposers
// that rewrite more than the prompt. The new body must still assign SYSTEM_PROMPT once.
func (a *AgentSource) WithEditable(body []byte) (*AgentSource, error) {
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(bytes.Clone(body), '\n')
	}
	var b bytes.Buffer
	b.Write(a.src[:a.editStart])
	b.Write(body)
	b.Write(a.src[a.editEnd:])
	return a.checkVariant(b.Bytes())
}

// checkVariant parses a rewritten agent.py and verifies that nothing outside the EDITABLE
// section changed — in particular that the FIXED section is byte for byte identical.
func (a *AgentSource) checkVariant(src []byte) (*AgentSource, error) {
	v, err := ParseAgent(src)
	if err != nil {
		return nil, fmt.Errorf("%w: the rewritten agent.py is not valid: %v", ErrProposal, err)
	}
	if !bytes.Equal(v.Fixed(), a.Fixed()) {
		return nil, fmt.Errorf("%w: the FIXED section changed", ErrProposal)
	}
	if !bytes.Equal(v.src[:v.editStart], a.src[:a.editStart]) || !bytes.Equal(v.src[v.editEnd:], a.src[a.editEnd:]) {
		return nil, fmt.Errorf("%w: code outside the EDITABLE section changed", ErrProposal)
	}
	return v, nil
}

// pythonString writes s as a double-quoted Python 3 string literal on one line.
func pythonString(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x2028 || r == 0x2029 || r == 0x85:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parsePythonString reads one Python string literal at the start of src (an optional r/u
// prefix, then '...', "...", ”'...”' or """...""") and returns its value and length.
func parsePythonString(src []byte) (string, int, error) {
	i := 0
	raw := false
	for i < len(src) && i < 2 && strings.IndexByte("rRuU", src[i]) >= 0 {
		if src[i] == 'r' || src[i] == 'R' {
			raw = true
		}
		i++
	}
	if i >= len(src) || (src[i] != '"' && src[i] != '\'') {
		return "", 0, fmt.Errorf("must be a plain string literal (f-strings, bytes, names and expressions are not supported)")
	}
	q := src[i]
	delim := []byte{q}
	if bytes.HasPrefix(src[i:], []byte{q, q, q}) {
		delim = []byte{q, q, q}
	}
	i += len(delim)
	var out strings.Builder
	for {
		if i >= len(src) {
			return "", 0, fmt.Errorf("string literal is not closed before the end of the section")
		}
		if bytes.HasPrefix(src[i:], delim) {
			return out.String(), i + len(delim), nil
		}
		c := src[i]
		if c == '\n' && len(delim) == 1 {
			return "", 0, fmt.Errorf("single-quoted string literal runs past the end of its line")
		}
		if c != '\\' {
			out.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return "", 0, fmt.Errorf("string literal ends with a backslash")
		}
		e := src[i+1]
		if raw {
			out.WriteByte('\\')
			out.WriteByte(e)
			i += 2
			continue
		}
		i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			out.WriteByte(e)
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'a':
			out.WriteByte('\a')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'v':
			out.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(src) {
				return "", 0, fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(string(src[i:i+n]), 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", 0, fmt.Errorf("bad \\%c escape %q", e, src[i:i+n])
			}
			out.WriteRune(rune(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for i < len(src) && i-j < 3 && src[i] >= '0' && src[i] <= '7' {
				i++
			}
			v, _ := strconv.ParseUint(string(src[j:i]), 8, 32)
			out.WriteRune(rune(v))
		case 'N':
			return "", 0, fmt.Errorf(`\N{...} escapes are not supported`)
		default:
			out.WriteByte('\\')
			out.WriteByte(e)
		}
	}
}
