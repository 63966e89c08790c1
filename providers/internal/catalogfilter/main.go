// Command catalogfilter reduces the LiteLLM model price catalogue to the chat models (mode
// "chat", and OpenAI's of mode "responses": the models only its Responses API serves,
// which the OpenAI adapter calls there), the embedding models (mode "embedding", which
// the gateway's /v1/embeddings serves), the audio models (modes "audio_transcription" and
// "audio_speech", which /v1/audio serves), the rerank models (mode "rerank", which
// /v1/rerank serves), OpenAI's and Azure OpenAI's image models (mode "image_generation",
// which /v1/images/generations serves: the gateway calls no other provider's image API),
// OpenAI's and Azure OpenAI's realtime models (mode "realtime", which /v1/realtime serves)
// and the fields package providers uses, one entry per line so updates diff well.
//
//	go run ./internal/catalogfilter -in litellm_model_prices_and_context_window.json -out catalogdata/litellm_chat_prices.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"slices"
)

// keep lists the catalogue fields package providers reads.
var keep = []string{
	"litellm_provider", "mode",
	"input_cost_per_token", "output_cost_per_token",
	"cache_read_input_token_cost", "cache_creation_input_token_cost", "cache_creation_input_token_cost_above_1hr", "output_cost_per_reasoning_token",
	"max_input_tokens", "max_output_tokens",
	"supports_function_calling", "supports_web_search", "supports_reasoning", "supports_prompt_caching", "supports_vision",
	"search_context_cost_per_query", "output_vector_size",
	// Chat models that take input_audio parts (gpt-4o-audio-preview, Gemini) price its
	// tokens apart.
	"input_cost_per_audio_token", "output_cost_per_audio_token",
}

// audioKeep lists the fields package providers reads of audio models besides keep's: they
// are priced by the second of audio, the character of text or the audio token.
var audioKeep = []string{
	"input_cost_per_second", "output_cost_per_second", "input_cost_per_character",
	"input_cost_per_audio_token", "output_cost_per_audio_token",
}

// realtimeKeep lists the fields package providers reads of realtime models besides keep's:
// their audio tokens in and out, and cached audio in, have rates of their own.
var realtimeKeep = []string{
	"input_cost_per_audio_token", "output_cost_per_audio_token",
	"cache_read_input_audio_token_cost", "cache_creation_input_audio_token_cost",
}

// rerankKeep lists the fields package providers reads of rerank models besides keep's:
// Cohere's are priced by the query.
var rerankKeep = []string{"input_cost_per_query"}

// imageKeep lists the fields package providers reads of image models besides keep's: they
// are priced by the image, the pixel or the image token.
var imageKeep = []string{"input_cost_per_image", "input_cost_per_pixel", "input_cost_per_image_token", "output_cost_per_image_token"}

func main() {
	in := flag.String("in", "", "LiteLLM model_prices_and_context_window.json")
	out := flag.String("out", "", "filtered output file")
	flag.Parse()
	if *in == "" || *out == "" {
		log.Fatal("usage: catalogfilter -in FILE -out FILE")
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		log.Fatal(err)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	count := 0
	for _, name := range names {
		var entry map[string]any
		if json.Unmarshal(all[name], &entry) != nil || !chatEntry(entry) {
			continue
		}
		small := map[string]any{}
		for _, k := range keep {
			if v, ok := entry[k]; ok {
				small[k] = v
			}
		}
		if audioEntry(entry) {
			for _, k := range audioKeep {
				if v, ok := entry[k]; ok {
					small[k] = v
				}
			}
		}
		if imageEntry(entry) {
			for _, k := range imageKeep {
				if v, ok := entry[k]; ok {
					small[k] = v
				}
			}
		}
		if realtimeEntry(entry) {
			for _, k := range realtimeKeep {
				if v, ok := entry[k]; ok {
					small[k] = v
				}
			}
		}
		if entry["mode"] == "rerank" {
			for _, k := range rerankKeep {
				if v, ok := entry[k]; ok {
					small[k] = v
				}
			}
		}
		for k, v := range entry {
			if tierKey.MatchString(k) {
				small[k] = v // long-prompt rates
			}
		}
		line, err := json.Marshal(small) // map keys are sorted
		if err != nil {
			log.Fatal(err)
		}
		key, _ := json.Marshal(name)
		if count > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, "%s: %s", key, line)
		count++
	}
	buf.WriteString("\n}\n")
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %d chat, embedding, audio, rerank, image and realtime models to %s", count, *out)
}

// tierKey matches the long-prompt rates package providers reads (Price.Tiers).
var tierKey = regexp.MustCompile(`^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|cache_creation_input_token_cost)_above_\d+k_tokens$`)

// chatEntry reports whether a catalogue entry is a model the gateway can call: mode
// "chat", or "responses" on OpenAI's own API (other providers' responses-mode entries are
// served through APIs the gateway does not speak), "embedding", "rerank", an audio model,
// or a realtime model of OpenAI or Azure OpenAI.
func chatEntry(entry map[string]any) bool {
	return entry["mode"] == "chat" || entry["mode"] == "embedding" || entry["mode"] == "rerank" || audioEntry(entry) || imageEntry(entry) || realtimeEntry(entry) ||
		entry["mode"] == "responses" && entry["litellm_provider"] == "openai"
}

// audioEntry reports whether a catalogue entry is a speech-to-text or text-to-speech model.
func audioEntry(entry map[string]any) bool {
	return entry["mode"] == "audio_transcription" || entry["mode"] == "audio_speech"
}

// imageEntry reports whether a catalogue entry is an image generation model of OpenAI or
// Azure OpenAI, the providers whose image API the gateway speaks.
func imageEntry(entry map[string]any) bool {
	return entry["mode"] == "image_generation" && (entry["litellm_provider"] == "openai" || entry["litellm_provider"] == "azure")
}

// realtimeEntry reports whether a catalogue entry is a realtime model of OpenAI or Azure
// OpenAI, the providers whose Realtime API the gateway relays.
func realtimeEntry(entry map[string]any) bool {
	return entry["mode"] == "realtime" && (entry["litellm_provider"] == "openai" || entry["litellm_provider"] == "azure")
}
