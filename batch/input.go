package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Endpoints are the endpoints a batch may run: the OpenAI-compatible routes the gateway
// serves that OpenAI's Batch API runs too.
var Endpoints = []string{"/v1/chat/completions", "/v1/embeddings", "/v1/responses", "/v1/completions", "/v1/moderations"}

// endpointList is Endpoints for messages.
var endpointList = strings.Join(Endpoints, ", ")

// InputSummary is what CheckInput learned of a batch input.
type InputSummary struct {
	// Requests is the number of requests (non-blank lines).
	Requests int `json:"requests"`
	// URLs maps each url the lines name to the first line naming it.
	URLs map[string]int `json:"urls"`
}

// inputSummary is the record's copy of InputSummary.
type inputSummary = InputSummary

// inputLine is one request of a batch input.
type inputLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// CheckInput reads a batch input (JSONL: one request per line) and checks every line: a
// JSON object with custom_id (a non-empty string, unique in the file), method "POST", url
// one of Endpoints and body a JSON object. Blank lines are skipped; at most MaxRequests
// requests. A failure is a *ValidationError naming the line and the field.
func CheckInput(r io.Reader) (*InputSummary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	sum := &InputSummary{URLs: map[string]int{}}
	seen := map[string]int{}
	for lineNo := 1; ; lineNo++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("batch: read the upload: %w", err)
		}
		if line := inputLineText(b, lineNo); len(line) > 0 {
			l, verr := parseLine(line, lineNo)
			if verr != nil {
				return nil, verr
			}
			if first, dup := seen[l.CustomID]; dup {
				return nil, invalidLine(lineNo, "custom_id %q is used again (first on line %d): each request needs its own custom_id", l.CustomID, first)
			}
			seen[l.CustomID] = lineNo
			if _, ok := sum.URLs[l.URL]; !ok {
				sum.URLs[l.URL] = lineNo
			}
			sum.Requests++
			if sum.Requests > MaxRequests {
				return nil, &ValidationError{Param: "file", Line: lineNo, TooLarge: true,
					Message: fmt.Sprintf("the file holds more than %d requests, the most one batch runs (OpenAI's bound): split it into several batches", MaxRequests)}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if sum.Requests == 0 {
		return nil, invalid("file", "the file holds no request: a batch input holds one JSON request per line")
	}
	return sum, nil
}

// utf8BOM is the byte order mark Windows editors (Notepad, PowerShell's Out-File) put at
// the start of a UTF-8 file.
var utf8BOM = []byte("\ufeff")

// inputLineText is line lineNo (1-based) of a batch input, b as read, without its
// surrounding white space (a CRLF's CR included) and, on the first line, without a UTF-8
// byte order mark: every reader of an input (the upload's check, the run, the output's
// assembly) reads its lines through it, so that they agree on which lines are requests.
func inputLineText(b []byte, lineNo int) []byte {
	if lineNo == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return bytes.TrimSpace(b)
}

// parseLine decodes and checks one non-blank line (lineNo for messages).
func parseLine(line []byte, lineNo int) (inputLine, *ValidationError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		msg := "is not a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		return inputLine{}, invalidLine(lineNo, "%s (each line is one request: {\"custom_id\", \"method\", \"url\", \"body\"})", msg)
	}
	var l inputLine
	str := func(name string, dst *string) *ValidationError {
		raw, ok := fields[name]
		if !ok {
			return invalidLine(lineNo, "%s is required", name)
		}
		if json.Unmarshal(raw, dst) != nil {
			return invalidLine(lineNo, "%s must be a string, got %s", name, clip(string(raw), 80))
		}
		return nil
	}
	if err := str("custom_id", &l.CustomID); err != nil {
		return l, err
	}
	if l.CustomID == "" {
		return l, invalidLine(lineNo, "custom_id must not be empty")
	}
	if err := str("method", &l.Method); err != nil {
		return l, err
	}
	if l.Method != "POST" {
		return l, invalidLine(lineNo, "method must be \"POST\", got %q", l.Method)
	}
	if err := str("url", &l.URL); err != nil {
		return l, err
	}
	if !slices.Contains(Endpoints, l.URL) {
		return l, invalidLine(lineNo, "url must be one of %s, got %q", endpointList, l.URL)
	}
	body, ok := fields["body"]
	if !ok {
		return l, invalidLine(lineNo, "body is required (the request the endpoint takes)")
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return l, invalidLine(lineNo, "body must be a JSON object (the request the endpoint takes), got %s", clip(string(body), 80))
	}
	l.Body = body
	return l, nil
}

// decode unmarshals a stored JSON value.
func decode(b []byte, v any) error { return json.Unmarshal(b, v) }
