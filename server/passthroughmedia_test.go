package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// silentWAV is a silent 16-bit mono PCM WAV file of 16 kHz and the given length.
func silentWAV(seconds int) []byte {
	const rate = 16000
	data := rate * 2 * seconds
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate*2)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

// mp3At64kbps is an MPEG-1 layer III stream of frames 64 kbit/s frames at 44.1 kHz (1,152
// samples, 208 bytes each), their audio zeros.
func mp3At64kbps(frames int) []byte {
	frame := make([]byte, 208)
	copy(frame, []byte{0xFF, 0xFB, 0x50, 0x00})
	return bytes.Repeat(frame, frames)
}

// TestPassThroughMediaBilling: pass-through transcriptions and image calls, billed by the
// audio's length or per image rather than by tokens, were billed nothing: a transcription
// is now billed the length its answer reports (usage of type duration, verbose_json's
// duration), else — marked estimated — its file's length as its headers say it (WAV, an
// MP3's frames) or its srt answer's last cue; an image edit or generation whose answer
// reports no tokens is billed per image it holds at the size asked (its field named as
// OpenAI reads it: a SIZE or Size is not, and its default size is billed; a form part by
// its name, not its name*), marked
// estimated. A file whose length nothing says is billed its size at 128 kbit/s, marked
// estimated.
func TestPassThroughMediaBilling(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch q := r.URL.Query().Get("answer"); q {
		case "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "hello there\n")
		case "srt":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "1\n00:00:00,000 --> 00:00:05,000\nhello there\n\n")
		case "duration":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello there","usage":{"type":"duration","seconds":3}}`)
		case "verbose":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"task":"transcribe","language":"english","duration":4,"text":"hello there"}`)
		case "images":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"created":1,"data":[{"url":"https://img.example/1.png"},{"url":"https://img.example/2.png"}]}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello there"}`)
		}
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"media","models":["openai/whisper-1","openai/dall-e-2"],"max_budget_usd":5}`)
	cat := providers.DefaultCatalog()
	perSeconds := func(sec float64) float64 {
		return cat.AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: sec}).TotalUSD
	}
	form := func(file []byte, fields ...string) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", "speech.audio")
		fw.Write(file)
		for i := 0; i+1 < len(fields); i += 2 {
			mw.WriteField(fields[i], fields[i+1])
		}
		mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	mp3 := []byte("ID3\x03 not a WAV: its length is not known here")
	imagesFormDisposed := func(sizeDisposition string) func() (string, []byte) {
		return func() (string, []byte) {
			var b bytes.Buffer
			mw := multipart.NewWriter(&b)
			fw, _ := mw.CreateFormFile("image", "a.png")
			fw.Write([]byte("\x89PNG fake"))
			mw.WriteField("Model", "dall-e-2")
			mw.WriteField("prompt", "a hat")
			sw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {sizeDisposition}})
			io.WriteString(sw, "512x512")
			mw.WriteField("n", "2")
			mw.Close()
			return mw.FormDataContentType(), b.Bytes()
		}
	}
	imagesForm := func(sizeField string) func() (string, []byte) {
		return imagesFormDisposed(`form-data; name="` + sizeField + `"`)
	}
	twoImages := cat.ImageCost("openai/dall-e-2", providers.ImageUsage{Images: 2, Size: "512x512"}).TotalUSD
	// OpenAI reads field names as they are: a SIZE it ignores draws its default size.
	twoDefaultImages := cat.ImageCost("openai/dall-e-2", providers.ImageUsage{Images: 2, Size: "1024x1024"}).TotalUSD
	if perSeconds(1) <= 0 || twoImages <= 0 || twoDefaultImages <= twoImages {
		t.Fatalf("the catalogue prices whisper-1 at %v a second and two dall-e-2 512x512 images at %v", perSeconds(1), twoImages)
	}
	cases := []struct {
		name, path string
		body       func() (string, []byte)
		cost       float64
		estimated  bool
	}{
		{"WAV, text answer", "/openai/v1/audio/transcriptions?answer=text", func() (string, []byte) {
			return form(silentWAV(2), "model", "whisper-1", "response_format", "text")
		}, perSeconds(2), true},
		{"srt answer", "/openai/v1/audio/translations?answer=srt", func() (string, []byte) {
			return form(mp3, "model", "whisper-1", "response_format", "srt")
		}, perSeconds(5), true},
		{"duration usage", "/openai/v1/audio/transcriptions?answer=duration", func() (string, []byte) {
			return form(mp3, "model", "whisper-1")
		}, perSeconds(3), false},
		{"verbose_json duration", "/openai/v1/audio/transcriptions?answer=verbose", func() (string, []byte) {
			return form(mp3, "model", "whisper-1", "response_format", "verbose_json")
		}, perSeconds(4), false},
		{"MP3, text answer", "/openai/v1/audio/transcriptions?answer=text", func() (string, []byte) {
			return form(mp3At64kbps(200), "model", "whisper-1", "response_format", "text")
		}, perSeconds(200 * 1152.0 / 44100), true},
		{"length unknown", "/openai/v1/audio/transcriptions?answer=json", func() (string, []byte) {
			return form(append([]byte("\x1a\x45\xdf\xa3webm"), make([]byte, 32000-8)...), "model", "whisper-1")
		}, perSeconds(2), true},
		{"image edit", "/openai/v1/images/edits?answer=images", imagesForm("size"), twoImages, true},
		{"image edit naming SIZE", "/openai/v1/images/edits?answer=images", imagesForm("SIZE"), twoDefaultImages, true},
		// RFC 7578 reads a part's name, not its name* (which Go's FormName prefers).
		{"image edit naming size, name* quality", "/openai/v1/images/edits?answer=images",
			imagesFormDisposed(`form-data; name="size"; name*=UTF-8''quality`), twoImages, true},
		{"image edit naming Size, name* size", "/openai/v1/images/edits?answer=images",
			imagesFormDisposed(`form-data; name="Size"; name*=UTF-8''size`), twoDefaultImages, true},
		{"image edit named only by name* size", "/openai/v1/images/edits?answer=images",
			imagesFormDisposed(`form-data; name*=UTF-8''size`), twoImages, true},
		{"image generation", "/openai/v1/images/generations?answer=images", func() (string, []byte) {
			return "application/json", []byte(`{"model":"dall-e-2","prompt":"a hat","size":"512x512","n":2}`)
		}, twoImages, true},
		{"image generation naming Size", "/openai/v1/images/generations?answer=images", func() (string, []byte) {
			return "application/json", []byte(`{"model":"dall-e-2","prompt":"a hat","Size":"512x512","n":2}`)
		}, twoDefaultImages, true},
	}
	for i, c := range cases {
		ct, body := c.body()
		req, _ := http.NewRequest("POST", hs.URL+c.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(got), "error") {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, got)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", c.name, len(rows), i+1)
		}
		if row := rows[0]; math.Abs(row.CostUSD-c.cost) > 1e-12 || row.UsageEstimated != c.estimated {
			t.Errorf("%s: billed %v (estimated %v), want %v (estimated %v)", c.name, row.CostUSD, row.UsageEstimated, c.cost, c.estimated)
		}
	}
}

// TestPassThroughMediaOverCap: a media answer too large to keep and read (over
// maxMediaAnswer) was billed nothing; it is now billed as the gateway's own routes bill
// an answer over their cap, marked estimated — a transcription its MP3's length as its
// frames say, an image edit the images asked (n) at the size asked — and relayed whole.
func TestPassThroughMediaOverCap(t *testing.T) {
	big := maxMediaAnswer + 1<<10
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/images/edits") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"created":1,"data":[{"b64_json":"`+strings.Repeat("A", big)+`"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, strings.Repeat("la ", big/3+1))
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"media-cap","models":["openai/whisper-1","openai/dall-e-2"],"max_budget_usd":5}`)
	cat := providers.DefaultCatalog()
	form := func(fileField string, file []byte, fields ...string) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile(fileField, "upload")
		fw.Write(file)
		for i := 0; i+1 < len(fields); i += 2 {
			mw.WriteField(fields[i], fields[i+1])
		}
		mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	type overCap struct {
		name, path, ct string
		body           []byte
		cost           float64
	}
	audioCT, audioBody := form("file", mp3At64kbps(500), "model", "whisper-1", "response_format", "text")
	imageCT, imageBody := form("image", []byte("\x89PNG fake"), "model", "dall-e-2", "prompt", "a hat", "size", "256x256", "n", "3")
	cases := []overCap{
		{"transcription", "/openai/v1/audio/transcriptions", audioCT, audioBody,
			cat.AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: 500 * 1152.0 / 44100}).TotalUSD},
		{"image edit", "/openai/v1/images/edits", imageCT, imageBody,
			cat.ImageCost("openai/dall-e-2", providers.ImageUsage{Images: 3, Size: "256x256"}).TotalUSD},
	}
	for i, c := range cases {
		if c.cost <= 0 {
			t.Fatalf("%s: the catalogue prices it at %v", c.name, c.cost)
		}
		req, _ := http.NewRequest("POST", hs.URL+c.path, bytes.NewReader(c.body))
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < int64(big) {
			t.Fatalf("%s: %d with %d bytes, want the whole answer (over %d)", c.name, resp.StatusCode, n, big)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", c.name, len(rows), i+1)
		}
		if row := rows[0]; math.Abs(row.CostUSD-c.cost) > 1e-12 || !row.UsageEstimated {
			t.Errorf("%s: billed %v (estimated %v), want %v, estimated", c.name, row.CostUSD, row.UsageEstimated, c.cost)
		}
	}
}
