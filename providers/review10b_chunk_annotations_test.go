package providers

// Review 10b: annotations deltas and the chunk template (package providers).

import "testing"

func TestReview10bAnnotationsAndTemplate(t *testing.T) {
	var d openAIChunkDecoder
	pre := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{`
	post := `},"finish_reason":null}]}`
	ann := `"annotations":[{"type":"url_citation","url_citation":{"start_index":0,"end_index":3,"url":"https://a","title":"A"}}]`
	events := []struct {
		body    string
		text    string
		sources int
	}{
		{pre + `"content":"He"` + post, "He", 0},
		{pre + `"content":"llo"` + post, "llo", 0},
		{pre + `"content":"!",` + ann + post, "!", 1},
		{pre + `"content":"x"` + post, "x", 0},
		{pre + ann + `,"content":"y"` + post, "y", 0}, // the same URL again: no new source
		{pre + `"content":"z"` + post, "z", 0},
	}
	for i, e := range events {
		out, _, err := d.decode([]byte(e.body))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if out.Text != e.text || len(out.Sources) != e.sources {
			t.Fatalf("event %d: text %q sources %v", i, out.Text, out.Sources)
		}
	}
	if d.templated < 2 {
		t.Errorf("only %d events through the template", d.templated)
	}
}
