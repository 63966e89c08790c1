package completions

import (
	"encoding/base64"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// audioBuild is a spoken answer being assembled from the pieces a stream relays
// (providers.AudioDelta), for the final Response.Audio.
type audioBuild struct {
	id         string
	expiresAt  int64
	transcript strings.Builder
	// data is the audio decoded: OpenAI encodes each piece on its own, so the pieces'
	// base64 texts cannot simply be joined.
	data []byte
	// undecodable counts pieces whose data was not base64 (relayed as they came, left out
	// of the assembled answer).
	undecodable int
	started     bool
}

// add records the piece d.
func (a *audioBuild) add(d *providers.AudioDelta) {
	a.started = true
	if d.ID != "" {
		a.id = d.ID
	}
	if d.ExpiresAt != 0 {
		a.expiresAt = d.ExpiresAt
	}
	a.transcript.WriteString(d.Transcript)
	if d.Data == "" {
		return
	}
	if b, err := base64.StdEncoding.AppendDecode(a.data, []byte(d.Data)); err == nil {
		a.data = b
	} else {
		a.undecodable++
	}
}

// answer is the spoken answer assembled so far, nil when the stream relayed none.
func (a *audioBuild) answer() *providers.AudioAnswer {
	if !a.started {
		return nil
	}
	return &providers.AudioAnswer{ID: a.id, Data: base64.StdEncoding.EncodeToString(a.data), ExpiresAt: a.expiresAt,
		Transcript: a.transcript.String()}
}

// audioChunk records the piece of a spoken answer d and returns its event.
func (s *ResponseStream) audioChunk(d *providers.AudioDelta) *Chunk {
	s.audio.add(d)
	return &Chunk{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, Type: EventAudio, Audio: d}
}
