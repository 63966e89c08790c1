package providers

// AudioDelta is a piece of a spoken answer streamed by an OpenAI-format upstream
// (choices[].delta.audio of a chat.completion.chunk): OpenAI sends the answer's id with
// its first pieces, then pieces of the transcript, then pieces of the audio (base64
// pcm16, each piece decodable on its own), and expires_at near the end. Each field is set
// only on the pieces that carry it.
type AudioDelta struct {
	ID         string `json:"id,omitempty"`
	Data       string `json:"data,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	ExpiresAt  int64  `json:"expires_at,omitempty"`
}

// StreamedAudioFormat is the only audio format OpenAI streams a spoken answer in: a
// streamed request asking for another ("wav", "mp3", …) is refused by OpenAI ("'audio.format'
// does not support 'wav' when stream=true").
const StreamedAudioFormat = "pcm16"
