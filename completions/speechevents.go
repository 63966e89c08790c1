package completions

import (
	"bytes"
	"encoding/json"
)

// maxSpeechEventLine bounds the line a speechUsageScanner keeps: the speech.audio.done
// event is small; longer lines (base64 audio deltas) are skipped, not kept.
const maxSpeechEventLine = 64 << 10

// speechUsageScanner reads a speech answer streamed as server-sent events
// (stream_format sse) as it is relayed, for the usage of its speech.audio.done event.
type speechUsageScanner struct {
	line          []byte
	over          bool // the current line is longer than maxSpeechEventLine: skipped
	done          bool
	input, output int
}

// feed reads b, the next bytes of the answer.
func (sc *speechUsageScanner) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		piece := b
		if i >= 0 {
			piece = b[:i]
		}
		if !sc.over {
			if len(sc.line)+len(piece) > maxSpeechEventLine {
				sc.over, sc.line = true, sc.line[:0]
			} else {
				sc.line = append(sc.line, piece...)
			}
		}
		if i < 0 {
			return
		}
		if !sc.over {
			sc.check(bytes.TrimSuffix(sc.line, []byte("\r")))
		}
		sc.line, sc.over = sc.line[:0], false
		b = b[i+1:]
	}
}

// check reads one whole line: a data line of the speech.audio.done event sets the usage.
func (sc *speechUsageScanner) check(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte("speech.audio.done")) {
		return
	}
	var ev struct {
		Type  string `json:"type"`
		Usage *struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil || ev.Type != "speech.audio.done" || ev.Usage == nil {
		return
	}
	sc.done, sc.input, sc.output = true, ev.Usage.InputTokens, ev.Usage.OutputTokens
}
