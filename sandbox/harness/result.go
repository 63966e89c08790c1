package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// ScoreTolerance is how far outside [0, 1] a score may stray (floating-point noise such as
// 1.0000000000000002) and still be clamped into range. Anything further out, like 7, is the
// scoring function breaking its contract: the job fails with ReasonInvalidResult rather than
// having the score silently clamped.
const ScoreTolerance = 1e-9

// MaxFeedbackBytes is how much of one row's feedback text (the second item of a
// (score, feedback) pair returned by eval.py) is kept.
const MaxFeedbackBytes = 16 << 10

// maxErrorMessage bounds an error message taken from the harness.
const maxErrorMessage = 4000

// Expect says which result a stage's frame must carry.
type Expect struct {
	// Rows is the number of rows of the job.
	Rows int
	// Stage is the stage that ran (StageAgent when empty).
	Stage Stage
	// Nonce is the score stage's per-run secret; its frame must carry it.
	Nonce string
}

type resultMessage struct {
	Nonce       string            `json:"nonce"`
	Predictions []json.RawMessage `json:"predictions"`
	Scores      []json.RawMessage `json:"scores"`
	Feedback    []json.RawMessage `json:"feedback"`
	Usage       *struct {
		Tokens json.RawMessage `json:"tokens"`
		Cost   json.RawMessage `json:"cost"`
	} `json:"usage"`
	Errors []struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"errors"`
}

// Decode validates a stage's result frame. The payload is untrusted: every field the stage
// owns is checked, and the others are ignored. The agent stage owns the predictions (one
// string per row, within [MaxPredictionBytes]) and the usage (non-negative numbers); any
// "scores" it writes are never read. The score stage owns the scores (one number per row
// within [0, 1] up to [ScoreTolerance]) and, optionally, the feedback (one string or null per
// row, cut to [MaxFeedbackBytes]); it must carry want.Nonce. Errors are
// [*sandbox.JobError]s; the Result is nil unless the result is valid.
func Decode(payload []byte, want Expect) (*sandbox.Result, error) {
	rows := want.Rows
	invalid := func(format string, args ...any) (*sandbox.Result, error) {
		return nil, &sandbox.JobError{Reason: sandbox.ReasonInvalidResult, Message: fmt.Sprintf(format, args...)}
	}
	var msg resultMessage
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&msg); err != nil {
		return invalid("the harness result is not valid JSON: %v", err)
	}
	if want.Stage == StageScore && (want.Nonce == "" || msg.Nonce != want.Nonce) {
		return invalid("the score result does not carry this run's nonce")
	}
	if len(msg.Errors) > 0 {
		e := msg.Errors[0]
		reason := e.Reason
		if reason != sandbox.ReasonException && reason != sandbox.ReasonInvalidResult {
			reason = sandbox.ReasonException
		}
		text := string(bytes.ToValidUTF8([]byte(e.Message), []byte("\uFFFD")))
		if len(text) > maxErrorMessage {
			text = text[:maxErrorMessage] + "..."
		}
		if text == "" {
			text = "the harness reported an error without a message"
		}
		return nil, &sandbox.JobError{Reason: reason, Message: text}
	}
	if want.Stage == StageScore {
		if len(msg.Scores) != rows {
			return invalid("got %d scores for %d inputs", len(msg.Scores), rows)
		}
		res := &sandbox.Result{Scores: make([]float64, rows)}
		for i, raw := range msg.Scores {
			v, ok := number(raw)
			if !ok {
				return invalid("score %d is %s, not a number", i, truncate(string(raw), 100))
			}
			if v < -ScoreTolerance || v > 1+ScoreTolerance {
				return invalid("score %d is %g, outside [0, 1]", i, v)
			}
			res.Scores[i] = math.Min(1, math.Max(0, v))
		}
		if len(msg.Feedback) > 0 {
			if len(msg.Feedback) != rows {
				return invalid("got %d feedback entries for %d inputs", len(msg.Feedback), rows)
			}
			res.Feedback = make([]string, rows)
			for i, raw := range msg.Feedback {
				if string(bytes.TrimSpace(raw)) == "null" {
					continue
				}
				if err := json.Unmarshal(raw, &res.Feedback[i]); err != nil {
					return invalid("feedback %d is not a string", i)
				}
				if len(res.Feedback[i]) > MaxFeedbackBytes {
					res.Feedback[i] = strings.ToValidUTF8(res.Feedback[i][:MaxFeedbackBytes], "")
				}
			}
		}
		return res, nil
	}
	if len(msg.Predictions) != rows {
		return invalid("got %d predictions for %d inputs", len(msg.Predictions), rows)
	}
	res := &sandbox.Result{Predictions: make([]string, rows)}
	for i, raw := range msg.Predictions {
		if err := json.Unmarshal(raw, &res.Predictions[i]); err != nil {
			return invalid("prediction %d is not a string", i)
		}
		if len(res.Predictions[i]) > MaxPredictionBytes {
			return invalid("prediction %d is %d bytes, at most %d allowed", i, len(res.Predictions[i]), MaxPredictionBytes)
		}
	}
	if msg.Usage != nil {
		if len(msg.Usage.Tokens) > 0 {
			v, ok := number(msg.Usage.Tokens)
			if !ok || v < 0 || v > 1e15 || v != math.Trunc(v) {
				return invalid("usage.tokens is %s, not a non-negative integer", truncate(string(msg.Usage.Tokens), 100))
			}
			res.Usage.Tokens = int64(v)
		}
		if len(msg.Usage.Cost) > 0 {
			v, ok := number(msg.Usage.Cost)
			if !ok || v < 0 || v > 1e12 {
				return invalid("usage.cost is %s, not a non-negative number", truncate(string(msg.Usage.Cost), 100))
			}
			res.Usage.Cost = v
		}
	}
	return res, nil
}

// number parses a JSON number (strings, booleans and null are not numbers).
func number(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
