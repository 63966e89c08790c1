package completions

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/switchyard-ai/switchyard/providers"
)

// This file holds how the gateway learns the length of a transcription whose answer does
// not say it (response_format text, srt, vtt), to bill it by the second as LiteLLM does.

// textTranscription turns a JSON transcription answer (asked in place of a text one) into
// the text answer the caller asked for: its text and a line break, as OpenAI writes it. ok
// is false when body is no such answer (it is then passed on as it came).
func textTranscription(body []byte) (text []byte, ok bool) {
	var v struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(body, &v) != nil || v.Text == nil {
		return nil, false
	}
	return append([]byte(*v.Text), '\n'), true
}

// audioSeconds is the length of a transcription's audio whose answer (body, in the
// response_format asked) did not say it: the uploaded file's as its headers say it
// (audioFileSeconds: WAV, FLAC, Ogg, MP4/M4A, MP3's frames) or, for an srt or vtt answer,
// its last cue's end, whichever is later (a header, which the caller writes, saying less
// than the cues heard is not taken at its word); when neither says, the length its size
// estimates (sizeSeconds). 0 only for an empty file and no cue.
func audioSeconds(file []byte, format string, body []byte) float64 {
	s := audioFileSeconds(file)
	if format == "srt" || format == "vtt" {
		s = max(s, cueSeconds(body))
	}
	if s == 0 {
		s = sizeSeconds(file)
	}
	return s
}

// An audio file whose length nothing says is taken to last its size at 128 kbit/s (a
// usual rate of compressed speech: a file at a lower rate lasts longer than estimated,
// so the estimate stays under what most such files bill), and to be a token per 100 ms
// of a model priced by its audio tokens (OpenAI's count of audio input).
const (
	estimatedAudioBytesPerSecond = 16000
	audioTokensPerSecond         = 10
)

// sizeSeconds is the length of file guessed from its size alone, at
// estimatedAudioBytesPerSecond.
func sizeSeconds(file []byte) float64 {
	return float64(len(file)) / estimatedAudioBytesPerSecond
}

// estimatedAudio is the usage of a transcription of file whose answer was never read (an
// answer over the cap on its size): its length as its headers say it (audioFileSeconds),
// else as its size estimates it, and the input audio tokens of that length; the text out
// is not counted.
func estimatedAudio(file []byte) providers.AudioUsage {
	s := audioFileSeconds(file)
	if s == 0 {
		s = sizeSeconds(file)
	}
	tokens := int(math.Ceil(s * audioTokensPerSecond))
	return providers.AudioUsage{Seconds: s, InputTokens: tokens, InputAudioTokens: tokens}
}

// cueSeconds is the latest end of an SRT or WebVTT answer's cues ("00:01:02,500 -->
// 00:01:04,000" or VTT's "01:04.000"), in seconds: LiteLLM's measure of such an answer's
// audio (extract_duration_from_srt_or_vtt); 0 when it has no cue.
func cueSeconds(body []byte) float64 {
	var most float64
	for line := range bytes.Lines(body) {
		_, after, found := bytes.Cut(line, []byte("-->"))
		if !found {
			continue
		}
		end := bytes.Fields(after)
		if len(end) == 0 {
			continue
		}
		if s, ok := cueTime(end[0]); ok && s > most {
			most = s
		}
	}
	return most
}

// cueTime parses a cue's time, [hh:]mm:ss[,.]mmm, in seconds.
func cueTime(b []byte) (float64, bool) {
	var parts [3]float64
	n := 0
	frac := 0.0
	cur, digits := 0.0, 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] >= '0' && b[i] <= '9' {
			cur, digits = cur*10+float64(b[i]-'0'), digits+1
			continue
		}
		if digits == 0 || n == len(parts) {
			return 0, false
		}
		parts[n], n = cur, n+1
		cur, digits = 0, 0
		if i == len(b) || b[i] == ':' {
			continue
		}
		if b[i] != ',' && b[i] != '.' {
			return 0, false
		}
		// The milliseconds.
		scale := 0.1
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			frac += float64(b[i]-'0') * scale
			scale /= 10
		}
		if i != len(b) {
			return 0, false
		}
		break
	}
	if n < 2 {
		return 0, false
	}
	s := 0.0
	for _, p := range parts[:n] {
		s = s*60 + p
	}
	return s + frac, true
}

// wavSeconds is the length of a RIFF/WAVE file's audio, read from its header (the data
// chunk's size over the fmt chunk's bytes per second); 0 when file is no WAV file or its
// header does not say (a data size of 0 or 0xFFFFFFFF, as a recorder still writing leaves
// it, counts the bytes the file has).
func wavSeconds(file []byte) float64 {
	if len(file) < 12 || string(file[:4]) != "RIFF" || string(file[8:12]) != "WAVE" {
		return 0
	}
	var byteRate uint32
	for off := 12; off+8 <= len(file); {
		id, size := string(file[off:off+4]), binary.LittleEndian.Uint32(file[off+4:off+8])
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || body+16 > len(file) {
				return 0
			}
			byteRate = binary.LittleEndian.Uint32(file[body+8 : body+12])
		case "data":
			if byteRate == 0 {
				return 0
			}
			have := uint64(len(file) - body)
			n := uint64(size)
			if n == 0 || n == 0xFFFFFFFF || n > have {
				n = have
			}
			return float64(n) / float64(byteRate)
		}
		next := uint64(body) + uint64(size) + uint64(size&1)
		if next > uint64(len(file)) {
			return 0
		}
		off = int(next)
	}
	return 0
}
